complete -c kafka-topics -l topic -d 'The topic to create, alter, describe or delete. Except with --create it is a regular expression that must match whole names; commas separate alternatives.' -r
complete -c kafka-topics -l topic-id -d 'The id of the topic to describe.' -r
complete -c kafka-topics -l partitions -d 'The number of partitions for the topic being created or altered.' -r
complete -c kafka-topics -l replication-factor -d 'The replication factor for each partition (only 1 on the embedded log).' -r
complete -c kafka-topics -l replica-assignment -d 'A list of manual partition-to-broker assignments.' -r
complete -c kafka-topics -l config -d 'A topic configuration override for the topic being created (repeatable).' -r
complete -c kafka-topics -l delete-config -d 'Deprecated and ignored since Kafka 4.0.' -r
complete -c kafka-topics -l partition-size-limit-per-response -d 'The maximum partition size to be included in one DescribeTopicPartitions response.' -r
complete -c kafka-topics -l output -d 'text (Kafka\'s output), json (one JSON document for scripts) or table (aligned, for people) [default: text]' -r -f -a "text\t''
json\t''
table\t''"
complete -c kafka-topics -l command-config -d 'Property file containing configs to be passed to the admin client.' -r
complete -c kafka-topics -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-topics -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-topics -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-topics -l create -d 'Create a new topic.'
complete -c kafka-topics -l list -d 'List all available topics.'
complete -c kafka-topics -l describe -d 'List details for the given topics.'
complete -c kafka-topics -l alter -d 'Alter the number of partitions of a topic.'
complete -c kafka-topics -l delete -d 'Delete a topic.'
complete -c kafka-topics -l repair -d 'kafkit only, embedded log only: check every batch of the topic\'s partitions and cut each back before its first damaged batch or missing segment, setting the rest aside in *.damaged-<ms> files; a partition directory naming another topic id is adopted.'
complete -c kafka-topics -l if-exists -d 'With --alter, --delete or --describe: only act if the topic exists.'
complete -c kafka-topics -l if-not-exists -d 'With --create: only create the topic if it does not already exist.'
complete -c kafka-topics -l exclude-internal -d 'Exclude internal topics when listing or describing.'
complete -c kafka-topics -l topics-with-overrides -d 'With --describe: only show topics that have overridden configs.'
complete -c kafka-topics -l under-replicated-partitions -d 'With --describe: only show under-replicated partitions.'
complete -c kafka-topics -l unavailable-partitions -d 'With --describe: only show partitions whose leader is not available.'
complete -c kafka-topics -l under-min-isr-partitions -d 'With --describe: only show partitions whose isr count is less than the configured minimum.'
complete -c kafka-topics -l at-min-isr-partitions -d 'With --describe: only show partitions whose isr count is equal to the configured minimum.'
complete -c kafka-topics -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-topics -s h -l help -d 'Print help'
