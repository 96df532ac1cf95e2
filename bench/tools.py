#!/usr/bin/env python3
"""Cold start of each kafkit tool against the Java tool it mirrors, on one cheap command each;
prints medians and ratios.

Usage: python3 bench/tools.py [--runs N] [--bootstrap-server HOST:PORT]
Builds the release binaries first. Needs python3, GNU time (/usr/bin/time), and Java 17 +
Maven for the broker and the Java tools (tests/broker/kafka-broker.sh; set KAFKIT_KAFKA_HOME to
reuse downloaded jars). Without --bootstrap-server it starts its own broker on 127.0.0.1 and
stops it at the end.

Each case is one command a script would run many times: a listing, a describe, one offset
lookup, one record in or out. Both sides pay their whole start-up: ours a process, Java's a JVM
with the C1-only flags of kafka-broker.sh tool (which, if anything, flatter Java). Runs of ours
and of Java alternate, so a change in the machine's load hits both alike. The target (issue 10)
is at least 50x faster. A case whose kafkit binary is not built yet (a tool still being
written) is listed as skipped.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

# The helpers of bench/remote.py: the Java command line, the broker, timing and medians (no
# __pycache__ left in the checkout).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from remote import ROOT, interleaved, java_command, run, start_broker, stop_broker, timed, tool  # noqa: E402

TARGET = 50


def setup(bootstrap, work, tag):
    """A topic of 3 partitions with a few records, a group that committed, an offset file for
    delete-records and a segment file for dump-log. Returns a dict of their names and paths."""
    topic = f"bench-tools-{tag}"
    group = f"bench-tools-group-{tag}"
    run([tool("kafka-topics"), "--bootstrap-server", bootstrap, "--create", "--topic", topic,
         "--partitions", "3"])
    lines = "".join(f"record-{i}\n" for i in range(30)).encode()
    subprocess.run([tool("kafka-console-producer"), "--bootstrap-server", bootstrap, "--topic", topic],
                   input=lines, check=True)
    run([tool("kafka-console-consumer"), "--bootstrap-server", bootstrap, "--topic", topic,
         "--group", group, "--from-beginning", "--max-messages", "30", "--timeout-ms", "10000"])
    # Offset 0 is at or below every partition's start: each run deletes nothing and succeeds.
    offsets = os.path.join(work, "offsets.json")
    with open(offsets, "w") as f:
        json.dump({"partitions": [{"topic": topic, "partition": p, "offset": 0} for p in range(3)],
                   "version": 1}, f)
    # A segment of our own embedded log, for the tool that reads files.
    log_dir = os.path.join(work, "log")
    subprocess.run([tool("kafka-console-producer"), "--log-dir", log_dir, "--topic", "dump"],
                   input=lines, check=True)
    segment = os.path.join(log_dir, "dump-0", "00000000000000000000.log")
    one_line = os.path.join(work, "one-line.txt")
    with open(one_line, "w") as f:
        f.write("one more record\n")
    return {"topic": topic, "group": group, "offsets": offsets, "segment": segment,
            "one_line": one_line}


def cases(b, s):
    """(our tool, its arguments, Java class, its arguments, stdin file or None) per case."""
    t, g = s["topic"], s["group"]
    boot = ["--bootstrap-server", b]
    return [
        ("kafka-topics", boot + ["--list"],
         "org.apache.kafka.tools.TopicCommand", boot + ["--list"], None),
        ("kafka-topics", boot + ["--describe", "--topic", t],
         "org.apache.kafka.tools.TopicCommand", boot + ["--describe", "--topic", t], None),
        ("kafka-configs", boot + ["--describe", "--entity-type", "topics", "--entity-name", t],
         "kafka.admin.ConfigCommand", boot + ["--describe", "--entity-type", "topics",
                                              "--entity-name", t], None),
        ("kafka-get-offsets", boot + ["--topic", t],
         "org.apache.kafka.tools.GetOffsetShell", boot + ["--topic", t], None),
        ("kafka-broker-api-versions", boot,
         "org.apache.kafka.tools.BrokerApiVersionsCommand", boot, None),
        ("kafka-delete-records", boot + ["--offset-json-file", s["offsets"]],
         "org.apache.kafka.tools.DeleteRecordsCommand", boot + ["--offset-json-file", s["offsets"]],
         None),
        ("kafka-consumer-groups", boot + ["--list"],
         "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", boot + ["--list"], None),
        ("kafka-consumer-groups", boot + ["--describe", "--group", g],
         "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
         boot + ["--describe", "--group", g], None),
        ("kafka-console-producer", boot + ["--topic", t],
         "org.apache.kafka.tools.ConsoleProducer", boot + ["--topic", t], s["one_line"]),
        ("kafka-console-consumer", boot + ["--topic", t, "--from-beginning", "--max-messages", "1"],
         "org.apache.kafka.tools.consumer.ConsoleConsumer",
         boot + ["--topic", t, "--from-beginning", "--max-messages", "1"], None),
        ("kafka-dump-log", ["--files", s["segment"]],
         "org.apache.kafka.tools.DumpLogSegments", ["--files", s["segment"]], None),
        # Tools written elsewhere at the time of writing: measured once their binaries exist.
        ("kafka-producer-perf-test", boot + ["--topic", t, "--num-records", "10", "--record-size",
                                             "10", "--throughput", "-1"],
         "org.apache.kafka.tools.ProducerPerformance",
         boot + ["--topic", t, "--num-records", "10", "--record-size", "10", "--throughput", "-1"],
         None),
        ("kafka-consumer-perf-test", boot + ["--topic", t, "--num-records", "10"],
         "org.apache.kafka.tools.ConsumerPerformance", boot + ["--topic", t, "--num-records", "10"],
         None),
    ]


def label(ours, args, bootstrap, setup_values):
    """The command as the table shows it: the tool and its arguments, without the address and
    with the setup's names and paths shortened."""
    shown = [a for a in args if a not in ("--bootstrap-server", bootstrap)]
    short = {v: k.upper() for k, v in setup_values.items()}
    return " ".join([ours] + [short.get(a, a) for a in shown])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--bootstrap-server", help="use this broker instead of starting one")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    java = java_command()
    work = tempfile.mkdtemp(prefix="kafkit-bench-tools-")
    broker_dir = None
    try:
        if args.bootstrap_server:
            bootstrap = args.bootstrap_server
        else:
            bootstrap, broker_dir = start_broker(work)
        s = setup(bootstrap, work, os.getpid())
        print(f"broker {bootstrap}; {args.runs} runs each, ours and Java's in turns; medians\n")
        print(f"{'command':72} {'kafkit':>8} {'Java':>9} {'ratio':>13}  target")
        missed = 0
        for ours, our_args, cls, java_args, stdin in cases(bootstrap, s):
            name = label(ours, our_args, bootstrap, s)
            if not os.path.exists(tool(ours)):
                print(f"{name[:72]:72} {'skipped: not built':>32}")
                continue

            def case(cmd):
                def one(_):
                    if stdin is None:
                        return timed(cmd)
                    with open(stdin, "rb") as f:
                        return timed(cmd, stdin=f)
                return one

            (t, _), (jt, _) = interleaved(args.runs, case([tool(ours), *our_args]),
                                          case(java(cls, *java_args)))
            ratio = jt / t
            ok = ratio >= TARGET
            missed += not ok
            print(f"{name[:72]:72} {t * 1000:6.1f}ms {jt * 1000:7.0f}ms {ratio:6.0f}x faster  "
                  f">= {TARGET}x {'ok' if ok else 'MISSED'}")
        print(f"\nmachine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end"
              f"{'' if not missed else f'; {missed} case(s) missed the target'}")
    finally:
        stop_broker(broker_dir)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
