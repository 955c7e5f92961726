#!/usr/bin/env python3
"""Sends that waited for their NIC in a `poems direct --timeline` Chrome trace.

  bench/smpi/nic_waits.py TIMELINE.json G_NS_PER_BYTE g_NS

A send waited when it starts after the rank's previous operation ended,
exactly when the NIC finished the rank's previous send (g + (s-1)G after
that send started): LogGOPS's NIC sends one message after the other, where
SimGrid's link would have carried both at once (docs/direct.md, "Beside
SimGrid's SMPI"). Prints the sends, how many waited, the waiting summed over
the ranks, and the commonest message sizes."""
import collections
import json
import sys


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    G, g = float(sys.argv[2]) * 1e-3, float(sys.argv[3]) * 1e-3  # the trace's times are microseconds
    trace = json.load(open(sys.argv[1]))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    by_rank = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            by_rank[e["tid"]].append(e)
    sends = waited = 0
    waited_us = 0.0
    sizes = collections.Counter()
    for ops in by_rank.values():
        ops.sort(key=lambda e: e["ts"])
        last_end = last_send = None
        for e in ops:
            if e["name"] == "send":
                sends += 1
                sizes[e["args"]["bytes"]] += 1
                if last_send is not None and last_end is not None:
                    nic_free = last_send["ts"] + g + (last_send["args"]["bytes"] - 1) * G
                    if e["ts"] > last_end + 1e-6 and abs(e["ts"] - nic_free) < 1e-3:
                        waited += 1
                        waited_us += e["ts"] - last_end
                last_send = e
            last_end = e["ts"] + e.get("dur", 0)
    common = ", ".join(f"{n} x {s} B" for s, n in sizes.most_common(4))
    print(f"{sends} sends, {waited} waited for the NIC, {waited_us / 1000:.1f} ms summed over the ranks; "
          f"commonest sizes: {common}")


if __name__ == "__main__":
    main()
