_kafka__console__share__consumer() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="kafka__console__share__consumer"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kafka__console__share__consumer)
            opts="-h --topic --group --max-messages --timeout-ms --reject --release --reject-message-on-error --formatter --formatter-property --property --formatter-config --key-deserializer --value-deserializer --command-property --consumer-property --command-config --consumer-config --enable-systest-events --bootstrap-server --version --profile --log-dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-messages)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --formatter)
                    COMPREPLY=($(compgen -W "org.apache.kafka.tools.consumer.DefaultMessageFormatter org.apache.kafka.tools.consumer.LoggingMessageFormatter org.apache.kafka.tools.consumer.NoOpMessageFormatter" -- "${cur}"))
                    return 0
                    ;;
                --formatter-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --formatter-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --key-deserializer)
                    COMPREPLY=($(compgen -W "org.apache.kafka.common.serialization.StringDeserializer org.apache.kafka.common.serialization.LongDeserializer org.apache.kafka.common.serialization.IntegerDeserializer org.apache.kafka.common.serialization.ShortDeserializer org.apache.kafka.common.serialization.DoubleDeserializer org.apache.kafka.common.serialization.FloatDeserializer org.apache.kafka.common.serialization.UUIDDeserializer org.apache.kafka.common.serialization.ByteArrayDeserializer org.apache.kafka.common.serialization.BytesDeserializer org.apache.kafka.common.serialization.VoidDeserializer" -- "${cur}"))
                    return 0
                    ;;
                --value-deserializer)
                    COMPREPLY=($(compgen -W "org.apache.kafka.common.serialization.StringDeserializer org.apache.kafka.common.serialization.LongDeserializer org.apache.kafka.common.serialization.IntegerDeserializer org.apache.kafka.common.serialization.ShortDeserializer org.apache.kafka.common.serialization.DoubleDeserializer org.apache.kafka.common.serialization.FloatDeserializer org.apache.kafka.common.serialization.UUIDDeserializer org.apache.kafka.common.serialization.ByteArrayDeserializer org.apache.kafka.common.serialization.BytesDeserializer org.apache.kafka.common.serialization.VoidDeserializer" -- "${cur}"))
                    return 0
                    ;;
                --command-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --consumer-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --command-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --consumer-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --log-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _kafka__console__share__consumer -o nosort -o bashdefault -o default kafka-console-share-consumer
else
    complete -F _kafka__console__share__consumer -o bashdefault -o default kafka-console-share-consumer
fi
