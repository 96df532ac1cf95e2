#!/usr/bin/env python3
"""Benchmarks kafkit against a real Kafka broker beside the usual tools; prints medians and ratios.

Usage: python3 bench/remote.py [--runs N] [--lines N] [--bootstrap-server HOST:PORT]
Builds the release binaries first. Needs python3, kcat, and Java 17 + Maven for the broker and
the Java tool (tests/broker/kafka-broker.sh; set KAFKIT_KAFKA_HOME to reuse downloaded jars).
Without --bootstrap-server it starts its own broker on 127.0.0.1 and stops it at the end.

Every tool runs at its default settings (ours default to the Apache console tools' defaults).
What it measures (issue targets in brackets), runs of ours and the baseline interleaved:
  list     kafka-topics --list, cold start    vs  Java TopicCommand --list, JVM start included
                                                  (the C1-only flags of kafka-broker.sh tool)
                                                                            [>= 20x faster]
  produce  1M lines of 100 B from a file into a fresh 1-partition topic
                                              vs  kcat -P -l                [<= 1.0x]
           for reference: ours with kcat's 1 MB batches vs kcat, and ours vs the Java
           ConsoleProducer (same defaults, JVM start included)
  consume  those lines to /dev/null (--from-beginning --max-messages N)
                                              vs  kcat -C -e -o beginning   [<= 1.0x]
  rss      peak RSS of our producer and consumer                            [<= 64 MB]
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
SCRIPT = os.path.join(ROOT, "tests", "broker", "kafka-broker.sh")
# kafka-broker.sh's TOOL_JVM: tools start faster with these than with Kafka's own scripts, so the
# Java side of the comparison is, if anything, flattered.
TOOL_JVM = ["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"]


def tool(name):
    return os.path.join(BIN, name)


def timed(cmd, stdin=None):
    """Runs cmd (output discarded); returns (seconds, peak RSS in MiB).

    The RSS comes from GNU time (VmHWM of the command itself): the child's own ru_maxrss would
    include the Python interpreter it was forked from. Its few milliseconds count for all alike.
    """
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "rss-kb %M", *cmd], stdin=stdin,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"command failed: {cmd}\n{err}")
    rss_kb = int(err.rsplit("rss-kb ", 1)[1].split()[0])
    return elapsed, rss_kb / 1024.0


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {cmd}\n{proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode()


def interleaved(runs, *cases):
    """Runs the cases in turn, `runs` rounds, so that a change in the machine's load hits all
    alike. Returns (median seconds, max peak RSS MiB) for each case."""
    results = [[] for _ in cases]
    for i in range(runs):
        for case, out in zip(cases, results):
            out.append(case(i))
    return [(statistics.median(r[0] for r in rs), max(r[1] for r in rs)) for rs in results]


def java_command():
    """Resolves the Kafka jars; returns java(cls, *args), a Java tool's command line as
    kafka-broker.sh tool runs it (without the script)."""
    libs = run(["bash", SCRIPT, "libs"]).strip()
    log_config = os.path.join(os.path.dirname(libs), "config", "tools-log4j2.properties")

    def java(cls, *tool_args):
        return ["java", *TOOL_JVM, "-cp", os.path.join(libs, "*"),
                "-Dlog4j2.configurationFile=" + log_config, cls, *tool_args]

    return java


def start_broker(work):
    """Starts a broker in work/broker, which dies with this script however it ends; returns
    (bootstrap address, broker directory)."""
    broker_dir = os.path.join(work, "broker")
    env = dict(os.environ, KAFKIT_BROKER_OWNER=str(os.getpid()), KAFKIT_BROKER_JVM="upstream")
    proc = subprocess.run(["bash", SCRIPT, "start", broker_dir], env=env, capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"the broker did not start:\n{proc.stderr.decode(errors='replace')}")
    # `start` prints the bootstrap address, then the broker's directory.
    return proc.stdout.decode().splitlines()[0].strip(), broker_dir


def stop_broker(broker_dir):
    """Stops a broker start_broker started (nothing for None)."""
    if broker_dir is not None:
        subprocess.run(["bash", SCRIPT, "stop", broker_dir], capture_output=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--bootstrap-server", help="use this broker instead of starting one")
    args = ap.parse_args()
    if shutil.which("kcat") is None:
        sys.exit("kcat is needed for the baselines (apt-get install kcat)")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    java = java_command()

    work = tempfile.mkdtemp(prefix="kafkit-bench-remote-")
    broker_dir = None
    try:
        if args.bootstrap_server:
            bootstrap = args.bootstrap_server
        else:
            bootstrap, broker_dir = start_broker(work)

        data = os.path.join(work, "input.txt")
        line = ("x" * 99 + "\n").encode()
        with open(data, "wb") as f:
            for i in range(args.lines):
                prefix = b"%d " % i
                f.write(prefix + line[len(prefix):])
        size_mb = os.path.getsize(data) / 1e6
        print(f"broker {bootstrap}; input: {args.lines} lines, {size_mb:.0f} MB; "
              f"{args.runs} runs each; medians\n")

        tag = f"{os.getpid()}"
        topic = lambda who, i: f"bench-{tag}-{who}-{i}"
        for i in range(args.runs):
            for who in ("ours", "kcat", "java", "ours1m"):
                run([tool("kafka-topics"), "--bootstrap-server", bootstrap, "--create", "--topic",
                     topic(who, i), "--partitions", "1"])

        def produce_ours(i):
            with open(data, "rb") as f:
                return timed([tool("kafka-console-producer"), "--bootstrap-server", bootstrap,
                              "--topic", topic("ours", i)], stdin=f)

        def produce_kcat(i):
            return timed(["kcat", "-P", "-b", bootstrap, "-t", topic("kcat", i), "-l", data])

        def produce_ours_1m(i):
            # kcat's batch size (librdkafka's batch.size, 1,000,000 bytes): like for like.
            with open(data, "rb") as f:
                return timed([tool("kafka-console-producer"), "--bootstrap-server", bootstrap,
                              "--topic", topic("ours1m", i), "--batch-size", "1000000"], stdin=f)

        def produce_java(i):
            with open(data, "rb") as f:
                return timed(java("org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server",
                                  bootstrap, "--topic", topic("java", i)), stdin=f)

        (prod_t, prod_rss), (kcat_p_t, _), (prod1m_t, prod1m_rss), (java_p_t, _) = interleaved(
            args.runs, produce_ours, produce_kcat, produce_ours_1m, produce_java)

        # Both read the same topic, one that our producer wrote.
        source = topic("ours", 0)

        def consume_ours(i):
            return timed([tool("kafka-console-consumer"), "--bootstrap-server", bootstrap, "--topic",
                          source, "--from-beginning", "--max-messages", str(args.lines)])

        def consume_kcat(i):
            return timed(["kcat", "-C", "-b", bootstrap, "-t", source, "-e", "-o", "beginning", "-q"])

        (cons_t, cons_rss), (kcat_c_t, _) = interleaved(args.runs, consume_ours, consume_kcat)

        def list_ours(i):
            return timed([tool("kafka-topics"), "--bootstrap-server", bootstrap, "--list"])

        def list_java(i):
            return timed(java("org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                              bootstrap, "--list"))

        (list_t, _), (java_t, _) = interleaved(args.runs, list_ours, list_java)

        print(f"{'case':24} {'kafkit':>9}   {'baseline':22} {'median':>9}   {'ratio':>7}  target")
        n = "1M" if args.lines == 1_000_000 else str(args.lines)
        rows = [
            (f"produce {n} x 100 B", prod_t, "kcat -P -l", kcat_p_t, "<= 1.0x", prod_t / kcat_p_t <= 1.0),
            (f"consume {n}", cons_t, "kcat -C -e", kcat_c_t, "<= 1.0x", cons_t / kcat_c_t <= 1.0),
        ]
        for name, t, base, bt, target, ok in rows:
            print(f"{name:24} {t * 1000:7.0f}ms   {base:22} {bt * 1000:7.0f}ms   {t / bt:6.2f}x  "
                  f"{target} {'ok' if ok else 'MISSED'}")
        print("  for reference:")
        print(f"{'  produce, 1 MB batches':24} {prod1m_t * 1000:7.0f}ms   {'kcat -P -l':22} "
              f"{kcat_p_t * 1000:7.0f}ms   {prod1m_t / kcat_p_t:6.2f}x  (kcat's batch size)")
        print(f"{'  produce ' + n + ' x 100 B':24} {prod_t * 1000:7.0f}ms   {'Java ConsoleProducer':22} "
              f"{java_p_t * 1000:7.0f}ms   {prod_t / java_p_t:6.2f}x  (the same defaults)")
        speedup = java_t / list_t
        print(f"{'kafka-topics --list':24} {list_t * 1000:7.0f}ms   {'Java TopicCommand':22} "
              f"{java_t * 1000:7.0f}ms   {speedup:5.0f}x faster  >= 20x "
              f"{'ok' if speedup >= 20 else 'MISSED'}")
        worst = max(prod_rss, cons_rss, prod1m_rss)
        print(f"\npeak RSS: producer {prod_rss:.1f} MiB ({prod1m_rss:.1f} MiB with 1 MB batches), "
              f"consumer {cons_rss:.1f} MiB "
              f"(target <= 64 MB) {'ok' if worst * 1.048576 <= 64 else 'MISSED'}")
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        stop_broker(broker_dir)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
