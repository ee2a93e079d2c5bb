#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Figure-7-style table of docs/lardish.md: LARDISH vs software FastTrack.

Builds the guests (guests/tools/guests.py build), runs each workload under
`lard run --detector lardish --hw-stats-json` on three machines -- the RADISH
baseline (synchronous checks, 16 MB L3), 2 asynchronous checking cores
(Figure 8) and a 32 MB L3 (Figure 9) -- and prints

  1. overheads: simulated cycles over no detection for LARDISH and for the
     software-FastTrack model, and their ratio (RADISH Figure 7 reports
     FastTrack's overhead divided by RADISH's: 2x to 37x);
  2. RADISH Table 2 rates per 1,000 instructions, with the software checks
     broken down by cause.

Every number comes from the model's own statistics; nothing is tuned.
Workloads: the PARSEC-like kernels (guests/c/*_like.c) and the minivm
workloads jacobi and prodcons, with their default arguments.
"""
import json
import os
from pathlib import Path
from common import die, run

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "bench" / "lardish"
LARD = ROOT / "target" / "release" / "lard"
WORKLOADS = ["blackscholes_like", "fluidanimate_like", "streamcluster_like", "swaptions_like",
             "minivm_jacobi", "minivm_prodcons", "locked_counter"]
MACHINES = [
    ("sync", ""),
    ("async2", "[lardish]\nasync_cores = 2\n"),
    ("l3-32M", "[l3]\nsize = 32M\n"),
]
SW_CAUSES = ["cold", "evicted", "inflated", "history_op", "clock_table", "rollover", "thread_switch",
             "stale_status"]


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    cargo = os.environ.get("CARGO", "cargo")
    run([cargo, "build", "--release", "-p", "lard-emu"], cwd=ROOT)
    run(["python3", str(ROOT / "guests/tools/guests.py"), "build", str(OUT / "guests")])
    stats = {}
    for name, toml in MACHINES:
        cfg = OUT / f"{name}.toml"
        cfg.write_text(toml)
        for w in WORKLOADS:
            exe = OUT / "guests" / "glibc" / w
            js = OUT / f"{w}.{name}.json"
            r = run([str(LARD), "run", "--detector", "lardish", "--hw-config", str(cfg), "--hw-stats-json",
                     str(js), str(exe)])
            if "racy dynamic accesses (DRE): 0," not in r.stderr.decode():
                die(f"{w} on {name}: LARDISH reported races on a race-free workload")
            stats[(w, name)] = json.loads(js.read_text())
    slow = lambda s, k: s[k] / max(1, s["cycles_no_detection"])
    print("== LARDISH vs software FastTrack (simulated cycles / no detection; RADISH Figure 7-9) ==")
    print(f"{'workload':20} {'accesses':>9} {'LARDISH':>8} {'async 2':>8} {'L3 32M':>8} "
          f"{'FastTrack':>10} {'FT/LARDISH':>11} {'sw share':>9}")
    for w in WORKLOADS:
        s = stats[(w, "sync")]
        a, l3 = stats[(w, "async2")], stats[(w, "l3-32M")]
        ft, ld = slow(s, "cycles_fasttrack"), slow(s, "cycles_lardish")
        print(f"{w:20} {s['accesses']:>9} {ld:7.2f}x {slow(a, 'cycles_lardish'):7.2f}x "
              f"{slow(l3, 'cycles_lardish'):7.2f}x {ft:9.2f}x {(ft - 1) / max(ld - 1, 1e-9):10.1f}x "
              f"{100 * s['decided_shares']['sw_check']:8.2f}%")
    print("   FT/LARDISH = FastTrack's overhead / LARDISH's overhead (overhead = slowdown - 1), baseline machine")
    print("\n== per 1,000 instructions, baseline machine (RADISH Table 2), software checks by cause ==")
    print(f"{'workload':20} {'md evict':>8} {'inflate':>8} {'hw chk':>8} {'sw chk':>8} {'rollover':>8}  "
          + " ".join(f"{c[:10]:>10}" for c in SW_CAUSES))
    for w in WORKLOADS:
        s = stats[(w, "sync")]
        p, c = s["per_kilo_instruction"], s["sw_check_causes_per_kilo_instruction"]
        print(f"{w:20} {p['md_evictions']:8.3f} {p['inflations']:8.3f} {p['hw_checks']:8.3f} "
              f"{p['sw_checks']:8.3f} {p['rollovers']:8.3f}  " + " ".join(f"{c[k]:10.3f}" for k in SW_CAUSES))
    print("\n== where LARDISH's overhead goes: cycles / no-detection cycles, per mechanism ==")
    mech = ["metadata", "hw_check", "sw_check", "md_eviction", "rollover", "context_switch", "vc_op",
            "history_op", "async"]
    print(f"{'workload':20} {'machine':8} {'pollution':>9} " + " ".join(f"{m[:10]:>10}" for m in mech))
    for w in WORKLOADS:
        for name, _ in MACHINES:
            s = stats[(w, name)]
            base, m = max(1, s["cycles_no_detection"]), s["lardish_cycles_by_mechanism"]
            print(f"{w:20} {name:8} {(m['base'] - base) / base:9.3f} " + " ".join(f"{m[k] / base:10.3f}" for k in mech))
    print("   pollution = LARDISH's data/instruction cycles minus no detection's (metadata occupying cache)")
    print("\n== hardware checks by cause, per 1,000 instructions, baseline machine ==")
    for w in WORKLOADS:
        h = stats[(w, "sync")]["hw_check_causes_per_kilo_instruction"]
        print(f"{w:20} " + "  ".join(f"{k} {v:.3f}" for k, v in h.items()))


if __name__ == "__main__":
    main()
