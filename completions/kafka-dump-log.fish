complete -c kafka-dump-log -l files -d 'REQUIRED: The comma separated list of data and index log files to be dumped.' -r -F
complete -c kafka-dump-log -l max-bytes -d 'Limit the amount of total batches read in bytes avoiding reading the whole .log file(s). [default: 2147483647]' -r
complete -c kafka-dump-log -l key-decoder-class -d 'If set, used to deserialize the keys: org.apache.kafka.tools.api.StringDecoder (default), IntegerDecoder or LongDecoder.' -r
complete -c kafka-dump-log -l value-decoder-class -d 'If set, used to deserialize the messages: org.apache.kafka.tools.api.StringDecoder (default), IntegerDecoder or LongDecoder.' -r
complete -c kafka-dump-log -l max-message-size -d 'Size of largest message. [default: 5242880]' -r
complete -c kafka-dump-log -l deep-iteration -d 'If set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled.'
complete -c kafka-dump-log -l print-data-log -d 'If set, printing the messages content when dumping data logs. Automatically set if any decoder option is specified.'
complete -c kafka-dump-log -l skip-record-metadata -d 'Skip metadata when printing records. This flag also skips control records.'
complete -c kafka-dump-log -l offsets-decoder -d 'If set, log data will be parsed as offset data from the __consumer_offsets topic.'
complete -c kafka-dump-log -l transaction-log-decoder -d 'If set, log data will be parsed as transaction metadata from the __transaction_state topic.'
complete -c kafka-dump-log -l share-group-state-decoder -d 'If set, log data will be parsed as share group state data from the __share_group_state topic.'
complete -c kafka-dump-log -l cluster-metadata-decoder -d 'If set, log data will be parsed as cluster metadata records.'
complete -c kafka-dump-log -l remote-log-metadata-decoder -d 'If set, log data will be parsed as TopicBasedRemoteLogMetadataManager (RLMM) metadata records (not supported by kafkit).'
complete -c kafka-dump-log -l verify-index-only -d 'If set, just verify the index log without printing its content.'
complete -c kafka-dump-log -l index-sanity-check -d 'If set, just checks the index sanity without printing its content. This is the same check that is executed on broker startup to determine if an index needs rebuilding or not.'
complete -c kafka-dump-log -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-dump-log -s h -l help -d 'Print help'
