#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""DataRaceBench's C micro-benchmarks under lard, in both modes: precision,
recall and verdict stability, as the OpenMP figures of docs/lard-cc.md were
measured.

    python3 bench/dataracebench.py DIR

DIR holds DataRaceBench's `DRB*.c` files (its `micro-benchmarks` folder,
with `signaling.h` and the other headers they include). DataRaceBench is not
in a package registry, so neither this script nor `make bench` fetches it.

1. Builds every `DRB*.c` three times, `gcc -O0 -g -fopenmp` (binary mode,
   "plain"), `lard-cc -O0 -g -fopenmp` (the runtime installed from
   guest-sdk, "lard-cc": its default, static iterations and SIMD lanes as
   logical threads in a window) and the same with `--lard-omp-iterations`
   ("iterations": every chunk and lane a logical thread of its own),
   all with `-lm`. A program that fails to build, or whose plain build is
   killed by a signal when run natively, is left out and listed.
2. Runs each build under `lard run --sched random --seed S` for seeds
   1..DRB_SEEDS (default 3), `OMP_NUM_THREADS=DRB_THREADS` (default 2),
   at most DRB_TIMEOUT seconds each (default 60), DRB_JOBS at a time
   (default 2).
3. A run is racy when its JSON report names a race (a run that lard's
   `--timeout` stopped reports too). The truth is the file name's `-yes`
   / `-no`; a `-dd` program races between SIMD lanes (its header says
   so) and counts as `-yes`. A program is a true positive when some run
   is racy (the verdicts of its seeds are also compared: "unstable" when
   they differ). A run lard stopped at DRB_TIMEOUT counts by its report;
   one that stops without a report counts as clean; the counts of both are
   printed.

Prints one line per build (TP FN FP TN, precision, recall, timeouts,
aborts, unstable programs) and the programs each mode gets wrong.
Environment: DRB_ONLY (a regular expression on the program name),
DRB_BUILDS (a comma-separated subset of plain,lard-cc,iterations), DRB_SEEDS,
DRB_THREADS, DRB_TIMEOUT, DRB_JOBS.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import LARD, OUT, ROOT, die, env_number, run

WORK = OUT / "dataracebench"
BUILDS = ("plain", "lard-cc", "iterations")


def install_lardcc() -> Path:
    run(["make", "-s", "-C", str(ROOT / "guest-sdk"), "install-cc", f"PREFIX={WORK / 'sdk'}",
         f"BUILD={WORK / 'sdk-build'}", "CC=gcc"])
    return WORK / "sdk" / "bin" / "lard-cc"


def build(src: Path, lardcc: Path) -> dict[str, Path] | str:
    """Both builds of `src`, or why it is left out."""
    out = {}
    drivers = {"plain": ["gcc"], "lard-cc": [str(lardcc)],
               "iterations": [str(lardcc), "--lard-omp-iterations"]}
    # The plain build also decides whether the program runs natively.
    for mode in dict.fromkeys(("plain",) + MODES):
        exe = WORK / mode / src.stem
        exe.parent.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(drivers[mode] + ["-O0", "-g", "-fopenmp", "-I", str(src.parent),
                                            str(src), "-o", str(exe), "-lm"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            return f"{mode} build failed"
        out[mode] = exe
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
    try:
        r = subprocess.run([str(out["plain"])], cwd=src.parent, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
        if r.returncode < 0:
            return f"killed by signal {-r.returncode} natively"
    except subprocess.TimeoutExpired:
        pass
    return out


def lard_run(exe: Path, seed: int, cwd: Path) -> str:
    """'racy', 'clean', 'timeout' or 'abort'."""
    report = WORK / "reports" / f"{exe.parent.name}.{exe.name}.{seed}.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    report.unlink(missing_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
    try:
        r = subprocess.run([str(LARD), "run", "--sched", "random", "--seed", str(seed),
                            "--timeout", str(TIMEOUT), "--report-json", str(report), str(exe)],
                           cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=TIMEOUT + 60)
    except subprocess.TimeoutExpired:
        return "timeout"
    try:
        doc = json.loads(report.read_text())
    except (OSError, ValueError):
        return "abort"
    racy = any(d.get("races") for d in doc.get("detectors", {}).values())
    if r.returncode == 121:  # lard's --timeout stopped it; its report is complete
        return "racy-timeout" if racy else "timeout"
    return "racy" if racy else "clean"


def main() -> None:
    if len(sys.argv) != 2:
        die("usage: python3 bench/dataracebench.py DIR (DataRaceBench's micro-benchmarks)")
    src_dir = Path(sys.argv[1]).resolve()
    only = re.compile(os.environ.get("DRB_ONLY", ""))
    sources = sorted(p for p in src_dir.glob("DRB*.c") if only.search(p.stem))
    if not sources:
        die(f"no DRB*.c in {src_dir}")
    if not LARD.exists():
        die(f"{LARD} is missing: run `make build` first")
    lardcc = install_lardcc()
    builds, left_out = {}, {}
    for s in sources:
        b = build(s, lardcc)
        if isinstance(b, str):
            left_out[s.stem] = b
        else:
            builds[s.stem] = b
    jobs = [(name, mode, seed) for name in builds for mode in MODES for seed in range(1, SEEDS + 1)]
    with ThreadPoolExecutor(max_workers=JOBS) as pool:
        verdicts = list(pool.map(lambda j: lard_run(builds[j[0]][j[1]], j[2], src_dir), jobs))
    by = {}
    for (name, mode, _), v in zip(jobs, verdicts):
        by.setdefault((mode, name), []).append(v)
    print(f"\nDataRaceBench ({src_dir}): {len(builds)} programs, {len(left_out)} left out; "
          f"OMP_NUM_THREADS={THREADS}, seeds 1..{SEEDS}, {TIMEOUT} s timeout")
    for name, why in sorted(left_out.items()):
        print(f"  left out: {name}: {why}")
    for mode in MODES:
        tp = fn = fp = tn = timeouts = aborts = 0
        unstable, wrong = [], []
        for name in builds:
            vs = by[(mode, name)]
            timeouts += sum(v.endswith("timeout") for v in vs)
            aborts += vs.count("abort")
            racy = any(v.startswith("racy") for v in vs)
            if len({v.startswith("racy") for v in vs}) > 1:
                unstable.append(name)
            # `-dd`: a data race between SIMD lanes ("data races happen at
            # instruction level, not thread level", in their headers).
            yes = "-yes" in name or "-dd" in name
            if racy and yes:
                tp += 1
            elif racy:
                fp += 1
                wrong.append(f"FP {name} ({' '.join(vs)})")
            elif yes:
                fn += 1
                wrong.append(f"FN {name} ({' '.join(vs)})")
            else:
                tn += 1
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        print(f"{mode:10} TP {tp} FN {fn} FP {fp} TN {tn}  precision {precision:.3f}  "
              f"recall {recall:.3f}  runs timed out {timeouts}, aborted {aborts}; "
              f"verdict differs between seeds: {len(unstable)}")
        for w in wrong:
            print(f"  {w}")
        if unstable:
            print(f"  unstable: {' '.join(unstable)}")


MODES = tuple(b for b in os.environ.get("DRB_BUILDS", ",".join(BUILDS)).split(",") if b)
if not MODES or any(m not in BUILDS for m in MODES):
    die(f"DRB_BUILDS: a comma-separated subset of {','.join(BUILDS)}")
SEEDS = env_number("DRB_SEEDS", 3, int)
THREADS = env_number("DRB_THREADS", 2, int)
TIMEOUT = env_number("DRB_TIMEOUT", 60, int)
JOBS = env_number("DRB_JOBS", 2, int)

if __name__ == "__main__":
    main()
