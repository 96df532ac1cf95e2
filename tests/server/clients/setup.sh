#!/usr/bin/env bash
# Installs the Kafka clients written in other languages that the server tests run against
# kafka-server-start, into <repo>/target/clients (kept between runs): kafka-python and
# confluent-kafka (librdkafka's binding) from PyPI in a virtualenv, kafkajs from npm, and
# franz-go (Go module proxy) built into the program franz/main.go as <dir>/franz, with its
# modules and build cache under <dir>/go. Prints that directory. Exit status 3: python3, npm or
# go (1.26 or newer, which franz-go needs) missing.
set -euo pipefail

KAFKA_PYTHON=3.0.12
# librdkafka's Python binding (its wheel bundles librdkafka): transactions.
CONFLUENT_KAFKA=2.16.2
KAFKAJS=2.2.4

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
DIR=${KAFKIT_CLIENTS_DIR:-$REPO/target/clients}
mkdir -p "$DIR"
# One installer at a time: the tests run in parallel and may all call this first.
exec 9>"$DIR/.lock"
flock 9

command -v python3 >/dev/null || { echo "setup: python3 not found" >&2; exit 3; }
command -v npm >/dev/null || { echo "setup: npm not found" >&2; exit 3; }
command -v go >/dev/null || { echo "setup: go not found (franz-go needs Go 1.26 or newer)" >&2; exit 3; }

if ! "$DIR/venv/bin/python" -c "import kafka, sys; sys.exit(kafka.__version__ != '$KAFKA_PYTHON')" 2>/dev/null; then
    python3 -m venv "$DIR/venv" >&2
    "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check "kafka-python==$KAFKA_PYTHON" >&2
fi
if ! "$DIR/venv/bin/python" -c "import confluent_kafka, sys; sys.exit(confluent_kafka.version()[0] != '$CONFLUENT_KAFKA')" 2>/dev/null; then
    "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check "confluent-kafka==$CONFLUENT_KAFKA" >&2
fi
if ! grep -q "\"version\": \"$KAFKAJS\"" "$DIR/node_modules/kafkajs/package.json" 2>/dev/null; then
    (cd "$DIR" && npm install --silent --no-audit --no-fund --no-save "kafkajs@$KAFKAJS" >&2)
fi
# franz-go: rebuilt when the program or its pinned modules change. GOTOOLCHAIN=local: an older
# go fails here with its own message rather than fetching a toolchain; -modcacherw keeps the
# module cache removable by `cargo clean`.
FRANZ_SRC=$REPO/tests/server/clients/franz
stamp=$(cat "$FRANZ_SRC/go.mod" "$FRANZ_SRC/go.sum" "$FRANZ_SRC/main.go" | sha256sum | cut -d' ' -f1)
if [ ! -x "$DIR/franz" ] || [ "$(cat "$DIR/franz.stamp" 2>/dev/null)" != "$stamp" ]; then
    (cd "$FRANZ_SRC" && GOTOOLCHAIN=local GOMODCACHE="$DIR/go/mod" GOCACHE="$DIR/go/cache" \
        GOFLAGS=-modcacherw go build -trimpath -o "$DIR/franz" . >&2) \
        || { echo "setup: building the franz-go client failed (it needs Go 1.26 or newer: go version says $(go version))" >&2; exit 3; }
    echo "$stamp" >"$DIR/franz.stamp"
fi
echo "$DIR"
