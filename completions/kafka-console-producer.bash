_kafka__console__producer() {
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
                cmd="kafka__console__producer"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kafka__console__producer)
            opts="-h --topic --sync --compression-codec --batch-size --max-partition-memory-bytes --message-send-max-retries --retry-backoff-ms --timeout --request-required-acks --request-timeout-ms --metadata-expiry-ms --max-block-ms --max-memory-bytes --socket-buffer-size --no-progress --input --line-reader --reader-property --property --reader-config --command-property --producer-property --command-config --producer.config --bootstrap-server --version --profile --log-dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --topic)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --compression-codec)
                    COMPREPLY=($(compgen -W "none gzip snappy lz4 zstd" -- "${cur}"))
                    return 0
                    ;;
                --batch-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-partition-memory-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --message-send-max-retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retry-backoff-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --request-required-acks)
                    COMPREPLY=($(compgen -W "all -1 0 1" -- "${cur}"))
                    return 0
                    ;;
                --request-timeout-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metadata-expiry-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-block-ms)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-memory-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --socket-buffer-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --input)
                    COMPREPLY=($(compgen -W "text json" -- "${cur}"))
                    return 0
                    ;;
                --line-reader)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reader-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reader-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --command-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --command-config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --producer.config)
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
    complete -F _kafka__console__producer -o nosort -o bashdefault -o default kafka-console-producer
else
    complete -F _kafka__console__producer -o bashdefault -o default kafka-console-producer
fi
