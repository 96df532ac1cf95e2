#!/usr/bin/env python3
"""Benchmarks kafka-server-start's log cleaner against a real Kafka 4.3.1 broker's.

Usage: python3 bench/compaction.py [--runs N] [--records N] [--keys N]
Builds the release binaries first. Needs python3, kcat, and Java 17 + Maven for the broker
(tests/broker/kafka-broker.sh; set KAFKIT_KAFKA_HOME to reuse downloaded jars).

What it measures (issue 19's targets in brackets), medians of --runs, ours and Kafka in turns,
both cleaners with log.cleaner.backoff.ms=500 (the test broker's setting):
  clean    --records records of 100 B over --keys keys, written by kcat into a fresh compacted
           topic (1 MiB segments) whose cleaner cannot run yet (min.cleanable.dirty.ratio=1);
           then the ratio is set to 0.01 and the clock runs until the partition's cleaner
           checkpoint reaches its active segment: the time to clean the whole log
                                                            [ours <= Kafka's]
  produce  kcat -P of --records lines into a plain topic, alone and while the cleaner cleans
           another topic of the same size, as throughput    [during >= 0.7x alone]
"""

import argparse
import glob
import os
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


def tool(name):
    return os.path.join(RELEASE, name)


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


def run(cmd, **kw):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.decode(errors="replace").splitlines()[-5:])
        sys.exit(f"command failed: {cmd}\n{tail}")
    return proc.stdout.decode()


def timed(cmd):
    start = time.perf_counter()
    run(cmd)
    return time.perf_counter() - start


def create(bootstrap, topic, *configs):
    args = [tool("kafka-topics"), "--bootstrap-server", bootstrap, "--create", "--topic", topic,
            "--partitions", "1"]
    for c in configs:
        args += ["--config", c]
    run(args)


def alter(bootstrap, topic, config):
    run([tool("kafka-configs"), "--bootstrap-server", bootstrap, "--alter", "--entity-type",
         "topics", "--entity-name", topic, "--add-config", config])


def partition_dir(data_dir, topic):
    found = glob.glob(os.path.join(data_dir, "**", f"{topic}-0"), recursive=True)
    if not found:
        sys.exit(f"no directory for {topic}-0 under {data_dir}")
    return found[0]


def active_base(pdir):
    return max(int(os.path.basename(p)[:20]) for p in glob.glob(os.path.join(pdir, "*.log")))


def checkpoint_ours(pdir, _topic):
    try:
        with open(os.path.join(pdir, "cleaner-checkpoint")) as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def checkpoint_kafka(pdir, topic):
    # One file per log dir: "0\n<count>\n<topic> <partition> <offset>\n..."
    path = os.path.join(os.path.dirname(pdir), "cleaner-offset-checkpoint")
    try:
        with open(path) as f:
            for line in f.read().splitlines()[2:]:
                t, p, o = line.split()
                if t == topic and p == "0":
                    return int(o)
    except OSError:
        pass
    return -1


def time_to_clean(bootstrap, data_dir, topic, checkpoint, data):
    """Writes `data` into a compacted topic the cleaner leaves alone, then lets it clean;
    seconds until its checkpoint reaches the active segment."""
    create(bootstrap, topic, "cleanup.policy=compact", "segment.bytes=1048576",
           "min.cleanable.dirty.ratio=1")
    run(["kcat", "-P", "-b", bootstrap, "-t", topic, "-K:", "-l", data])
    pdir = partition_dir(data_dir, topic)
    target = active_base(pdir)
    start = time.perf_counter()
    alter(bootstrap, topic, "min.cleanable.dirty.ratio=0.01")
    while checkpoint(pdir, topic) < target:
        if time.perf_counter() - start > 600:
            sys.exit(f"{topic} was not cleaned within 10 minutes")
        time.sleep(0.01)
    return time.perf_counter() - start


def produce_while_cleaning(bootstrap, data_dir, topic, checkpoint, keyed, plain):
    """kcat -P throughput into a plain topic while the cleaner cleans a big dirty topic;
    (seconds, whether the cleaning was still running when the produce ended)."""
    dirty = topic + "-dirty"
    create(bootstrap, dirty, "cleanup.policy=compact", "segment.bytes=1048576",
           "min.cleanable.dirty.ratio=1")
    run(["kcat", "-P", "-b", bootstrap, "-t", dirty, "-K:", "-l", keyed])
    pdir = partition_dir(data_dir, dirty)
    target = active_base(pdir)
    create(bootstrap, topic)
    alter(bootstrap, dirty, "min.cleanable.dirty.ratio=0.01")
    # Produce once the cleaner has started on it (its checkpoint file may lag: give it the
    # backoff to pick the topic up).
    time.sleep(0.6)
    took = timed(["kcat", "-P", "-b", bootstrap, "-t", topic, "-l", plain])
    return took, checkpoint(pdir, dirty) < target


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=10_000)
    args = ap.parse_args()
    if shutil.which("kcat") is None:
        sys.exit("kcat is needed (apt-get install kcat)")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    subprocess.run(["bash", SCRIPT, "libs"], check=True, capture_output=True)
    work = tempfile.mkdtemp(prefix="kafkit-bench-compaction-")
    ours = kafka_dir = None
    try:
        keyed = os.path.join(work, "keyed.txt")
        plain = os.path.join(work, "plain.txt")
        with open(keyed, "w") as k, open(plain, "w") as p:
            for i in range(args.records):
                key = f"key-{i % args.keys}"
                value = f"{i}-".ljust(100, "x")
                k.write(f"{key}:{value}\n")
                p.write(f"{value}\n")

        ours_dir = os.path.join(work, "ours")
        port = free_port()
        ours = subprocess.Popen([tool("kafka-server-start"), "--log-dir", ours_dir, "--quiet",
                                 "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}",
                                 "--override", "log.cleaner.backoff.ms=500"])
        wait_for_port(port)
        mine = f"127.0.0.1:{port}"

        kafka_dir = os.path.join(work, "kafka")
        env = dict(os.environ, KAFKIT_BROKER_OWNER=str(os.getpid()), KAFKIT_BROKER_JVM="upstream")
        out = subprocess.run(["bash", SCRIPT, "start", kafka_dir], env=env, capture_output=True)
        if out.returncode != 0:
            sys.exit(f"Kafka did not start:\n{out.stderr.decode(errors='replace')}")
        kafka = out.stdout.decode().splitlines()[0].strip()

        sides = {"ours": (mine, ours_dir, checkpoint_ours),
                 "kafka": (kafka, kafka_dir, checkpoint_kafka)}
        clean = {"ours": [], "kafka": []}
        alone = {"ours": [], "kafka": []}
        during = {"ours": [], "kafka": []}
        overlapped = {"ours": 0, "kafka": 0}
        for i in range(args.runs):
            for side, (bootstrap, data_dir, checkpoint) in sides.items():
                clean[side].append(time_to_clean(bootstrap, data_dir, f"clean-{i}", checkpoint,
                                                 keyed))
                create(bootstrap, f"alone-{i}")
                alone[side].append(timed(["kcat", "-P", "-b", bootstrap, "-t", f"alone-{i}",
                                          "-l", plain]))
                took, overlap = produce_while_cleaning(bootstrap, data_dir, f"during-{i}",
                                                       checkpoint, keyed, plain)
                during[side].append(took)
                overlapped[side] += overlap

        med = statistics.median
        mb = os.path.getsize(plain) / 1e6
        print(f"{args.records} records of 100 B over {args.keys} keys; {args.runs} runs each; "
              f"medians\n")
        print(f"{'case':34} {'kafkit':>10} {'Kafka 4.3.1':>12} {'ratio':>8}  target")
        a, b = med(clean["ours"]), med(clean["kafka"])
        print(f"{'time to clean the whole log':34} {a:9.2f}s {b:11.2f}s {b / a:7.2f}x  "
              f"ours <= Kafka's {'ok' if a <= b else 'MISSED'}")
        for side in ("ours", "kafka"):
            r = med(alone[side]) / med(during[side])
            name = "kafkit" if side == "ours" else "Kafka 4.3.1"
            print(f"{name + ' kcat -P during/alone':34} {mb / med(during[side]):7.1f}MB/s "
                  f"{mb / med(alone[side]):9.1f}MB/s {r:7.2f}x  "
                  f"{'>= 0.7x ' + ('ok' if r >= 0.7 else 'MISSED') if side == 'ours' else ''}"
                  f"  (cleaning still ran at the end in {overlapped[side]} of {args.runs})")
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
