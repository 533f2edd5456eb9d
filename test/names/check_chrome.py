#!/usr/bin/env python3
"""Checks a `ptboot export --format chrome` file against the decode summary
of the same capture (test/names/capture.sh): the JSON parses; on every track
the B/E events nest (an E never closes a slice that is not open, none is left
open, timestamps never go back); and the slices per function name equal the
summary's call counts ("== functions" section, names without their
"(file:line)"). Prints one line per check; exit 1 on the first failure.

usage: check_chrome.py TRACE.json SUMMARY.txt"""
import json
import re
import sys
from collections import Counter


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


def main():
    trace = json.load(open(sys.argv[1]))
    events = trace["traceEvents"]
    other = trace.get("otherData", {})
    if "ts_unit" not in other:
        fail("otherData has no ts_unit")
    open_by_tid, last_ts, slices = {}, {}, Counter()
    max_depth = 0
    for ev in events:
        ph, tid = ev["ph"], ev.get("tid", 0)
        if ph in ("B", "E"):
            ts = float(ev["ts"])
            if ts < last_ts.get(tid, ts):
                fail("timestamps go back on track %d at %s" % (tid, ev))
            last_ts[tid] = ts
        if ph == "B":
            open_by_tid.setdefault(tid, []).append(ev["name"])
            slices[ev["name"]] += 1
            max_depth = max(max_depth, len(open_by_tid[tid]))
        elif ph == "E":
            if not open_by_tid.get(tid):
                fail("E without an open slice on track %d" % tid)
            open_by_tid[tid].pop()
    left = {t: s for t, s in open_by_tid.items() if s}
    if left:
        fail("slices left open: %s" % left)
    print("ok   chrome: %d events, %d slices, nested up to %d deep, timestamps in order (%s)"
          % (len(events), sum(slices.values()), max_depth, other["ts_unit"]))

    calls = {}
    in_funcs = False
    for line in open(sys.argv[2]):
        if line.startswith("== functions"):
            in_funcs = True
            continue
        if line.startswith("=="):
            in_funcs = False
        if in_funcs:
            m = re.match(r"\s*(\d+)\s+\d+\s+[\d.]+%(?:\s+\d+\s+[\d.]+%)?\s+(.*)$", line.rstrip("\n"))
            if not m:
                fail("cannot read summary line: %r" % line)
            name = re.sub(r" \([^()]*:\d+\)$", "", m.group(2))
            name = re.sub(r" \([^()]*:\d+\)\)$", ")", name)
            calls[name] = int(m.group(1))
    checked = 0
    for name, n in calls.items():
        if name.startswith("(caller of"):
            continue  # a root: entered once per start, no call
        if slices[name] != n:
            fail("%s: %d slices, the summary counts %d calls" % (name, slices[name], n))
        checked += 1
    if checked < 5:
        fail("only %d functions compared" % checked)
    print("ok   chrome: slices per function equal the summary's calls for all %d functions "
          "(e.g. ptbtest_fib %d)" % (checked, slices.get("ptbtest_fib", 0)))


main()
