#!/usr/bin/env bash
# Installs the Kafka clients written in other languages that the server tests run against
# kafka-server-start, into <repo>/target/clients (kept between runs): kafka-python from PyPI in
# a virtualenv, and kafkajs from npm. Prints that directory. Exit status 3: python3 or npm missing.
set -euo pipefail

KAFKA_PYTHON=3.0.12
KAFKAJS=2.2.4

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
DIR=${KAFKIT_CLIENTS_DIR:-$REPO/target/clients}
mkdir -p "$DIR"
# One installer at a time: the tests run in parallel and may all call this first.
exec 9>"$DIR/.lock"
flock 9

command -v python3 >/dev/null || { echo "setup: python3 not found" >&2; exit 3; }
command -v npm >/dev/null || { echo "setup: npm not found" >&2; exit 3; }

if ! "$DIR/venv/bin/python" -c "import kafka, sys; sys.exit(kafka.__version__ != '$KAFKA_PYTHON')" 2>/dev/null; then
    python3 -m venv "$DIR/venv" >&2
    "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check "kafka-python==$KAFKA_PYTHON" >&2
fi
if ! grep -q "\"version\": \"$KAFKAJS\"" "$DIR/node_modules/kafkajs/package.json" 2>/dev/null; then
    (cd "$DIR" && npm install --silent --no-audit --no-fund --no-save "kafkajs@$KAFKAJS" >&2)
fi
echo "$DIR"
