complete -c kafka-broker-api-versions -l command-config -d 'Property file containing configs to be passed to the admin client.' -r
complete -c kafka-broker-api-versions -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-broker-api-versions -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-broker-api-versions -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-broker-api-versions -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-broker-api-versions -s h -l help -d 'Print help'
