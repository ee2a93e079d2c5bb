#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`: how long gdb's reverse steps take at the end of a long run.

Builds bench/guests/long_run.c (about 1.5*10^8 instructions, then done())
with `gcc -O1 -g -static`, runs it under `lard run --gdb 127.0.0.1:0` and
drives Debian's gdb in batch mode: break at done, continue, reverse-stepi
twice, stepi, reverse-next, reverse-continue (no earlier hit: a replay of
the whole run). gdb's own Python times each command; the table prints the
seconds beside the undebugged `lard run` of the same program.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time

from common import LARD, OUT, ROOT, die, run

STEPS = [
    ("continue to done()", "continue"),
    ("first reverse-stepi", "reverse-stepi"),
    ("second reverse-stepi", "reverse-stepi"),
    ("stepi", "stepi"),
    ("reverse-next", "reverse-next"),
    ("reverse-continue (whole run)", "reverse-continue"),
]


def main() -> None:
    if not shutil.which("gdb"):
        die("gdb is not installed (make prereqs installs it)")
    OUT.mkdir(parents=True, exist_ok=True)
    exe = OUT / "long_run"
    run(["gcc", "-O1", "-g", "-static", "-o", str(exe), str(ROOT / "bench/guests/long_run.c")])
    if not LARD.exists():
        die(f"{LARD} is not built (make build)")
    start = time.monotonic()
    run([str(LARD), "run", str(exe)])
    plain = time.monotonic() - start
    lard = subprocess.Popen(
        [str(LARD), "run", "--gdb", "127.0.0.1:0", str(exe)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = lard.stderr.readline() if lard.stderr else ""
    m = re.search(r"waiting for gdb on (\S+)", line)
    if not m:
        lard.kill()
        die(f"lard did not announce its gdb address: {line!r}")
    cmds = ["set pagination off", f"target remote {m.group(1)}", "break done"]
    for i, (_, cmd) in enumerate(STEPS):
        cmds += ["python import time; t0 = time.monotonic()", cmd,
                 f"python print('LARDSTEP {i} %.3f' % (time.monotonic() - t0))"]
    cmds.append("kill")
    args = ["gdb", "-batch", "-nx"]
    for c in cmds:
        args += ["-ex", c]
    args.append(str(exe))
    g = subprocess.run(args, capture_output=True, text=True, timeout=900)
    lard.wait(timeout=60)
    times = dict(re.findall(r"LARDSTEP (\d+) ([0-9.]+)", g.stdout))
    if len(times) != len(STEPS):
        die(f"gdb did not run every step:\n{g.stdout[-2000:]}\n{g.stderr[-2000:]}")
    print("== gdb at the end of a 1.5*10^8-instruction run (bench/guests/long_run.c) ==")
    print(f"{'step':34} {'seconds':>8}")
    print(f"{'lard run without gdb':34} {plain:8.2f}")
    for i, (name, _) in enumerate(STEPS):
        print(f"{name:34} {float(times[str(i)]):8.2f}")


if __name__ == "__main__":
    sys.exit(main())
