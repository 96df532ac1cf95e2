complete -c kafka-consumer-groups -l validate-regex -d 'Validate that the syntax of the provided regular expression is valid (Java regex syntax).' -r
complete -c kafka-consumer-groups -l group -d 'The consumer group we wish to act on (repeatable).' -r
complete -c kafka-consumer-groups -l topic -d 'The topic whose consumer group information should be deleted or included in the reset offset process: \'topic\' or \'topic:0,1,2\' (repeatable).' -r
complete -c kafka-consumer-groups -l timeout -d 'The timeout that can be set for some use cases (ignored on the embedded log).' -r
complete -c kafka-consumer-groups -l state -d 'With --describe: the state of the group. With --list: list with states, optionally only these (comma-separated, e.g. Stable,Empty).' -r -f -a "PreparingRebalance\t''
CompletingRebalance\t''
Stable\t''
Dead\t''
Empty\t''
Assigning\t''
Reconciling\t''"
complete -c kafka-consumer-groups -l type -d 'With --list: list with types, optionally only these (comma-separated: classic, consumer).' -r -f -a "classic\t''
consumer\t''"
complete -c kafka-consumer-groups -l to-offset -d 'Reset offsets to a specific offset.' -r
complete -c kafka-consumer-groups -l shift-by -d 'Reset offsets shifting current offset by \'n\', where \'n\' can be positive or negative.' -r
complete -c kafka-consumer-groups -l to-datetime -d 'Reset offsets to offset from datetime. Format: \'YYYY-MM-DDThh:mm:ss.sss\' with an optional zone (Z, +hh, +hhmm, +hh:mm); UTC if none.' -r
complete -c kafka-consumer-groups -l by-duration -d 'Reset offsets to offset by duration from current timestamp. Format: \'PnDTnHnMnS\'.' -r
complete -c kafka-consumer-groups -l from-file -d 'Reset offsets to values defined in CSV file.' -r
complete -c kafka-consumer-groups -l output -d 'How --list, --describe and the --reset-offsets plan are printed: text (Kafka\'s), json (one JSON document) or table (aligned tables with lag totals) [default: text].' -r -f -a "text\t''
json\t''
table\t''"
complete -c kafka-consumer-groups -l command-config -d 'Property file containing configs to be passed to Admin Client.' -r
complete -c kafka-consumer-groups -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-consumer-groups -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-consumer-groups -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-consumer-groups -l list -d 'List all consumer groups.'
complete -c kafka-consumer-groups -l describe -d 'Describe consumer group and list offset lag (number of messages not yet processed) related to given group.'
complete -c kafka-consumer-groups -l delete -d 'Pass in groups to delete topic partition offsets and ownership information over the entire consumer group.'
complete -c kafka-consumer-groups -l reset-offsets -d 'Reset offsets of consumer group. Supports one consumer group at the time, and instances should be inactive. Dry run by default; add --execute to apply.'
complete -c kafka-consumer-groups -l delete-offsets -d 'Delete offsets of consumer group. Supports one consumer group at the time, and multiple topics.'
complete -c kafka-consumer-groups -l all-groups -d 'Apply to all consumer groups.'
complete -c kafka-consumer-groups -l all-topics -d 'Consider all topics assigned to a group in the reset-offsets process.'
complete -c kafka-consumer-groups -l members -d 'Describe members of the group.'
complete -c kafka-consumer-groups -l offsets -d 'Describe the group and list all topic partitions in the group along with their offset information (the default).'
complete -c kafka-consumer-groups -l verbose -d 'Provide additional information, if any, when describing the group.'
complete -c kafka-consumer-groups -l dry-run -d 'Only show results without executing changes on consumer groups (the default).'
complete -c kafka-consumer-groups -l execute -d 'Execute the operation.'
complete -c kafka-consumer-groups -l export -d 'Export the operation result to CSV format.'
complete -c kafka-consumer-groups -l to-earliest -d 'Reset offsets to earliest offset.'
complete -c kafka-consumer-groups -l to-latest -d 'Reset offsets to latest offset.'
complete -c kafka-consumer-groups -l to-current -d 'Reset offsets to current offset.'
complete -c kafka-consumer-groups -l no-progress -d 'Do not draw progress on stderr for --reset-offsets (it is drawn only when stderr is a terminal).'
complete -c kafka-consumer-groups -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-consumer-groups -s h -l help -d 'Print help'
