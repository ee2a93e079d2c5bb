#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What adversarial memory (lard run --adversarial, docs/jumble.md) costs,
measured in one run against a FastTrack run of the same program.

Guest: bench/guests/tracked_memory.c (every data access Tracked, two
language threads). Configurations, best of BENCH_REPS (default 3)
interleaved runs:

  fasttrack                  the baseline (adversarial memory off)
  adversarial, none monitored  --adversarial sc with a trigger no access
                             touches: the machinery's cost on every Tracked
                             access (JUMBLE's usual case: one racy field)
  adversarial, all monitored --adversarial oldest triggered at every
                             Tracked PC of work(): every access goes through
                             a write buffer (65536 locations, worst case)

Every run must print the same checksum (sc changes no value; oldest has
nothing to change on this race-free guest). Target: <= 3x fasttrack.
"""
import os
import re
import sys
import time
from common import LARD, build_tracked_memory, die, run


def main():
    scale = float(os.environ.get("BENCH_SCALE", "1"))
    reps = int(os.environ.get("BENCH_REPS", "3"))
    _, exe = build_tracked_memory()
    dis = run([str(LARD), "disasm", str(exe), "--symbol", "work"]).stdout.decode()
    pcs = [f"0x{m.group(1)}" for m in re.finditer(r"^\s*([0-9a-f]+):.*\btracked\b", dis, re.M)]
    if not pcs:
        die("no Tracked instruction found in work()")
    configs = [
        ("fasttrack", ["--detector", "fasttrack"]),
        ("adversarial, none monitored", ["--detector", "fasttrack", "--adversarial", "sc",
                                         "--adversarial-at", "0x10"]),
        ("adversarial, all monitored", ["--detector", "fasttrack", "--adversarial", "oldest",
                                        "--adversarial-at", ",".join(pcs)]),
    ]
    args = [str(max(1, int(10 * scale))), "256"]
    best, outs, reads = {}, set(), {}
    for rep in range(reps):
        for name, flags in configs:
            t0 = time.perf_counter()
            r = run([str(LARD), "run", *flags, str(exe), *args])
            dt = time.perf_counter() - t0
            best[name] = min(best.get(name, dt), dt)
            outs.add(r.stdout.decode())
            m = re.search(r"reads: (\d+)", r.stderr.decode())
            if m:
                reads[name] = int(m.group(1))
            print(f"  rep {rep + 1}/{reps}  {name:28} {dt:7.3f} s", file=sys.stderr)
    if len(outs) != 1:
        die(f"configurations disagree on the guest's output: {outs}")
    print(f"\n== adversarial memory on tracked_memory {' '.join(args)} ==")
    print(f"   guest output: {outs.pop().strip()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'configuration':30} {'seconds':>8} {'x fasttrack':>12} {'adversarial reads':>18}")
    base = best["fasttrack"]
    for name, _ in configs:
        print(f"{name:30} {best[name]:8.3f} {best[name] / base:11.2f}x {reads.get(name, '-'):>18}")
    print(f"TARGET: adversarial run <= 3x fasttrack: "
          f"{best['adversarial, none monitored'] / base:.2f}x (one racy field's case), "
          f"{best['adversarial, all monitored'] / base:.2f}x (every access monitored)")


if __name__ == "__main__":
    main()
