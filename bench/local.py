#!/usr/bin/env python3
"""Benchmarks kafkit on the embedded log beside baselines, in one run; prints medians and ratios.

Usage: python3 bench/local.py [--runs N] [--lines N] [--random]
Builds the release binaries first. Needs only python3 and coreutils.

Lines are a counter padded with `x` by default; --random fills them with random letters
instead (incompressible text, every line different). Runs of kafkit and of its baseline
alternate, so a machine busy with other work slows both alike; the load average is printed.

What it measures (issue targets in brackets):
  produce  1M lines of 100 bytes from a file into a 1-partition topic  vs  cp + sync     [<= 2x]
  consume  them into a pipe                                             vs  cat | cat     [<= 2x]
  list     kafka-topics --list over 100 topics                          vs  ls -la        [<= 5x]
  latency  a line piped into the producer until a waiting consumer prints it            [< 1 s]
  rss      peak RSS of producer and consumer (exact with GNU time installed)           [<= 32 MB]
  cpu      user and system CPU per record of the producer (from the file) and the consumer
           (into /dev/null), which do not depend on how fast the baselines are   [consumer user <= 40 ns]

The baselines' absolute times are printed beside the ratios; `cat | cat` slower than 60 ms for
100 MB means a slow or loaded machine, where the ratios flatter kafkit (a warning says so).
"""

import argparse
import os
import random
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


def timed(cmd, env=None, shell=False):
    """Runs cmd; returns (seconds, peak RSS in MiB of the process tree's largest child, user
    CPU seconds, system CPU seconds), the CPU of the whole tree (a shell's pipeline included).

    Dirty pages of earlier steps are written back first (untimed), so no command pays for
    another's writeback through the file system journal.
    """
    os.sync()
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, shell=shell, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            stderr.seek(0)
            sys.exit(f"command failed: {cmd}\n{stderr.read().decode(errors='replace')[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024.0, usage.ru_utime, usage.ru_stime


def gnu_time_rss(cmd, env, stdin_path=None):
    """Peak RSS in MiB of one run of cmd, measured by GNU time (/usr/bin/time), or None.

    wait4's figure for a child includes this Python process's size at the fork (the child's
    peak before its exec counts), so small tools read too large; GNU time forks from a small
    process instead.
    """
    if not os.path.exists("/usr/bin/time"):
        return None
    with tempfile.NamedTemporaryFile("r") as report:
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        try:
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name] + cmd, env=env, stdin=stdin,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        finally:
            if stdin_path:
                stdin.close()
        return int(report.read().split()[-1]) / 1024.0


def median_of(runs, fn):
    results = [fn(i) for i in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def cpu_per_record(runs, fn, records):
    """Medians of fn's user and system CPU over runs, in ns per record."""
    results = [fn(i) for i in range(runs)]
    per = lambda k: statistics.median(r[k] for r in results) * 1e9 / records
    return per(2), per(3)


def alternating(runs, fn, baseline):
    """Runs fn and baseline in turns; returns (median, peak RSS) of each."""
    ours, theirs = [], []
    for i in range(runs):
        ours.append(fn(i))
        theirs.append(baseline(i))
    summary = lambda results: (statistics.median(r[0] for r in results), max(r[1] for r in results))
    return summary(ours), summary(theirs)


def write_input(path, lines, random_letters):
    """Lines of 100 bytes: a counter padded with x, or (random_letters) 99 random letters."""
    with open(path, "wb") as f:
        if random_letters:
            letters = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
            table = bytes(letters[b % len(letters)] for b in range(256))
            rng = random.Random(8)
            # In slices, so this process stays small: a child's peak RSS, as wait4 reports
            # it, includes this process's size at the fork.
            for start in range(0, lines, 10_000):
                n = min(10_000, lines - start)
                text = rng.randbytes(99 * n).translate(table)
                f.write(b"".join(text[i * 99:(i + 1) * 99] + b"\n" for i in range(n)))
            return
        line = ("x" * 99 + "\n").encode()
        for i in range(lines):
            prefix = b"%d " % i
            f.write(prefix + line[len(prefix):])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--random", action="store_true", help="lines of random letters")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)

    work = tempfile.mkdtemp(prefix="kafkit-bench-")
    try:
        data = os.path.join(work, "input.txt")
        write_input(data, args.lines, args.random)
        size_mb = os.path.getsize(data) / 1e6
        kind = "random letters" if args.random else "a counter padded with x"
        print(f"input: {args.lines} lines of {kind}, {size_mb:.0f} MB; {args.runs} runs each; medians")
        print("load average at the start: %.2f %.2f %.2f\n" % os.getloadavg())

        def env_for(i):
            env = dict(os.environ)
            env["KAFKIT_LOG_DIR"] = os.path.join(work, f"log-{i}")
            return env

        def produce(i):
            # Like the cp baseline, each run writes a fresh copy and the copy is removed after
            # the run (untimed); the last one stays for the consume runs.
            shutil.rmtree(os.path.join(work, "log-0"), ignore_errors=True)
            return timed(f"'{tool('kafka-console-producer')}' --topic bench < '{data}'", env=env_for(0), shell=True)

        def cp_sync(i):
            dst = os.path.join(work, f"copy-{i}")
            t = timed(f"cp '{data}' '{dst}' && sync '{dst}'", shell=True)
            os.remove(dst)
            return t

        (prod_t, prod_rss), (cp_t, _) = alternating(args.runs, produce, cp_sync)

        def consume(i):
            return timed(
                f"'{tool('kafka-console-consumer')}' --topic bench --from-beginning --max-messages {args.lines} 2>/dev/null | cat > /dev/null",
                env=env_for(0), shell=True)

        def consume_rss(i):
            return timed([tool("kafka-console-consumer"), "--topic", "bench", "--from-beginning",
                          "--max-messages", str(args.lines)], env=env_for(0))

        def cat_cat(i):
            return timed(f"cat '{data}' | cat > /dev/null", shell=True)

        (cons_t, _), (cat_t, _) = alternating(args.runs, consume, cat_cat)
        _, cons_rss = median_of(1, consume_rss)
        cons_cpu = cpu_per_record(args.runs, consume_rss, args.lines)
        prod_cpu = cpu_per_record(args.runs, produce, args.lines)
        rss_env = env_for("rss")
        exact_rss = (gnu_time_rss([tool("kafka-console-producer"), "--topic", "bench"], rss_env, data),
                     gnu_time_rss([tool("kafka-console-consumer"), "--topic", "bench", "--from-beginning",
                                   "--max-messages", str(args.lines)], rss_env))

        list_env = env_for("list")
        for n in range(100):
            subprocess.run([tool("kafka-topics"), "--create", "--topic", f"topic-{n:03}"], env=list_env,
                           check=True, stdout=subprocess.DEVNULL)
        runs = max(args.runs, 20)
        (list_t, _), (ls_t, _) = alternating(
            runs,
            lambda i: timed([tool("kafka-topics"), "--list"], env=list_env),
            lambda i: timed(["ls", "-la", list_env["KAFKIT_LOG_DIR"]]))

        latencies = []
        lat_env = env_for("latency")
        subprocess.run([tool("kafka-topics"), "--create", "--topic", "live"], env=lat_env, check=True,
                       stdout=subprocess.DEVNULL)
        for i in range(args.runs):
            consumer = subprocess.Popen([tool("kafka-console-consumer"), "--topic", "live", "--max-messages", "1"],
                                        env=lat_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            time.sleep(0.3)
            start = time.perf_counter()
            subprocess.run([tool("kafka-console-producer"), "--topic", "live"], input=b"ping\n", env=lat_env,
                           check=True)
            consumer.stdout.readline()
            latencies.append(time.perf_counter() - start)
            consumer.wait()
        latency = statistics.median(latencies)

        rows = [
            ("produce 1M x 100 B", prod_t, "cp + sync", cp_t, 2.0),
            ("consume 1M into a pipe", cons_t, "cat | cat", cat_t, 2.0),
            ("kafka-topics --list (100)", list_t, "ls -la", ls_t, 5.0),
        ]
        print(f"{'kafkit':28} {'median':>9}   {'baseline':12} {'median':>9}   {'ratio':>6}  target")
        for name, t, base, bt, target in rows:
            ratio = t / bt
            verdict = "ok" if ratio <= target else "MISSED"
            print(f"{name:28} {t * 1000:8.1f}ms   {base:12} {bt * 1000:8.1f}ms   {ratio:5.2f}x  <= {target:.0f}x {verdict}")
        print(f"\nCPU per record: producer {prod_cpu[0]:.0f} ns user + {prod_cpu[1]:.0f} ns system; "
              f"consumer (into /dev/null) {cons_cpu[0]:.0f} ns user + {cons_cpu[1]:.0f} ns system "
              f"(target: consumer user <= 40 ns)")
        slow_cat = 60 * size_mb / 100
        if cat_t * 1000 > slow_cat:
            print(f"WARNING: cat | cat took {cat_t * 1000:.0f} ms for {size_mb:.0f} MB, over "
                  f"{slow_cat:.0f} ms (60 ms per 100 MB): the machine is slow or loaded, and ratios "
                  f"against it flatter kafkit; measure again on a quiet machine")
        print(f"\nproduce -> waiting consumer latency: median {latency * 1000:.0f} ms (target < 1000 ms)")
        if None not in exact_rss:
            print("peak RSS (GNU time): producer %.1f MiB, consumer %.1f MiB (target <= 32 MB)" % exact_rss)
        else:
            print(f"peak RSS: producer {prod_rss:.1f} MiB, consumer {cons_rss:.1f} MiB (target <= 32 MB; "
                  "upper bounds: they include this script's size, install GNU time for exact figures)")
        print("load average at the end: %.2f %.2f %.2f" % os.getloadavg())
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
