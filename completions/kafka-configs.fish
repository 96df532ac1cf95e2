complete -c kafka-configs -l entity-type -d 'Type of entity (topics/brokers/groups)' -r -f -a "topics\t''
brokers\t''
groups\t''"
complete -c kafka-configs -l entity-name -d 'Name of entity (topic name/broker id/group id)' -r
complete -c kafka-configs -l topic -d 'The topic\'s name.' -r
complete -c kafka-configs -l broker -d 'The broker\'s ID.' -r
complete -c kafka-configs -l group -d 'The group\'s ID.' -r
complete -c kafka-configs -l add-config -d 'Key Value pairs of configs to add. Square brackets can be used to group values which contain commas: \'k1=v1,k2=[v1,v2,v2],k3=v3\'.' -r
complete -c kafka-configs -l add-config-file -d 'Path to a properties file with configs to add.' -r -F
complete -c kafka-configs -l delete-config -d 'config keys to remove \'k1,k2\'' -r
complete -c kafka-configs -l command-config -d 'Property file containing configs to be passed to Admin Client.' -r
complete -c kafka-configs -l bootstrap-server -d 'Kafka cluster to connect to (omit to use the embedded log)' -r
complete -c kafka-configs -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-configs -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-configs -l describe -d 'List configs for the given entity.'
complete -c kafka-configs -l alter -d 'Alter the configuration for the entity.'
complete -c kafka-configs -l entity-default -d 'Default entity name for brokers (applies to corresponding entity type)'
complete -c kafka-configs -l broker-defaults -d 'The config defaults for all brokers.'
complete -c kafka-configs -l all -d 'List all configs for the given entity, including static configs if available.'
complete -c kafka-configs -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-configs -s h -l help -d 'Print help'
