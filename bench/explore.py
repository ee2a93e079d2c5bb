#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`: how many runs `lard explore` needs to find each bug of
guests/explore, PCT against random schedules, and how a campaign's wall
time falls with --jobs.

1. Builds guests/explore/{lazy_init,lost_wakeup,busy_path}.c (gcc -O2 -g
   -static -pthread). For each guest and strategy (`--pct 2`, `--random`),
   EXPLORE_BASES explorations of EXPLORE_RUNS runs (default 5 x 200),
   with `--seed 0, 1000, ...`; prints the run at which the guest's bug (a
   crash, a deadlock, a race) was first found (median and each) and the
   share of runs that show it.
2. A campaign of racy_sum and mutex_counter (guests/plain) crossed with
   three detectors and four seeds, run with --jobs 1 and then --jobs 2 into
   fresh result directories: wall seconds and the speed-up.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time

from common import LARD, OUT, ROOT, die, env_number, run

GUESTS = [("lazy_init", "crash"), ("lost_wakeup", "deadlock"), ("busy_path", "race")]


def runs_to_find() -> None:
    bases = env_number("EXPLORE_BASES", 5, int)
    runs = env_number("EXPLORE_RUNS", 200, int)
    print(f"\nlard explore: runs to find each bug ({bases} explorations of {runs} runs each)")
    print(f"{'guest':12} {'bug':9} {'strategy':9} {'median':>7}  {'first run of each':24} {'runs showing it':>15}")
    for g, kind in GUESTS:
        exe = OUT / f"explore_{g}"
        run(["gcc", "-O2", "-g", "-static", "-pthread", "-o", str(exe),
             str(ROOT / "guests/explore" / f"{g}.c")])
        for strat in (["--pct", "2"], ["--random"]):
            firsts, rates = [], []
            for b in range(bases):
                out = OUT / "explore.json"
                subprocess.run([str(LARD), "explore", *strat, "--runs", str(runs),
                                "--seed", str(1000 * b), "--report-json", str(out), "--", str(exe)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                v = json.loads(out.read_text())
                found = [f["run"] for f in v["findings"] if f["kind"] == kind]
                firsts.append(min(found) if found else None)
                rates.append(v["counts"][kind] / max(v["completed"], 1))
            hit = [f for f in firsts if f is not None]
            med = f"{statistics.median(hit):g}" if hit else "never"
            each = ",".join("-" if f is None else str(f) for f in firsts)
            print(f"{g:12} {kind:9} {' '.join(strat):9} {med:>7}  {each:24} "
                  f"{100 * statistics.mean(rates):14.1f}%")


def campaign_speedup() -> None:
    d = OUT / "campaign"
    d.mkdir(parents=True, exist_ok=True)
    plain = ROOT / "guests/plain"
    (d / "c.toml").write_text(f'''name = "bench"
[[program]]
name = "racy_sum"
build = "gcc -O2 -g -pthread -o racy_sum {plain}/racy_sum.c"
command = ["./racy_sum"]
racy = true
[[program]]
name = "mutex_counter"
build = "gcc -O2 -g -pthread -o mutex_counter {plain}/mutex_counter.c"
command = ["./mutex_counter"]
racy = false
[axes]
detector = ["none", "fasttrack", "lardish"]
seed = [1, 2, 3, 4]
''')
    print("\nlard campaign: 2 programs x 3 detectors x 4 seeds = 24 runs")
    walls = {}
    for jobs in (1, 2):
        out = d / f"results-{jobs}"
        subprocess.run(["rm", "-rf", str(out)], check=True)
        t = time.monotonic()
        run([str(LARD), "campaign", "run", str(d / "c.toml"), "--out", str(out), "--jobs", str(jobs),
             "--no-progress"])
        walls[jobs] = time.monotonic() - t
        print(f"  --jobs {jobs}: {walls[jobs]:.2f} s wall")
    print(f"  speed-up with 2 jobs: {walls[1] / walls[2]:.2f}x on {os.cpu_count()} host cores")


def main() -> None:
    if not LARD.exists():
        die(f"{LARD} is not built (make build)")
    OUT.mkdir(parents=True, exist_ok=True)
    runs_to_find()
    campaign_speedup()


if __name__ == "__main__":
    main()
