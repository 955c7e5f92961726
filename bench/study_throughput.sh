#!/usr/bin/env bash
# Study throughput of `poems run` against --jobs and against MPI ranks
# (docs/PERFORMANCE.md, "Study throughput"). Each configuration runs the
# study from an empty knowledge base; its printed table must be the serial
# run's byte for byte and it must store as many finished runs. Prints wall
# time, speedup over --jobs 1, and the CPU time of all processes.
#
#   bench/study_throughput.sh [BUILD] [SPEC] [STUDY] [CONFIGS...]
#
# Defaults: build/, examples/sweep3d/sweep3d.psl, latency, and the
# configurations "jobs:1 jobs:2 mpi:2 mpi:3 mpi:4" (mpi:R is
# `mpirun -np R poems run ...`; R above the cores is oversubscribed).
# bench/studies/many_cells.psl --study many_cells (1,000 analytic cells of
# microseconds) gives the runner's own cost per binding.
# bench/recommend_throughput.sh measures `poems recommend --jobs` the same way.
#
# POEMS_BENCH_NICE=-19 (root) passes --nice -19 to every run: its session's
# scheduling group (Linux autogroup) then outweighs the other sessions of a
# shared host, whose CPU share would otherwise be the same for one process
# as for two (CFS shares the CPU between sessions first).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
spec=${2:-$here/../examples/sweep3d/sweep3d.psl}
study=${3:-latency}
shift $(($# < 3 ? $# : 3))
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(jobs:1 jobs:2 mpi:2 mpi:3 mpi:4)
poems="$(cd "$build" && pwd)/bin/poems"
nice=()
[ -n "${POEMS_BENCH_NICE:-}" ] && nice=(--nice "$POEMS_BENCH_NICE")
# shellcheck source=bench/compare_runs.sh
source "$here/compare_runs.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=""
[ "$(id -u)" = 0 ] && root="--allow-run-as-root"

echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); study $study of $(basename "$spec")" \
  "${nice[@]}"
printf "%-8s %10s %8s %10s %6s %s\n" config wall_s speedup cpu_s cells same_as_serial
compare_reset
for config in "${configs[@]}"; do
  kind=${config%%:*}
  n=${config#*:}
  db="$work/$config.db"
  case $kind in
    jobs) cmd=("$poems" run "$spec" --study "$study" --jobs "$n" --db "$db" "${nice[@]}") ;;
    mpi) cmd=(mpirun ${root:+"$root"} --oversubscribe --bind-to none -np "$n" "$poems" run "$spec" --study "$study" --db "$db"
              "${nice[@]}") ;;
    *) echo "unknown configuration $config" >&2; exit 2 ;;
  esac
  /usr/bin/time -f "%e %U %S" -o "$work/time" "${cmd[@]}" > "$work/$config.out" 2> "$work/$config.err"
  read -r wall user sys < "$work/time"
  cells=$("$poems" db runs --db "$db" --status "done" --limit 0 --format csv | tail -n +2 | wc -l)
  compare_run "$wall" "$user" "$sys" "$work/$config.out" "$cells"
  printf "%-8s %10s %8s %10s %6s %s\n" "$config" "$wall" "$speedup" "$cpu" "$cells" "$same"
done
