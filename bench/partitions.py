#!/usr/bin/env python3
"""Benchmarks the embedded log on a topic of many partitions (issue 11, item 8).

Usage: python3 bench/partitions.py [--partitions N] [--runs N] [--dir DIR]
Builds the release binaries first. Needs only python3. DIR (default: a new temporary
directory) should be on a fresh file system for create times that mean something: on a file
system where large directories were just removed, ext4 spends seconds looking for recently
deleted inodes.

What it measures (issue target in brackets), medians of N runs:
  create        kafka-topics --create --partitions N                               [< 10 s]
  idle 1 s      kafka-console-consumer --topic t --timeout-ms 1000 on the empty topic:
                wall time, so its start plus one second             [O(partitions with new data)]
  idle CPU      the CPU time (user + system) the same consumer spends per second of idling,
                from runs with --timeout-ms 1000 and 5000
  group 1 s     the same with --group g                            [starts within --timeout-ms]
  new record    a consumer tailing the topic, idle: from a producer's start to the record on
                the consumer's stdout (the producer's own start and write included)
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release")


def tool(name):
    return os.path.join(BIN, name)


def run(args, stdin=None):
    """Runs a tool; exits with its stderr if it fails. Returns (wall s, cpu s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(args, input=stdin, capture_output=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {args}\n{proc.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def new_record_latency(log_dir, partitions):
    """A tailing consumer, idle for 2 s; then one record into the last partition: the time
    from the producer's start to the record's line on the consumer's stdout."""
    consumer = subprocess.Popen(
        [tool("kafka-console-consumer"), "--log-dir", log_dir, "--topic", "t",
         "--max-messages", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(2)
    line = f'{{"partition":{partitions - 1},"value":"hello"}}\n'.encode()
    produced = time.monotonic()
    run([tool("kafka-console-producer"), "--log-dir", log_dir, "--topic", "t",
         "--input", "json"], stdin=line)
    out = consumer.stdout.readline()
    seen = time.monotonic() - produced
    consumer.wait(timeout=30)
    if out.strip() != b"hello":
        sys.exit(f"the consumer printed {out!r}, not the record")
    return seen


def one_run(base, partitions):
    log_dir = tempfile.mkdtemp(prefix="kafkit-partitions-", dir=base)
    try:
        create, _ = run([tool("kafka-topics"), "--log-dir", log_dir, "--create", "--topic", "t",
                         "--partitions", str(partitions)])
        consume = [tool("kafka-console-consumer"), "--log-dir", log_dir, "--topic", "t"]
        idle1, cpu1 = run(consume + ["--timeout-ms", "1000"])
        _, cpu5 = run(consume + ["--timeout-ms", "5000"])
        group1, _ = run(consume + ["--group", "g", "--timeout-ms", "1000"])
        latency = new_record_latency(log_dir, partitions)
        return {
            "create": create,
            "idle 1 s": idle1,
            "idle CPU per s": (cpu5 - cpu1) / 4,
            "group 1 s": group1,
            "new record": latency,
        }
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where the log dirs are made")
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    runs = [one_run(args.dir, args.partitions) for _ in range(args.runs)]
    print(f"{args.partitions:,} partitions, medians of {args.runs} runs "
          f"(load average {os.getloadavg()[0]:.1f})")
    for key in runs[0]:
        values = [r[key] for r in runs]
        print(f"  {key:<16} {statistics.median(values):8.3f} s   "
              f"(runs: {', '.join(f'{v:.3f}' for v in values)})")


if __name__ == "__main__":
    main()
