_kafka__producer__perf__test() {
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
                cmd="kafka__producer__perf__test"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kafka__producer__perf__test)
            opts="-h --topic --num-records --payload-delimiter --throughput --producer-props --command-property --producer.config --command-config --print-metrics --transactional-id --transaction-duration-ms --warmup-records --reporting-interval --record-size --payload-file --payload-monotonic --bootstrap-server --version --profile --log-dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --num-records)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --payload-delimiter)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --throughput)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-props)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --command-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer.config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --command-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transactional-id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transaction-duration-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --warmup-records)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reporting-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --record-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --payload-file)
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
    complete -F _kafka__producer__perf__test -o nosort -o bashdefault -o default kafka-producer-perf-test
else
    complete -F _kafka__producer__perf__test -o bashdefault -o default kafka-producer-perf-test
fi
