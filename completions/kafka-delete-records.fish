complete -c kafka-delete-records -l offset-json-file -d 'REQUIRED: The JSON file with the offset per partition: {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}. An offset of -1 means the high watermark.' -r -F
complete -c kafka-delete-records -l command-config -d 'A property file containing configs to be passed to Admin Client.' -r
complete -c kafka-delete-records -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-delete-records -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-delete-records -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-delete-records -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-delete-records -s h -l help -d 'Print help'
