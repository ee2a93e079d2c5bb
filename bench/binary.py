#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`, binary mode (docs/binary-mode.md): race detection on pigz
nobody recompiled for it, against Valgrind DRD and Helgrind, and the static
pruning rate of every analysis (HardRace §4.1-4.3).

Table 1, `pigz -p 4 -c` on bench/pigz.py's deterministic text (the same
build of pigz 2.8: static and dynamic, -O3 -g): CPU seconds (user+sys of
the process tree) and what each tool reports —
  * lard's default detection (`lard run PROG`: binary mode, FastTrack,
    pruning on) on the static and the dynamic binary, and with --no-prune;
  * lard on Debian's /usr/bin/pigz (stripped: no DWARF, so the whole
    executable is named program code with `--program-code pigz`), if
    installed (the pigz package, in the Makefile's APT_PACKAGES);
  * valgrind --tool=drd and --tool=helgrind on the dynamic binary.
Races: lard's distinct racy PCs and race pairs (JSON report), Valgrind's
error contexts and errors (its ERROR SUMMARY). Every run must produce the
native output.

Table 2, the pruning table of each run (static memory instructions and
dynamic accesses per analysis) on pigz and on the bench guests
(bench/guests/compute_bound.c and memory_bound.c, -O2 -g -static).
Knobs: BENCH_SCALE (input size factor, as bench/pigz.py), BENCH_REPS
(runs of the lard rows, median kept; Valgrind rows run once).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import LARD, ROOT, die, env_number
import pigz

OUT = ROOT / "target" / "bench" / "binary"
ROWS = ["frame", "private stack", "read-only data", "redundant", "observed"]


def lard_report(json_path: Path) -> tuple[int, int, int]:
    """(distinct racy PCs, race pairs, DRE) of the first detector."""
    rep = json.loads(json_path.read_text())
    dets = rep.get("detectors", rep)
    d = next(v for v in dets.values() if isinstance(v, dict) and "dre" in v)
    return len(d["racy_pcs"]), len(d["races"]), d["dre"]


def pruning(err: str) -> dict[str, tuple[int, int]]:
    """The pruning table of a lard run's stderr: row -> (static, dynamic)."""
    out = {}
    row = re.compile(r"^\s*(.+?)(?: \(§[\d.]+\))?\s+(\d+) \(\s*[\d.]+%\)\s+(\d+) \(\s*[\d.]+%\)$")
    for line in err.splitlines():
        m = row.match(line)
        if m and m.group(1) in ROWS:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    if set(out) != set(ROWS):
        die(f"no pruning table in lard's output:\n{err[-2000:]}")
    return out


def valgrind_errors(err: str) -> tuple[int, int]:
    """(error contexts, errors) of Valgrind's ERROR SUMMARY."""
    m = re.search(r"ERROR SUMMARY: (\d+) errors? from (\d+) contexts?", err)
    if not m:
        die(f"no ERROR SUMMARY in valgrind's output:\n{err[-2000:]}")
    return int(m.group(2)), int(m.group(1))


def build_guests() -> dict[str, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    bins = {}
    for name in ("compute_bound", "memory_bound"):
        exe = OUT / name
        src = ROOT / "bench" / "guests" / f"{name}.c"
        r = subprocess.run(["gcc", "-static", "-O2", "-g", "-o", str(exe), str(src)])
        if r.returncode != 0:
            die(f"building {name} failed")
        bins[name] = exe
    return bins


def main() -> None:
    if not LARD.exists():
        die(f"{LARD} missing (make build)")
    scale = env_number("BENCH_SCALE", 1.0)
    reps = int(env_number("BENCH_REPS", 3, int))
    static, dynamic = pigz.build()
    size = max(64 * 1024, int(4 * 1024 * 1024 * scale))
    inp = pigz.make_input(size)
    args = ["-p", "4", "-c", str(inp)]
    valgrind = shutil.which("valgrind")
    debian = Path("/usr/bin/pigz") if Path("/usr/bin/pigz").exists() else None
    tmp = Path(tempfile.mkdtemp(prefix="lard-bench-binary-"))
    json_path = tmp / "report.json"
    lard = [str(LARD), "run", "--report-json", str(json_path)]

    # (name, argv, is lard, reps)
    rows = [("native (static)", [str(static), *args], False, reps)]
    rows.append(("lard default (static)", [*lard, str(static), *args], True, reps))
    rows.append(("lard default (dynamic)", [*lard, str(dynamic), *args], True, reps))
    rows.append(("lard --no-prune (static)", [*lard, "--no-prune", str(static), *args], True, reps))
    if debian:
        rows.append(
            ("lard Debian /usr/bin/pigz", [*lard, "--program-code", "pigz", str(debian), *args], True, reps)
        )
    if valgrind:
        for tool in ("drd", "helgrind"):
            rows.append((f"valgrind {tool} (dynamic)", [valgrind, f"--tool={tool}", str(dynamic), *args], False, 1))

    load = os.getloadavg()
    print(f"binary mode on pigz 2.8 -p 4 -c, {size:,}-byte text; CPU seconds (user+sys), median of {reps} (Valgrind: 1 run)")
    print(f"loadavg at start {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}, nproc={os.cpu_count()}")
    if not valgrind:
        print("valgrind not found: DRD/Helgrind rows skipped (Debian: valgrind)")
    if not debian:
        print("/usr/bin/pigz not found: Debian's pigz row skipped (Debian: pigz)")
    cpu: dict[str, float] = {}
    races: dict[str, str] = {}
    tables: dict[str, dict[str, tuple[int, int]]] = {}
    want = None
    for name, argv, is_lard, n in rows:
        times = []
        for rep in range(n):
            c, w, digest, err = pigz.run_cpu_err(argv)
            want = want or digest
            if digest != want:
                die(f"{name}: output differs from the native run")
            times.append(c)
            print(f"  {name:28} rep {rep + 1}/{n} {c:8.2f} s CPU {w:8.2f} s wall", file=sys.stderr)
        cpu[name] = statistics.median(times)
        if is_lard:
            pcs, pairs, dre = lard_report(json_path)
            races[name] = f"{pcs} PCs, {pairs} pairs, DRE {dre}"
            if "--no-prune" not in argv:
                tables[f"pigz: {name.removeprefix('lard ')}"] = pruning(err)
        elif name.startswith("valgrind"):
            ctx, errs = valgrind_errors(err)
            races[name] = f"{ctx} contexts, {errs} errors"
        else:
            races[name] = "-"

    drd = cpu.get("valgrind drd (dynamic)")
    nat = cpu["native (static)"]
    print()
    print("== binary-mode race detection on pigz -p 4 (output identical for every runner)")
    print(f"{'runner':28} {'CPU s':>8} {'x native':>9} {'x DRD':>7}  races reported")
    for name, *_ in rows:
        xd = f"{cpu[name] / drd:.2f}x" if drd else "-"
        print(f"{name:28} {cpu[name]:8.2f} {cpu[name] / nat:8.1f}x {xd:>7}  {races[name]}")

    for name, exe in build_guests().items():
        argv = [str(LARD), "run", "--report-json", str(json_path), str(exe)]
        *_, err = pigz.run_cpu_err(argv)
        tables[name] = pruning(err)

    print()
    print("== static pruning (HardRace §4.1-4.3): pruned static memory instructions / dynamic accesses per analysis")
    print(f"{'program':26}" + "".join(f" {r:>22}" for r in ROWS))
    for prog, t in tables.items():
        st_total = sum(s for s, _ in t.values())
        dy_total = sum(d for _, d in t.values())
        cells = []
        for r in ROWS:
            s, d = t[r]
            cells.append(f"{100 * s / max(st_total, 1):5.1f}% /{100 * d / max(dy_total, 1):5.1f}%")
        print(f"{prog:26}" + "".join(f" {c:>22}" for c in cells))
    print("(static % of the memory instructions of program code / dynamic % of its accesses; 'observed' is what is left)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
