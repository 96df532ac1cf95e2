_kafka__transactions() {
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
                cmd="kafka__transactions"
                ;;
            kafka__transactions,abort)
                cmd="kafka__transactions__subcmd__abort"
                ;;
            kafka__transactions,describe)
                cmd="kafka__transactions__subcmd__describe"
                ;;
            kafka__transactions,describe-producers)
                cmd="kafka__transactions__subcmd__describe__subcmd__producers"
                ;;
            kafka__transactions,find-hanging)
                cmd="kafka__transactions__subcmd__find__subcmd__hanging"
                ;;
            kafka__transactions,forceTerminateTransaction)
                cmd="kafka__transactions__subcmd__forceTerminateTransaction"
                ;;
            kafka__transactions,list)
                cmd="kafka__transactions__subcmd__list"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kafka__transactions)
            opts="-h --bootstrap-server --command-config --version --profile --log-dir --help list describe describe-producers abort find-hanging forceTerminateTransaction"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --bootstrap-server)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --command-config)
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
        kafka__subcmd__transactions__subcmd__abort)
            opts="-h --topic --partition --start-offset --producer-id --producer-epoch --coordinator-epoch --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --partition)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-epoch)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --coordinator-epoch)
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
        kafka__subcmd__transactions__subcmd__describe)
            opts="-h --transactional-id --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --transactional-id)
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
        kafka__subcmd__transactions__subcmd__describe__subcmd__producers)
            opts="-h --broker-id --topic --partition --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --broker-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --partition)
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
        kafka__subcmd__transactions__subcmd__find__subcmd__hanging)
            opts="-h --broker-id --max-transaction-timeout --topic --partition --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --broker-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-transaction-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --partition)
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
        kafka__subcmd__transactions__subcmd__forceTerminateTransaction)
            opts="-h --transactionalId --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --transactionalId)
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
        kafka__subcmd__transactions__subcmd__list)
            opts="-h --duration-filter --transactional-id-pattern --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --duration-filter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transactional-id-pattern)
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
    complete -F _kafka__transactions -o nosort -o bashdefault -o default kafka-transactions
else
    complete -F _kafka__transactions -o bashdefault -o default kafka-transactions
fi
