#!/usr/bin/env bash
# processor[cachesim] on this host (docs/processor.md, "processor[cachesim]"):
# 1. `poems calibrate --cachesim` on the validation study's 12 k-block tasks:
#    processor[measured]'s time of each (the median of 3 passes), cachegrind's
#    counts with this host's caches, the rates fitted; per task the fitted
#    and the leave-one-out prediction against the measured time, and the
#    seconds of each simulation (a fresh knowledge base: every task simulated);
# 2. the Odin projection with those rates: Sweep3D 255^3 on 4,096 (and 256
#    and 64) processors of Odin with the Opteron's L2 halved and doubled.
# Measured times mean something only on a quiet machine: the load is printed
# before and after. The measurements run at nice -20 (NICE=0 for a user without
# root).
# Usage: bench/cachesim_validation.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
poems=$build/bin/poems
out=$build/cachesim-bench
mkdir -p "$out"
db=$out/cachesim.db
rm -f "$db" "$db-wal" "$db-shm"

echo "host: $(uname -n), $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(valgrind --version)"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
"$poems" --quiet calibrate examples/sweep3d/sweep3d.psl --study validation --cachesim --nice "${NICE:--20}" \
  --psl "$out/local_cachesim.psl" --db "$db" --format json >"$out/calibration.json"
echo "calibration: $(($(date +%s) - start)) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$out/calibration.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
print(f"rates: ns_per_instruction = {c['ns_per_instruction']:.4g} ns, ns_per_L1_miss = {c['ns_per_L1_miss']:.4g} ns, "
      f"ns_per_LL_miss = {c['ns_per_LL_miss']:.4g} ns, ns_per_LL_miss_shared = {c['ns_per_LL_miss_shared']:.4g} ns")
print(f"{'it':>4} {'jt':>4} {'mk':>3} {'mmi':>3} {'kt':>4} {'P':>2} {'measured_us':>12} {'cachesim_us':>12} "
      f"{'diff_%':>7} {'loo_%':>7} {'sim_s':>6}")
worst = worst_loo = 0
for t in c["tasks"]:
    p, m = t["task"], t["measured_ns"]
    d = 100 * (t["predicted_ns"] - m) / m
    loo = 100 * (t["left_out_predicted_ns"] - m) / m
    worst, worst_loo = max(worst, abs(d)), max(worst_loo, abs(loo))
    print(f"{p['it']:4.0f} {p['jt']:4.0f} {p['mk']:3.0f} {p['angles']:3.0f} {p['kt']:4.0f} {p.get('procs', 1):2.0f} "
          f"{m / 1e3:12.1f} {t['predicted_ns'] / 1e3:12.1f} {d:+7.1f} {loo:+7.1f} {t['simulation_seconds']:6.1f}")
print(f"largest difference: {worst:.1f} % fitted, {worst_loo:.1f} % left out")
EOF

rates=$(python3 -c "import json,sys; c=json.load(open(sys.argv[1])); print(' '.join(f'--set Opteron_cachesim.{k}={c[k]:.6g}ns' for k in ('ns_per_instruction','ns_per_L1_miss','ns_per_LL_miss')))" "$out/calibration.json")
start=$(date +%s)
# shellcheck disable=SC2086  # $rates is three options
"$poems" --quiet run examples/sweep3d/odin_cachesim.psl --study odin_l2 $rates --db "$db"
echo "projection: $(($(date +%s) - start)) s"
