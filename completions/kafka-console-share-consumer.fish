complete -c kafka-console-share-consumer -l topic -d 'The topic to consume from.' -r
complete -c kafka-console-share-consumer -l group -d 'The share group id of the consumer [default: console-share-consumer].' -r
complete -c kafka-console-share-consumer -l max-messages -d 'The maximum number of messages to consume before exiting. If not set, consumption is continual.' -r
complete -c kafka-console-share-consumer -l timeout-ms -d 'If specified, exit if no message is available for consumption for the specified interval.' -r
complete -c kafka-console-share-consumer -l formatter -d 'DefaultMessageFormatter, LoggingMessageFormatter or NoOpMessageFormatter.' -r -f -a "org.apache.kafka.tools.consumer.DefaultMessageFormatter\t''
org.apache.kafka.tools.consumer.LoggingMessageFormatter\t''
org.apache.kafka.tools.consumer.NoOpMessageFormatter\t''"
complete -c kafka-console-share-consumer -l formatter-property -d 'A formatter property key=value (repeatable); print.delivery=true prints each record\'s delivery count.' -r
complete -c kafka-console-share-consumer -l property -d 'Deprecated: use --formatter-property.' -r
complete -c kafka-console-share-consumer -l formatter-config -d 'Formatter properties file.' -r
complete -c kafka-console-share-consumer -l key-deserializer -d 'The name of the class to use for deserializing keys.' -r -f -a "org.apache.kafka.common.serialization.StringDeserializer\t''
org.apache.kafka.common.serialization.LongDeserializer\t''
org.apache.kafka.common.serialization.IntegerDeserializer\t''
org.apache.kafka.common.serialization.ShortDeserializer\t''
org.apache.kafka.common.serialization.DoubleDeserializer\t''
org.apache.kafka.common.serialization.FloatDeserializer\t''
org.apache.kafka.common.serialization.UUIDDeserializer\t''
org.apache.kafka.common.serialization.ByteArrayDeserializer\t''
org.apache.kafka.common.serialization.BytesDeserializer\t''
org.apache.kafka.common.serialization.VoidDeserializer\t''"
complete -c kafka-console-share-consumer -l value-deserializer -d 'The name of the class to use for deserializing values.' -r -f -a "org.apache.kafka.common.serialization.StringDeserializer\t''
org.apache.kafka.common.serialization.LongDeserializer\t''
org.apache.kafka.common.serialization.IntegerDeserializer\t''
org.apache.kafka.common.serialization.ShortDeserializer\t''
org.apache.kafka.common.serialization.DoubleDeserializer\t''
org.apache.kafka.common.serialization.FloatDeserializer\t''
org.apache.kafka.common.serialization.UUIDDeserializer\t''
org.apache.kafka.common.serialization.ByteArrayDeserializer\t''
org.apache.kafka.common.serialization.BytesDeserializer\t''
org.apache.kafka.common.serialization.VoidDeserializer\t''"
complete -c kafka-console-share-consumer -l command-property -d 'Consumer config properties in the form key=value (repeatable).' -r
complete -c kafka-console-share-consumer -l consumer-property -d 'Deprecated: use --command-property.' -r
complete -c kafka-console-share-consumer -l command-config -d 'Consumer config properties file.' -r
complete -c kafka-console-share-consumer -l consumer-config -d 'Deprecated: use --command-config.' -r
complete -c kafka-console-share-consumer -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-console-share-consumer -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-console-share-consumer -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-console-share-consumer -l reject -d 'If specified, messages are rejected as they are consumed.'
complete -c kafka-console-share-consumer -l release -d 'If specified, messages are released as they are consumed.'
complete -c kafka-console-share-consumer -l reject-message-on-error -d 'If there is an error when processing a message, reject it instead of halting.'
complete -c kafka-console-share-consumer -l enable-systest-events -d 'Print shutdown_complete when the consumer stops.'
complete -c kafka-console-share-consumer -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-console-share-consumer -s h -l help -d 'Print help'
