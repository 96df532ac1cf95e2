_kafka__configs() {
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
                cmd="kafka__configs"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kafka__configs)
            opts="-h --describe --alter --entity-type --entity-name --entity-default --topic --broker --broker-defaults --group --add-config --add-config-file --delete-config --all --command-config --bootstrap-server --version --profile --log-dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --entity-type)
                    COMPREPLY=($(compgen -W "topics brokers groups" -- "${cur}"))
                    return 0
                    ;;
                --entity-name)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --broker)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --add-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --add-config-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delete-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --command-config)
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
    complete -F _kafka__configs -o nosort -o bashdefault -o default kafka-configs
else
    complete -F _kafka__configs -o bashdefault -o default kafka-configs
fi
