#!/usr/bin/env python3
"""Benchmarks kafka-consumer-groups on the embedded log over a group with 1,000 partitions.

Usage: python3 bench/groups.py [--runs N] [--partitions N]
Builds the release binaries first. Needs only python3.

Setup (untimed): a topic with 1,000 partitions, a few keyed records in each (one producer run),
and a group with a committed offset on every partition.

What it measures (issue target in brackets), medians of N runs:
  describe  kafka-consumer-groups --describe --group g                                 [< 0.5 s]
  reset     kafka-consumer-groups --reset-offsets --group g --topic t --to-earliest --execute
                                                                                       [< 0.5 s]
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
BIN = os.path.join(ROOT, "target", "release")
TARGET_S = 0.5


def tool(name):
    return os.path.join(BIN, name)


def run(args, env, stdin=None):
    """Runs a tool; exits with its stderr if it fails. Returns stdout."""
    proc = subprocess.run(args, env=env, input=stdin, capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {args}\n{proc.stderr.decode()}")
    return proc.stdout


def timed(args, env):
    """Seconds one run takes (output discarded)."""
    start = time.perf_counter()
    proc = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {args}\n{proc.stderr.decode()}")
    return elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--partitions", type=int, default=1000)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)

    work = tempfile.mkdtemp(prefix="kafkit-bench-groups-")
    try:
        env = dict(os.environ)
        env["KAFKIT_LOG_DIR"] = os.path.join(work, "log")
        n = args.partitions
        run([tool("kafka-topics"), "--create", "--topic", "t", "--partitions", str(n)], env)
        records = "".join(f"key-{i}\tvalue-{i}\n" for i in range(5 * n)).encode()
        run([tool("kafka-console-producer"), "--topic", "t", "--reader-property", "parse.key=true"],
            env, stdin=records)
        groups = [tool("kafka-consumer-groups")]
        run(groups + ["--reset-offsets", "--group", "g", "--topic", "t", "--to-latest", "--execute"], env)
        rows = run(groups + ["--describe", "--group", "g"], env).decode().strip().splitlines()
        assert len(rows) == n + 1, f"expected {n} rows, got {len(rows) - 1}"

        describe = [timed(groups + ["--describe", "--group", "g"], env) for _ in range(args.runs)]
        reset = [timed(groups + ["--reset-offsets", "--group", "g", "--topic", "t", "--to-earliest",
                                 "--execute"], env) for _ in range(args.runs)]

        print(f"group with {n} committed partitions, {5 * n} records; {args.runs} runs each; medians\n")
        for name, times in [("--describe --group g", describe),
                            ("--reset-offsets --to-earliest --execute", reset)]:
            med = statistics.median(times)
            verdict = "ok" if med < TARGET_S else "MISSED"
            print(f"{name:42} {med * 1000:8.1f} ms  (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f})"
                  f"  target < {TARGET_S * 1000:.0f} ms {verdict}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
