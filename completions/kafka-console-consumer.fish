complete -c kafka-console-consumer -l topic -d 'The topic to consume on.' -r
complete -c kafka-console-consumer -l include -d 'Regular expression of the topics to consume (whole-name match).' -r
complete -c kafka-console-consumer -l partition -d 'The partition to consume from; starts at the end unless --offset or --from-beginning.' -r
complete -c kafka-console-consumer -l offset -d 'earliest, latest or a non-negative offset (with --partition) [default: latest].' -r -f -a "earliest\t''
latest\t''"
complete -c kafka-console-consumer -l group -d 'The consumer group id of the consumer.' -r
complete -c kafka-console-consumer -l max-messages -d 'Exit after consuming this many messages.' -r
complete -c kafka-console-consumer -l timeout-ms -d 'Exit if no message is available for consumption for this long.' -r
complete -c kafka-console-consumer -l from-time -d 'Start at the first record at or after this time: RFC 3339 (2026-11-30T12:00:00Z), relative (-1h, -30m, -2d) or epoch milliseconds.' -r
complete -c kafka-console-consumer -l until-time -d 'Print records up to this time (same formats as --from-time), then stop.' -r
complete -c kafka-console-consumer -l output -d 'text (the formatter\'s output) or json (one lossless JSON object per record: topic, partition, offset, timestamp, timestampType, key, value, headers) [default: text].' -r -f -a "text\t''
json\t''"
complete -c kafka-console-consumer -l formatter -d 'DefaultMessageFormatter, LoggingMessageFormatter or NoOpMessageFormatter.' -r -f -a "org.apache.kafka.tools.consumer.DefaultMessageFormatter\t''
org.apache.kafka.tools.consumer.LoggingMessageFormatter\t''
org.apache.kafka.tools.consumer.NoOpMessageFormatter\t''"
complete -c kafka-console-consumer -l formatter-property -d 'A formatter property key=value (repeatable).' -r
complete -c kafka-console-consumer -l property -d 'Deprecated: use --formatter-property.' -r
complete -c kafka-console-consumer -l formatter-config -d 'Formatter properties file.' -r
complete -c kafka-console-consumer -l key-deserializer -d 'Deserializer class for keys (formatter property key.deserializer).' -r -f -a "org.apache.kafka.common.serialization.StringDeserializer\t''
org.apache.kafka.common.serialization.LongDeserializer\t''
org.apache.kafka.common.serialization.IntegerDeserializer\t''
org.apache.kafka.common.serialization.ShortDeserializer\t''
org.apache.kafka.common.serialization.DoubleDeserializer\t''
org.apache.kafka.common.serialization.FloatDeserializer\t''
org.apache.kafka.common.serialization.UUIDDeserializer\t''
org.apache.kafka.common.serialization.ByteArrayDeserializer\t''
org.apache.kafka.common.serialization.BytesDeserializer\t''
org.apache.kafka.common.serialization.VoidDeserializer\t''"
complete -c kafka-console-consumer -l value-deserializer -d 'Deserializer class for values (formatter property value.deserializer).' -r -f -a "org.apache.kafka.common.serialization.StringDeserializer\t''
org.apache.kafka.common.serialization.LongDeserializer\t''
org.apache.kafka.common.serialization.IntegerDeserializer\t''
org.apache.kafka.common.serialization.ShortDeserializer\t''
org.apache.kafka.common.serialization.DoubleDeserializer\t''
org.apache.kafka.common.serialization.FloatDeserializer\t''
org.apache.kafka.common.serialization.UUIDDeserializer\t''
org.apache.kafka.common.serialization.ByteArrayDeserializer\t''
org.apache.kafka.common.serialization.BytesDeserializer\t''
org.apache.kafka.common.serialization.VoidDeserializer\t''"
complete -c kafka-console-consumer -l command-property -d 'A consumer property key=value (repeatable).' -r
complete -c kafka-console-consumer -l consumer-property -d 'Deprecated: use --command-property.' -r
complete -c kafka-console-consumer -l command-config -d 'Consumer properties file.' -r
complete -c kafka-console-consumer -l consumer.config -d 'Deprecated: use --command-config.' -r
complete -c kafka-console-consumer -l isolation-level -d 'read_committed or read_uncommitted [default: read_uncommitted].' -r -f -a "read_committed\t''
read_uncommitted\t''"
complete -c kafka-console-consumer -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-console-consumer -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-console-consumer -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-console-consumer -l from-beginning -d 'Start with the earliest message present in the log.'
complete -c kafka-console-consumer -l skip-message-on-error -d 'Skip a message that cannot be formatted instead of stopping.'
complete -c kafka-console-consumer -l no-progress -d 'Do not draw progress on stderr (drawn only when stderr is a terminal and the end is known, with --until-end).'
complete -c kafka-console-consumer -l until-end -d 'Stop once every partition reaches the end it had when the consumer started.'
complete -c kafka-console-consumer -l enable-systest-events -d 'Print shutdown_complete when the consumer stops.'
complete -c kafka-console-consumer -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-console-consumer -s h -l help -d 'Print help'
