complete -c kafka-get-offsets -l topic -d 'The topics to look at: a regular expression of whole names (every topic when absent). Not with --topic-partitions.' -r
complete -c kafka-get-offsets -l partitions -d 'Comma-separated partition ids to look at (every partition when absent). Not with --topic-partitions.' -r
complete -c kafka-get-offsets -l topic-partitions -d 'Comma-separated rules TOPIC_REGEX[:PARTITIONS], PARTITIONS being N, N-M (M excluded), N- or -M; an empty regex takes every topic.' -r
complete -c kafka-get-offsets -l time -d 'A time in ms since the epoch (the first offset at or after it), or -1/latest, -2/earliest, -3/max-timestamp, -4/earliest-local, -5/latest-tiered, -6/earliest-pending-upload [default: latest]' -r -f -a "latest\t''
earliest\t''
max-timestamp\t''
earliest-local\t''
latest-tiered\t''
earliest-pending-upload\t''"
complete -c kafka-get-offsets -l command-config -d 'Property file containing configs to be passed to the admin client.' -r
complete -c kafka-get-offsets -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-get-offsets -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-get-offsets -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-get-offsets -l exclude-internal-topics -d 'Leave out internal topics (included by default).'
complete -c kafka-get-offsets -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-get-offsets -s h -l help -d 'Print help'
