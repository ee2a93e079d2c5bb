#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Bare emulation against qemu-user: what lard's emulator costs before it
observes anything, on real code.

    BENCH_REPS=5 python3 bench/emulation.py

Three static programs, each run natively, under qemu-user (`qemu-x86_64`)
and under `lard run --detector none --observe none` (bare), interleaved
(one run of each runner in turn, BENCH_REPS rounds), CPU seconds (user +
sys of the process tree, from wait4), medians:

  * pigz 2.8 `-p 4 -c` on the 4 MiB text of bench/pigz.py (zlib's deflate,
    integer SSE2 in slide_hash);
  * pbzip2 (Debian source, bench/debian_src.py, static flavour) `-p4 -b1`
    on 1 MiB of text (libbz2's block sort);
  * bench/guests/nbody_tree.c (4,000 bodies, 3 steps): double-precision
    floating point through SSE, which QEMU runs in softfloat helpers.

Prints the table with ratios to native and to qemu-user and a TARGET line
(bare lard <= 1.5x qemu-user's CPU time). Every runner must print the same
output. BENCH_LARD selects another lard binary (an A/B of two builds: run
the script once per binary, alternately); BENCH_SCALE scales the inputs.
"""

import hashlib
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import debian_src  # noqa: E402
import pigz  # noqa: E402
from common import LARD, OUT, ROOT, die, env_number, run  # noqa: E402

TARGET = 1.5


def nbody() -> Path:
    """bench/guests/nbody_tree.c, static, -O2."""
    OUT.mkdir(parents=True, exist_ok=True)
    exe = OUT / "nbody_tree-static"
    src = ROOT / "bench" / "guests" / "nbody_tree.c"
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        run(["gcc", "-static", "-O2", "-g", "-pthread", "-o", str(exe), str(src), "-lm"])
    return exe


def lard_and_qemu() -> tuple[Path, str]:
    """The lard binary (`BENCH_LARD`, default the build's) and qemu-user,
    or a one-line exit naming what is missing."""
    lard = Path(os.environ.get("BENCH_LARD", LARD))
    if not lard.exists():
        die(f"{lard} missing (make build)")
    qemu = shutil.which("qemu-x86_64") or shutil.which("qemu-x86_64-static")
    if not qemu:
        die("qemu-x86_64 not found (make prereqs installs qemu-user)")
    return lard, qemu


def cpu_run(argv: list[str]) -> tuple[float, str]:
    """(CPU seconds of the process tree, SHA-256 of stdout)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, out.fileno(), 1), (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
        _, status, ru = os.wait4(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            die(f"`{' '.join(argv)}` exited with status {code}: "
                f"{err.read().decode(errors='replace')[-1500:]}")
        out.seek(0)
        return ru.ru_utime + ru.ru_stime, hashlib.sha256(out.read()).hexdigest()


def cpu_table(title, programs, runners, reps, lard, own=None) -> dict[str, dict[str, float]]:
    """Runs every program under every runner `reps` times, interleaved, and
    prints each runner's median CPU seconds against native and qemu-user
    (the first two runners), and against a runner named "tsan" if there is
    one; the outputs must agree.  `own` maps a runner's name to a function
    giving that runner's own argv for a program's (a ThreadSanitizer build
    runs its own binary).  Returns each program's median CPU seconds by
    runner."""
    own = own or {}
    names = [r for r, _ in runners]
    load = os.getloadavg()
    print(f"{title}: CPU seconds (user+sys), median of {reps} interleaved rounds; {lard}")
    print(f"loadavg at start {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}, nproc={os.cpu_count()}")
    tsan_col = f" {'x tsan':>7}" if "tsan" in names else ""
    print(f"{'program':12} {'runner':10} {'CPU s':>7} {'x native':>9} {'x qemu-user':>12}{tsan_col}")
    medians = {}
    for name, argv in programs:
        cpu: dict[str, list[float]] = {r: [] for r, _ in runners}
        digests = set()
        for rep in range(reps):
            for r, prefix in runners:
                c, d = cpu_run([*prefix, *(own[r](argv) if r in own else argv)])
                cpu[r].append(c)
                digests.add(d)
                print(f"  {name} rep {rep + 1}/{reps} {r:10} {c:6.2f} s", file=sys.stderr)
        if len(digests) != 1:
            die(f"{name}: the runners' outputs differ")
        med = {r: statistics.median(v) for r, v in cpu.items()}
        for r, _ in runners:
            nat = med[r] / max(med["native"], 0.01)
            q = med[r] / med["qemu-user"]
            ts = f" {med[r] / max(med['tsan'], 0.01):6.2f}x" if tsan_col else ""
            print(f"{name:12} {r:10} {med[r]:7.2f} {nat:8.1f}x {q:11.2f}x{ts}")
        medians[name] = med
    return medians


def main() -> None:
    reps = int(env_number("BENCH_REPS", 5, int))
    scale = env_number("BENCH_SCALE", 1.0)
    lard, qemu = lard_and_qemu()
    static_pigz, _ = pigz.build()
    pigz_in = pigz.make_input(max(64 * 1024, int(4 * 1024 * 1024 * scale)))
    pbzip2 = debian_src.build("pbzip2", "static")
    work = Path(tempfile.mkdtemp(prefix="emulation-", dir=OUT))
    pbzip2_args = debian_src.workload("pbzip2", 4, work / "pbzip2", 0.5 * scale).args
    bodies = str(max(200, int(4000 * scale)))
    programs = [
        ("pigz", [str(static_pigz), "-p", "4", "-c", str(pigz_in)]),
        ("pbzip2", [str(pbzip2), *pbzip2_args]),
        ("nbody_tree", [str(nbody()), bodies, "3"]),
    ]
    runners = [
        ("native", []),
        ("qemu-user", [qemu]),
        ("lard bare", [str(lard), "run", "--detector", "none", "--observe", "none"]),
    ]
    med = cpu_table("bare emulation", programs, runners, reps, lard)
    ratios = {k: m["lard bare"] / m["qemu-user"] for k, m in med.items()}
    shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()
    print(f"loadavg at end {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}")
    parts = ", ".join(f"{n} {v:.2f}x" for n, v in ratios.items())
    print(f"   TARGET bare lard <= {TARGET}x qemu-user CPU: {parts}")


if __name__ == "__main__":
    main()
