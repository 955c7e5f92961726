#!/usr/bin/env bash
# Several builds of `poems` on the Sweep3D GOAL exports, as docs/PERFORMANCE.md
# compares a change: the instructions of the `loggopsim` simulation of the 16x16
# export (callgrind, if valgrind is installed; they do not depend on the host),
# then alternating runs of the 64x64 export, each binary once a round, and the
# median and minimum of its `cpu_seconds` (the simulating thread's CPU time).
# Every run's finish time is printed with the medians: they must all be
# LogGOPSim's, 20,990,676 ns.
#
#   [ROUNDS=N] bench/loggopsim_interleave.sh POEMS_BINARY...
#
# ROUNDS defaults to 5. The exports are written by the first binary into a
# temporary directory. LogGOPS: L=5300 o=2300 g=2000 G=2 O=1 S=32768 (ns), Wg = 60 ns.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: [ROUNDS=N] $0 POEMS_BINARY..." >&2; exit 2; }
spec="$(dirname "$0")/../examples/sweep3d/sweep3d.psl"
params="-L 5300 -o 2300 -g 2000 -G 2 -O 1 -S 32768 --semantics loggopsim --no-store --format json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for n in 16 64; do
  "$1" taskgraph "$spec" --set npe_i=$n --set npe_j=$n --set iterations=1 --wg 60ns --goal "$work/s$n.goal" 2>/dev/null
done

if command -v valgrind >/dev/null; then
  for b in "$@"; do
    # $params is a list of words on purpose.
    # shellcheck disable=SC2086
    ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null \
      --toggle-collect='poems::sim::detail::Engine<true>::run*' "$b" simulate --goal "$work/s16.goal" $params \
      2>&1 >/dev/null | sed -n 's/.*Collected : //p')
    echo "$b: 16x16 export, $ir instructions"
  done
else
  echo "(no valgrind: instruction counts skipped)"
fi

for ((i = 1; i <= ${ROUNDS:-5}; i++)); do
  for b in "$@"; do
    # shellcheck disable=SC2086
    "$b" simulate --goal "$work/s64.goal" $params 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(sys.argv[1], j["cpu_seconds"], j["finish_ns"])' "$b"
  done
done | python3 -c '
import collections, statistics, sys
runs, finishes = collections.defaultdict(list), collections.defaultdict(set)
for line in sys.stdin:
    b, cpu, finish = line.split()
    runs[b].append(float(cpu))
    finishes[b].add(finish)
for b, v in runs.items():
    print("%s: 64x64 export, cpu_seconds median %.3f, min %.3f over %d runs, finish %s ns"
          % (b, statistics.median(v), min(v), len(v), " ".join(sorted(finishes[b]))))'
