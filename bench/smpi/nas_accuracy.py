#!/usr/bin/env python3
"""SMPI's and POEMS's predictions of real NAS runs, on one calibrated machine (issue 45).

Builds NPB3.4-MPI three times, unmodified (Open MPI's mpif90/mpicc, poems-mpif90/poems-mpicc and
SimGrid's smpiff/smpicc, -O3), then runs each program at each process count REPETITIONS times,
the three sides in turn: the real run (mpirun, each start waiting for a quiet host), `poems
direct` on the machine of a `poems calibrate` PSL file, and SMPI's smpirun on a SimGrid platform
written from the same file. Prints each side's best "Time in seconds" and "Mop/s total" and the
two predictions' differences from the measured rates (docs/direct.md, "NAS class A against
mpirun").

The platform: one host per rank (1 Gflop/s, smpi/host-speed the same: a computation takes its
measured time), links of the machine's G and (L - 17G)/2 (a route has two links; SMPI puts 16
bytes more than a message's size on the wire), the machine's message-size regimes as
smpi/bw-factor and smpi/lat-factor, o + O*s as smpi/os, ois and or, S + 1 as SMPI's eager
thresholds, copy_G as the hosts' loopback (a rank's message to itself), Open MPI's collective
selection (smpi/coll-selector:ompi, from 2 ranks).

    bench/smpi/nas_accuracy.py NPB3.4-MPI local.psl [--machine local] [--procs 1,2]
        [--programs cg,ep,ft,is,lu,mg] [--class A] [--repetitions 5] [--quiet-load 1.5] [--nice -20]
"""
import argparse
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9, "ns/B": 1.0, "B": 1.0, "KiB": 1024.0, "MiB": 1048576.0}


def machine_params(psl, name):
    """The param values of component `name` (ns, ns/B, bytes)."""
    text = open(psl).read()
    m = re.search(r"component\s+" + re.escape(name) + r"\s+in\s+hardware\[network\]\s*\{(.*?)\n\s*accepts", text, re.S)
    if not m:
        sys.exit(f"nas_accuracy: {psl} has no hardware[network] component {name}")
    params = {}
    for key, value, unit in re.findall(r"(\w+)\s*=\s*([0-9.eE+-]+)\s*(ns/B|ns|us|ms|s|B|KiB|MiB)?", m.group(1)):
        params[key] = float(value) * UNITS.get(unit or "", 1.0)
    for key in ("L", "o", "G", "O", "S"):
        if key not in params:
            sys.exit(f"nas_accuracy: component {name} in {psl} sets no {key}")
    return params


def regimes(p):
    """[(from bytes, L, o, G, O)], the base regime first."""
    out = [(0, p["L"], p["o"], p["G"], p["O"])]
    k = 1
    while f"from_{k}" in p:
        out.append((int(p[f"from_{k}"]), p[f"L_{k}"], p[f"o_{k}"], p[f"G_{k}"], p[f"O_{k}"]))
        k += 1
    return out


def smpi_platform(p, hosts, path):
    base_L, base_G = p["L"], p["G"]
    lat = (base_L - 17 * base_G) / 2
    loopback = (f' loopback_bw="{1e9 / p["copy_G"]!r}Bps" loopback_lat="0ns"' if p.get("copy_G") else "")
    with open(path, "w") as f:
        f.write("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                "<platform version=\"4.1\">\n  <zone id=\"world\" routing=\"Full\">\n"
                f"    <cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-{hosts - 1}\" speed=\"1Gf\" "
                f"bw=\"{1e9 / base_G!r}Bps\" lat=\"{lat!r}ns\" bb_bw=\"1e15Bps\" bb_lat=\"0ns\" "
                f"sharing_policy=\"SPLITDUPLEX\"{loopback}/>\n  </zone>\n</platform>\n")


def smpi_config(p, ranks):
    rs = regimes(p)
    base_lat = p["L"] - 17 * p["G"]
    bw = ";".join(f"{s}:{rs[0][3] / G!r}" for s, _, _, G, _ in rs)
    lat = ";".join(f"{s}:{(L - 17 * G) / base_lat!r}" for s, L, _, G, _ in rs)
    overhead = ";".join(f"{s}:{o * 1e-9!r}:{O * 1e-9!r}" for s, _, o, _, O in rs)
    eager = int(p["S"]) + 1
    cfg = ["smpi/host-speed:1Gf", f"smpi/bw-factor:{bw}", f"smpi/lat-factor:{lat}", f"smpi/os:{overhead}",
           f"smpi/ois:{overhead}", f"smpi/or:{overhead}", "network/crosstraffic:0",
           f"smpi/send-is-detached-thresh:{eager}", f"smpi/async-small-thresh:{eager}", "smpi/wtime:0"]
    # Open MPI's choice of algorithms; SimGrid 3.32's ompi reduce stops on one rank ("Actor pid=-1 is gone").
    if ranks > 1:
        cfg.append("smpi/coll-selector:ompi")
    return ["--cfg=" + c for c in cfg]


def direct_validate():
    """scripts/direct-validate as a module (its NPB build, output patterns and quiet-host wait are used here)."""
    loader = importlib.machinery.SourceFileLoader("direct_validate", os.path.join(ROOT, "scripts", "direct-validate"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def figures(dv, out):
    t = re.search(dv.NPB_TIME, out)
    r = re.search(dv.NPB_RATE, out)
    ok = re.search(r"Verification\s*=\s*SUCCESSFUL", out)
    return (float(t.group(1)) if t else None, float(r.group(1)) if r else None, bool(ok))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("npb")
    ap.add_argument("psl")
    ap.add_argument("--machine", default="local")
    ap.add_argument("--procs", default="1,2")
    ap.add_argument("--programs", default="cg,ep,ft,is,lu,mg")
    ap.add_argument("--class", dest="cls", default="A")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--quiet-load", type=float, default=1.5)
    ap.add_argument("--nice", type=int, default=None)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--poems-args", default="", help="more options for poems direct, e.g. '--host-cores 2'")
    ap.add_argument("--sides", default="mpirun,poems,smpi", help="which of mpirun, poems, smpi to run")
    a = ap.parse_args()
    if a.repetitions < 1:
        sys.exit("nas_accuracy: --repetitions: at least 1")
    programs = [p for p in a.programs.split(",") if p]
    try:
        procs = [int(n) for n in a.procs.split(",")]
    except ValueError:
        procs = []
    if not procs or min(procs) < 1:
        sys.exit(f"nas_accuracy: --procs {a.procs}: process counts of at least 1, separated by commas")
    for tool in ("mpicc", "mpif90", "mpirun", "smpicc", "smpiff", "smpirun"):
        if not shutil.which(tool):
            sys.exit(f"nas_accuracy: {tool} not found (scripts/install-deps installs Open MPI and SimGrid)")
    if not os.path.isdir(a.npb):
        sys.exit(f"nas_accuracy: {a.npb}: no NPB3.4-MPI directory")
    p = machine_params(a.psl, a.machine)
    work = a.work or tempfile.mkdtemp(prefix="nas-accuracy-")
    os.makedirs(work, exist_ok=True)
    bindir = os.path.join(a.build, "bin")
    sides = {"ompi": ("mpicc", "mpif90"), "poems": (os.path.join(bindir, "poems-mpicc"),
                                                     os.path.join(bindir, "poems-mpif90")),
             "smpi": ("smpicc", "smpiff")}
    dv = direct_validate()
    for side, (cc, fc) in sides.items():
        dv.build_npb(a.npb, os.path.join(work, side), {"cc": cc, "fc": fc}, programs, [a.cls])
    platform = os.path.join(work, "platform.xml")
    smpi_platform(p, max(procs), platform)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    nice = ["nice", "-n", str(a.nice)] if a.nice is not None else []
    print(f"machine {a.machine} of {a.psl}; {a.repetitions} runs of each, alternating; work {work}", flush=True)
    for n in procs:
        for prog in programs:
            exe = f"{prog}.{a.cls}.x"
            cmds = {
                "mpirun": nice + ["mpirun", "--oversubscribe", "-np", str(n), os.path.join(work, "ompi", "bin", exe)],
                "poems": [os.path.join(bindir, "poems"), "direct", os.path.join(work, "poems", "bin", exe), "-np",
                          str(n), "--no-store", "--machine", a.machine, "--machines", a.psl] + a.poems_args.split(),
                "smpi": ["smpirun", "-np", str(n), "-platform", platform] + smpi_config(p, n) +
                        [os.path.join(work, "smpi", "bin", exe)],
            }
            cmds = {s: c for s, c in cmds.items() if s in a.sides.split(",")}
            best = {s: (None, None) for s in cmds}
            loads = []
            for _ in range(a.repetitions):
                for side, cmd in cmds.items():
                    if side == "mpirun":
                        loads.append(dv.wait_quiet(a.quiet_load))
                    r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
                    t, rate, ok = figures(dv, r.stdout)
                    if r.returncode != 0 or t is None or rate is None or not ok:
                        sys.exit(f"nas_accuracy: {side} {exe} on {n} failed (exit {r.returncode}):\n"
                                 f"{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
                    bt, br = best[side]
                    best[side] = (t if bt is None else min(bt, t), rate if br is None else max(br, rate))
            m_t, m_r = best["mpirun"]
            line = f"{exe:9s} {n} processes: mpirun {m_t:.2f} s ({m_r:.2f} Mop/s)"
            for side in ("poems", "smpi"):
                if side not in best:
                    continue
                t, rate = best[side]
                line += f"; {side} {t:.2f} s ({100 * (m_r / rate - 1):+.1f} %)"
            print(line + f"; load at the mpirun starts {min(loads):.2f}-{max(loads):.2f}", flush=True)


if __name__ == "__main__":
    main()
