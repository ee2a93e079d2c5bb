#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Floating-point programs: bare emulation and lard's default run against
native and qemu-user (docs/unicorn-patches.md, patch 0023: SSE floating
point executed by the host).

    BENCH_REPS=3 python3 bench/fp.py

Three static plain-C programs (gcc -O2, 4 threads), each run natively,
under qemu-user (`qemu-x86_64`, softfloat helpers), under `lard run
--detector none --observe none` (bare) and under `lard run` (the default
detector), interleaved (one run of each runner in turn, BENCH_REPS
rounds), CPU seconds (user + sys of the process tree, from wait4), medians:

  * bench/guests/blackscholes.c: PARSEC blackscholes' kernel (libm exp,
    log, sqrt; scalar double SSE2);
  * bench/guests/water_nsq.c: SPLASH-2 WATER-NSQUARED's pairwise force loop
    (sqrt and division in the inner loop);
  * bench/guests/nbody_tree.c: a Barnes-Hut step (bench/emulation.py's).

Prints the table with ratios to native and to qemu-user and a TARGET line
(bare lard <= 0.5x qemu-user's CPU time). Every runner must print the same
output. BENCH_LARD selects another lard binary (an A/B of two builds);
BENCH_SCALE scales the inputs.
"""

import os
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LARD, OUT, ROOT, die, env_number, run  # noqa: E402
from emulation import cpu_run  # noqa: E402

TARGET = 0.5


def build(name: str) -> Path:
    """bench/guests/NAME.c, static, -O2."""
    OUT.mkdir(parents=True, exist_ok=True)
    exe = OUT / f"{name}-static"
    src = ROOT / "bench" / "guests" / f"{name}.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        run(["gcc", "-static", "-O2", "-g", "-pthread", "-o", str(exe), str(src), "-lm"])
    return exe


def main() -> None:
    reps = int(env_number("BENCH_REPS", 3, int))
    scale = env_number("BENCH_SCALE", 1.0)
    lard = Path(os.environ.get("BENCH_LARD", LARD))
    if not lard.exists():
        die(f"{lard} missing (make build)")
    qemu = shutil.which("qemu-x86_64") or shutil.which("qemu-x86_64-static")
    if not qemu:
        die("qemu-x86_64 not found (make prereqs installs qemu-user)")

    def n(base: int, least: int) -> str:
        return str(max(least, int(base * scale)))

    programs = [
        ("blackscholes", [str(build("blackscholes")), n(50000, 1000), "40"]),
        ("water_nsq", [str(build("water_nsq")), n(2400, 200), "8"]),
        ("nbody_tree", [str(build("nbody_tree")), n(4000, 200), "3"]),
    ]
    runners = [
        ("native", []),
        ("qemu-user", [qemu]),
        ("lard bare", [str(lard), "run", "--detector", "none", "--observe", "none"]),
        ("lard", [str(lard), "run"]),
    ]
    load = os.getloadavg()
    print(f"floating point: CPU seconds (user+sys), median of {reps} interleaved rounds; {lard}")
    print(f"loadavg at start {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}, nproc={os.cpu_count()}")
    print(f"{'program':12} {'runner':10} {'CPU s':>7} {'x native':>9} {'x qemu-user':>12}")
    ratios = {}
    for name, argv in programs:
        cpu: dict[str, list[float]] = {r: [] for r, _ in runners}
        digests = set()
        for rep in range(reps):
            for r, prefix in runners:
                c, d = cpu_run([*prefix, *argv])
                cpu[r].append(c)
                digests.add(d)
                print(f"  {name} rep {rep + 1}/{reps} {r:10} {c:6.2f} s", file=sys.stderr)
        if len(digests) != 1:
            die(f"{name}: the runners' outputs differ")
        med = {r: statistics.median(v) for r, v in cpu.items()}
        for r, _ in runners:
            nat = med[r] / max(med["native"], 0.01)
            q = med[r] / med["qemu-user"]
            print(f"{name:12} {r:10} {med[r]:7.2f} {nat:8.1f}x {q:11.2f}x")
        ratios[name] = med["lard bare"] / med["qemu-user"]
    load = os.getloadavg()
    print(f"loadavg at end {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}")
    parts = ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items())
    print(f"   TARGET bare lard <= {TARGET}x qemu-user CPU: {parts}")


if __name__ == "__main__":
    main()
