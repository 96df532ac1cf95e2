#!/usr/bin/env python3
"""Reads the output of `cargo test` and names the tests that failed.

    python3 tools/testlog.py LOG     prints one line per failed test: its binary, its name and
                                     the first line of its panic; exits 1 if any failed

Used by .ci/run (its closing summary) and tools/soak (which counts failures over many runs).
A test binary that died without a test result (a crash, a signal) counts as a failure of the
binary itself, named `<binary>: (no test result: ...)`.
"""

import re
import sys

# `     Running tests/local/main.rs (target/debug/deps/local-0123abcd)` or
# `     Running unittests src/lib.rs (target/debug/deps/kafkit-0123abcd)`
RUNNING = re.compile(r"^\s+Running (?:unittests )?(\S+) \(")
FAILED_TEST = re.compile(r"^test (\S+) \.\.\. FAILED$")
OUTPUT_BLOCK = re.compile(r"^---- (\S+) stdout ----$")
PANIC = re.compile(r"^thread '.*' panicked at (\S+?):?$|^thread '.*' panicked at (\S+): (.*)$")
RESULT = re.compile(r"^test result: ")
# cargo's line for a test binary that did not finish: `error: test failed, to rerun pass ...`
# (with --no-fail-fast it goes on); the cause is on the line before, e.g. `(signal: 9, SIGKILL)`.
BINARY_DIED = re.compile(r"process didn't exit successfully: .*\((.*)\)$")
COUNTS = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed")


def tests_run(lines):
    """How many tests a `cargo test` log ran, passed or failed."""
    return sum(int(m.group(1)) + int(m.group(2)) for m in map(COUNTS.match, lines) if m)


def failures(lines):
    """The failed tests of one `cargo test` log, in order: (binary, test, first panic line)."""
    found = []
    binary = "?"
    failed = {}  # test name -> index in found, for the binary being read
    reason_of = {}  # test name -> first panic line
    block = None  # the test whose captured output is being read
    pending = None  # the test whose panic message is on the next line
    saw_result = True
    for raw in lines:
        line = raw.rstrip("\n")
        m = RUNNING.match(line)
        if m:
            if not saw_result:
                found.append((binary, "(no test result)", "the binary ended before its summary"))
            binary, failed, reason_of, block, pending = m.group(1), {}, {}, None, None
            saw_result = False
            continue
        if RESULT.match(line):
            saw_result = True
            for name, index in failed.items():
                found[index] = (binary, name, reason_of.get(name, "(no panic message)"))
            continue
        m = FAILED_TEST.match(line)
        if m:
            failed[m.group(1)] = len(found)
            found.append((binary, m.group(1), "(no panic message)"))
            continue
        m = OUTPUT_BLOCK.match(line)
        if m:
            block = m.group(1)
            continue
        if pending is not None:
            # Since Rust 1.73 a panic's message is on the line after "panicked at".
            reason_of[pending] = line.strip() or "(empty panic message)"
            pending = None
            continue
        if block is not None and block not in reason_of:
            m = PANIC.match(line)
            if m:
                if m.group(3):
                    reason_of[block] = m.group(3)
                else:
                    pending = block
                continue
        m = BINARY_DIED.search(line)
        if m and not saw_result:
            found.append((binary, "(no test result)", m.group(1)))
            saw_result = True
    if not saw_result:
        found.append((binary, "(no test result)", "the log ends before the binary's summary"))
    return found


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(0 if sys.argv[1:] in (["-h"], ["--help"]) else 2)
    with open(sys.argv[1], encoding="utf-8", errors="replace") as log:
        found = failures(log)
    for binary, test, reason in found:
        print(f"  {binary}: {test}: {reason}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
