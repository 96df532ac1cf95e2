_kafka__consumer__groups() {
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
                cmd="kafka__consumer__groups"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kafka__consumer__groups)
            opts="-h --list --describe --delete --reset-offsets --delete-offsets --validate-regex --group --all-groups --topic --all-topics --timeout --members --offsets --state --verbose --type --dry-run --execute --export --to-offset --to-earliest --to-latest --to-current --shift-by --to-datetime --by-duration --from-file --no-progress --output --command-config --bootstrap-server --version --profile --log-dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --validate-regex)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state)
                    COMPREPLY=($(compgen -W "PreparingRebalance CompletingRebalance Stable Dead Empty Assigning Reconciling" -- "${cur}"))
                    return 0
                    ;;
                --type)
                    COMPREPLY=($(compgen -W "classic consumer" -- "${cur}"))
                    return 0
                    ;;
                --to-offset)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shift-by)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-datetime)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --by-duration)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json table" -- "${cur}"))
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
    complete -F _kafka__consumer__groups -o nosort -o bashdefault -o default kafka-consumer-groups
else
    complete -F _kafka__consumer__groups -o bashdefault -o default kafka-consumer-groups
fi
