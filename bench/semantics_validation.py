#!/usr/bin/env python3
"""Which message-progress semantics predicts this machine's real runs better.

Calibrates this machine (poems calibrate --quick), measures the `validation`
study of examples/sweep3d/sweep3d.psl under mpirun (poems measure, with the
study's own simulation beside it), and simulates every binding again under
both semantics (poems simulate --semantics matched|loggopsim) with the same
machine and the same Wg the study's processor[measured] used, then prints the
errors against measurement side by side (docs/sweep3d.md, "The two semantics
against measurement").

    bench/semantics_validation.py [BUILD_DIR] [--repetitions N] [--nice -20]

Until the study itself can select the semantics (a setting of the MPI runtime
component), this runs `poems simulate` on the specification with the
calibrated machine appended.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)

ap = argparse.ArgumentParser()
ap.add_argument("build", nargs="?", default=os.path.join(root, "build"))
ap.add_argument("--repetitions", type=int, default=3)
ap.add_argument("--nice", type=int, default=-20 if os.geteuid() == 0 else None)
args = ap.parse_args()
poems = os.path.join(args.build, "bin", "poems")
spec_dir = os.path.join(root, "examples", "sweep3d")
spec = os.path.join(spec_dir, "sweep3d.psl")
nice = ["--nice", str(args.nice)] if args.nice is not None else []

work = tempfile.mkdtemp(prefix="poems_semantics_")
try:
    local = os.path.join(work, "local.psl")
    db = os.path.join(work, "poems.db")
    subprocess.run([poems, "calibrate", "--quick", *nice, "--psl", local, "--spec", spec, "--study", "validation",
                    "--db", db], check=True, stdout=subprocess.DEVNULL)
    measured = json.loads(subprocess.run(
        [poems, "measure", spec, "--study", "validation", "--machine", "local", "--import", local, *nice,
         "--repetitions", str(args.repetitions), "--format", "json", "--no-store"],
        check=True, capture_output=True, text=True).stdout)
    # The specification with the calibrated machine, for `poems simulate`.
    for f in ("machines.psl", "mpi.psl"):
        shutil.copy(os.path.join(spec_dir, f), work)
    combined = os.path.join(work, "combined.psl")
    with open(combined, "w") as out:
        out.write(open(spec).read() + "\n" + open(local).read())

    print(f"{'binding':34} {'P':>2} {'measured_s':>11} {'matched_s':>10} {'diff':>8} {'loggopsim_s':>11} {'diff':>8}")
    errors = {"matched": [], "loggopsim": []}
    for row in measured["rows"]:
        b = row["binding"]
        it, jt = math.ceil(b["it_g"] / b["npe_i"]), math.ceil(b["jt_g"] / b["npe_j"])
        work_units = it * jt * b["kt"] * 6 * 8 * b["iterations"]  # cell-angles per process, mm = 6, 8 octants
        wg = row["breakdown"]["simulation[MPI-Sim]"]["compute_ns"] / work_units  # the study's Wg for this block
        sets = [f"--set={k}={int(v)}" for k, v in b.items()]
        t = {}
        for semantics in errors:
            out = subprocess.run([poems, "simulate", combined, "--machine", "local", "--processor", "local_cpu",
                                  f"--wg={wg!r}ns", *sets, "--semantics", semantics, "--no-store", "--format", "json",
                                  "--max-ranks-listed", "0"], check=True, capture_output=True, text=True, cwd=work)
            t[semantics] = json.loads(out.stdout)["finish_ns"]
        m = row["times_ns"]["measurement[mpirun]"]
        line = (f"{int(b['it_g'])}^3 mk={int(b['mk'])} mmi={int(b['mmi'])} it={int(b['iterations'])} "
                f"{int(b['npe_i'])}x{int(b['npe_j'])}")
        line = f"{line:34} {row['processes']:>2} {m / 1e9:11.4f}"
        for semantics, e in errors.items():
            d = 100 * (t[semantics] - m) / m
            e.append((row["processes"], d))
            line += f" {t[semantics] / 1e9:10.4f} {d:+7.2f}%"
        print(line)
    for semantics, e in errors.items():
        every = [d for _, d in e]
        multi = [d for p, d in e if p > 1]
        print(f"{semantics:10} mean |error| {sum(map(abs, every)) / len(every):.2f} % "
              f"(more than one process: {sum(map(abs, multi)) / max(len(multi), 1):.2f} %), "
              f"within 10 %: {sum(abs(d) <= 10 for d in every)} of {len(every)}, worst {max(every, key=abs):+.2f} %")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
finally:
    shutil.rmtree(work)
