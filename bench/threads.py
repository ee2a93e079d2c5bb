#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`, thread-count rows: how lard's cost grows with the number of
threads a program makes, against ThreadSanitizer.

    BENCH_SCALE=0.1 python3 bench/threads.py

bench/guests/threads.c (plain `gcc -O2 -g -pthread`: PIE, dynamic; 64 KiB
thread stacks), four workloads at n = 64, 256, 1,000 and 10,000 threads
(times BENCH_SCALE):

  * mutex    n threads started together, each taking one shared mutex 200
             times (lock hand-offs among all of them);
  * mutex/4  the same with a mutex per 4 threads (each lock shared by a few);
  * pool     a pool of 8 workers replaced after 20 locked tasks each, n in all;
  * forkjoin rounds of 8 threads joined by the main thread, n in all.

Runners: native, `gcc -fsanitize=thread` (libtsan) natively, `lard run`
(binary mode, the default detector) and `lard run` of the lard-cc build
(`lard-cc -O2 -g -pthread`, dynamic: the runtime's clocks live in the
guest, guest-sdk/cc/clock.c). Each cell: CPU seconds (user + sys, from
wait4) and peak RSS, median of BENCH_REPS (default 1) interleaved runs;
`us/op` is a lard runner's CPU time, less that of the same workload with
no threads (start-up, median of 5 runs), per lock operation (mutex:
n x 200, pool: n x 20) or per thread (forkjoin). A run past BENCH_THREADS_TIMEOUT seconds
(default 600) shows as `>T` and the larger sizes of that runner and
workload are skipped; a runner that fails shows `fails` (ThreadSanitizer
has a limit on live threads). Every run that finishes must print the same
checksum. TARGET lines, for each lard runner: mutex at 1,000 threads,
<= 2x ThreadSanitizer's CPU time; mutex/4, the cost per lock operation at
the largest n within 2x of that at the smallest. BENCH_THREADS_WORKLOADS
(comma-separated) runs a subset; BENCH_THREADS_RUNNERS (of native, tsan,
lard, lard-cc) a subset of the runners.
"""

import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LARD, OUT, ROOT, die, env_number, run  # noqa: E402

SIZES = [64, 256, 1000, 10000]
# name -> (guest arguments but n, lock operations per thread (0: count threads))
WORKLOADS = {
    "mutex": (["mutex", "{n}"], 200),
    "mutex/4": (["mutex", "{n}", "4"], 200),
    "pool": (["pool", "{n}"], 20),
    "forkjoin": (["forkjoin", "{n}"], 0),
}


def build() -> dict:
    """The plain, the ThreadSanitizer and the lard-cc build of the guest
    (lard-cc installed from this tree's guest-sdk into target/bench)."""
    OUT.mkdir(parents=True, exist_ok=True)
    src = ROOT / "bench" / "guests" / "threads.c"
    sdk = OUT / "threads-sdk"
    run(["make", "-s", "-C", str(ROOT / "guest-sdk"), "install-cc", f"PREFIX={sdk}",
         f"BUILD={OUT / 'threads-sdk-build'}", "CC=gcc"])
    exes = {}
    for kind, cc, flags in (("plain", "gcc", []), ("tsan", "gcc", ["-fsanitize=thread"]),
                            ("lardcc", str(sdk / "bin" / "lard-cc"), [])):
        exe = OUT / f"threads-{kind}"
        run([cc, "-O2", "-g", "-pthread", *flags, "-o", str(exe), str(src)])
        exes[kind] = exe
    if not Path(os.environ.get("BENCH_LARD", LARD)).exists():
        die(f"{LARD} missing (make build)")
    return exes


def cpu_run(argv: list, timeout: float):
    """('ok', CPU s, peak RSS KiB, stdout) | ('timeout',) | ('fails', message)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)],
            setsid=True)
        deadline = time.monotonic() + timeout
        while True:
            got, status, ru = os.wait4(pid, os.WNOHANG)
            if got == pid:
                break
            if time.monotonic() > deadline:
                os.killpg(pid, signal.SIGKILL)
                os.wait4(pid, 0)
                return ("timeout",)
            time.sleep(0.02)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            lines = err.read().decode(errors="replace").strip().splitlines() or ["?"]
            first = next((ln for ln in lines if "ThreadSanitizer" in ln or "error" in ln), lines[-1])
            return ("fails", f"status {code}: {first.strip()[:100]}")
        out.seek(0)
        return ("ok", ru.ru_utime + ru.ru_stime, ru.ru_maxrss, out.read().decode(errors="replace"))


def cell(r) -> str:
    if r is None:
        return "-"
    if r[0] == "timeout":
        return f">{TIMEOUT:.0f} s"
    if r[0] == "fails":
        return "fails"
    return f"{r[1]:7.2f} s {r[2] / 1024:6.0f} MB"


TIMEOUT = env_number("BENCH_THREADS_TIMEOUT", 600.0)


LARD_RUNNERS = ("lard", "lard-cc")


def main() -> None:
    reps = int(env_number("BENCH_REPS", 1, int))
    scale = env_number("BENCH_SCALE", 1.0)
    exes = build()
    lard = os.environ.get("BENCH_LARD", str(LARD))
    runners = [
        ("native", [str(exes["plain"])]),
        ("tsan", [str(exes["tsan"])]),
        ("lard", [lard, "run", str(exes["plain"])]),
        ("lard-cc", [lard, "run", str(exes["lardcc"])]),
    ]
    picked = os.environ.get("BENCH_THREADS_RUNNERS", ",".join(r for r, _ in runners)).split(",")
    for r in picked:
        if r not in dict(runners):
            die(f"BENCH_THREADS_RUNNERS: unknown runner {r!r} (of {', '.join(dict(runners))})")
    runners = [r for r in runners if r[0] in picked]
    sizes = sorted({max(8, round(n * scale)) for n in SIZES})
    chosen = os.environ.get("BENCH_THREADS_WORKLOADS", ",".join(WORKLOADS)).split(",")
    for w in chosen:
        if w not in WORKLOADS:
            die(f"BENCH_THREADS_WORKLOADS: unknown workload {w!r} (of {', '.join(WORKLOADS)})")
    # lard's start-up and the guest's set-up: the same workload, no threads
    # (median of 5: at 64 threads it is most of the run).
    base = {}
    for rname, prefix in runners:
        if rname not in LARD_RUNNERS:
            continue
        for wname, (args, _) in WORKLOADS.items():
            if wname not in chosen:
                continue
            got = []
            for _ in range(5):
                r = cpu_run(prefix + [a.format(n=0) for a in args], TIMEOUT)
                if r[0] != "ok":
                    die(f"{wname} with no threads under {rname}: {cell(r)} {r[1:]}")
                got.append(r[1])
            base[rname, wname] = statistics.median(got)
    load = os.getloadavg()
    print(f"thread counts: CPU seconds (user+sys) and peak RSS, median of {reps}; "
          f"lard = `{lard} run` (binary mode, default detector); lard-cc = the same of the "
          f"lard-cc build; tsan = gcc -fsanitize=thread")
    print(f"loadavg at start {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}, nproc={os.cpu_count()}, "
          f"timeout {TIMEOUT:.0f} s")
    head = f"{'workload':9} {'threads':>7}"
    for rname, _ in runners:
        head += f" {rname:>18}"
        if rname in LARD_RUNNERS:
            head += f" {'/tsan':>7} {'us/op':>7}"
    print(head)
    print("-" * len(head))
    failures = []
    per_op = {}
    ratio_1000 = {}
    for wname, (args, ops) in WORKLOADS.items():
        if wname not in chosen:
            continue
        stopped = set()
        for n in sizes:
            argv = [a.format(n=n) for a in args]
            results = {}
            for rname, prefix in runners:
                if rname in stopped:
                    results[rname] = None
                    continue
                got = []
                for rep in range(reps):
                    r = cpu_run([*prefix, *argv], TIMEOUT)
                    print(f"  {wname} {n} rep {rep + 1}/{reps} {rname}: {cell(r)}", file=sys.stderr)
                    got.append(r)
                    if r[0] != "ok":
                        break
                bad = next((r for r in got if r[0] != "ok"), None)
                if bad:
                    results[rname] = bad
                    stopped.add(rname)
                    if bad[0] == "fails":
                        failures.append(f"{wname} {n} {rname}: {bad[1]}")
                    continue
                outs = {r[3] for r in got}
                results[rname] = ("ok", statistics.median(r[1] for r in got),
                                  max(r[2] for r in got), outs.pop() if len(outs) == 1 else None)
            outs = {r[3] for r in results.values() if r and r[0] == "ok"}
            if len(outs) > 1:
                die(f"{wname} {n}: the runners' outputs differ: {sorted(map(str, outs))}")
            row = f"{wname:9} {n:7}"
            tr = results.get("tsan")
            for rname, _ in runners:
                lr = results[rname]
                row += f" {cell(lr):>18}"
                if rname not in LARD_RUNNERS:
                    continue
                ok = lr and lr[0] == "ok"
                ratio = lr[1] / max(tr[1], 0.01) if ok and tr and tr[0] == "ok" else None
                us = (lr[1] - base[rname, wname]) / (n * (ops or 1)) * 1e6 if ok else None
                if us is not None:
                    per_op.setdefault((rname, wname), []).append((n, us))
                if wname == "mutex" and n == 1000:
                    ratio_1000[rname] = ratio
                row += f" {'-' if ratio is None else f'{ratio:6.2f}x':>7}"
                row += f" {'-' if us is None else f'{us:7.2f}':>7}"
            print(row, flush=True)
    for f in failures:
        print(f"  note: {f}")
    for rname in LARD_RUNNERS:
        ratio = ratio_1000.get(rname)
        if ratio is not None:
            verdict = "within" if ratio <= 2.0 else "ABOVE"
            print(f"   TARGET {rname}, mutex, 1,000 threads: / ThreadSanitizer CPU = {ratio:.2f}x "
                  f"(<= 2x: {verdict} target)")
        flat = per_op.get((rname, "mutex/4"), [])
        if len(flat) >= 2:
            (n0, u0), (n1, u1) = flat[0], flat[-1]
            verdict = "within" if u1 <= 2 * u0 else "ABOVE"
            print(f"   TARGET {rname}, mutex/4, per lock operation: {u0:.2f} us at {n0} threads, "
                  f"{u1:.2f} us at {n1} ({u1 / u0:.2f}x; <= 2x: {verdict} target)")
    load = os.getloadavg()
    print(f"loadavg at end {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}")


if __name__ == "__main__":
    main()
