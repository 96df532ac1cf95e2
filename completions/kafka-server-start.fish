complete -c kafka-server-start -l override -d 'A broker property that overrides the file\'s' -r
complete -c kafka-server-start -l log-dir -d 'Embedded log directory [default: log.dirs, else $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-server-start -l quiet -d 'Log warnings and errors only'
complete -c kafka-server-start -l verbose -d 'Log every request'
complete -c kafka-server-start -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-server-start -s h -l help -d 'Print help'
