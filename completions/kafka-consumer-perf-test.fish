complete -c kafka-consumer-perf-test -l topic -d 'The topic to consume from.' -r
complete -c kafka-consumer-perf-test -l include -d 'Regular expression specifying list of topics to include for consumption.' -r
complete -c kafka-consumer-perf-test -l group -d 'The group id to consume on. [default: perf-consumer-<random number>]' -r
complete -c kafka-consumer-perf-test -l fetch-size -d 'The maximum amount of data to fetch from a single partition per request (accepted; kafkit fetches 1 MiB per partition). [default: 1048576]' -r
complete -c kafka-consumer-perf-test -l command-property -d 'Kafka consumer related configuration properties like client.id. These configs take precedence over those passed via --command-config or --consumer.config.' -r
complete -c kafka-consumer-perf-test -l socket-buffer-size -d 'The size of the tcp RECV size (accepted and ignored). [default: 2097152]' -r
complete -c kafka-consumer-perf-test -l consumer.config -d '(DEPRECATED) Consumer config properties file. Use --command-config instead.' -r
complete -c kafka-consumer-perf-test -l command-config -d 'Config properties file.' -r
complete -c kafka-consumer-perf-test -l timeout -d 'The maximum allowed time in milliseconds between returned records. [default: 10000]' -r
complete -c kafka-consumer-perf-test -l messages -d '(DEPRECATED) The number of records to consume. Use --num-records instead.' -r
complete -c kafka-consumer-perf-test -l num-records -d 'REQUIRED: The number of records to consume.' -r
complete -c kafka-consumer-perf-test -l reporting-interval -d 'Interval in milliseconds at which to print progress info. [default: 5000]' -r
complete -c kafka-consumer-perf-test -l date-format -d 'The date format to use for formatting the time field. See java.text.SimpleDateFormat for options. [default: yyyy-MM-dd HH:mm:ss:SSS]' -r
complete -c kafka-consumer-perf-test -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-consumer-perf-test -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-consumer-perf-test -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-consumer-perf-test -l from-latest -d 'If the consumer does not already have an established offset to consume from, start with the latest record present in the log rather than the earliest record.'
complete -c kafka-consumer-perf-test -l print-metrics -d 'Print out the metrics.'
complete -c kafka-consumer-perf-test -l show-detailed-stats -d 'If set, stats are reported for each reporting interval as configured by reporting-interval.'
complete -c kafka-consumer-perf-test -l hide-header -d 'If set, skips printing the header for the stats.'
complete -c kafka-consumer-perf-test -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-consumer-perf-test -s h -l help -d 'Print help'
