# shellcheck shell=bash
# shellcheck disable=SC2034  # speedup, cpu and same are read by the sourcing script
# Sourced by bench/study_throughput.sh and bench/recommend_throughput.sh: one
# configuration's row against the first of its series.
#
#   compare_reset                          start a series
#   compare_run WALL USER SYS OUTPUT COUNT sets speedup (first wall / WALL),
#                                          cpu (USER + SYS) and same ("yes" if
#                                          OUTPUT's bytes and COUNT equal the
#                                          first configuration's)

compare_reset() { compare_first_wall=""; }

compare_run() {
  local wall=$1 user=$2 sys=$3 output=$4 count=$5
  same=yes
  if [ -z "${compare_first_wall:-}" ]; then
    compare_first_wall=$wall
    compare_first_output=$output
    compare_first_count=$count
  else
    cmp -s "$compare_first_output" "$output" || same=no
    [ "$count" = "$compare_first_count" ] || same=no
  fi
  speedup=$(awk -v s="$compare_first_wall" -v w="$wall" 'BEGIN { printf "%.2f", s / w }')
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
}
