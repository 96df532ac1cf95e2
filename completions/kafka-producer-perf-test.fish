complete -c kafka-producer-perf-test -l topic -d 'Produce records to this topic.' -r
complete -c kafka-producer-perf-test -l num-records -d 'Number of records to produce.' -r
complete -c kafka-producer-perf-test -l payload-delimiter -d 'Provides the delimiter to be used when --payload-file is provided. Note that this parameter will be ignored if --payload-file is not provided. [default: \\n]' -r
complete -c kafka-producer-perf-test -l throughput -d 'Throttle maximum record throughput to *approximately* THROUGHPUT records/sec. Set this to -1 to disable throttling.' -r
complete -c kafka-producer-perf-test -l producer-props -d '(DEPRECATED) Kafka producer related configuration properties like client.id. Use --command-property instead.' -r
complete -c kafka-producer-perf-test -l command-property -d 'Kafka producer related configuration properties like client.id. These configs take precedence over those passed via --command-config or --producer.config. Example: --command-property linger.ms=10 batch.size=32768' -r
complete -c kafka-producer-perf-test -l producer.config -d '(DEPRECATED) Producer config properties file. Use --command-config instead.' -r
complete -c kafka-producer-perf-test -l command-config -d 'Producer config properties file.' -r
complete -c kafka-producer-perf-test -l transactional-id -d 'The transactional id to use. This config takes precedence over the transactional.id specified via --command-property or --command-config. Note that if the transactional id is not specified while --transaction-duration-ms is provided, the default value for the transactional id will be performance-producer- followed by a random uuid.' -r
complete -c kafka-producer-perf-test -l transaction-duration-ms -d 'The maximum duration of each transaction. The commitTransaction will be called after this time has elapsed. The value should be greater than 0. If the transactional id is specified via --command-property, --command-config or --transactional-id but --transaction-duration-ms is not specified, the default value will be 3000.' -r
complete -c kafka-producer-perf-test -l warmup-records -d 'The number of records to treat as warmup. These initial records will not be included in steady-state statistics. An additional summary line will be printed describing the steady-state statistics. [default: 0]' -r
complete -c kafka-producer-perf-test -l reporting-interval -d 'Interval in milliseconds at which to print progress info. [default: 5000]' -r
complete -c kafka-producer-perf-test -l record-size -d 'Record size in bytes. Note that you must provide exactly one of --record-size, --payload-file or --payload-monotonic.' -r
complete -c kafka-producer-perf-test -l payload-file -d 'File to read the record payloads from. This works only for UTF-8 encoded text files. Payloads will be read from this file and a payload will be randomly selected when sending records.' -r
complete -c kafka-producer-perf-test -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-producer-perf-test -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-producer-perf-test -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-producer-perf-test -l print-metrics -d 'Print out metrics at the end of the test.'
complete -c kafka-producer-perf-test -l payload-monotonic -d 'Payload is a monotonically increasing integer.'
complete -c kafka-producer-perf-test -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-producer-perf-test -s h -l help -d 'Print help'
