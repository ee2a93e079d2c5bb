#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What each race detector adds to `lard run`, measured in one run.

Runs bench/guests/tracked_memory.c (every data access Tracked, two language
threads, race-free) under `lard run` with the counting observer receiving every
Tracked access (`--detector none --observe tracked`, the baseline) and with
each detector, best of BENCH_REPS (default 3) interleaved runs, and prints
seconds, ratio to the counting observer and to the previous configuration:
wall seconds and the run's user CPU seconds (getrusage of the child; on a
shared machine wall time swings with the load, user time much less).
Every run must print the same checksum and every detector must report the
same number of racy accesses (0). Scale with BENCH_SCALE (default 1).
"""
import os
import re
import resource
import sys
import time
from common import LARD, OUT, ROOT, build_tracked_memory, die, run
CONFIGS = [
    ("counting observer", ["--detector", "none", "--observe", "tracked"]),
    ("fasttrack", ["--detector", "fasttrack"]),
    ("canonical", ["--detector", "canonical"]),
    ("lardish", ["--detector", "lardish"]),
    ("variants: lard", ["--detectors", "lard"]),
    ("variants: all 7", ["--detectors", "all"]),
]


def main():
    scale = float(os.environ.get("BENCH_SCALE", "1"))
    reps = int(os.environ.get("BENCH_REPS", "3"))
    sdk, exe = build_tracked_memory()
    args = [str(max(1, int(40 * scale))), "256"]
    best, user, outs, dres = {}, {}, set(), {}
    for rep in range(reps):
        for name, flags in CONFIGS:
            u0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
            t0 = time.perf_counter()
            # (--stats: the report's figures carry the DRE.)
            r = run([str(LARD), "run", "--stats", *flags, str(exe), *args])
            dt = time.perf_counter() - t0
            du = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - u0
            best[name] = min(best.get(name, dt), dt)
            user[name] = min(user.get(name, du), du)
            outs.add(r.stdout.decode())
            m = re.search(r"racy dynamic accesses \(DRE\): (\d+)", r.stderr.decode())
            if m:
                dres.setdefault(name, set()).add(int(m.group(1)))
            print(f"  rep {rep + 1}/{reps}  {name:18} {dt:7.3f} s", file=sys.stderr)
    if len(outs) != 1:
        die(f"configurations disagree on the guest's output: {outs}")
    if any(v != {0} for v in dres.values()):
        die(f"detectors disagree or report races on a race-free guest: {dres}")
    print(f"\n== detectors on tracked_memory {' '.join(args)} (race-free, 2 language threads) ==")
    print(f"   guest output: {outs.pop().strip()}")
    print(f"{'configuration':20} {'seconds':>8} {'x counting':>11} {'x previous':>11}"
          f" {'user s':>8} {'x counting':>11}")
    base, ubase, prev = best["counting observer"], user["counting observer"], None
    for name, _ in CONFIGS:
        b, u = best[name], user[name]
        p = "-" if prev is None else f"{b / best[prev]:.2f}x"
        print(f"{name:20} {b:8.3f} {b / base:10.2f}x {p:>11} {u:8.3f} {u / max(ubase, 1e-3):10.2f}x")
        prev = name
    # Events per second of each detector on a trace recorded from a real run
    # (no emulation): record tracked_memory once, replay it.
    trace = OUT / "tracked_memory.trace"
    run([str(LARD), "run", "--detector", "none", "--record-trace", str(trace), str(exe), "2", "256"])
    r = run([os.environ.get("CARGO", "cargo"), "run", "-q", "--release", "-p", "lard-detector-hw",
             "--example", "replay", "--", str(trace), "all"], cwd=ROOT)
    print("\n== replay of a recorded trace (tracked_memory 2 256), no emulation ==")
    print(r.stdout.decode().rstrip())
    print(f"TARGETS: fasttrack <= 2x counting observer: {best['fasttrack'] / base:.2f}x; "
          f"lardish <= 10x: {best['lardish'] / base:.2f}x (user CPU {user['lardish'] / max(ubase, 1e-3):.2f}x); "
          f"all 7 variants <= 3x one (--detectors lard): {best['variants: all 7'] / best['variants: lard']:.2f}x")
    object_vs_fasttrack(sdk, exe, args, reps)


def object_vs_fasttrack(sdk, exe, args, reps):
    """The object race detector (docs/detectors.md) against FastTrack per access, on
    tracked_memory (plain malloc: its array is no object, so every access
    is an access outside objects) and on minivm workloads (every object
    reported by the runtime): whole runs under the emulator, then a replay
    of each recorded trace without emulation (ns per access above a
    counting loop; detector-hw/examples/object_cost.rs)."""
    minivm = ROOT / "guests" / "minivm"
    workloads = [("tracked_memory " + " ".join(args), exe, args)]
    for w, n in (("jacobi", []), ("prodcons", [])):
        bin_ = OUT / f"minivm_{w}"
        run(["gcc", "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-static", "-O2", "-g", "-pthread",
             "-I", str(ROOT / "guest-sdk/include"), "-I", str(minivm / "include"), "-o", str(bin_),
             str(minivm / "workloads" / f"{w}.c"), str(minivm / "src/vm.c"), str(minivm / "src/heap.c"),
             str(minivm / "src/ctx_x86_64.S"), f"-L{sdk}", "-llard"])
        workloads.append((f"minivm {w} (ms 1:1)", bin_, ["--gc=marksweep", "--threads=1:1", *n]))
    print("\n== object race detector vs FastTrack (same execution, different question) ==")
    print(f"{'workload':28} {'fasttrack s':>11} {'object s':>9} {'object/ft':>9}   replay (no emulation)")
    ratios = []
    for label, bin_, wargs in workloads:
        best = {}
        outs = set()
        for _ in range(reps):
            for d in ("fasttrack", "object"):
                t0 = time.perf_counter()
                r = run([str(LARD), "run", "--detector", d, str(bin_), *wargs])
                best[d] = min(best.get(d, 1e9), time.perf_counter() - t0)
                outs.add(r.stdout.decode())
        if len(outs) != 1:
            die(f"{label}: fasttrack and object runs disagree on the output: {outs}")
        trace = OUT / "object.trace"
        run([str(LARD), "run", "--detector", "object", "--record-trace", str(trace), str(bin_), *wargs])
        r = run([os.environ.get("CARGO", "cargo"), "run", "-q", "--release", "-p", "lard-detector-hw",
                 "--example", "object_cost", "--", str(trace), "--repeat", str(max(3, reps))], cwd=ROOT)
        replay = r.stdout.decode().strip()
        m = re.search(r"above count ([0-9.]+)x", replay)
        if m:
            ratios.append((label, float(m.group(1))))
        print(f"{label:28} {best['fasttrack']:11.3f} {best['object']:9.3f} "
              f"{best['object'] / best['fasttrack']:8.2f}x   {replay}")
    worst = max(ratios, key=lambda x: x[1]) if ratios else ("-", float("nan"))
    print(f"TARGET: object cheaper per access than fasttrack (replay, cost above counting): "
          f"worst {worst[1]:.2f}x on {worst[0]}"
          f" ({'met' if all(r < 1 for _, r in ratios) else 'NOT met'})")


if __name__ == "__main__":
    main()
