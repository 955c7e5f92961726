#!/usr/bin/env bash
# Time of `poems simulate --goal` on a schedule that cannot finish: rank 0
# posts N receives that nothing matches (issue 44). The report lists four of
# them and counts the rest, so the time is the parse and the run, linear in
# N. A second shape puts N operations behind one unmatched receive.
#
#   [RUNS=N] bench/deadlock_report.sh [POEMS_BUILD] [N ...]
#
# Defaults: build/, N = 1000 10000 100000. Prints, per N and shape, the
# median wall time and peak memory of RUNS runs (default 3) and checks the
# report's count line, exit 3 (a deadlock) each time.
set -euo pipefail

build=${1:-build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
poems="$build/bin/poems"
runs=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for n in "${sizes[@]}"; do
  for shape in unmatched chain; do
    file="$work/$shape-$n.goal"
    {
      echo "num_ranks 2"
      echo "rank 0 {"
      if [ "$shape" = unmatched ]; then
        awk -v n="$n" 'BEGIN { for (i = 0; i < n; ++i) printf "r%d: recv 8b from 1 tag %d\n", i, i }'
      else
        awk -v n="$n" 'BEGIN { print "r0: recv 8b from 1 tag 0"
                               for (i = 1; i < n; ++i) printf "c%d: calc 1\nc%d requires r0\n", i, i }'
      fi
      echo "}"
    } >"$file"
    if [ "$shape" = unmatched ]; then
      want="and $((n - 4)) more waiting operation(s) not listed"
    else
      want="$((n - 1)) later operation(s) wait for these"
    fi
    : >"$work/times"
    for ((k = 0; k < runs; ++k)); do
      rc=0
      /usr/bin/time -f "%e %M" -o "$work/time" "$poems" simulate --goal "$file" --no-store >/dev/null 2>"$work/err" || rc=$?
      if [ "$rc" -ne 3 ] || ! grep -qF "$want" "$work/err"; then
        echo "N=$n $shape: exit $rc, report without '$want':" >&2
        cat "$work/err" >&2
        exit 1
      fi
      tail -n 1 "$work/time" >>"$work/times"  # time prints "Command exited with non-zero status 3" first
    done
    sort -n "$work/times" | awk -v n="$n" -v s="$shape" -v r="$runs" \
      '{ t[NR] = $1; m[NR] = $2 } END { k = int((NR + 1) / 2); printf "N=%-8d %-9s %6.2f s %7.1f MiB (median of %d)\n", n, s, t[k], m[k] / 1024, r }'
  done
done
