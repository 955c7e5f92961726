#!/usr/bin/env bash
# `poems simulate --semantics loggopsim` beside LogGOPSim on schedules that
# neither project's tests wrote: every pattern of LogGOPSim's own schedule
# generator, Schedgen (collectives, rings, barriers, all-to-all, random
# bisections, a ResNet step), at several sizes, message sizes (eager and
# rendezvous) and options (nonblocking with polling, n-way fan-out,
# segments). Each schedule goes through txt2bin + LogGOPSim and through
# `poems simulate --goal`; the maximum finish time and its rank must be
# equal, and every rank's finish time for schedules of at most 16 ranks
# (LogGOPSim prints them there). A schedule whose receives never all match
# must stop unfinished in both; one Schedgen writes wrong (a peer out of
# range) must be refused by poems with its location. Prints one line per
# schedule, then the counts; exit 1 if any differs or poems refuses a
# schedule LogGOPSim runs.
#
#   bench/schedgen_compare.sh LOGGOPSIM_DIR SCHEDGEN [POEMS_BUILD]
#
# LOGGOPSIM_DIR holds LogGOPSim and txt2bin, SCHEDGEN the schedgen binary,
# both built from spcl/LogGOPSim (docs/simulator.md, "LogGOPSim itself").
# PATTERNS, SIZES, BYTES override the lists below; TIMEOUT (seconds, 120)
# bounds each simulator's run: a schedule both exceed is counted apart.
set -uo pipefail

lgs=${1:?usage: $0 LOGGOPSIM_DIR SCHEDGEN [POEMS_BUILD]}
schedgen=${2:?usage: $0 LOGGOPSIM_DIR SCHEDGEN [POEMS_BUILD]}
poems="${3:-build}/bin/poems"
patterns=${PATTERNS:-binomialtreereduce binarytreebcast binomialtreebcast nwaydissemination pipelinedring
  pipelinedringdep doublering gather scatter linbarrier dissemination random_bisect random_bisect_fd_sym linear_alltoall
  linear_alltoallv allreduce_recdoub allreduce_ring resnet chained_dissem}
sizes=${SIZES:-2 7 16 64}
bytes=${BYTES:-1 100 65536}
timeout=${TIMEOUT:-120}
params="-L 5300 -o 2300 -g 2000 -G 2 -O 1 -S 32768"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

same=0 differ=0 refused=0 invalid=0 unfinished=0 slow=0 skipped=0
for ptrn in $patterns; do
  for s in $sizes; do
    for d in $bytes; do
      for extra in "" "--nb 5000 --nb-poll 1000" "--nway 2" "--segmentsize 4000"; do
        # Pipelined patterns send d/segmentsize messages at once: 16 segments.
        case $ptrn in pipelined* | doublering)
          [[ $extra == *segmentsize* ]] || extra="$extra --segmentsize $(((d + 15) / 16))" ;;
        esac
        extra=${extra# }
        what="$ptrn -s $s -d $d${extra:+ $extra}"
        f="$work/s.goal"
        rm -f "$f"
        # shellcheck disable=SC2086
        if ! "$schedgen" -p "$ptrn" -s "$s" -d "$d" $extra -o "$f" >/dev/null 2>&1 || [ ! -s "$f" ]; then
          skipped=$((skipped + 1)) # a size the pattern does not take
          continue
        fi
        "$lgs/txt2bin" -i "$f" -o "$work/s.bin" >/dev/null 2>&1 || {
          skipped=$((skipped + 1))
          continue
        }
        # shellcheck disable=SC2086
        lout=$(timeout "$timeout" "$lgs/LogGOPSim" -f "$work/s.bin" $params 2>&1)
        lrc=$?
        # shellcheck disable=SC2086
        pout=$(timeout "$timeout" "$poems" simulate --goal "$f" $params --semantics loggopsim --no-store \
          --max-ranks-listed 16 --format json 2>"$work/err")
        prc=$?
        if [ $lrc = 124 ] && [ $prc = 124 ]; then
          echo "both over ${timeout} s: $what"
          slow=$((slow + 1))
          continue
        fi
        # A schedule Schedgen writes wrong (a peer out of range): poems says
        # where (exit 1); LogGOPSim crashes or prints no times.
        if [ $prc = 1 ] && { [ $lrc -ge 128 ] || ! grep -q '^Host \|^Maximum finishing' <<<"$lout"; }; then
          echo "invalid, refused by poems (LogGOPSim exit $lrc): $what: $(head -1 "$work/err")"
          invalid=$((invalid + 1))
          continue
        fi
        # Receives no message matches: both stop unfinished (poems exit 3).
        if [ $prc = 3 ] && grep -q 'queue on host' <<<"$lout"; then
          echo "unfinished in both: $what: $(head -1 "$work/err")"
          unfinished=$((unfinished + 1))
          continue
        fi
        if [ $prc != 0 ]; then
          echo "POEMS EXIT $prc: $what: $(head -c 300 "$work/err")"
          refused=$((refused + 1))
          continue
        fi
        # LogGOPSim names the maximum for many ranks; for few it prints every rank.
        want=$(sed -n 's/^Maximum finishing time at host \([0-9]*\): \([0-9]*\).*/\2 \1/p' <<<"$lout")
        per_rank=$(grep -o 'Host [0-9]*: [0-9]*' <<<"$lout" | awk '{print $3}' | tr '\n' ' ')
        [ -n "$want" ] || want=$(awk '{for (i = 1; i <= NF; ++i) if (i == 1 || $i > m) {m = $i; h = i - 1}} END {print m, h}' <<<"$per_rank")
        got=$(python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
print(j["finish_ns"], j["finish_rank"])
print(" ".join(str(r["finish_ns"]) for r in j["ranks"]))' <<<"$pout")
        got_max=$(head -1 <<<"$got")
        got_ranks="$(tail -1 <<<"$got") "
        if [ "$want" = "$got_max" ] && { [ -z "$per_rank" ] || [ "$per_rank" = "$got_ranks" ]; }; then
          echo "same: $what: $got_max"
          same=$((same + 1))
        else
          echo "DIFFERENT: $what: LogGOPSim $want [$per_rank], poems $got_max [$got_ranks]"
          differ=$((differ + 1))
        fi
      done
    done
  done
done
echo "schedules: $same the same, $differ different, $unfinished unfinished in both, $invalid invalid" \
  "(refused by poems), $refused refused by poems alone, $slow over ${timeout} s in both, $skipped not generated"
[ $differ = 0 ] && [ $refused = 0 ]
