#!/usr/bin/env bash
# Builds the applications that tests/server/apps.rs runs against kafka-server-start, into
# <repo>/target/apps (kept between runs; KAFKIT_APPS_DIR overrides): the jars of pom.xml (Kafka
# Streams, Kafka Connect with the file connectors, 4.3.1, and the log4j2 binding) in <dir>/libs,
# resolved from Maven Central through ~/.m2 with maven-dependency-plugin, and WordCount.java
# compiled into <dir>/classes. Each part is redone only when its sources changed; parallel
# callers wait on a lock. Prints the directory. Exit status 3: java, javac (17 or newer) or mvn
# missing.
set -euo pipefail

# Pinned so that Maven does not look for the newest plugin on every run.
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SRC/../../.." && pwd)
DIR=${KAFKIT_APPS_DIR:-$REPO/target/apps}
JAVA=${JAVA:-java}
JAVAC=${JAVAC:-javac}
MVN=${MVN:-mvn}

missing() { echo "apps setup: $*" >&2; exit 3; }
die() { echo "apps setup: $*" >&2; exit 1; }

command -v "$JAVA" >/dev/null 2>&1 || missing "java not found (Kafka Streams and Connect 4.3.1 need Java 17+)"
command -v "$JAVAC" >/dev/null 2>&1 || missing "javac not found (a JDK 17+ compiles WordCount.java; a JRE is not enough)"
command -v "$MVN" >/dev/null 2>&1 || missing "mvn not found (Maven resolves the Kafka Streams and Connect jars)"
major=$("$JAVAC" -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p' | head -n1)
[[ -n $major && $major -ge 17 ]] || missing "javac 17+ is needed, found: $("$JAVAC" -version 2>&1 | head -n1)"

mkdir -p "$DIR"
# One builder at a time: the tests run in parallel and may all call this first.
exec 9>"$DIR/.lock"
flock 9

# The jars: a complete copy (marker file) made from this very pom, else resolved again into a
# temporary directory that replaces the old one only once whole.
pom_stamp=$(sha256sum <"$SRC/pom.xml" | cut -d' ' -f1)
if [[ ! -f $DIR/libs/.complete || $(cat "$DIR/libs/.complete") != "$pom_stamp" ]]; then
    # Maven runs on a copy, so that nothing it writes lands in the source tree.
    cp "$SRC/pom.xml" "$DIR/pom.xml"
    rm -rf "$DIR/libs.tmp"
    echo "apps setup: resolving Kafka Streams and Connect jars into $DIR/libs" >&2
    if ! "$MVN" -B -q -f "$DIR/pom.xml" "$DEPENDENCY_PLUGIN:copy-dependencies" \
        -DoutputDirectory="$DIR/libs.tmp" -DincludeScope=runtime >"$DIR/mvn.log" 2>&1; then
        tail -n 30 "$DIR/mvn.log" >&2
        die "mvn could not resolve the jars of tests/server/apps/pom.xml (full log: $DIR/mvn.log)"
    fi
    echo "$pom_stamp" >"$DIR/libs.tmp/.complete"
    rm -rf "$DIR/libs"
    mv "$DIR/libs.tmp" "$DIR/libs"
fi

# The programs, compiled against those jars: again when a source or the jars changed.
src_stamp=$(cat "$SRC"/*.java "$DIR/libs/.complete" | sha256sum | cut -d' ' -f1)
if [[ ! -f $DIR/classes/.complete || $(cat "$DIR/classes/.complete") != "$src_stamp" ]]; then
    rm -rf "$DIR/classes.tmp"
    mkdir -p "$DIR/classes.tmp"
    "$JAVAC" --release 17 -nowarn -encoding UTF-8 -cp "$DIR/libs/*" -d "$DIR/classes.tmp" \
        "$SRC"/*.java >"$DIR/javac.log" 2>&1 || {
        cat "$DIR/javac.log" >&2
        die "javac failed on tests/server/apps/*.java"
    }
    echo "$src_stamp" >"$DIR/classes.tmp/.complete"
    rm -rf "$DIR/classes"
    mv "$DIR/classes.tmp" "$DIR/classes"
fi

# The applications' logging: to stderr (which the tests keep in a file), the Streams and Connect
# runtimes at INFO, everything else at WARN.
cat >"$DIR/log4j2.properties.tmp" <<'LOG'
appender.err.type=Console
appender.err.name=STDERR
appender.err.target=SYSTEM_ERR
appender.err.layout.type=PatternLayout
appender.err.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=WARN
rootLogger.appenderRef.err.ref=STDERR
logger.streams.name=org.apache.kafka.streams
logger.streams.level=INFO
logger.connect.name=org.apache.kafka.connect
logger.connect.level=INFO
LOG
mv "$DIR/log4j2.properties.tmp" "$DIR/log4j2.properties"
echo "$DIR"
