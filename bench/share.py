#!/usr/bin/env python3
"""Benchmarks kafka-share-consumer-perf-test beside Kafka's own on a real Kafka 4.3.1 broker,
and on the embedded log.

Usage: python3 bench/share.py [--runs N] [--records N]
Builds the release binaries first. Needs Java 17 + Maven for the broker
(tests/broker/kafka-broker.sh; set KAFKIT_KAFKA_HOME to reuse downloaded jars).

What it measures, medians of --runs, ours and Java's in turns:
- start: the wall time of `kafka-share-consumer-perf-test --num-records 100` on a share group
  that already exists (its partitions initialized, so the first heartbeat brings the
  assignment) over a topic with records: the tool's start, joining and the first fetch.
  Ours over Java's time [<= 1/50].
- throughput: --num-records N (default 1M) records of 100 B over 3 partitions, each run in a
  share group of its own that starts at the earliest record; the records/s of the summary line.
  Ours over Java's [>= 1.0x].
- the embedded log: ours with --log-dir on the same records, records/s.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, "target", "release")
SCRIPT = os.path.join(ROOT, "tests", "broker", "kafka-broker.sh")
OURS = os.path.join(RELEASE, "kafka-share-consumer-perf-test")
JAVA = ["bash", SCRIPT, "tool", "org.apache.kafka.tools.ShareConsumerPerformance"]


def run(cmd):
    """The command's stdout and wall time (s); exits on a failure."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"command failed: {cmd}\n{proc.stderr[-2000:]}")
    return proc.stdout, elapsed


def records_per_second(out, records):
    """The summary line's nMsg.sec, checking that it read all the records."""
    fields = out.splitlines()[-1].split(", ")
    if int(fields[5]) < records:
        sys.exit(f"read {fields[5]} of {records} records:\n{out}")
    return float(fields[4])


def earliest(connection, group):
    subprocess.run([os.path.join(RELEASE, "kafka-configs")] + connection +
                   ["--entity-type", "groups", "--entity-name", group, "--alter",
                    "--add-config", "share.auto.offset.reset=earliest"],
                   check=True, capture_output=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--records", type=int, default=1_000_000)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    subprocess.run(["bash", SCRIPT, "libs"], check=True, capture_output=True)
    work = tempfile.mkdtemp(prefix="kafkit-bench-share-")
    kafka_dir = None
    try:
        kafka_dir = os.path.join(work, "kafka")
        env = dict(os.environ, KAFKIT_BROKER_OWNER=str(os.getpid()), KAFKIT_BROKER_JVM="upstream")
        out = subprocess.run(["bash", SCRIPT, "start", kafka_dir], env=env, capture_output=True)
        if out.returncode != 0:
            sys.exit(f"Kafka did not start:\n{out.stderr.decode(errors='replace')}")
        kafka = ["--bootstrap-server", out.stdout.decode().splitlines()[0].strip()]
        log_dir = ["--log-dir", os.path.join(work, "log")]
        for connection in (kafka, log_dir):
            subprocess.run([os.path.join(RELEASE, "kafka-topics")] + connection +
                           ["--create", "--topic", "perf", "--partitions", "3"],
                           check=True, capture_output=True)
            subprocess.run([os.path.join(RELEASE, "kafka-producer-perf-test")] + connection +
                           ["--topic", "perf", "--num-records", str(args.records),
                            "--record-size", "100", "--throughput", "-1"],
                           check=True, capture_output=True)

        # Start: a group that exists, whose partitions are initialized.
        for who in ("ours", "java"):
            earliest(kafka, f"start-{who}")
        starts = {"ours": [], "java": []}
        for i in range(args.runs + 1):
            for who, cmd in (("ours", [OURS]), ("java", JAVA)):
                _, elapsed = run(cmd + kafka + ["--topic", "perf", "--group", f"start-{who}",
                                                "--num-records", "100", "--timeout", "30000"])
                if i > 0:  # the first run initializes the group
                    starts[who].append(elapsed)

        rates = {"ours": [], "java": [], "log": []}
        for i in range(args.runs):
            for who, cmd, connection in (("ours", [OURS], kafka), ("java", JAVA, kafka),
                                         ("log", [OURS], log_dir)):
                group = f"tp-{who}-{i}"
                earliest(connection, group)
                out, _ = run(cmd + connection + ["--topic", "perf", "--group", group,
                                                 "--num-records", str(args.records),
                                                 "--timeout", "60000"])
                rates[who].append(records_per_second(out, args.records))

        med = statistics.median
        print(f"{args.records} records of 100 B over 3 partitions; {args.runs} runs each; medians\n")
        ours_s, java_s = med(starts["ours"]), med(starts["java"])
        ratio = java_s / ours_s
        print(f"start (100 records, existing group): ours {ours_s * 1000:.0f} ms, "
              f"Java {java_s * 1000:.0f} ms: {ratio:.0f}x faster  (target >= 50x "
              f"{'ok' if ratio >= 50 else 'MISSED'})")
        ours_r, java_r = med(rates["ours"]), med(rates["java"])
        print(f"throughput on Kafka 4.3.1: ours {ours_r:.0f} records/s, Java {java_r:.0f} records/s: "
              f"{ours_r / java_r:.2f}x  (target >= 1.0x {'ok' if ours_r >= java_r else 'MISSED'})")
        print(f"throughput on the embedded log (--log-dir): {med(rates['log']):.0f} records/s")
        print(f"\nmachine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        if kafka_dir is not None:
            subprocess.run(["bash", SCRIPT, "stop", kafka_dir], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
