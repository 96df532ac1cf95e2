complete -c kafka-share-consumer-perf-test -l topic -d 'REQUIRED: The topic to consume from.' -r
complete -c kafka-share-consumer-perf-test -l group -d 'The group id to consume on. [default: perf-share-consumer]' -r
complete -c kafka-share-consumer-perf-test -l num-records -d 'REQUIRED: The number of records to consume.' -r
complete -c kafka-share-consumer-perf-test -l messages -d '(DEPRECATED) The number of records to consume. Use --num-records instead.' -r
complete -c kafka-share-consumer-perf-test -l threads -d 'The number of share consumers to use for sharing the load. [default: 1]' -r
complete -c kafka-share-consumer-perf-test -l fetch-size -d 'The amount of data to fetch in a single request (accepted; kafkit fetches up to 4 MiB). [default: 1048576]' -r
complete -c kafka-share-consumer-perf-test -l socket-buffer-size -d 'The size of the tcp RECV size (accepted and ignored). [default: 2097152]' -r
complete -c kafka-share-consumer-perf-test -l timeout -d 'The maximum allowed time in milliseconds between returned records. [default: 10000]' -r
complete -c kafka-share-consumer-perf-test -l reporting-interval -d 'Interval in milliseconds at which to print progress info. [default: 5000]' -r
complete -c kafka-share-consumer-perf-test -l date-format -d 'The date format to use for formatting the time field. See java.text.SimpleDateFormat for options. [default: yyyy-MM-dd HH:mm:ss:SSS]' -r
complete -c kafka-share-consumer-perf-test -l command-property -d 'Kafka share consumer related configuration properties like client.id. These configs take precedence over those passed via --command-config or --consumer.config.' -r
complete -c kafka-share-consumer-perf-test -l command-config -d 'Config properties file.' -r
complete -c kafka-share-consumer-perf-test -l consumer.config -d '(DEPRECATED) Share consumer config properties file. Use --command-config instead.' -r
complete -c kafka-share-consumer-perf-test -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-share-consumer-perf-test -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-share-consumer-perf-test -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-share-consumer-perf-test -l print-metrics -d 'Print out the metrics (accepted; kafkit prints none).'
complete -c kafka-share-consumer-perf-test -l show-detailed-stats -d 'If set, stats are reported for each reporting interval as configured by reporting-interval.'
complete -c kafka-share-consumer-perf-test -l show-consumer-stats -d 'If set, stats are reported for each share consumer depending on the no. of threads.'
complete -c kafka-share-consumer-perf-test -l hide-header -d 'If set, skips printing the header for the stats.'
complete -c kafka-share-consumer-perf-test -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-share-consumer-perf-test -s h -l help -d 'Print help'
