#!/usr/bin/env bash
# A three-node Apache Kafka cluster for the tests, from the same Maven Central jars as
# kafka-broker.sh (whose functions it sources): three combined broker+controller nodes (ids 1, 2
# and 3) with a static controller quorum (controller.quorum.voters), each with its own ports and
# data dir, on 127.0.0.1 only. PLAINTEXT listeners only; internal topics replicated three times.
#
#   kafka-cluster.sh start [DIR]      format three nodes in DIR/node1..node3 and start them in the
#                                     background; print the bootstrap list (all three PLAINTEXT
#                                     addresses, comma-separated), then DIR
#   kafka-cluster.sh stop DIR [N]     stop node N (clean shutdown, waited for); every node without N
#   kafka-cluster.sh kill DIR N       SIGKILL node N, and wait until it is gone
#   kafka-cluster.sh restart DIR N    start the stopped (or killed) node N again, on the same ports
#                                     with the same data; print its address once it serves again
#   kafka-cluster.sh address DIR N    print node N's PLAINTEXT address
#   kafka-cluster.sh run              watchdog mode for the test suite: start a cluster in a fresh
#                                     directory, print the bootstrap list and then the directory,
#                                     and kill every node and remove the directory as soon as
#                                     stdin reaches end of file (the owner exited, however)
#
# A node is ready when it logged its start (unfenced, serving) and its listener accepts
# connections; `start` waits for all three. Restarted nodes outlive the `restart` call: set
# KAFKIT_BROKER_OWNER (a pid) and a watcher kills them once that process is gone; `run` kills
# them too at its end (it reads every node's pid file).
#
# Environment: as kafka-broker.sh (KAFKIT_KAFKA_HOME, KAFKIT_BROKER_START_TIMEOUT, JAVA, MVN,
# KAFKIT_BROKER_OWNER, KAFKIT_BROKER_JVM), and KAFKIT_CLUSTER_HEAP (each JVM's heap, default 384m: three of them
# share the machine). Exit status 3: Java 17+ or Maven is missing.
set -euo pipefail

# shellcheck source=kafka-broker.sh
source "$(dirname "${BASH_SOURCE[0]}")/kafka-broker.sh"

NODES=(1 2 3)
HEAP=${KAFKIT_CLUSTER_HEAP:-384m}
BROKER_JVM=("-Xms$HEAP" "-Xmx$HEAP" "${BROKER_JVM[@]:2}")

# Node $2's server.properties in $1, with the PLAINTEXT ports in PORTS and the controller ports
# in CPORTS (indexed by node id).
write_node_properties() {
    local dir=$1 id=$2 voters="" n
    for n in "${NODES[@]}"; do
        voters+="${voters:+,}$n@127.0.0.1:${CPORTS[$n]}"
    done
    cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=$id
# A static quorum (KIP-595): the simplest that survives one node down on two cores.
controller.quorum.voters=$voters
# Loopback only: a test cluster must never be reachable from elsewhere.
listeners=PLAINTEXT://127.0.0.1:${PORTS[$id]},CONTROLLER://127.0.0.1:${CPORTS[$id]}
advertised.listeners=PLAINTEXT://127.0.0.1:${PORTS[$id]}
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
# Internal topics as on a production cluster: three replicas, two in sync to write.
offsets.topic.replication.factor=3
# One partition instead of 50: every group has the same coordinator, found and loaded quickly.
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
# A classic JoinGroup into an empty group would otherwise wait 3 s.
group.initial.rebalance.delay.ms=0
# Leadership goes back to each partition's preferred replica within 5 s of a node's return
# (default: 300 s, and only past 10% imbalance), so that a test can wait for the state the
# cluster had before the node went down.
leader.imbalance.check.interval.seconds=5
leader.imbalance.per.broker.percentage=0
# A killed node is fenced (its partitions get new leaders) after 6 s without a heartbeat
# rather than 9 s.
broker.heartbeat.interval.ms=1000
broker.session.timeout.ms=6000
# Tests create every topic they use, as the tools' users must on a real cluster.
auto.create.topics.enable=false
# Fewer threads than the defaults: three JVMs share two cores.
num.network.threads=2
num.io.threads=4
background.threads=4
num.recovery.threads.per.data.dir=1
EOF
}

# Formats and starts the three nodes in $1 (made absolute in CLUSTER_DIR); $2... an optional
# wrapper for the JVMs. On success $1/bootstrap holds the bootstrap list.
start_cluster() {
    local dir=$1 attempt n ports
    shift
    mkdir -p "$dir"
    CLUSTER_DIR=$(cd "$dir" && pwd)
    dir=$CLUSTER_DIR
    for attempt in 1 2 3; do
        PORTS=() CPORTS=()
        for n in "${NODES[@]}"; do
            PORTS[n]=$(free_port)
            CPORTS[n]=$(free_port)
        done
        [[ $(printf '%s\n' "${PORTS[@]}" "${CPORTS[@]}" | sort -u | wc -l) == 6 ]] || continue
        local formats=()
        for n in "${NODES[@]}"; do
            rm -rf "$dir/node$n"
            mkdir -p "$dir/node$n/data" "$dir/node$n/logs"
            : >"$dir/node$n/logs/broker.out"
            write_node_properties "$dir/node$n" "$n"
            # A static quorum needs no initial-controllers flag; the three formats run together.
            "$JAVA" "${TOOL_JVM[@]}" -cp "$LIBS/*" \
                -Dlog4j2.configurationFile="$KAFKA_HOME/config/tools-log4j2.properties" \
                kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$dir/node$n/server.properties" \
                >"$dir/node$n/logs/format.out" 2>&1 &
            formats+=($!)
        done
        for n in "${NODES[@]}"; do
            wait "${formats[n - 1]}" ||
                { cat "$dir/node$n/logs/format.out" >&2; die "formatting $dir/node$n/data failed"; }
        done
        # All three JVMs first: none serves before a majority of the quorum runs.
        for n in "${NODES[@]}"; do
            spawn_broker "$dir/node$n" "$@"
        done
        local failed=0
        for n in "${NODES[@]}"; do
            await_broker "$dir/node$n" "${PORTS[n]}" || { failed=$n && break; }
        done
        if ((failed == 0)); then
            ports=()
            for n in "${NODES[@]}"; do ports+=("127.0.0.1:${PORTS[n]}"); done
            (IFS=,; echo "${ports[*]}") >"$dir/bootstrap"
            return
        fi
        kill_all "$dir"
        if grep -q "Address already in use" "$dir"/node*/logs/broker.out; then
            echo "kafka-cluster: port taken meanwhile (attempt $attempt), retrying" >&2
            continue
        fi
        tail -n 40 "$dir/node$failed/logs/broker.out" >&2
        die "node $failed exited during start-up (log: $dir/node$failed/logs/broker.out)"
    done
    die "no free ports found after 3 attempts"
}

# The directory of node $2 of the cluster in $1, which must have been started there.
node_dir() {
    local dir=$1 n=$2
    [[ $n =~ ^[123]$ ]] || die "no node $n: the nodes are 1, 2 and 3"
    [[ -f $dir/node$n/server.properties ]] || die "no cluster in $dir (start one with: kafka-cluster.sh start $dir)"
    echo "$dir/node$n"
}

# Node $1's PLAINTEXT port (from its server.properties).
node_port() {
    local port
    port=$(sed -n 's|^listeners=PLAINTEXT://127.0.0.1:\([0-9]*\),.*|\1|p' "$1/server.properties")
    [[ -n $port ]] || die "no PLAINTEXT listener in $1/server.properties"
    echo "$port"
}

# SIGKILL for the node in $1, waited for (its ports free again); no pid file: nothing to do.
kill_node() {
    local node=$1 pid i
    [[ -f $node/broker.pid ]] || return 0
    pid=$(cat "$node/broker.pid")
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 300; i++)); do
        running "$pid" || break
        sleep 0.1
    done
    rm -f "$node/broker.pid" "$node/bootstrap"
}

kill_all() {
    local n
    for n in "${NODES[@]}"; do
        if [[ -d $1/node$n ]]; then kill_node "$1/node$n"; fi
    done
}

# Starts the node in $1 again (not running: stopped or killed) and waits until it serves.
restart_node() {
    local node=$1 old i port
    if [[ -f $node/broker.pid ]]; then
        old=$(cat "$node/broker.pid")
        for ((i = 0; i < 100; i++)); do
            running "$old" || break
            sleep 0.1
        done
        ! running "$old" || die "node $node is still running (pid $old); stop or kill it first"
    fi
    port=$(node_port "$node")
    relaunch "$node" "$port" || die "the node exited during restart (log: $node/logs/broker.out)"
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
start)
    check_java
    resolve_libs
    start_cluster "${1:-$KAFKA_HOME/cluster}"
    cat "$CLUSTER_DIR/bootstrap"
    echo "$CLUSTER_DIR"
    ;;
stop)
    [[ $# -ge 1 ]] || die "usage: kafka-cluster.sh stop DIR [N]"
    if [[ $# -ge 2 ]]; then
        stop_broker "$(node_dir "$1" "$2")"
    else
        for n in "${NODES[@]}"; do
            node=$(node_dir "$1" "$n")
            if [[ -f $node/broker.pid ]]; then stop_broker "$node"; fi
        done
    fi
    ;;
kill)
    [[ $# -ge 2 ]] || die "usage: kafka-cluster.sh kill DIR N"
    node=$(node_dir "$1" "$2")
    [[ -f $node/broker.pid ]] || die "node $2 of $1 is not running"
    kill_node "$node"
    ;;
restart)
    [[ $# -ge 2 ]] || die "usage: kafka-cluster.sh restart DIR N"
    check_java
    resolve_libs
    node=$(node_dir "$(cd "$1" && pwd)" "$2")
    restart_node "$node"
    cat "$node/bootstrap"
    ;;
address)
    [[ $# -ge 2 ]] || die "usage: kafka-cluster.sh address DIR N"
    echo "127.0.0.1:$(node_port "$(node_dir "$1" "$2")")"
    ;;
run)
    check_java
    resolve_libs
    mkdir -p "$KAFKA_HOME/runs"
    # Sweep directories left by watchdogs that were SIGKILLed (their nodes died with them, or
    # with their owner).
    for old in "$KAFKA_HOME"/runs/cluster.*; do
        [[ -d $old ]] || continue
        alive=0
        for pidfile in "$old"/node*/broker.pid; do
            if [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then alive=1; fi
        done
        # A directory younger than a start-up may belong to a watchdog still starting.
        if ((alive == 0)) && [[ -n $(find "$old" -maxdepth 0 -mmin +5) ]]; then rm -rf "$old"; fi
    done
    dir=$(mktemp -d "$KAFKA_HOME/runs/cluster.XXXXXX")
    WATCH_STDIN=1
    cleanup() {
        # Throwaway data: SIGKILL is instant. Nodes restarted by other calls are in the pid
        # files; the ones this script started are in BROKER_PIDS even before their files.
        local pid
        for pid in "${BROKER_PIDS[@]}"; do
            kill -KILL "$pid" 2>/dev/null || true
            # Reaped here, so that bash does not report each as "Killed".
            wait "$pid" 2>/dev/null || true
        done
        kill_all "$dir"
        rm -rf "$dir"
    }
    trap cleanup EXIT
    trap 'exit 143' TERM INT HUP
    trap 'exit 141' PIPE
    # If this script itself is SIGKILLed, the kernel kills the JVMs it started (util-linux
    # setpriv); restarted nodes have the owner watcher instead.
    wrapper=()
    if setpriv --help 2>/dev/null | grep -q pdeathsig; then
        wrapper=(setpriv --pdeathsig KILL --)
    fi
    start_cluster "$dir" "${wrapper[@]}"
    # One write for both lines (see kafka-broker.sh run).
    printf '%s\n%s\n' "$(<"$dir/bootstrap")" "$dir"
    # Nothing more for the owner, whose ends of the pipes close when it exits: bash's notice of
    # a node killed meanwhile ("Killed ...") would then be written to a closed pipe, and the
    # SIGPIPE would end this script before its cleanup.
    exec >/dev/null 2>&1
    while read -r _; do :; done || true
    ;;
*)
    sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
