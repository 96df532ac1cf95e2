complete -c kafka-share-groups -l group -d 'The share group we wish to act on (repeatable for --describe and --delete).' -r
complete -c kafka-share-groups -l topic -d 'The topic whose offset information should be deleted or included in the reset offset process: \'topic\' or \'topic:0,1,2\' (repeatable).' -r
complete -c kafka-share-groups -l state -d 'With --describe: the state of the group. With --list: the state of all groups, optionally only these (Empty, Stable, Dead).' -r -f -a "Dead\t''
Empty\t''
Stable\t''"
complete -c kafka-share-groups -l timeout -d 'The timeout that can be set for some use cases (ignored on the embedded log).' -r
complete -c kafka-share-groups -l to-datetime -d 'Reset offsets to offset from datetime. Format: \'YYYY-MM-DDThh:mm:ss.sss\'.' -r
complete -c kafka-share-groups -l command-config -d 'Property file containing configs to be passed to Admin Client.' -r
complete -c kafka-share-groups -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-share-groups -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-share-groups -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-share-groups -l list -d 'List all share groups.'
complete -c kafka-share-groups -l describe -d 'Describe share group, members and offset information.'
complete -c kafka-share-groups -l delete -d 'Delete share group.'
complete -c kafka-share-groups -l reset-offsets -d 'Reset offsets of share group. Supports one share group at the time, and instances must be inactive. --dry-run plans, --execute resets; one of --to-datetime, --to-earliest, --to-latest; --all-topics or --topic.'
complete -c kafka-share-groups -l delete-offsets -d 'Delete offsets of share group. Supports one share group at the time, and multiple topics.'
complete -c kafka-share-groups -l all-groups -d 'Apply to all share groups.'
complete -c kafka-share-groups -l all-topics -d 'Consider all topics assigned to a share group in the \'reset-offsets\' process.'
complete -c kafka-share-groups -l members -d 'Describe members of the group (with --describe).'
complete -c kafka-share-groups -l offsets -d 'Describe the group\'s partitions with their offset information (with --describe; the default).'
complete -c kafka-share-groups -l verbose -d 'Provide additional information, if any, when describing the group.'
complete -c kafka-share-groups -l to-earliest -d 'Reset offsets to earliest offset.'
complete -c kafka-share-groups -l to-latest -d 'Reset offsets to latest offset.'
complete -c kafka-share-groups -l dry-run -d 'Only show results without executing changes on share groups.'
complete -c kafka-share-groups -l execute -d 'Execute operation.'
complete -c kafka-share-groups -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-share-groups -s h -l help -d 'Print help'
