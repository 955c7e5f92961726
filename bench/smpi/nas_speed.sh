#!/usr/bin/env bash
# Wall time of simulating NAS Parallel Benchmarks under SimGrid's SMPI and
# under `poems direct` (docs/PERFORMANCE.md, "Hand-overs on one host CPU, and
# NAS class A beside SMPI"). Builds NPB3.4-MPI twice, unmodified (smpiff /
# smpicc and poems-mpif90 / poems-mpicc, -O3), then runs every program at
# every rank count: smpirun on the flat platform of scripts/smpi-compare with
# its LogGOPS settings, and poems direct with each --handover given; the
# computation is measured under both (their defaults). One line per run:
#   PROGRAM RANKS SIDE wall/user/sys W U S verified V
#
#   bench/smpi/nas_speed.sh NPB3.4-MPI [CLASS] [RANKS] [PROGRAMS] [HANDOVERS]
#   bench/smpi/nas_speed.sh /work/ref/nas-parallel-benchmarks/NPB3.4-MPI A "2 8" "cg ep ft is lu mg" "one-cpu sleep"
set -euo pipefail
npb=${1:?NPB3.4-MPI directory}
class=${2:-A}
ranks=${3:-2 8}
programs=${4:-cg ep ft is lu mg}
handovers=${5:-one-cpu}
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$here/build}
work=$(mktemp -d /tmp/nas-speed-XXXXXX)
trap 'rm -rf "$work"' EXIT

for side in smpi poems; do
  cp -r "$npb" "$work/$side"
  mkdir -p "$work/$side/bin"
  if [ $side = smpi ]; then fc=smpiff cc=smpicc; else fc=$build/bin/poems-mpif90 cc=$build/bin/poems-mpicc; fi
  # The NPB3.4-MPI fork on GitHub (thaisacs/NPB3.4-MPI) links its per-iteration timers into every program.
  stats=
  if [ -f "$work/$side/kernel_stats/kernel_stats.c" ]; then
    (cd "$work/$side/kernel_stats" && $cc -O3 -c kernel_stats.c)
    stats=$work/$side/kernel_stats/kernel_stats.o
  fi
  printf '%s\n' "MPIFC = $fc" 'FLINK = $(MPIFC)' "FMPI_LIB = $stats" 'FMPI_INC =' \
    'FFLAGS = -O3 -fallow-invalid-boz -fallow-argument-mismatch' 'FLINKFLAGS = $(FFLAGS)' "MPICC = $cc" \
    'CLINK = $(MPICC)' "CMPI_LIB = $stats" 'CMPI_INC =' 'CFLAGS = -O3' 'CLINKFLAGS = $(CFLAGS)' 'CC = gcc -g' \
    'BINDIR = ../bin' 'RAND = randi8' > "$work/$side/config/make.def"
  for p in $programs; do make -C "$work/$side" "${p^^}" CLASS="$class" > "$work/$side.build.log" 2>&1; done
done

# The platform and settings of scripts/smpi-compare (o = 1.5 us, G = 6 ns/B, L = 2.5 us, S = 65,535 B:
# each of a route's two links has latency (L - 17G) / 2).
cat > "$work/platform.xml" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="c" prefix="node-" suffix="" radical="0-255" speed="1Gf" bw="166666666.66666666Bps" lat="1199.0ns"
             bb_bw="1000000000000000.0Bps" bb_lat="0ns" sharing_policy="SPLITDUPLEX"/>
  </zone>
</platform>
EOF
o=1.5e-06
smpi_cfg=(--cfg=smpi/os:0:$o:0 --cfg=smpi/ois:0:$o:0 --cfg=smpi/or:0:$o:0 --cfg=smpi/bw-factor:0:1
  --cfg=smpi/lat-factor:0:1 --cfg=network/crosstraffic:0 --cfg=smpi/send-is-detached-thresh:65536
  --cfg=smpi/async-small-thresh:65536 --cfg=smpi/wtime:0)

for n in $ranks; do
  for p in $programs; do
    for side in smpi $handovers; do
      if [ $side = smpi ]; then
        cmd=(smpirun -np "$n" -platform "$work/platform.xml" "${smpi_cfg[@]}" "$work/smpi/bin/$p.$class.x")
      else
        cmd=("$build/bin/poems" direct "$work/poems/bin/$p.$class.x" -np "$n" --handover "$side" --host-cores 1 --no-store
          -L 2500 -o 1500 -g 1000 -G 6 -O 0 -S 65535 --quiet)
      fi
      (cd "$work" && /usr/bin/time -f "%e %U %S" -o "$work/time" "${cmd[@]}" > "$work/out" 2> "$work/err") || true
      echo "$p $n $side wall/user/sys $(cat "$work/time" | tail -1) verified $(grep -c SUCCESSFUL "$work/out" || true)" \
        "load $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
