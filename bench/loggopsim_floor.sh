#!/usr/bin/env bash
# The floor of LogGOPSim's rules on this machine, beside `poems`: the Sweep3D
# GOAL export of examples/sweep3d/sweep3d.psl (or any GOAL file) simulated
# by `poems simulate --goal --semantics loggopsim` and by
# loggopsim_floor_probe (bench/loggopsim_floor_probe.cpp: the same rules with
# every operation materialized up front, the engine's calendar queue, and
# nothing else). Both must give the same finish time, rank, events and
# requeues (exit 1 otherwise); prints each run's CPU time of the simulation
# alone and the medians. docs/PERFORMANCE.md, "The floor of the rules".
#
#   [RUNS=N] bench/loggopsim_floor.sh [NPE_I NPE_J | GOAL_FILE] [POEMS_BUILD]
#
# Defaults: 64 x 64 processes, one iteration, build/, 5 runs each,
# alternating. LogGOPS: L=5300 o=2300 g=2000 G=2 O=1 S=32768 (ns), Wg = 60 ns.
set -euo pipefail

build=build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ $# -ge 1 && -f "$1" ]]; then
  goal=$1
  build=${2:-build}
else
  ni=${1:-64}
  nj=${2:-64}
  build=${3:-build}
  goal="$work/s.goal"
  "$build/bin/poems" taskgraph "$(dirname "$0")/../examples/sweep3d/sweep3d.psl" --set npe_i="$ni" \
    --set npe_j="$nj" --set iterations=1 --wg 60ns --goal "$goal" 2>/dev/null
  echo "schedule: Sweep3D ${ni}x${nj}, one iteration"
fi
params="-L 5300 -o 2300 -g 2000 -G 2 -O 1 -S 32768"
runs=${RUNS:-5}
: >"$work/runs"
for ((i = 1; i <= runs; i++)); do
  "$build/bin/poems" simulate --goal "$goal" $params --semantics loggopsim --no-store --max-ranks-listed 0 \
    --format json >"$work/poems.json"
  "$build/bin/loggopsim_floor_probe" "$goal" $params >"$work/probe.json"
  python3 - "$work/poems.json" "$work/probe.json" >>"$work/runs" <<'PY'
import json, sys
poems, probe = (json.load(open(f)) for f in sys.argv[1:3])
keys = ("finish_ns", "finish_rank", "events", "requeued")
for k in keys:
    if poems[k] != probe[k]:
        sys.exit(f"different {k}: poems {poems[k]}, probe {probe[k]}")
print(poems["cpu_seconds"], probe["simulation_seconds"], *(poems[k] for k in keys))
PY
  tail -1 "$work/runs" | awk -v i="$i" '{ printf "run %d: poems %.3f s, probe %.3f s (%.2fx)\n", i, $1, $2, $1 / $2 }'
done
python3 - "$work/runs" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
poems = statistics.median(float(r[0]) for r in rows)
probe = statistics.median(float(r[1]) for r in rows)
print(f"medians of {len(rows)} runs: poems {poems:.3f} s, probe {probe:.3f} s ({poems / probe:.2f}x)")
PY
read -r _ _ finish rank events requeued <"$work/runs"
echo "finish $finish ns (rank $rank), $events events ($requeued requeued) in both"
