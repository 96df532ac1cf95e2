#!/usr/bin/env python3
"""Benchmarks kafkit against a three-node Kafka cluster beside kcat and the Java console tools;
prints medians and ratios.

Usage: python3 bench/cluster.py [--runs N] [--lines N] [--partitions N] [--bootstrap-server LIST]
Builds the release binaries first. Needs python3, kcat, GNU time, and Java 17 + Maven for the
cluster and the Java tools (tests/broker/kafka-cluster.sh; set KAFKIT_KAFKA_HOME to reuse
downloaded jars). Without --bootstrap-server it starts its own three-node cluster on 127.0.0.1
and stops it at the end.

Every topic has three replicas (replication factor 3, min.insync.replicas 2) and every producer
waits for all in-sync replicas (acks=all) and is idempotent (kcat is told to be; ours and Java's
are by default). Otherwise each tool runs at its defaults. Runs of the three are interleaved.
  produce  N lines of 100 B from a file into a fresh topic    ours vs kcat -P -l, Java ConsoleProducer
  consume  those lines to /dev/null (from the beginning, N)   ours vs kcat -C -e, Java ConsoleConsumer
The Java tools' times include the JVM's start (with kafka-broker.sh tool's C1-only flags).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from remote import ROOT, TOOL_JVM, interleaved, run, timed, tool  # noqa: E402

CLUSTER = os.path.join(ROOT, "tests", "broker", "kafka-cluster.sh")
BROKER = os.path.join(ROOT, "tests", "broker", "kafka-broker.sh")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--partitions", type=int, default=3,
                    help="partitions per topic (default 3: one led by each node)")
    ap.add_argument("--bootstrap-server", help="use this cluster instead of starting one")
    args = ap.parse_args()
    if shutil.which("kcat") is None:
        sys.exit("kcat is needed for the baselines (apt-get install kcat)")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    libs = run(["bash", BROKER, "libs"]).strip()
    log_config = os.path.join(os.path.dirname(libs), "config", "tools-log4j2.properties")

    def java(cls, *tool_args):
        """A Java tool's command line, as kafka-broker.sh tool runs it (without the script)."""
        return ["java", *TOOL_JVM, "-cp", os.path.join(libs, "*"),
                "-Dlog4j2.configurationFile=" + log_config, cls, *tool_args]

    work = tempfile.mkdtemp(prefix="kafkit-bench-cluster-")
    cluster_dir = None
    try:
        if args.bootstrap_server:
            bootstrap = args.bootstrap_server
        else:
            cluster_dir = os.path.join(work, "cluster")
            # The nodes die with this script, however it ends.
            env = dict(os.environ, KAFKIT_BROKER_OWNER=str(os.getpid()), KAFKIT_BROKER_JVM="upstream")
            proc = subprocess.run(["bash", CLUSTER, "start", cluster_dir], env=env,
                                  capture_output=True)
            if proc.returncode != 0:
                sys.exit(f"the cluster did not start:\n{proc.stderr.decode(errors='replace')}")
            # `start` prints the bootstrap list, then the cluster's directory.
            bootstrap = proc.stdout.decode().splitlines()[0].strip()

        data = os.path.join(work, "input.txt")
        line = ("x" * 99 + "\n").encode()
        with open(data, "wb") as f:
            for i in range(args.lines):
                prefix = b"%d " % i
                f.write(prefix + line[len(prefix):])
        size_mb = os.path.getsize(data) / 1e6
        print(f"cluster {bootstrap}; input: {args.lines} lines, {size_mb:.0f} MB; "
              f"{args.partitions} partitions, replication factor 3, acks=all; "
              f"{args.runs} runs each; medians\n")

        tag = f"{os.getpid()}"
        topic = lambda who, i: f"bench-cluster-{tag}-{who}-{i}"
        for i in range(args.runs):
            for who in ("ours", "kcat", "java"):
                run([tool("kafka-topics"), "--bootstrap-server", bootstrap, "--create",
                     "--topic", topic(who, i), "--partitions", str(args.partitions),
                     "--replication-factor", "3", "--config", "min.insync.replicas=2"])

        def produce_ours(i):
            with open(data, "rb") as f:
                return timed([tool("kafka-console-producer"), "--bootstrap-server", bootstrap,
                              "--topic", topic("ours", i), "--producer-property", "acks=all"],
                             stdin=f)

        def produce_kcat(i):
            return timed(["kcat", "-P", "-b", bootstrap, "-t", topic("kcat", i), "-l",
                          "-X", "acks=all", "-X", "enable.idempotence=true", data])

        def produce_java(i):
            with open(data, "rb") as f:
                return timed(java("org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server",
                                  bootstrap, "--topic", topic("java", i),
                                  "--command-property", "acks=all"), stdin=f)

        (prod_t, prod_rss), (kcat_p_t, _), (java_p_t, _) = interleaved(
            args.runs, produce_ours, produce_kcat, produce_java)

        # All three read the same topic, one that our producer wrote.
        source = topic("ours", 0)
        n = str(args.lines)

        def consume_ours(i):
            return timed([tool("kafka-console-consumer"), "--bootstrap-server", bootstrap,
                          "--topic", source, "--from-beginning", "--max-messages", n])

        def consume_kcat(i):
            return timed(["kcat", "-C", "-b", bootstrap, "-t", source, "-e", "-o", "beginning",
                          "-q"])

        def consume_java(i):
            return timed(java("org.apache.kafka.tools.consumer.ConsoleConsumer",
                              "--bootstrap-server", bootstrap, "--topic", source,
                              "--from-beginning", "--max-messages", n))

        (cons_t, cons_rss), (kcat_c_t, _), (java_c_t, _) = interleaved(
            args.runs, consume_ours, consume_kcat, consume_java)

        # Every copy holds every line: the producers' work is checked, not only timed.
        for who in ("ours", "kcat", "java"):
            end = run([tool("kafka-get-offsets"), "--bootstrap-server", bootstrap, "--topic",
                       topic(who, 0)])
            total = sum(int(l.rsplit(":", 1)[1]) for l in end.splitlines() if l)
            if total != args.lines:
                sys.exit(f"{who}'s topic holds {total} records, not {args.lines}")

        label = "1M" if args.lines == 1_000_000 else str(args.lines)
        print(f"{'case':26} {'kafkit':>9}   {'baseline':24} {'median':>9}   {'ratio':>7}")
        rows = [
            (f"produce {label} x 100 B", prod_t, "kcat -P -l", kcat_p_t),
            ("", prod_t, "Java ConsoleProducer", java_p_t),
            (f"consume {label}", cons_t, "kcat -C -e", kcat_c_t),
            ("", cons_t, "Java ConsoleConsumer", java_c_t),
        ]
        for name, t, base, bt in rows:
            ours = f"{t * 1000:7.0f}ms" if name else ""
            print(f"{name:26} {ours:>9}   {base:24} {bt * 1000:7.0f}ms   {t / bt:6.2f}x")
        print(f"\npeak RSS: producer {prod_rss:.1f} MiB, consumer {cons_rss:.1f} MiB")
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        if cluster_dir is not None:
            subprocess.run(["bash", CLUSTER, "stop", cluster_dir], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
