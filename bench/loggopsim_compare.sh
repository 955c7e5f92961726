#!/usr/bin/env bash
# POEMS's simulator beside LogGOPSim on the same Sweep3D schedule, in one run:
# the GOAL export of examples/sweep3d/sweep3d.psl, converted by LogGOPSim's
# txt2bin and simulated by LogGOPSim, and simulated by `poems simulate --goal
# --semantics loggopsim`. Prints both finish times (they must be equal), peak
# memory, and events per second of the simulation, as docs/PERFORMANCE.md
# reports them.
#
#   [RUNS=N] bench/loggopsim_compare.sh LOGGOPSIM_DIR [NPE_I NPE_J] [POEMS_BUILD]
#
# LOGGOPSIM_DIR holds LogGOPSim and txt2bin built from spcl/LogGOPSim (see
# docs/PERFORMANCE.md for the build commands). Defaults: 64 x 64 processes,
# one iteration, build/. LogGOPS: L=5300 o=2300 g=2000 G=2 O=1 S=32768 (ns),
# Wg = 60 ns. Events are LogGOPSim's count (operations + messages) for both;
# LogGOPSim's rate is over its whole run (its own timer counts whole
# seconds; mapping the binary schedule is nearly free), POEMS's over its
# simulation (`wall_seconds`; the GOAL parse before it is printed apart).
# Both in wall time and in CPU time (LogGOPSim: user + system; poems: the
# simulating thread), the latter the fairer figure on a shared host.
set -euo pipefail

lgs=${1:?usage: $0 LOGGOPSIM_DIR [NPE_I NPE_J] [POEMS_BUILD]}
ni=${2:-64}
nj=${3:-64}
build=${4:-build}
poems="$build/bin/poems"
spec="$(dirname "$0")/../examples/sweep3d/sweep3d.psl"
params="-L 5300 -o 2300 -g 2000 -G 2 -O 1 -S 32768"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$poems" taskgraph "$spec" --set npe_i="$ni" --set npe_j="$nj" --set iterations=1 --wg 60ns \
  --goal "$work/s.goal" 2>/dev/null
echo "schedule: Sweep3D ${ni}x${nj}, one iteration, $(du -h "$work/s.goal" | cut -f1) of GOAL"

/usr/bin/time -f "%e %M" -o "$work/txt2bin.time" "$lgs/txt2bin" -i "$work/s.goal" -o "$work/s.bin" >/dev/null
# RUNS (default 1) alternating runs of each; every run is printed, then the
# medians (a shared host's noise shows in the spread).
runs=${RUNS:-1}
: >"$work/runs"
for ((i = 1; i <= runs; i++)); do
  /usr/bin/time -f "%e %M %U %S" -o "$work/lgs.time" "$lgs/LogGOPSim" -f "$work/s.bin" $params -b >"$work/lgs.out"
  read -r lgs_wall lgs_kib lgs_user lgs_sys <"$work/lgs.time"
  lgs_finish=$(sed -n 's/^Maximum finishing time at host \([0-9]*\): \([0-9]*\) .*/\2 (rank \1)/p' "$work/lgs.out")
  lgs_events=$(sed -n 's/.*Events: \([0-9]*\).*/\1/p' "$work/lgs.out")

  /usr/bin/time -f "%e %M" -o "$work/poems.time" "$poems" simulate --goal "$work/s.goal" $params \
    --semantics loggopsim --no-store --max-ranks-listed 0 --format json >"$work/poems.json"
  read -r poems_wall poems_kib <"$work/poems.time"
  read -r poems_finish poems_rank poems_sim poems_cpu poems_events < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(j["finish_ns"], j["finish_rank"], j["wall_seconds"], j["cpu_seconds"], j["operations"] + j["messages"])' "$work/poems.json")
  echo "$lgs_wall $lgs_kib $lgs_events $lgs_user $lgs_sys $poems_wall $poems_kib $poems_sim $poems_cpu $poems_events" \
    >>"$work/runs"
  [ "${lgs_finish%% *}" = "$poems_finish" ] || { echo "finish times differ: $lgs_finish, $poems_finish" >&2; exit 1; }
done

python3 - "$work/runs" <<'EOF'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
def show(lw, lk, le, lu, ls, pw, pk, ps, pc, pe):
    lc = lu + ls
    print(f"{'':26}{'LogGOPSim':>16}{'poems':>16}")
    print(f"{'peak RSS':26}{lk / 1024:>13.0f} MiB{pk / 1024:>13.0f} MiB")
    print(f"{'events':26}{le:>16,.0f}{pe:>16,.0f}")
    print(f"{'simulation, wall':26}{lw:>14.2f} s{ps:>14.3f} s")
    print(f"{'simulation, CPU':26}{lc:>14.2f} s{pc:>14.3f} s")
    print(f"{'events/s, wall':26}{le / lw:>16,.0f}{pe / ps:>16,.0f}   ({(pe / ps) / (le / lw):.1f}x)")
    print(f"{'events/s, CPU':26}{le / lc:>16,.0f}{pe / pc:>16,.0f}   ({(pe / pc) / (le / lc):.1f}x)")
    print(f"{'whole run, wall':26}{lw:>14.2f} s{pw:>14.2f} s   (poems: GOAL parse, hash and simulation)")
if len(rows) == 1:
    show(*rows[0])
else:
    for i, r in enumerate(rows, 1):
        lw, ps = r[0], r[7]
        print(f"run {i}: LogGOPSim {lw:.2f} s, poems {ps:.3f} s: {(r[9] / ps) / (r[2] / lw):.1f}x in wall time")
    print(f"medians of {len(rows)} runs:")
    show(*[statistics.median(c) for c in zip(*rows)])
EOF
echo "finish: LogGOPSim $lgs_finish ns, poems $poems_finish ns (rank $poems_rank)"
read -r txt2bin_wall txt2bin_kib <"$work/txt2bin.time"
echo "txt2bin: $txt2bin_wall s, $((txt2bin_kib / 1024)) MiB"
