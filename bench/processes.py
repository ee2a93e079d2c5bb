#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`: a process tree, `make -j2` building a small C project.

Writes a project of N small translation units (BENCH_SCALE multiplies N, 2
by default) into target/bench/make-project/ and builds it from clean with
`make -j2` natively, under `lard run` (every process emulated and checked:
make, the gcc driver, cc1, as, collect2, ld) and under Valgrind
`--trace-children=yes` (DRD, when valgrind is installed). Prints wall and
CPU seconds (user + system of the whole tree, from wait4) and the ratios to
native; every runner must build a program that prints the native run's
output. Each row runs BENCH_REPS times (1 by default: a compiler under
detection is slow, docs/processes.md), interleaved; the median is kept.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import LARD, OUT, ROOT, die, env_number, run


def write_project(dirpath: Path, units: int) -> None:
    """`units` C files, each a few functions gcc -O2 has work on, and a main
    that sums what they return."""
    if dirpath.exists():
        shutil.rmtree(dirpath)
    dirpath.mkdir(parents=True)
    for i in range(units):
        body = "\n".join(
            f"static long f{i}_{k}(long x) {{ long s = 0; for (long j = 0; j < x; j++) "
            f"s += (j * {k + 1}) ^ (s >> 3); return s; }}"
            for k in range(3)
        )
        calls = " + ".join(f"f{i}_{k}(x)" for k in range(3))
        (dirpath / f"u{i}.c").write_text(f"{body}\nlong unit{i}(long x) {{ return {calls}; }}\n")
    decls = "\n".join(f"long unit{i}(long);" for i in range(units))
    total = " + ".join(f"unit{i}(10)" for i in range(units))
    (dirpath / "main.c").write_text(
        f'#include <stdio.h>\n{decls}\nint main(void) {{ printf("%ld\\n", {total}); return 0; }}\n'
    )
    objs = " ".join(f"u{i}.o" for i in range(units)) + " main.o"
    (dirpath / "Makefile").write_text(
        f"prog: {objs}\n\tgcc -o $@ $^\n%.o: %.c\n\tgcc -O2 -c $< -o $@\n"
        "clean:\n\trm -f *.o prog\n"
    )


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of `cmd` (its whole process tree)."""
    subprocess.run(["make", "-s", "clean"], cwd=cwd, check=True)
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        die(f"`{' '.join(cmd)}` failed:\n{err[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    units = max(1, int(2 * env_number("BENCH_SCALE", 1.0)))
    reps = int(env_number("BENCH_REPS", 1, int))
    if not LARD.exists():
        run([os.environ.get("CARGO", "cargo"), "build", "--release", "-p", "lard-emu"], cwd=ROOT)
    project = OUT / "make-project"
    write_project(project, units)
    rows = {"native": ["make", "-j2"], "lard run": [str(LARD), "run", "make", "-j2"]}
    if shutil.which("valgrind"):
        rows["valgrind drd --trace-children=yes"] = [
            "valgrind", "-q", "--tool=drd", "--trace-children=yes", "make", "-j2",
        ]
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in rows}
    expected = None
    for _ in range(reps):
        for name, cmd in rows.items():
            results[name].append(timed(cmd, project))
            out = subprocess.run([str(project / "prog")], capture_output=True, check=True).stdout
            if expected is None:
                expected = out
            elif out != expected:
                die(f"{name}: the program it built prints {out!r}, natively {expected!r}")
    native_wall = statistics.median(w for w, _ in results["native"])
    native_cpu = statistics.median(c for _, c in results["native"])
    print(f"== make -j2 of a {units + 1}-file C project (median of {reps}) ==")
    print(f"{'runner':36} {'wall s':>8} {'CPU s':>8} {'wall/native':>12} {'CPU/native':>11}")
    for name in rows:
        wall = statistics.median(w for w, _ in results[name])
        cpu = statistics.median(c for _, c in results[name])
        print(f"{name:36} {wall:8.2f} {cpu:8.2f} {wall / native_wall:11.1f}x {cpu / native_cpu:10.1f}x")


if __name__ == "__main__":
    sys.exit(main())
