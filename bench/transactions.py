#!/usr/bin/env python3
"""Benchmarks transactional produce into kafka-server-start beside a real Kafka 4.3.1 broker.

Usage: python3 bench/transactions.py [--runs N] [--records N]
Builds the release binaries first. Needs Java 17 + Maven for the broker
(tests/broker/kafka-broker.sh; set KAFKIT_KAFKA_HOME to reuse downloaded jars).

What it measures, medians of --runs, the two servers in turns, each run into a fresh
3-partition topic with a transactional id of its own:
  kafka-producer-perf-test --transactional-id ID --transaction-duration-ms 100
      --num-records N --record-size 100 --throughput -1
run by kafkit's perf test and by Kafka's own (ProducerPerformance, the Java client), as
throughput in records/s: ours over Kafka's [>= 1.0x, aim 2x]. Each transaction ends with a
COMMIT marker on every partition; our server answers EndTxn once the markers are fdatasync'ed,
Kafka once its decision is in its log (the markers follow), and it acknowledges data once it is
in its page cache.
"""

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, "target", "release")
SCRIPT = os.path.join(ROOT, "tests", "broker", "kafka-broker.sh")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, deadline_s=30):
    start = time.perf_counter()
    while time.perf_counter() - start < deadline_s:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.001)
    sys.exit(f"nothing listens on port {port} after {deadline_s} s")


def records_per_second(out):
    """The summary line's records/sec."""
    match = re.search(r"records sent, ([0-9.]+) records/sec", out.splitlines()[-1])
    if match is None:
        sys.exit(f"no summary line in:\n{out}")
    return float(match.group(1))


def perf(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"command failed: {cmd}\n{proc.stderr[-2000:]}")
    return records_per_second(proc.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--records", type=int, default=1_000_000)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    subprocess.run(["bash", SCRIPT, "libs"], check=True, capture_output=True)
    work = tempfile.mkdtemp(prefix="kafkit-bench-txn-")
    ours = kafka_dir = None
    try:
        kafka_dir = os.path.join(work, "kafka")
        env = dict(os.environ, KAFKIT_BROKER_OWNER=str(os.getpid()), KAFKIT_BROKER_JVM="upstream")
        out = subprocess.run(["bash", SCRIPT, "start", kafka_dir], env=env, capture_output=True)
        if out.returncode != 0:
            sys.exit(f"Kafka did not start:\n{out.stderr.decode(errors='replace')}")
        kafka = out.stdout.decode().splitlines()[0].strip()
        port = free_port()
        ours = subprocess.Popen([os.path.join(RELEASE, "kafka-server-start"), "--log-dir",
                                 os.path.join(work, "served"), "--quiet", "--override",
                                 f"listeners=PLAINTEXT://127.0.0.1:{port}"])
        wait_for_port(port)
        mine = f"127.0.0.1:{port}"
        topics = os.path.join(RELEASE, "kafka-topics")

        def args_for(bootstrap, topic):
            subprocess.run([topics, "--bootstrap-server", bootstrap, "--create", "--topic", topic,
                            "--partitions", "3"], check=True, capture_output=True)
            return ["--bootstrap-server", bootstrap, "--topic", topic,
                    "--transactional-id", f"{topic}-id", "--transaction-duration-ms", "100",
                    "--num-records", str(args.records), "--record-size", "100",
                    "--throughput", "-1"]

        kafkit_perf = os.path.join(RELEASE, "kafka-producer-perf-test")
        java_perf = ["bash", SCRIPT, "tool", "org.apache.kafka.tools.ProducerPerformance"]
        results = {key: [] for key in ("kafkit->ours", "kafkit->kafka", "java->ours", "java->kafka")}
        for i in range(args.runs):
            results["kafkit->ours"].append(perf([kafkit_perf] + args_for(mine, f"k-ours-{i}")))
            results["kafkit->kafka"].append(perf([kafkit_perf] + args_for(kafka, f"k-kafka-{i}")))
            results["java->ours"].append(perf(java_perf + args_for(mine, f"j-ours-{i}")))
            results["java->kafka"].append(perf(java_perf + args_for(kafka, f"j-kafka-{i}")))

        med = statistics.median
        print(f"{args.records} records of 100 B, transactions of 100 ms, 3 partitions; "
              f"{args.runs} runs each; medians in records/s\n")
        print(f"{'client':34} {'our server':>12} {'Kafka 4.3.1':>12} {'ratio':>7}  target")
        for client, key in (("kafkit's kafka-producer-perf-test", "kafkit"),
                            ("Kafka's ProducerPerformance (Java)", "java")):
            a, b = med(results[f"{key}->ours"]), med(results[f"{key}->kafka"])
            ratio = a / b
            print(f"{client:34} {a:12.0f} {b:12.0f} {ratio:6.2f}x  >= 1.0x "
                  f"{'ok' if ratio >= 1.0 else 'MISSED'}")
        print(f"\nmachine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        if ours is not None:
            ours.terminate()
            ours.wait()
        if kafka_dir is not None:
            subprocess.run(["bash", SCRIPT, "stop", kafka_dir], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
