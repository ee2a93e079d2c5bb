#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Figure-7-style table of docs/lardish-figures.md: LARDISH vs software FastTrack.

Builds the guests (guests/tools/guests.py build), runs each workload under
`lard run --detector lardish --hw-stats-json` on three machines -- the RADISH
baseline (synchronous checks, 16 MB L3), 2 asynchronous checking cores
(Figure 8) and a 32 MB L3 (Figure 9) -- and prints

  1. overheads: simulated cycles over no detection for LARDISH and for the
     software-FastTrack model, and their ratio (RADISH Figure 7 reports
     FastTrack's overhead divided by RADISH's: 2x to 37x);
  2. RADISH Table 2 rates per 1,000 instructions, with the software checks
     broken down by cause (and the count of clock-table merges).

Every number comes from the model's own statistics; nothing is tuned.
Workloads: the PARSEC-like kernels (guests/c/*_like.c) and the minivm
workloads jacobi and prodcons, with their default arguments; then real
multi-threaded programs nobody wrote for lard, built from source with plain
`gcc -O2 -g` and run in binary mode: pigz 2.8 (the tarball of
bench/pigz.py), x264 and pbzip2 (Debian source packages, bench/debian_src.py),
8 threads each. Real programs also run on 2 async cores with a 32 MB L3
(RADISH's "negligible to 2x" machine) and with byte metadata instead of the
type-safe default. LARDISH_REAL=0 skips them; LARDISH_REAL_SCALE (default 1)
scales their inputs.
"""
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from common import die, run

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "bench" / "lardish"
LARD = Path(os.environ.get("BENCH_LARD", ROOT / "target" / "release" / "lard"))
WORKLOADS = ["blackscholes_like", "fluidanimate_like", "streamcluster_like", "swaptions_like",
             "minivm_jacobi", "minivm_prodcons", "locked_counter"]
MACHINES = [
    ("sync", ""),
    ("async2", "[lardish]\nasync_cores = 2\n"),
    ("l3-32M", "[l3]\nsize = 32M\n"),
]
SW_CAUSES = ["cold", "evicted", "inflated", "history_op", "clock_table", "rollover", "thread_switch",
             "stale_status", "granularity"]
# Machines of the real programs: the three above, RADISH's best machine
# (Figures 8-9 together) and byte metadata on the baseline.
REAL_MACHINES = MACHINES + [
    ("async2+l3", "[lardish]\nasync_cores = 2\n[l3]\nsize = 32M\n"),
    ("byte", "[lardish]\ngranularity = \"byte\"\n"),
]
REAL = ["pigz", "x264", "pbzip2"]
THREADS = 8


def build_pigz() -> Path:
    """pigz 2.8 built with plain -O2 -g (dynamically linked)."""
    import pigz
    exe = OUT / "pigz" / "pigz"
    if exe.exists():
        return exe
    if not pigz.TARBALL.exists():
        die(f"{pigz.TARBALL} not found (set PIGZ_TARBALL)")
    src = OUT / "pigz" / "src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    with tarfile.open(pigz.TARBALL) as t:
        t.extractall(src, filter="data")
    (top,) = [p for p in src.iterdir() if p.is_dir()]
    r = subprocess.run(["make", "-s", "CFLAGS=-O2 -g", "pigz"], cwd=top, stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        die("building pigz failed; is zlib1g-dev installed?")
    shutil.copy(top / "pigz", exe)
    return exe


def real_program(name: str, workdir: Path, scale: float) -> list[str]:
    """argv of real program `name` on its bench input in workdir."""
    import debian_src
    if name == "pigz":
        (workdir / "in.txt").write_bytes(debian_src._text(int((1 << 20) * scale)))
        return [str(build_pigz()), f"-p{THREADS}", "-b", "128", "-c", "-k", str(workdir / "in.txt")]
    w = debian_src.workload(name, THREADS, workdir, {"x264": 0.25, "pbzip2": 0.25}[name] * scale)
    return [str(debian_src.build(name))] + w.args


def real_rows(cfgs: dict) -> dict:
    """Statistics of every real program on every REAL_MACHINES machine."""
    scale = float(os.environ.get("LARDISH_REAL_SCALE", "1"))
    stats = {}
    for p in REAL:
        for name, _ in REAL_MACHINES:
            with tempfile.TemporaryDirectory() as d:
                argv = real_program(p, Path(d), scale)
                js = OUT / f"{p}.{name}.json"
                # The first program's instruction profile, baseline machine.
                prof = ["--hw-profile", str(OUT / f"{p}.profile.json")] \
                    if (p, name) == (REAL[0], "sync") else []
                r = subprocess.run([str(LARD), "run", "--detector", "lardish", "--hw-config", str(cfgs[name]),
                                    "--hw-stats-json", str(js), *prof, *argv],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                if r.returncode != 0:
                    die(f"{p} on {name}: lard run failed ({r.returncode}):\n{r.stderr.decode()[-2000:]}")
                stats[(p, name)] = json.loads(js.read_text())
    return stats


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    cargo = os.environ.get("CARGO", "cargo")
    run([cargo, "build", "--release", "-p", "lard-emu"], cwd=ROOT)
    run(["python3", str(ROOT / "guests/tools/guests.py"), "build", str(OUT / "guests")])
    stats = {}
    cfgs = {}
    for name, toml in REAL_MACHINES:
        cfgs[name] = OUT / f"{name}.toml"
        cfgs[name].write_text(toml)
    for name, toml in MACHINES:
        cfg = cfgs[name]
        for w in WORKLOADS:
            exe = OUT / "guests" / "glibc" / w
            js = OUT / f"{w}.{name}.json"
            r = run([str(LARD), "run", "--detector", "lardish", "--hw-config", str(cfg), "--hw-stats-json",
                     str(js), str(exe)])
            if "no data races found" not in r.stderr.decode():
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
    table2(stats, WORKLOADS, "workload", 20)
    print("\n== where LARDISH's overhead goes: cycles / no-detection cycles, per mechanism ==")
    mech = MECHANISMS
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
    if os.environ.get("LARDISH_REAL", "1") != "0":
        real_table(real_rows(cfgs))


MECHANISMS = ["metadata", "hw_check", "sw_check", "md_eviction", "rollover", "context_switch", "vc_op",
              "history_op", "async"]


def table2(stats: dict, names: list, label: str, width: int):
    """RADISH Table 2's rates per 1,000 instructions on the baseline
    machine, with the software checks by cause, one row per name."""
    print(f"{label:{width}} {'md evict':>8} {'inflate':>8} {'hw chk':>8} {'sw chk':>8} {'rollover':>8} {'merges':>7}  "
          + " ".join(f"{c[:10]:>10}" for c in SW_CAUSES))
    for n in names:
        s = stats[(n, "sync")]
        k, c = s["per_kilo_instruction"], s["sw_check_causes_per_kilo_instruction"]
        print(f"{n:{width}} {k['md_evictions']:8.3f} {k['inflations']:8.3f} {k['hw_checks']:8.3f} "
              f"{k['sw_checks']:8.3f} {k['rollovers']:8.3f} {s['reclaims']:7}  "
              + " ".join(f"{c[x]:10.3f}" for x in SW_CAUSES))


def real_table(stats: dict):
    """The tables above for the real programs, with their extra machines."""
    slow = lambda s, k: s[k] / max(1, s["cycles_no_detection"])
    print(f"\n== real programs (gcc -O2 -g, binary mode, {THREADS} threads): LARDISH vs software FastTrack ==")
    print(f"{'program':10} {'accesses':>10} {'LARDISH':>8} {'async 2':>8} {'L3 32M':>8} {'as2+L3':>8} "
          f"{'byte md':>8} {'FastTrack':>10} {'FT/LARDISH':>11} {'sw share':>9} {'stack':>7} {'conflicts':>10}")
    for p in REAL:
        s = stats[(p, "sync")]
        ft, ld = slow(s, "cycles_fasttrack"), slow(s, "cycles_lardish")
        cols = " ".join(f"{slow(stats[(p, m)], 'cycles_lardish'):7.2f}x" for m in ("async2", "l3-32M", "async2+l3", "byte"))
        print(f"{p:10} {s['accesses']:>10} {ld:7.2f}x {cols} {ft:9.2f}x {(ft - 1) / max(ld - 1, 1e-9):10.1f}x "
              f"{100 * s['decided_shares']['sw_check']:8.2f}% {100 * s['decided_shares']['stack']:6.1f}% "
              f"{s['granularity_conflicts']:>10}")
    print("   byte md = baseline machine with byte metadata; stack = accesses thread-local as stack accesses;")
    print("   conflicts = granularity conflicts (type-safe metadata falling back to bytes)")
    print("\n== real programs, per 1,000 instructions, baseline machine (RADISH Table 2), software checks by cause ==")
    table2(stats, REAL, "program", 10)
    print("\n== real programs: where LARDISH's overhead goes (cycles / no-detection cycles, per mechanism) ==")
    mech = MECHANISMS
    print(f"{'program':10} {'machine':9} {'pollution':>9} " + " ".join(f"{m[:10]:>10}" for m in mech)
          + f" {'cyc/swchk':>10}")
    for p in REAL:
        for name, _ in REAL_MACHINES:
            s = stats[(p, name)]
            base, m = max(1, s["cycles_no_detection"]), s["lardish_cycles_by_mechanism"]
            per = m["sw_check"] / max(1, s["sw_checks"]) if name not in ("async2", "async2+l3") else float("nan")
            print(f"{p:10} {name:9} {(m['base'] - base) / base:9.3f} "
                  + " ".join(f"{m[k] / base:10.3f}" for k in mech) + f" {per:10.0f}")
    print("   cyc/swchk = sw_check cycles per software check (synchronous machines)")
    profile_table(REAL[0], stats[(REAL[0], "sync")])


def profile_table(p: str, s: dict, top: int = 8):
    """The costliest instructions of `p`'s instruction profile (--hw-profile)."""
    prof = json.loads((OUT / f"{p}.profile.json").read_text())
    t = prof["totals"]
    if t["cycles"] != s["cycles_lardish"] - s["cycles_no_detection"] or t["sw_checks"] != s["sw_checks"]:
        die(f"{p}: the profile's totals are not the run's figures")
    print(f"\n== {p}: the instructions LARDISH's overhead comes from (--hw-profile, baseline machine) ==")
    print(f"{'share':>6} {'cycles':>12} {'sw chk':>8} {'hw chk':>8} {'md evict':>8} {'rollover':>8} {'hist':>5}  where")
    for r in prof["instructions"][:top]:
        where = f"{r['function'] or '??'} {Path(r['file'] or '??').name}:{r['line'] or '?'}"
        print(f"{100 * r['cycles'] / max(1, t['cycles']):5.1f}% {r['cycles']:>12} {r['sw_checks']:>8} "
              f"{r['hw_checks']:>8} {r['md_evictions']:>8} {r['rollovers']:>8} {r['history_ops']:>5}  {where}")
    print(f"   {len(prof['instructions'])} instructions caused model work; share = of LARDISH's cycles over no detection")


if __name__ == "__main__":
    main()
