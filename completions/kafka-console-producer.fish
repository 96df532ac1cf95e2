complete -c kafka-console-producer -l topic -d 'The topic to produce messages to (required).' -r
complete -c kafka-console-producer -l compression-codec -d 'none, gzip, snappy, lz4 or zstd; without a value, gzip.' -r -f -a "none\t''
gzip\t''
snappy\t''
lz4\t''
zstd\t''"
complete -c kafka-console-producer -l batch-size -d 'Bytes of records sent in one batch [default: 16384; on a cluster, input already waiting fills batches up to 1 MB unless this is given].' -r
complete -c kafka-console-producer -l max-partition-memory-bytes -d 'Deprecated: use --batch-size.' -r
complete -c kafka-console-producer -l message-send-max-retries -d 'Retries before giving up on a send [default: 3].' -r
complete -c kafka-console-producer -l retry-backoff-ms -d 'Wait before retrying a send [default: 100].' -r
complete -c kafka-console-producer -l timeout -d 'Linger: the longest a record waits before it is sent, in ms [default: 1000].' -r
complete -c kafka-console-producer -l request-required-acks -d 'Acks required from the broker: -1/all, 0 or 1 [default: -1].' -r -f -a "all\t''
-1\t''
0\t''
1\t''"
complete -c kafka-console-producer -l request-timeout-ms -d 'Request timeout in ms [default: 1500].' -r
complete -c kafka-console-producer -l metadata-expiry-ms -d 'Metadata refresh period in ms [default: 300000].' -r
complete -c kafka-console-producer -l max-block-ms -d 'Longest a send blocks in ms [default: 60000].' -r
complete -c kafka-console-producer -l max-memory-bytes -d 'Producer buffer memory [default: 33554432].' -r
complete -c kafka-console-producer -l socket-buffer-size -d 'Socket send buffer [default: 102400].' -r
complete -c kafka-console-producer -l input -d 'How lines are read: text (Kafka\'s LineMessageReader) or json (one kafkit JSON record per line, as kafka-console-consumer --output json writes them) [default: text].' -r -f -a "text\t''
json\t''"
complete -c kafka-console-producer -l line-reader -d 'The record reader class [default: org.apache.kafka.tools.LineMessageReader].' -r
complete -c kafka-console-producer -l reader-property -d 'A LineMessageReader property key=value (repeatable).' -r
complete -c kafka-console-producer -l property -d 'Deprecated: use --reader-property.' -r
complete -c kafka-console-producer -l reader-config -d 'LineMessageReader properties file.' -r
complete -c kafka-console-producer -l command-property -d 'A producer property key=value (repeatable).' -r
complete -c kafka-console-producer -l producer-property -d 'Deprecated: use --command-property.' -r
complete -c kafka-console-producer -l command-config -d 'Producer properties file.' -r
complete -c kafka-console-producer -l producer.config -d 'Deprecated: use --command-config.' -r
complete -c kafka-console-producer -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-console-producer -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-console-producer -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-console-producer -l sync -d 'Send each message synchronously: fsync it (embedded log) or wait for its acknowledgement (cluster) before reading the next line.'
complete -c kafka-console-producer -l no-progress -d 'Do not draw progress on stderr (it is drawn only when stderr is a terminal).'
complete -c kafka-console-producer -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-console-producer -s h -l help -d 'Print help'
