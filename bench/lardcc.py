#!/usr/bin/env python3
"""`make bench`, lard-cc rows: a program built with lard-cc and run under
`lard run` (FastTrack), against the same program built plainly and run
natively, the lard-cc build run natively, `gcc -fsanitize=thread` (libtsan,
dynamic) natively, and valgrind Helgrind and DRD on the plain build
(dynamic: valgrind intercepts pthreads through the shared libc).

Programs: pigz 2.8 (from /work/shared/bench-programs, built with lard-cc, the
plain compiler and -fsanitize=thread; compresses BENCH_PIGZ_KIB of the lard
binary with -p 4) and the bench guests memory_bound and compute_bound.
Prints wall times (best of BENCH_REPS) and ratios to the plain native run,
and checks every run's output against the native one (pigz: the .gz bytes).
Writes target/bench/lardcc.json. Not a test: fails only when a runner fails
or an output differs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from common import die, run

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "bench" / "lardcc"
LARD = ROOT / "target" / "release" / "lard"
SDK = OUT / "sdk"
PIGZ_TAR = Path(os.environ.get("BENCH_PIGZ_TAR", "/work/shared/bench-programs/pigz-2.8.tar.gz"))


def install_sdk() -> Path:
    run(["make", "-s", "-C", str(ROOT / "guest-sdk"), "install-cc", f"PREFIX={SDK}",
         f"BUILD={OUT / 'sdk-build'}", "CC=gcc"])
    return SDK / "bin" / "lard-cc"


def build_pigz(kind: str, lard_cc: Path) -> Path:
    src = OUT / f"pigz-{kind}"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    with tarfile.open(PIGZ_TAR) as t:
        t.extractall(src)
    d = next(src.iterdir())
    cc = {"lardcc": str(lard_cc), "plain": "gcc", "tsan": "gcc", "dyn": "gcc"}[kind]
    cflags = "-O2 -g" + (" -fsanitize=thread" if kind == "tsan" else "")
    ldflags = {"tsan": "-fsanitize=thread", "dyn": ""}.get(kind, "-static")
    run(["make", "-s", "-C", str(d), f"CC={cc}", f"CFLAGS={cflags}", f"LDFLAGS={ldflags}", "pigz"])
    return d / "pigz"


def build_guest(name: str, kind: str, lard_cc: Path) -> Path:
    src = ROOT / "bench" / "guests" / f"{name}.c"
    exe = OUT / f"{name}-{kind}"
    cmd = {"lardcc": [str(lard_cc), "-static"], "plain": ["gcc", "-static"],
           "tsan": ["gcc", "-fsanitize=thread"], "dyn": ["gcc"]}[kind]
    run(cmd + ["-O2", "-g", str(src), "-o", str(exe)])
    return exe


def timed(argv, stdout_file: Path | None) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    if stdout_file is not None:
        with open(stdout_file, "wb") as f:
            r = subprocess.run(argv, stdout=f, stderr=subprocess.PIPE)
        out = stdout_file.read_bytes()
    else:
        r = subprocess.run(argv, capture_output=True)
        out = r.stdout
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        die(f"{' '.join(map(str, argv))}: exit {r.returncode}: {r.stderr.decode(errors='replace')[-500:]}")
    return dt, out


def main() -> None:
    reps = int(os.environ.get("BENCH_REPS", "3"))
    kib = int(os.environ.get("BENCH_PIGZ_KIB", "512"))
    scale = float(os.environ.get("BENCH_SCALE", "1"))
    OUT.mkdir(parents=True, exist_ok=True)
    if not LARD.exists():
        die(f"{LARD} missing (make bench builds it)")
    lard_cc = install_sdk()
    vg = shutil.which("valgrind")
    programs = []
    if PIGZ_TAR.exists():
        data = OUT / "pigz-input.bin"
        data.write_bytes(LARD.read_bytes()[: kib * 1024])
        exes = {k: build_pigz(k, lard_cc) for k in ("plain", "lardcc", "tsan", "dyn")}
        programs.append(("pigz", exes, ["-p", "4", "-c", str(data)], True))
    else:
        print(f"bench/lardcc: {PIGZ_TAR} not found: pigz rows skipped", file=sys.stderr)
    for name, args in (("memory_bound", [str(max(1, round(20 * scale))), "256"]),
                       ("compute_bound", [str(max(1, round(20 * scale)))])):
        exes = {k: build_guest(name, k, lard_cc) for k in ("plain", "lardcc", "tsan", "dyn")}
        programs.append((name, exes, args, False))
    results = {}
    for name, exes, args, to_file in programs:
        runners = [
            ("plain native", [exes["plain"]]),
            ("lard-cc native", [exes["lardcc"]]),
            ("gcc -fsanitize=thread native", [exes["tsan"]]),
            ("lard run (lard-cc build)", [LARD, "run", exes["lardcc"]]),
        ]
        if vg:
            # valgrind intercepts pthreads through the dynamic libc only.
            runners.append(("valgrind helgrind (plain, dynamic)", [vg, "-q", "--tool=helgrind", exes["dyn"]]))
            runners.append(("valgrind drd (plain, dynamic)", [vg, "-q", "--tool=drd", exes["dyn"]]))
        row = {}
        ref = None
        for label, argv in runners:
            best = None
            for _ in range(reps):
                dt, out = timed([str(a) for a in argv] + args, OUT / f"{name}.out" if to_file else None)
                if ref is None:
                    ref = out
                elif out != ref:
                    die(f"{name}: {label}: output differs from the plain native run")
                best = dt if best is None else min(best, dt)
            row[label] = best
        results[name] = row
    print(f"\nlard-cc: wall time, best of {reps} (ratio to the plain build native)")
    for name, row in results.items():
        base = row["plain native"]
        print(f"  {name}")
        for label, t in row.items():
            print(f"    {label:32s} {t:9.3f} s  {t / base:9.1f}x")
    (OUT / "lardcc.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
