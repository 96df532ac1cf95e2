#!/usr/bin/env bash
# A real Apache Kafka broker for the tests, built from Maven Central jars (no tarball, no Docker).
#
#   kafka-broker.sh libs             resolve the Kafka jars into the cache; print the libs dir
#   kafka-broker.sh start [DIR]      format DIR and start one KRaft broker+controller on 127.0.0.1
#                                    in the background; print its bootstrap address (PLAINTEXT),
#                                    then DIR
#   kafka-broker.sh stop [DIR]       stop the broker started in DIR (clean shutdown)
#   kafka-broker.sh restart DIR      start the stopped (or killed) broker of DIR again, on the same
#                                    ports with the same data; print its bootstrap address
#   kafka-broker.sh run              watchdog mode for the test suite: start a broker in a fresh
#                                    directory, print its bootstrap address and then the directory
#                                    (see "Secured listeners" below), and kill it and remove
#                                    the directory as soon as stdin reaches end of file (that is,
#                                    when the process that holds the other end of the pipe exits,
#                                    however it exits)
#   kafka-broker.sh tool CLASS ARGS  run a Java tool (e.g. org.apache.kafka.tools.TopicCommand)
#                                    from the same jars: the oracle for output
#   kafka-broker.sh toolserver       one JVM that runs short tools on request (ToolServer.java,
#                                    compiled here once): print its port, exit when stdin ends
#
# Secured listeners: besides PLAINTEXT the broker has SSL (client certificate required),
# SASL_SSL and SASL_PLAINTEXT listeners, with SASL mechanisms PLAIN, SCRAM-SHA-256 and
# SCRAM-SHA-512 for user alice (password in DIR/listeners). DIR/listeners holds NAME=host:port
# lines and the user; DIR/tls holds the per-run CA (ca.pem), a CA that signed nothing
# (other-ca.pem) and the client's key and certificate (client.pem = key + chain, client.key,
# client.crt), all PEM and unencrypted. The server certificate names only IP 127.0.0.1.
#
# Environment: KAFKIT_KAFKA_HOME (cache dir, default <repo>/target/kafka-$KAFKA_VERSION),
# KAFKIT_BROKER_START_TIMEOUT (seconds, default 120), JAVA (default java), MVN (default mvn),
# KAFKIT_BROKER_OWNER (start and restart: a pid; the broker is killed once that process is gone),
# KAFKIT_BROKER_JVM (the brokers' JVM settings: lean, the default, or upstream, Kafka's own;
# see BROKER_JVM).
# KAFKIT_BROKER_EXTRA_PROPERTIES (start: lines appended to the broker's server.properties).
# Exit status 3 means a prerequisite is missing (Java 17+ or Maven): the caller may skip.
set -euo pipefail

KAFKA_VERSION=4.3.1
# The log4j-core version that kafka-server brings in transitively (checked by `libs`): the SLF4J
# binding must match it, and it is in no Kafka pom (the tarball adds it by hand).
LOG4J_VERSION=2.25.4
# Pinned so that Maven 3.8 does not go looking for the newest plugin on every run.
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
# Any fixed 22-character base64url UUID: each broker gets its own data dir, so ids never meet.
CLUSTER_ID=4L6g3nShT-eMCtK--X86sw

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KAFKA_HOME=${KAFKIT_KAFKA_HOME:-$REPO/target/kafka-$KAFKA_VERSION}
LIBS=$KAFKA_HOME/libs
JAVA=${JAVA:-java}
MVN=${MVN:-mvn}
START_TIMEOUT=${KAFKIT_BROKER_START_TIMEOUT:-120}
# The brokers' JVM options, with a smaller heap than kafka-run-class.sh's 1G (plenty here).
# The test brokers share two cores with the suite, so by default they spend as little CPU as
# they can: the C1-only JIT and the serial collector take about a fifth less CPU to start and
# two fifths less while idle (5.2 -> 4.0 core-s to ready, 1.6 -> 1.0 core-s per idle 30 s, on
# the CI machine). KAFKIT_BROKER_JVM=upstream gives kafka-run-class.sh's own settings (G1 and
# the optimising compiler), with which the benchmarks measure Kafka as its users run it.
# The heap comes first: kafka-cluster.sh replaces those two options with its own.
BROKER_JVM=(-Xms512m -Xmx512m -Djava.awt.headless=true)
if [[ ${KAFKIT_BROKER_JVM:-lean} == upstream ]]; then
    BROKER_JVM+=(-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
        -XX:+ExplicitGCInvokesConcurrent)
else
    BROKER_JVM+=(-XX:+UseSerialGC -XX:TieredStopAtLevel=1)
fi
# Tools are short-lived: the C1-only JIT roughly halves their start-up on two cores.
TOOL_JVM=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true)

# Class data sharing (CDS): the first run of each main class records the classes it loaded in an
# archive, which its JVM writes as it exits; later runs map that archive and start about twice as
# fast (a Java tool: 4.5 s -> 2 s on a loaded two-core machine). The JVMs are exec'ed or
# backgrounded, so signals reach them, and a finished recording (its JVM gone) is moved into place
# by the next run. Archives are kept per JDK build and per download of the jars (`check_java`
# sets JDK_BUILD), as a JVM silently skips one that another JDK wrote or whose jars changed.
# -Xlog:cds*=off keeps CDS's notes off the tools' stdout, which tests compare.
# Sets SHARE to the JVM options for main class $1.
class_sharing() {
    local jars part pid
    jars=$(stat -c %Y "$LIBS/.complete" 2>/dev/null || echo 0)
    local dir=$KAFKA_HOME/cds/${JDK_BUILD:-unknown}-$jars
    local archive=$dir/$1.jsa
    mkdir -p "$dir"
    for part in "$dir/$1".*.part; do
        [[ -f $part ]] || continue
        pid=${part%.part}
        pid=${pid##*.}
        if kill -0 "$pid" 2>/dev/null; then continue; fi
        # Its JVM is gone. A dynamic archive starts with its magic number, written last: without
        # it the JVM was killed while writing, and the file would turn sharing off altogether.
        # The first whole recording becomes the archive; others go.
        if [[ -f $archive || $(od -An -tx4 -N4 "$part" 2>/dev/null) != *f00baba8* ]]; then
            rm -f "$part"
        else
            mv -f "$part" "$archive" 2>/dev/null || true
        fi
    done
    SHARE=('-Xlog:cds*=off')
    if [[ -f $archive ]]; then
        SHARE+=(-XX:SharedArchiveFile="$archive")
    else
        # $$ is the JVM's pid once exec'ed.
        SHARE+=(-XX:ArchiveClassesAtExit="$dir/$1.$$.part")
    fi
}

die() { echo "kafka-broker: $*" >&2; exit 1; }
missing() { echo "kafka-broker: $*" >&2; exit 3; }

check_java() {
    command -v "$JAVA" >/dev/null 2>&1 || missing "java not found (the broker needs Java 17+)"
    local v about
    about=$("$JAVA" -version 2>&1)
    # The version (17.0.12, say) and a checksum of the whole build text name the directory of
    # the class-sharing archives.
    JDK_BUILD=$(sed -n 's/.*version "\([^"]*\)".*/\1/p' <<<"$about" | head -n1)-$(cksum <<<"$about" | cut -d' ' -f1)
    v=$(sed -n 's/.*version "\([0-9]*\).*/\1/p' <<<"$about" | head -n1)
    [[ -n $v && $v -ge 17 ]] || missing "Java 17+ is needed to run Kafka $KAFKA_VERSION, found: $("$JAVA" -version 2>&1 | head -n1)"
}

# Writes the logging configs. Properties format, so no YAML jar is needed. Every call of this
# script writes them, while other calls' JVMs may be reading them: each file is replaced by a
# rename, never truncated in place (a broker that read an empty file would log nothing below
# ERROR, so its start line would never come).
write_configs() {
    mkdir -p "$KAFKA_HOME/config"
    replace_file "$KAFKA_HOME/config/log4j2.properties" <<'EOF'
appender.out.type=Console
appender.out.name=STDOUT
appender.out.layout.type=PatternLayout
appender.out.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=INFO
rootLogger.appenderRef.out.ref=STDOUT
EOF
    # Tools: warnings only, on stderr, so that their stdout can be compared byte for byte.
    replace_file "$KAFKA_HOME/config/tools-log4j2.properties" <<'EOF'
appender.err.type=Console
appender.err.name=STDERR
appender.err.target=SYSTEM_ERR
appender.err.layout.type=PatternLayout
appender.err.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=WARN
rootLogger.appenderRef.err.ref=STDERR
EOF
}

# Replaces file $1 with stdin atomically (a reader sees the old or the new text, whole), and
# leaves it alone when it already holds that text.
replace_file() {
    local file=$1 tmp
    tmp=$(mktemp "$file.XXXXXX")
    cat >"$tmp"
    if cmp -s "$tmp" "$file"; then
        rm -f "$tmp"
    else
        chmod 644 "$tmp"
        mv -f "$tmp" "$file"
    fi
}

# Resolves kafka_2.13 (the broker and StorageTool), kafka-tools (the CLI oracle) and the SLF4J
# binding into $LIBS. Reused when a previous run completed (marker file); concurrent callers
# (several test binaries at once) serialise on a lock, and a half-copied dir is never used.
resolve_libs() {
    mkdir -p "$KAFKA_HOME"
    if [[ -f $LIBS/.complete ]]; then
        write_configs
        return
    fi
    command -v "$MVN" >/dev/null 2>&1 || missing "mvn not found (Maven resolves the Kafka jars from Maven Central)"
    exec 8>"$KAFKA_HOME/.libs.lock"
    flock 8
    if [[ ! -f $LIBS/.complete ]]; then
        local pom=$KAFKA_HOME/pom.xml tmp=$KAFKA_HOME/libs.tmp
        # A packaging-pom project used only to resolve jars: copy-dependencies needs a project.
        cat >"$pom" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.kafkit</groupId><artifactId>kafka-test-runtime</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j-impl</artifactId><version>$LOG4J_VERSION</version></dependency>
  </dependencies>
</project>
EOF
        rm -rf "$tmp"
        echo "kafka-broker: resolving Kafka $KAFKA_VERSION jars from Maven Central into $LIBS" >&2
        if ! "$MVN" -B -q -f "$pom" "$DEPENDENCY_PLUGIN:copy-dependencies" \
            -DoutputDirectory="$tmp" -DincludeScope=runtime >"$KAFKA_HOME/mvn.log" 2>&1; then
            tail -n 30 "$KAFKA_HOME/mvn.log" >&2
            die "mvn could not resolve the Kafka jars (full log: $KAFKA_HOME/mvn.log)"
        fi
        # slf4j 1.7 needs the log4j-slf4j-impl binding and log4j-core at the same version; with
        # slf4j 2 or a different log4j-core the broker would log nothing. Fail loudly instead.
        ls "$tmp"/slf4j-api-1.* >/dev/null 2>&1 ||
            die "Kafka $KAFKA_VERSION no longer uses slf4j 1.x: switch to log4j-slf4j2-impl"
        [[ -f $tmp/log4j-core-$LOG4J_VERSION.jar ]] ||
            die "log4j-core is not $LOG4J_VERSION in Kafka $KAFKA_VERSION: update LOG4J_VERSION ($(cd "$tmp" && ls log4j-core-*))"
        touch "$tmp/.complete"
        rm -rf "$LIBS"
        mv "$tmp" "$LIBS"
    fi
    exec 8>&-
    write_configs
}

# The lowest port the kernel hands out to outgoing connections. Listening ports are picked
# below it: a killed broker restarts on its old ports, and one of the many client connections
# of a parallel test run must not have taken a port in the meantime (which failed CI once).
EPHEMERAL_LOW=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
((EPHEMERAL_LOW > 12000)) || EPHEMERAL_LOW=61000

# A port nobody listens on now. Checked by connecting, so there is a small race with other
# processes; start_broker retries with new ports when the bind fails.
free_port() {
    local p
    while :; do
        p=$((10000 + RANDOM % (EPHEMERAL_LOW - 10000)))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
}

# The SASL user the secured listeners accept (PLAIN and both SCRAMs), and its password.
SASL_USER=alice
SASL_PASSWORD=alice-s3cret-9Qz

# A throwaway CA, the broker's certificate (SAN IP:127.0.0.1 only, so that connecting by the name
# localhost exercises hostname verification) and a client certificate for mutual TLS, in $1/tls.
# EC P-256 keys: generated in milliseconds, and both Java and rustls accept them.
write_certificates() {
    local tls=$1/tls
    mkdir -p "$tls"
    (
        cd "$tls"
        ossl() { openssl "$@" 2>/dev/null; }
        ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj "/CN=kafkit test CA" -keyout ca.key -out ca.pem
        ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj "/CN=kafkit unrelated CA" -keyout other-ca.key -out other-ca.pem
        for who in server client; do
            ossl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=kafkit $who" \
                -keyout "$who.key" -out "$who.csr"
            if [[ $who == server ]]; then
                printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$who.ext"
            else
                printf 'extendedKeyUsage=clientAuth\n' >"$who.ext"
            fi
            ossl x509 -req -in "$who.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
                -extfile "$who.ext" -out "$who.crt"
            # Kafka's PEM key store: an unencrypted PKCS#8 key, then the certificate chain.
            cat "$who.key" "$who.crt" >"$who.pem"
        done
    ) || die "openssl could not make the test certificates in $tls"
    [[ -s $tls/server.pem && -s $tls/client.pem ]] || die "openssl made no certificates in $tls"
}

write_server_properties() {
    local dir=$1 port=$2 cport=$3 sslport=$4 saslsslport=$5 saslport=$6
    local plain_jaas="org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER=\"$SASL_PASSWORD\";"
    local scram_jaas="org.apache.kafka.common.security.scram.ScramLoginModule required;"
    # Java .properties have no trailing comments: every comment is on its own line.
    cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
# Dynamic quorum (KIP-853), formatted with --standalone.
controller.quorum.bootstrap.servers=127.0.0.1:$cport
# Loopback only: a test broker must never be reachable from elsewhere.
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SSL://127.0.0.1:$sslport,SASL_SSL://127.0.0.1:$saslsslport,SASL_PLAINTEXT://127.0.0.1:$saslport
advertised.listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SSL://127.0.0.1:$sslport,SASL_SSL://127.0.0.1:$saslsslport,SASL_PLAINTEXT://127.0.0.1:$saslport
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT
# TLS for the SSL and SASL_SSL listeners: PEM stores made by write_certificates.
ssl.keystore.type=PEM
ssl.keystore.location=$dir/tls/server.pem
ssl.truststore.type=PEM
ssl.truststore.location=$dir/tls/ca.pem
# The SSL listener authenticates clients by certificate (mutual TLS).
listener.name.ssl.ssl.client.auth=required
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=$plain_jaas
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=$scram_jaas
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=$scram_jaas
listener.name.sasl_plaintext.plain.sasl.jaas.config=$plain_jaas
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=$scram_jaas
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=$scram_jaas
log.dirs=$dir/data
num.partitions=1
offsets.topic.replication.factor=1
# One partition instead of 50: the first group operation is much faster.
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# A classic JoinGroup into an empty group would otherwise wait 3 s.
group.initial.rebalance.delay.ms=0
# The log cleaner looks for work every 15 s by default: compaction tests would wait that long.
log.cleaner.backoff.ms=500
# Tests create every topic they use, as the tools' users must on a real cluster.
auto.create.topics.enable=false
EOF
    # A test's own broker may differ (e.g. a classic-only group coordinator): extra lines.
    if [[ -n ${KAFKIT_BROKER_EXTRA_PROPERTIES:-} ]]; then
        printf '%s\n' "$KAFKIT_BROKER_EXTRA_PROPERTIES" >>"$dir/server.properties"
    fi
}

BROKER_PID=
# Every JVM this script started (a cluster starts several).
BROKER_PIDS=()
WATCH_STDIN=0

# Starts the JVM of the formatted broker in $1 (listening on port $2; $3... an optional
# wrapper) and waits until it serves: then $1/bootstrap holds the address. Fails (status 1)
# when the JVM exits during start-up; dies on the start timeout.
launch_broker() {
    local dir=$1 port=$2
    shift 2
    spawn_broker "$dir" "$@"
    await_broker "$dir" "$port"
}

# Starts the JVM of the formatted broker in $1 ($2... an optional wrapper) in the background,
# without waiting: $1/broker.pid holds its pid, and $1/logs/start-count how many times the log
# said it started before (for await_broker). A cluster starts all its nodes this way first: a
# node serves only once a majority of the controller quorum runs.
spawn_broker() {
    local dir=$1 pid
    shift
    grep -c "Kafka Server started" "$dir/logs/broker.out" >"$dir/logs/start-count" || true
    # stdin from /dev/null: the JVM must not hold the watchdog's pipe open.
    "$@" "$JAVA" "${BROKER_JVM[@]}" -cp "$LIBS/*" \
        -Dlog4j2.configurationFile="$KAFKA_HOME/config/log4j2.properties" \
        -Dkafka.logs.dir="$dir/logs" kafka.Kafka "$dir/server.properties" \
        </dev/null >>"$dir/logs/broker.out" 2>&1 &
    pid=$!
    BROKER_PID=$pid
    BROKER_PIDS+=("$pid")
    echo "$pid" >"$dir/broker.pid"
    watch_owner "$pid"
}

# Waits until the broker spawned in $1 serves on port $2: then $1/bootstrap holds the address.
# Fails (status 1) when the JVM exits during start-up; dies on the start timeout.
await_broker() {
    local dir=$1 port=$2 pid deadline started
    pid=$(cat "$dir/broker.pid")
    started=$(cat "$dir/logs/start-count")
    deadline=$((SECONDS + START_TIMEOUT))
    # Ready = KafkaRaftServer logged its start (the broker is unfenced and serving) and the
    # listener accepts connections. A restart appends to the log: count the start lines.
    while (($(grep -c "Kafka Server started" "$dir/logs/broker.out" || true) <= started)) ||
        ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null; then
            break
        fi
        # Watchdog mode: stdin turns readable only at end of file (the owner never writes),
        # i.e. the owner died while the broker was starting. The EXIT trap kills the broker.
        if [[ $WATCH_STDIN == 1 ]] && read -r -t 0; then
            die "the process that asked for the broker went away during start-up"
        fi
        if ((SECONDS >= deadline)); then
            kill -9 "$pid" 2>/dev/null || true
            tail -n 40 "$dir/logs/broker.out" >&2
            die "the broker did not start within ${START_TIMEOUT}s (log: $dir/logs/broker.out)"
        fi
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "127.0.0.1:$port" >"$dir/bootstrap"
        return 0
    fi
    wait "$pid" 2>/dev/null || true
    return 1
}

# Starts the stopped (or killed) broker in $1 again on its port $2, and waits until it serves.
# A port still held for a moment by the killed JVM's sockets is waited out: up to 5 tries while
# the log says the bind failed. On failure the new run's errors go to stderr.
relaunch() {
    local dir=$1 port=$2 attempt lines
    for ((attempt = 1; attempt <= 5; attempt++)); do
        lines=$(wc -l <"$dir/logs/broker.out")
        launch_broker "$dir" "$port" && return 0
        if ! tail -n "+$((lines + 1))" "$dir/logs/broker.out" | grep -q "Address already in use"; then
            break
        fi
        echo "kafka-broker: port of $dir still taken (attempt $attempt), retrying" >&2
        sleep 2
    done
    tail -n "+$((lines + 1))" "$dir/logs/broker.out" | grep -E "ERROR|FATAL|Exception" | head -n 20 >&2
    tail -n 10 "$dir/logs/broker.out" >&2
    return 1
}

# With KAFKIT_BROKER_OWNER set, a detached watcher kills broker $1 once the owner process is
# gone, however it ended (a test that panicked or was killed before stopping its broker).
watch_owner() {
    local pid=$1 owner=${KAFKIT_BROKER_OWNER:-}
    [[ -n $owner ]] || return 0
    (
        while kill -0 "$pid" 2>/dev/null; do
            if ! kill -0 "$owner" 2>/dev/null; then
                kill -KILL "$pid" 2>/dev/null || true
                break
            fi
            sleep 1
        done
    ) </dev/null >/dev/null 2>&1 &
    disown
}

# Formats $1 and starts the broker in the background; on success $1/bootstrap holds the address
# and $1/broker.pid the JVM's pid. $2 is an optional wrapper (setpriv --pdeathsig) for the JVM.
start_broker() {
    local dir=$1 attempt port cport sslport saslsslport saslport
    shift
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    write_certificates "$dir"
    for attempt in 1 2 3; do
        port=$(free_port)
        cport=$(free_port)
        sslport=$(free_port)
        saslsslport=$(free_port)
        saslport=$(free_port)
        [[ $(printf '%s\n' "$port" "$cport" "$sslport" "$saslsslport" "$saslport" | sort -u | wc -l) == 5 ]] || continue
        rm -rf "$dir/data"
        mkdir -p "$dir/data" "$dir/logs"
        : >"$dir/logs/broker.out"
        write_server_properties "$dir" "$port" "$cport" "$sslport" "$saslsslport" "$saslport"
        # SCRAM credentials live in the cluster metadata: written at format time.
        "$JAVA" "${TOOL_JVM[@]}" -cp "$LIBS/*" \
            -Dlog4j2.configurationFile="$KAFKA_HOME/config/tools-log4j2.properties" \
            kafka.tools.StorageTool format --standalone -t "$CLUSTER_ID" \
            --add-scram "SCRAM-SHA-256=[name=$SASL_USER,password=$SASL_PASSWORD]" \
            --add-scram "SCRAM-SHA-512=[name=$SASL_USER,password=$SASL_PASSWORD]" \
            -c "$dir/server.properties" >"$dir/logs/format.out" 2>&1 ||
            { cat "$dir/logs/format.out" >&2; die "formatting $dir/data failed"; }
        if launch_broker "$dir" "$port" "$@"; then
            printf '%s\n' "SSL=127.0.0.1:$sslport" "SASL_SSL=127.0.0.1:$saslsslport" \
                "SASL_PLAINTEXT=127.0.0.1:$saslport" "USER=$SASL_USER" \
                "PASSWORD=$SASL_PASSWORD" >"$dir/listeners"
            return
        fi
        if grep -q "Address already in use" "$dir/logs/broker.out"; then
            echo "kafka-broker: port taken meanwhile (attempt $attempt), retrying" >&2
            continue
        fi
        tail -n 40 "$dir/logs/broker.out" >&2
        die "the broker exited during start-up (log: $dir/logs/broker.out)"
    done
    die "no free ports found after 3 attempts"
}

# Whether process $1 runs: a zombie (killed, not yet reaped) does not.
running() {
    kill -0 "$1" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]
}

stop_broker() {
    local dir=$1 pid i
    [[ -f $dir/broker.pid ]] || die "no broker.pid in $dir"
    pid=$(cat "$dir/broker.pid")
    if kill -TERM "$pid" 2>/dev/null; then
        # A clean KRaft shutdown takes a few seconds; do not wait forever.
        for ((i = 0; i < 300; i++)); do
            running "$pid" || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/broker.pid" "$dir/bootstrap"
}

# Sourced (by kafka-cluster.sh) for its functions: no command to run.
if [[ ${BASH_SOURCE[0]} != "$0" ]]; then
    return 0
fi

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
libs)
    check_java
    resolve_libs
    echo "$LIBS"
    ;;
start)
    check_java
    resolve_libs
    dir=${1:-$KAFKA_HOME/broker}
    start_broker "$dir"
    cat "$dir/bootstrap"
    echo "$dir"
    ;;
stop)
    stop_broker "${1:-$KAFKA_HOME/broker}"
    ;;
restart)
    [[ $# -ge 1 ]] || die "usage: kafka-broker.sh restart DIR"
    check_java
    resolve_libs
    dir=$(cd "$1" && pwd)
    [[ -f $dir/server.properties ]] || die "no broker in $dir (start one with: kafka-broker.sh start $dir)"
    if [[ -f $dir/broker.pid ]]; then
        # A JVM killed a moment ago takes a while to go (and to free its ports).
        old=$(cat "$dir/broker.pid")
        for ((i = 0; i < 100; i++)); do
            running "$old" || break
            sleep 0.1
        done
        ! running "$old" || die "the broker of $dir is still running (pid $old); stop it first"
    fi
    port=$(sed -n 's|^listeners=PLAINTEXT://127.0.0.1:\([0-9]*\),.*|\1|p' "$dir/server.properties")
    [[ -n $port ]] || die "no PLAINTEXT listener in $dir/server.properties"
    relaunch "$dir" "$port" || die "the broker exited during restart (log: $dir/logs/broker.out)"
    cat "$dir/bootstrap"
    ;;
run)
    check_java
    resolve_libs
    mkdir -p "$KAFKA_HOME/runs"
    # Sweep directories left by watchdogs that were SIGKILLed (their broker died with them).
    for old in "$KAFKA_HOME"/runs/broker.*; do
        [[ -d $old ]] || continue
        if [[ ! -f $old/broker.pid ]] || ! kill -0 "$(cat "$old/broker.pid")" 2>/dev/null; then
            # A directory younger than a start-up may belong to a watchdog still starting.
            if [[ -n $(find "$old" -maxdepth 0 -mmin +5) ]]; then rm -rf "$old"; fi
        fi
    done
    dir=$(mktemp -d "$KAFKA_HOME/runs/broker.XXXXXX")
    WATCH_STDIN=1
    cleanup() {
        # The data is throwaway, so no clean shutdown: SIGKILL is instant, and the broker must
        # be gone by the time the test run that owned it has finished.
        if [[ -n $BROKER_PID ]]; then
            kill -KILL "$BROKER_PID" 2>/dev/null || true
            wait "$BROKER_PID" 2>/dev/null || true
        fi
        rm -rf "$dir"
    }
    trap cleanup EXIT
    # Signals (and a write to the owner's closed stdout) end the script through the EXIT trap.
    trap 'exit 143' TERM INT HUP
    trap 'exit 141' PIPE
    # If this script itself is SIGKILLed, the kernel sends the JVM SIGKILL too (util-linux setpriv).
    wrapper=()
    if setpriv --help 2>/dev/null | grep -q pdeathsig; then
        wrapper=(setpriv --pdeathsig KILL --)
    fi
    start_broker "$dir" "${wrapper[@]}"
    # One write for both lines: a reader that wants only the first may close the pipe after it,
    # and a later write would then end this watchdog (SIGPIPE).
    printf '%s\n%s\n' "$(<"$dir/bootstrap")" "$dir"
    # Blocks until the owner's end of the pipe closes. `|| true`: EOF is the normal end.
    while read -r _; do :; done || true
    ;;
tool)
    [[ $# -ge 1 ]] || die "usage: kafka-broker.sh tool CLASS [ARGS...]"
    check_java
    resolve_libs
    cls=$1
    shift
    class_sharing "$cls"
    exec "$JAVA" "${TOOL_JVM[@]}" "${SHARE[@]}" -cp "$LIBS/*" \
        -Dlog4j2.configurationFile="$KAFKA_HOME/config/tools-log4j2.properties" "$cls" "$@"
    ;;
toolserver)
    check_java
    resolve_libs
    # Compiled once per version of its source, into a directory named by its checksum; a
    # half-written one is never used (compiled aside, then renamed into place).
    src=$REPO/tests/broker/ToolServer.java
    classes=$KAFKA_HOME/toolserver/$(cksum <"$src" | cut -d' ' -f1)
    if [[ ! -f $classes/ToolServer.class ]]; then
        command -v javac >/dev/null 2>&1 || missing "javac not found (the tool server is compiled from source: a JDK is needed)"
        mkdir -p "$KAFKA_HOME/toolserver"
        tmp=$(mktemp -d "$KAFKA_HOME/toolserver/build.XXXXXX")
        # --release 17: loadable by any JVM check_java accepts, whichever JDK's javac this is.
        javac -nowarn --release 17 -d "$tmp" -cp "$LIBS/*" "$src" >&2 ||
            { rm -rf "$tmp"; die "ToolServer.java does not compile (above)"; }
        mv -T "$tmp" "$classes" 2>/dev/null || rm -rf "$tmp"
    fi
    # A few hundred tool runs in one JVM: more heap than one tool needs, and UTF-8 output
    # whatever the caller's locale. Without direct encoders log4j writes a line and flushes it
    # in one step on the logging thread, so the line goes to that thread's call's stderr
    # (with them, it fills a buffer shared by all threads, which another call's thread may
    # flush into its own stderr).
    exec "$JAVA" -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
        -Dfile.encoding=UTF-8 -Dsun.stdout.encoding=UTF-8 -Dsun.stderr.encoding=UTF-8 \
        -Dlog4j2.enableDirectEncoders=false \
        -cp "$LIBS/*:$classes" \
        -Dlog4j2.configurationFile="$KAFKA_HOME/config/tools-log4j2.properties" ToolServer
    ;;
*)
    sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
