#!/usr/bin/env python3
"""Turns ns-2's queue trace (out.tr) and RED average trace (ave.tr) of red_ns2_golden.tcl into the
replay file read by tests/qdisc_red_ns2.rs. Exact event times are rebuilt (the traces print 6-7
significant digits): CBR sends at start + k·interval (accumulated as ns-2's scheduler does), a
dequeue happens on arrival to an idle link or when the previous transmission ends. Every rebuilt
time is checked against the trace. Lines:
  + <t_ns> <size> <dropped 0|1> <ave after the arrival, or - when not checked>
  - <t_ns>          dequeue that returns a packet
  e <t_ns>          dequeue that finds the queue empty (RED's idle period starts)
"""
import sys
from collections import defaultdict

RATE = 1e6
SOURCES = {  # trace src address -> (packet size, rate, on periods), as in the Tcl script
    "0.0": (1000, 1.5e6, [(0.1, 1.0), (1.5, 2.5), (3.2, 3.4)]),
    "0.1": (600, 0.7e6, [(0.3, 2.2), (3.0, 3.5)]),
}


def schedule(size, rate, periods):
    times = []
    iv = size * 8.0 / rate
    for start, stop in periods:
        t = start
        while t < stop - 1e-12:
            times.append(t)
            t = t + iv
    return times


def ns(t):
    return int(round(t * 1e9))


exact = {k: schedule(*v) for k, v in SOURCES.items()}
lines = [l.split() for l in open("out.tr")]
drops = {l[11] for l in lines if l[0] == "d"}
ave = [l for l in (x.split() for x in open("ave.tr")) if l and l[0] == "a"]

arrivals = []  # (line index, exact time)
pos = defaultdict(int)
for i, l in enumerate(lines):
    if l[0] == "+":
        src = l[8]
        te = exact[src][pos[src]]
        pos[src] += 1
        assert abs(te - float(l[1])) < 1e-6, (l, te)
        assert int(l[5]) == SOURCES[src][0]
        arrivals.append((i, te))
exact_of = dict(arrivals)

# Assign traced averages to arrivals. ave.tr prints times with %g (6 significant digits), so
# arrivals closer than that are clustered; a cluster is checked when it has one traced value per
# arrival (ns-2 traces only changes, so an unchanged average has no line).
tol = lambda t: 6e-6 * max(1.0, t)
ave_of, p, k = {}, 0, 0
while k < len(arrivals):
    j = k + 1
    while j < len(arrivals) and arrivals[j][1] - arrivals[j - 1][1] < 2e-5:
        j += 1
    cluster = arrivals[k:j]
    vals = []
    while p < len(ave) and any(abs(float(ave[p][1]) - t) <= tol(t) for _, t in cluster):
        vals.append(ave[p][2])
        p += 1
    if len(vals) == len(cluster):
        ave_of.update((i, v) for (i, _), v in zip(cluster, vals))
    k = j
assert p == len(ave), f"unassigned average lines from {ave[p]}"

out = []
busy, tx_end, last_arr = False, 0.0, None
for i, l in enumerate(lines):
    kind, t = l[0], float(l[1])
    if kind not in "+-":
        continue
    if busy and tx_end < t - 1e-9 and not (kind == "-" and abs(t - tx_end) < 1e-6):
        out.append(f"e {ns(tx_end)}")
        busy = False
    if kind == "+":
        last_arr = exact_of[i]
        out.append(f"+ {ns(last_arr)} {l[5]} {1 if l[11] in drops else 0} {ave_of.get(i, '-')}")
    else:
        te = tx_end if busy else last_arr
        assert abs(te - t) < 1e-6, (l, te)
        busy, tx_end = True, te + int(l[5]) * 8.0 / RATE
        out.append(f"- {ns(te)}")
mode = "queue_in_bytes and bytes" if sys.argv[4] == "1" else "packets"
print(f"# ns-2.35 RED: thresh 5, maxthresh {sys.argv[1]}, q_weight {sys.argv[2]}, limit {sys.argv[3]}, "
      f"linterm 1e9, gentle false, use_mark_p false, {mode}, mean_pktsize 500, link 1 Mb/s")
print("\n".join(out))
