#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Floating-point programs: bare emulation and lard's default run against
native, ThreadSanitizer and qemu-user (docs/unicorn-patches.md, patches
0023-0026: SSE floating point executed by the host; 0030: x87).

    BENCH_REPS=3 python3 bench/fp.py

Five static plain-C programs (gcc -O2, 4 threads), each run natively,
as a ThreadSanitizer build (`gcc -fsanitize=thread -O2`, dynamic, as TSan
requires), under qemu-user (`qemu-x86_64`, softfloat helpers), under
`lard run --detector none --observe none` (bare) and under `lard run`
(the default detector), interleaved (one run of each runner in turn,
BENCH_REPS rounds), CPU seconds (user + sys of the process tree, from
wait4), medians:

  * bench/guests/blackscholes.c: PARSEC blackscholes' kernel (libm exp,
    log, sqrt; scalar double SSE2);
  * bench/guests/water_nsq.c: SPLASH-2 WATER-NSQUARED's pairwise force loop
    (sqrt and division in the inner loop);
  * bench/guests/nbody_tree.c: a Barnes-Hut step (bench/emulation.py's);
  * bench/guests/swaptions.c: PARSEC swaptions' HJM Monte Carlo (libm exp,
    log, sqrt; the inverse cumulative normal);
  * bench/guests/longdouble.c: long double arithmetic and glibc's long
    double libm (expl, logl, sinl, cosl, atan2l, sqrtl: x87 code).

Prints the table with ratios to native, qemu-user and ThreadSanitizer and
two TARGET lines (bare lard <= 0.5x qemu-user's CPU time; lard's default
run <= 2x ThreadSanitizer's). Every runner must print the same output. BENCH_LARD selects another lard binary (an A/B of two builds);
BENCH_SCALE scales the inputs.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import OUT, ROOT, env_number, run  # noqa: E402
from emulation import cpu_table, lard_and_qemu  # noqa: E402

TARGET = 0.5
TSAN_TARGET = 2.0


def build(name: str, tsan: bool = False) -> Path:
    """bench/guests/NAME.c, -O2: static, or the ThreadSanitizer build."""
    OUT.mkdir(parents=True, exist_ok=True)
    exe = OUT / (f"{name}-tsan" if tsan else f"{name}-static")
    src = ROOT / "bench" / "guests" / f"{name}.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        flags = ["-fsanitize=thread"] if tsan else ["-static"]
        run(["gcc", *flags, "-O2", "-g", "-pthread", "-o", str(exe), str(src), "-lm"])
    return exe


def main() -> None:
    reps = int(env_number("BENCH_REPS", 3, int))
    scale = env_number("BENCH_SCALE", 1.0)
    lard, qemu = lard_and_qemu()

    def n(base: int, least: int) -> str:
        return str(max(least, int(base * scale)))

    programs = [
        ("blackscholes", [str(build("blackscholes")), n(50000, 1000), "40"]),
        ("water_nsq", [str(build("water_nsq")), n(2400, 200), "8"]),
        ("nbody_tree", [str(build("nbody_tree")), n(4000, 200), "3"]),
        ("swaptions", [str(build("swaptions")), n(16, 4), "1000"]),
        ("longdouble", [str(build("longdouble")), n(20000, 1000), "10"]),
    ]
    tsan = {name: str(build(name, tsan=True)) for name, _ in programs}
    runners = [
        ("native", []),
        ("qemu-user", [qemu]),
        ("tsan", []),
        ("lard bare", [str(lard), "run", "--detector", "none", "--observe", "none"]),
        ("lard", [str(lard), "run"]),
    ]
    by_exe = {argv[0]: tsan[name] for name, argv in programs}
    own = {"tsan": lambda argv: [by_exe[argv[0]], *argv[1:]]}
    med = cpu_table("floating point", programs, runners, reps, lard, own)
    load = os.getloadavg()
    print(f"loadavg at end {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}")
    parts = ", ".join(f"{k} {m['lard bare'] / m['qemu-user']:.2f}x" for k, m in med.items())
    print(f"   TARGET bare lard <= {TARGET}x qemu-user CPU: {parts}")
    parts = ", ".join(f"{k} {m['lard'] / max(m['tsan'], 0.01):.2f}x" for k, m in med.items())
    print(f"   TARGET lard <= {TSAN_TARGET}x ThreadSanitizer CPU: {parts}")


if __name__ == "__main__":
    main()
