# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kafka_transactions_global_optspecs
    string join \n bootstrap-server= command-config= version profile= log-dir= h/help
end

function __fish_kafka_transactions_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kafka_transactions_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kafka_transactions_using_subcommand
    set -l cmd (__fish_kafka_transactions_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -l bootstrap-server -d 'hostname and port for the broker to connect to, in the form `host:port` (multiple comma-separated entries can be given); omit to use the embedded log' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -l command-config -d 'property file containing configs to be passed to admin client' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -l profile -d 'A named cluster or log dir from ~/.config/kafkit/config.toml [env: KAFKIT_PROFILE]' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -l log-dir -d 'Embedded log directory [default: $KAFKIT_LOG_DIR, else $XDG_DATA_HOME/kafkit]' -r -F
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -l version -d 'Print the Kafka version this tool mirrors and kafkit\'s version'
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -s h -l help -d 'Print help'
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -f -a "list" -d 'list transactions'
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -f -a "describe" -d 'describe the state of an active transactional-id'
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -f -a "describe-producers" -d 'describe the states of active producers for a topic partition'
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -f -a "abort" -d 'abort a hanging transaction (requires administrative privileges)'
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -f -a "find-hanging" -d 'find hanging transactions'
complete -c kafka-transactions -n "__fish_kafka_transactions_needs_command" -f -a "forceTerminateTransaction" -d 'Force abort an ongoing transaction on transactionalId (requires administrative privileges)'
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand list" -l duration-filter -d 'Duration (in millis) to filter by: if < 0, all transactions will be returned; otherwise, only transactions running longer than this duration will be returned' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand list" -l transactional-id-pattern -d 'Transactional id regular expression pattern to filter by' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand list" -s h -l help -d 'Print help'
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand describe" -l transactional-id -d 'transactional id' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand describe" -s h -l help -d 'Print help'
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand describe-producers" -l broker-id -d 'optional broker id to describe the producer state on a specific replica' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand describe-producers" -l topic -d 'topic name' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand describe-producers" -l partition -d 'partition number' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand describe-producers" -s h -l help -d 'Print help'
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand abort" -l topic -d 'topic name' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand abort" -l partition -d 'partition number' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand abort" -l start-offset -d 'start offset of the transaction to abort (brokers on versions 3.0 and above)' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand abort" -l producer-id -d 'producer id (brokers older than 3.0)' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand abort" -l producer-epoch -d 'producer epoch (brokers older than 3.0)' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand abort" -l coordinator-epoch -d 'coordinator epoch (brokers older than 3.0)' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand abort" -s h -l help -d 'Print help'
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand find-hanging" -l broker-id -d 'broker id to search for hanging transactions' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand find-hanging" -l max-transaction-timeout -d 'maximum transaction timeout in minutes to limit the scope of the search (15 minutes by default)' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand find-hanging" -l topic -d 'topic name to limit search to (required if --partition is specified)' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand find-hanging" -l partition -d 'partition number' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand find-hanging" -s h -l help -d 'Print help'
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand forceTerminateTransaction" -l transactionalId -d 'transactional id' -r
complete -c kafka-transactions -n "__fish_kafka_transactions_using_subcommand forceTerminateTransaction" -s h -l help -d 'Print help'
