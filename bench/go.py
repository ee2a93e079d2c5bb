#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`: Go programs under lard against Go's own race detector.

Each row is one Go program built three ways from the installed Go tree:
plainly (`go build`/`go test -c`), with Go's detector (`-race`,
ThreadSanitizer's Go runtime) and with lard's runtime (`lard go build`,
`lard go test -c`). The rows: the concurrency tests of `context`, `sync`
and `sync/atomic` (`-test.short`), and gofmt (cmd/gofmt, which formats its
files concurrently) listing the unformatted files of the Go tree's
`src/encoding/json`, and gc_reuse (guests/go/gc_reuse_free: goroutines
allocating while the collector frees and reuses their memory). Every binary runs once; the table gives CPU seconds (user +
system of the process tree) natively, under `-race`, and under `lard run`
with FastTrack and with LARDISH (`--detector lardish`, gofmt and context
only: the model's speed makes the others minutes long), the ratio of lard
(FastTrack) to `-race`, and the races each detector reported. A second
table gives the LARDISH model's own figures for those runs (LARD §5.3: what
hardware-assisted detection costs a managed runtime whose runtime code is
not checked): simulated cycles over no detection for LARDISH and for
software FastTrack, their overheads' ratio, and the share of LARDISH's
overhead spent on the collector's and allocator's ClearHistory
(`history_op`).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from common import LARD, OUT, die, run

PACKAGES = ["context", "sync", "sync/atomic"]
LARDISH_ROWS = {"context", "gofmt", "gc_reuse"}
GUESTS = Path(__file__).resolve().parent.parent / "guests" / "go"


def cpu_seconds(cmd, env=None, cwd=None):
    """Runs `cmd`; returns (CPU seconds of its process tree, its output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, r


def lard_dre(report):
    try:
        v = json.loads(report.read_text())
        return sum(d.get("dre", 0) for d in v["detectors"].values())
    except (OSError, ValueError, KeyError):
        return None


def main() -> None:
    if not shutil.which("go"):
        die("go is not installed (make prereqs installs golang-go)")
    if not LARD.exists():
        die(f"{LARD} is not built (make build)")
    out = OUT / "go"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, LARD_CACHE_DIR=str(out / "lard-cache"))
    goroot = run(["go", "env", "GOROOT"]).stdout.decode().strip()
    rows = []
    for pkg in PACKAGES + ["gofmt", "gc_reuse"]:
        name = pkg.replace("/", "_")
        bins = {k: out / f"{name}.{k}" for k in ("plain", "race", "lard")}
        if pkg == "gofmt":
            run(["go", "build", "-o", str(bins["plain"]), "cmd/gofmt"], env=env)
            run(["go", "build", "-race", "-o", str(bins["race"]), "cmd/gofmt"], env=env)
            run([str(LARD), "go", "build", "-o", str(bins["lard"]), "cmd/gofmt"], env=env)
            args = ["-l", os.path.join(goroot, "src", "encoding", "json")]
        elif pkg == "gc_reuse":
            for k, cmd in (("plain", ["go", "build"]), ("race", ["go", "build", "-race"]),
                           ("lard", [str(LARD), "go", "build"])):
                run(cmd + ["-o", str(bins[k]), "./gc_reuse_free"], env=env, cwd=GUESTS)
            args = []
        else:
            run(["go", "test", "-c", "-o", str(bins["plain"]), pkg], env=env)
            run(["go", "test", "-race", "-c", "-o", str(bins["race"]), pkg], env=env)
            run([str(LARD), "go", "test", "-c", "-o", str(bins["lard"]), pkg], env=env)
            args = ["-test.short", "-test.timeout", "0"]
        native, r = cpu_seconds([str(bins["plain"])] + args)
        if r.returncode not in (0, 1):
            die(f"{pkg} natively: exit {r.returncode}")
        tsan, r = cpu_seconds([str(bins["race"])] + args)
        tsan_races = r.stderr.decode(errors="replace").count("WARNING: DATA RACE")
        cells = {}
        for det in ("fasttrack", "lardish"):
            if det == "lardish" and pkg not in LARDISH_ROWS:
                cells[det] = (None, None)
                continue
            report = out / f"{name}.{det}.json"
            hw = ["--hw-stats-json", str(out / f"{name}.hw.json")] if det == "lardish" else []
            cpu, r = cpu_seconds([str(LARD), "run", "--detector", det, "--report-json", str(report)]
                                 + hw + [str(bins["lard"])] + args)
            if r.returncode not in (0, 1):
                die(f"{pkg} under lard ({det}): exit {r.returncode}\n"
                    + r.stderr.decode(errors="replace")[-2000:])
            cells[det] = (cpu, lard_dre(report))
        rows.append((pkg, native, tsan, tsan_races, cells))
        print(f"  {pkg}: done", file=sys.stderr)

    print("== Go programs: lard (lard go) against Go's -race (ThreadSanitizer), CPU seconds ==")
    print(f"{'program':<14} {'native':>8} {'-race':>8} {'lard FT':>8} {'lard/-race':>10} "
          f"{'LARDISH':>9} {'races -race':>11} {'racy acc. FT':>12} {'LARDISH':>8}")
    for pkg, native, tsan, tsan_races, cells in rows:
        ft, ft_dre = cells["fasttrack"]
        hw, hw_dre = cells["lardish"]
        hw_s = f"{hw:9.2f}" if hw is not None else f"{'-':>9}"
        hw_d = f"{hw_dre:>8}" if hw_dre is not None else f"{'-':>8}"
        print(f"{pkg:<14} {native:8.2f} {tsan:8.2f} {ft:8.2f} {ft / max(tsan, 1e-3):9.1f}x "
              f"{hw_s} {tsan_races:>11} {ft_dre if ft_dre is not None else '?':>12} {hw_d}")

    print("\n== Go programs: the LARDISH model (simulated cycles / no detection, baseline machine) ==")
    print(f"{'program':<14} {'accesses':>10} {'LARDISH':>8} {'FastTrack':>10} {'FT/LARDISH':>10} "
          f"{'ClearHistory':>12} {'clears':>8}")
    for pkg, *_ in rows:
        if pkg not in LARDISH_ROWS:
            continue
        try:
            s = json.loads((out / f"{pkg.replace('/', '_')}.hw.json").read_text())
        except (OSError, ValueError):
            print(f"{pkg:<14} (no --hw-stats-json output)")
            continue
        base = max(1, s["cycles_no_detection"])
        ld, ft = s["cycles_lardish"] / base, s["cycles_fasttrack"] / base
        hist = s["lardish_cycles_by_mechanism"].get("history_op", 0) / base
        print(f"{pkg:<14} {s['accesses']:>10} {ld:7.2f}x {ft:9.2f}x {(ft - 1) / max(ld - 1, 1e-9):9.1f}x "
              f"{hist:11.2f}x {s.get('clear_ops', '?'):>8}")
    print("   ClearHistory = history_op cycles / no-detection cycles (part of LARDISH's overhead);"
          " clears = ClearHistory instructions")


if __name__ == "__main__":
    main()
