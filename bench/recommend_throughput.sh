#!/usr/bin/env bash
# Throughput of `poems recommend` against --jobs (docs/PERFORMANCE.md,
# "Study throughput"): its gap-filling evaluations and --confirm simulations
# on forked workers. Two questions, each from an empty knowledge base per
# configuration; the answer must be the --jobs 1 answer byte for byte (but
# the wall time it prints and the knowledge base's name) and the knowledge
# base must hold as many runs. Prints wall time, speedup over the first
# configuration, and the CPU time of all processes.
#
#   bench/recommend_throughput.sh [BUILD] [JOBS...]      (default: build/, 1 2)
#
# critical-path: a pipeline with no closed form (tests/scaleout/recommend_pipeline.psl),
#   --procs-range 2..100 with 14 chunk sizes: 252 critical paths of 1-30 ms in 18 layouts.
# confirm: Sweep3D 255^3 on 64 processors, --top 4 --confirm: 1,020 closed-form
#   candidates (microseconds, evaluated in the parent) and 4 simulations of ~0.6 s.
#
# POEMS_BENCH_NICE=-19 (root) runs each question in a session of its own
# (Linux autogroup) at that nice value, as `poems run --nice` does (see
# bench/study_throughput.sh): on a shared host, CFS would otherwise give the
# question's session one session's share however many workers it runs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
shift $(($# < 1 ? $# : 1))
jobs=("$@")
[ ${#jobs[@]} -gt 0 ] || jobs=(1 2)
poems="$(cd "$build" && pwd)/bin/poems"
nice=()
if [ -n "${POEMS_BENCH_NICE:-}" ]; then
  # shellcheck disable=SC2016  # expanded by the inner shell
  nice=(setsid bash -c 'echo "$0" > /proc/self/autogroup; exec nice -n "$0" "$@"' "$POEMS_BENCH_NICE")
fi
# shellcheck source=bench/compare_runs.sh
source "$here/compare_runs.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A questions=(
  [critical-path]="recommend $here/../tests/scaleout/recommend_pipeline.psl --vary chunk=1,2,3,4,5,6,8,10,12,15,20,24,30,40 --procs-range 2..100 --set n=2400"
  [confirm]="recommend $here/../examples/sweep3d/sweep3d.psl --machine Odin --wg 60ns --set it_g=255 --set jt_g=255 --set kt=255 --procs 64 --top 4 --confirm"
)

echo "host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); nice ${POEMS_BENCH_NICE:-0}"
printf "%-14s %5s %10s %8s %10s %6s %s\n" question jobs wall_s speedup cpu_s runs same_as_first
for name in critical-path confirm; do
  compare_reset
  for n in "${jobs[@]}"; do
    dir="$work/$name-$n"
    mkdir -p "$dir"
    # shellcheck disable=SC2086  # the question is a word list
    (cd "$dir" && /usr/bin/time -f "%e %U %S" -o "$dir/time" "${nice[@]}" "$poems" ${questions[$name]} --jobs "$n" \
      --db poems.db > "$dir/out" 2> "$dir/err")
    read -r wall user sys < "$dir/time"
    sed -E 's/; [0-9]+\.[0-9]{3} s$//' "$dir/out" > "$dir/answer"
    runs=$("$poems" db runs --db "$dir/poems.db" --status "done" --limit 0 --format csv | tail -n +2 | wc -l)
    compare_run "$wall" "$user" "$sys" "$dir/answer" "$runs"
    printf "%-14s %5s %10s %8s %10s %6s %s\n" "$name" "$n" "$wall" "$speedup" "$cpu" "$runs" "$same"
  done
done
