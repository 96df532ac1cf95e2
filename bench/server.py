#!/usr/bin/env python3
"""Benchmarks kafka-server-start against a real Kafka 4.3.1 broker on the same machine.

Usage: python3 bench/server.py [--runs N] [--lines N]
Builds the release binaries first. Needs python3, kcat, and Java 17 + Maven for the broker
(tests/broker/kafka-broker.sh; set KAFKIT_KAFKA_HOME to reuse downloaded jars).

What it measures (issue 9's targets in brackets), medians of --runs, ours and Kafka in turns:
  start    process start to the first accepted connection            [<= 50 ms]
           (Kafka: `kafka-broker.sh start`, storage format included, until it answers)
  produce  kcat -P -l of N lines of 100 B into a fresh 1-partition topic
                                               ours vs Kafka, as throughput  [>= 1.0x, aim 2x]
  consume  kcat -C -e -o beginning of those lines                     [>= 1.0x]
           and kcat -C -c N: the same read ending at the last record, without -e's end-of-
           partition wait (kcat learns the end from an empty fetch, which both servers hold
           for librdkafka's fetch.wait.max.ms, 500 ms: a constant in every -e run)
  cpu      each server's CPU time (user + system, from /proc) per consume, per 100 MB: what
           the server spends on a fetch, whatever the client's pace
  rss      the server's peak RSS at the end (VmHWM)                   [<= 64 MB]
Our server acknowledges a produce only once it is fdatasync'ed (acks 1 and all alike); Kafka
acknowledges once the data is in its page cache.
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SERVER = os.path.join(ROOT, "target", "release", "kafka-server-start")
SCRIPT = os.path.join(ROOT, "tests", "broker", "kafka-broker.sh")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, deadline_s=30):
    """Seconds until a TCP connection to the port is accepted."""
    start = time.perf_counter()
    while time.perf_counter() - start < deadline_s:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return time.perf_counter() - start
        except OSError:
            time.sleep(0.0005)
    sys.exit(f"nothing listens on port {port} after {deadline_s} s")


def start_ours(log_dir, port):
    """Starts our server; returns (process, seconds to the first accepted connection)."""
    start = time.perf_counter()
    proc = subprocess.Popen([SERVER, "--log-dir", log_dir, "--quiet", "--override",
                             f"listeners=PLAINTEXT://127.0.0.1:{port}"])
    wait_for_port(port)
    return proc, time.perf_counter() - start


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def cpu_seconds(pid):
    """User + system CPU time of a process so far, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(cmd):
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        # The last lines only: kcat prints one per failed record.
        tail = "\n".join(proc.stderr.decode(errors="replace").splitlines()[-5:])
        sys.exit(f"command failed: {cmd}\n{tail}")
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lines", type=int, default=1_000_000)
    args = ap.parse_args()
    if shutil.which("kcat") is None:
        sys.exit("kcat is needed (apt-get install kcat)")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    subprocess.run(["bash", SCRIPT, "libs"], check=True, capture_output=True)
    work = tempfile.mkdtemp(prefix="kafkit-bench-server-")
    ours = kafka_dir = None
    try:
        # Start-up: ours several times over fresh directories; Kafka once (it takes seconds).
        starts = []
        for i in range(args.runs):
            proc, t = start_ours(os.path.join(work, f"start-{i}"), free_port())
            starts.append(t)
            proc.terminate()
            proc.wait()
        kafka_dir = os.path.join(work, "kafka")
        env = dict(os.environ, KAFKIT_BROKER_OWNER=str(os.getpid()), KAFKIT_BROKER_JVM="upstream")
        t0 = time.perf_counter()
        out = subprocess.run(["bash", SCRIPT, "start", kafka_dir], env=env, capture_output=True)
        kafka_start = time.perf_counter() - t0
        if out.returncode != 0:
            sys.exit(f"Kafka did not start:\n{out.stderr.decode(errors='replace')}")
        kafka = out.stdout.decode().splitlines()[0].strip()

        port = free_port()
        ours, _ = start_ours(os.path.join(work, "served"), port)
        mine = f"127.0.0.1:{port}"

        data = os.path.join(work, "input.txt")
        line = ("x" * 99 + "\n").encode()
        with open(data, "wb") as f:
            for i in range(args.lines):
                prefix = b"%d " % i
                f.write(prefix + line[len(prefix):])

        topics = os.path.join(ROOT, "target", "release", "kafka-topics")

        def produce(bootstrap, topic):
            # The test broker does not create topics on demand.
            subprocess.run([topics, "--bootstrap-server", bootstrap, "--create", "--topic", topic],
                           check=True, capture_output=True)
            return timed(["kcat", "-P", "-b", bootstrap, "-t", topic, "-l", data])

        with open(os.path.join(kafka_dir, "broker.pid")) as f:
            kafka_pid = int(f.read().split()[0])

        def consume(bootstrap, topic, pid, cpu, end=("-e",)):
            before = cpu_seconds(pid)
            t = timed(["kcat", "-C", "-b", bootstrap, "-t", topic, *end, "-o", "beginning", "-q"])
            cpu.append(cpu_seconds(pid) - before)
            return t

        p_ours, p_kafka, c_ours, c_kafka, n_ours, n_kafka = [], [], [], [], [], []
        cpu_ours, cpu_kafka = [], []
        count = ("-c", str(args.lines))
        for i in range(args.runs):
            topic = f"bench-{i}"
            p_ours.append(produce(mine, topic))
            p_kafka.append(produce(kafka, topic))
            c_ours.append(consume(mine, topic, ours.pid, cpu_ours))
            c_kafka.append(consume(kafka, topic, kafka_pid, cpu_kafka))
            n_ours.append(consume(mine, topic, ours.pid, cpu_ours, count))
            n_kafka.append(consume(kafka, topic, kafka_pid, cpu_kafka, count))
        rss = peak_rss_mib(ours.pid)

        med = statistics.median
        mb = os.path.getsize(data) / 1e6
        print(f"{args.lines} lines, {mb:.0f} MB; {args.runs} runs each; medians\n")
        print(f"{'case':28} {'kafkit':>10} {'Kafka 4.3.1':>12} {'ratio':>8}  target")
        s = med(starts)
        print(f"{'start to first connection':28} {s * 1000:8.1f}ms {kafka_start * 1000:10.0f}ms "
              f"{kafka_start / s:7.0f}x  <= 50 ms {'ok' if s <= 0.05 else 'MISSED'}")
        for name, a, b in (("kcat -P (throughput)", p_ours, p_kafka),
                           ("kcat -C -e (throughput)", c_ours, c_kafka),
                           ("kcat -C -c N (throughput)", n_ours, n_kafka)):
            ratio = med(b) / med(a)
            print(f"{name:28} {mb / med(a):6.1f}MB/s {mb / med(b):8.1f}MB/s {ratio:7.2f}x  "
                  f">= 1.0x {'ok' if ratio >= 1.0 else 'MISSED'}")
        per_100mb = lambda cpu: med(cpu) * 100 / mb * 1000
        print(f"{'server CPU per 100 MB read':28} {per_100mb(cpu_ours):8.0f}ms {per_100mb(cpu_kafka):10.0f}ms "
              f"{per_100mb(cpu_kafka) / max(per_100mb(cpu_ours), 1e-9):7.2f}x  (lower is better)")
        print(f"\nserver peak RSS {rss:.1f} MiB (target <= 64 MB) {'ok' if rss * 1.048576 <= 64 else 'MISSED'}")
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        if ours is not None:
            ours.terminate()
            ours.wait()
        if kafka_dir is not None:
            subprocess.run(["bash", SCRIPT, "stop", kafka_dir], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
