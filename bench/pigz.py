#!/usr/bin/env python3
"""`make bench`, part 3: a real multi-threaded program, pigz 2.8.

Builds pigz from ../shared/bench-programs/pigz-2.8.tar.gz (zlib from the
distribution's zlib1g-dev) twice into target/bench/pigz/: a static binary
for native, qemu-user and lard, a dynamic one for valgrind. Compresses a
deterministic 4 MiB text (BENCH_SCALE multiplies it) with `pigz -p P -c`
under every runner and prints CPU seconds (user + system of the runner's
process tree, from wait4) with ratios to qemu-user and to bare lard. Every
runner must produce byte-identical output (checked by SHA-256).

Rows: native, qemu-user, `lard run --detector none --observe none` (bare),
`--observe all` (every access to the counting observer), `--detectors naive`
(a detector that needs every non-stack access), and valgrind DRD and
Helgrind when valgrind is installed. `-p 1` runs the bare rows only.
Every row runs BENCH_REPS times, interleaved (the machine's noise is about
±15% run to run, so a ratio of medians of interleaved runs is the figure), except
a row whose first run took more than SLOW_CPU CPU seconds, which runs once.
The TARGET lines are the targets of docs/performance.md; the DRD comparison is
on CPU time like the table, wall time beside it.
Knobs: BENCH_SCALE (input size factor), BENCH_REPS (repetitions; the median
is kept), PIGZ_TARBALL.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from common import die, env_number

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "bench" / "pigz"
LARD = ROOT / "target" / "release" / "lard"
# ../shared/bench-programs next to the checkout (or next to the directory of
# worktrees holding it), unless PIGZ_TARBALL says otherwise.
_CANDIDATES = [d / "shared" / "bench-programs" / "pigz-2.8.tar.gz" for d in (ROOT.parent, ROOT.parent.parent)]
TARBALL = Path(
    os.environ.get("PIGZ_TARBALL", next((c for c in _CANDIDATES if c.exists()), _CANDIDATES[0]))
)


def build() -> tuple[Path, Path]:
    """(static pigz, dynamic pigz), built once per tarball."""
    if not TARBALL.exists():
        die(f"{TARBALL} not found (set PIGZ_TARBALL)")
    static, dynamic = OUT / "pigz-static", OUT / "pigz-dynamic"
    # Both with -g: binary-mode detection (bench/binary.py) takes the
    # program code from DWARF; -g does not change the generated code.
    builds = (
        ("static", static, ["CFLAGS=-O3 -g -static", "LDFLAGS=-static"]),
        ("dynamic", dynamic, ["CFLAGS=-O3 -g"]),
    )
    stamp = OUT / "build-flags"
    want = repr([f for _, _, f in builds])
    if static.exists() and dynamic.exists() and stamp.exists() and stamp.read_text() == want:
        return static, dynamic
    OUT.mkdir(parents=True, exist_ok=True)
    for kind, exe, flags in builds:
        src = OUT / f"src-{kind}"
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        with tarfile.open(TARBALL) as t:
            t.extractall(src, filter="data")
        (top,) = [p for p in src.iterdir() if p.is_dir()]
        r = subprocess.run(["make", "-s", *flags, "pigz"], cwd=top, stdout=subprocess.DEVNULL)
        if r.returncode != 0:
            die(f"building pigz ({kind}) failed; is zlib1g-dev installed?")
        shutil.copy(top / "pigz", exe)
    stamp.write_text(want)
    return static, dynamic


def build_tsan() -> Path:
    """pigz built like the dynamic one plus `-fsanitize=thread`, once."""
    if not TARBALL.exists():
        die(f"{TARBALL} not found (set PIGZ_TARBALL)")
    exe = OUT / "pigz-tsan"
    if exe.exists():
        return exe
    src = OUT / "src-tsan"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    with tarfile.open(TARBALL) as t:
        t.extractall(src, filter="data")
    (top,) = [p for p in src.iterdir() if p.is_dir()]
    flags = ["CFLAGS=-O3 -g -fsanitize=thread", "LDFLAGS=-fsanitize=thread"]
    r = subprocess.run(["make", "-s", *flags, "pigz"], cwd=top, stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        die("building pigz (tsan) failed; is zlib1g-dev installed?")
    shutil.copy(top / "pigz", exe)
    return exe


def make_input(size: int) -> Path:
    """Deterministic English-like text: compressible, not trivially so."""
    path = OUT / f"input-{size}.txt"
    if path.exists() and path.stat().st_size == size:
        return path
    r = random.Random(1)
    words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9))) for _ in range(5000)]
    parts, n = [], 0
    while n < size:
        line = " ".join(r.choice(words) for _ in range(12)) + "\n"
        parts.append(line)
        n += len(line)
    path.write_text("".join(parts)[:size])
    return path


def run_cpu(argv: list[str]) -> tuple[float, float, str]:
    """(CPU seconds of the process tree, wall seconds, SHA-256 of stdout)."""
    cpu, wall, digest, _ = run_cpu_err(argv)
    return cpu, wall, digest


def run_cpu_err(argv: list[str]) -> tuple[float, float, str, str]:
    """run_cpu, and the command's stderr (through a file: a pipe could fill
    while stdout is being read)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as errf:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errf)
        h = hashlib.sha256()
        assert p.stdout is not None
        for chunk in iter(lambda: p.stdout.read(1 << 16), b""):
            h.update(chunk)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        errf.seek(0)
        err = errf.read()
    if p.returncode != 0:
        die(f"`{' '.join(argv)}` exited with status {p.returncode}: {err.decode(errors='replace')[-2000:]}")
    return ru.ru_utime + ru.ru_stime, wall, h.hexdigest(), err.decode(errors="replace")


# A row whose first run costs more than this many CPU seconds runs once.
SLOW_CPU = 8.0


def main() -> None:
    scale = env_number("BENCH_SCALE", 1.0)
    reps = int(env_number("BENCH_REPS", 3, int))
    static, dynamic = build()
    size = max(64 * 1024, int(4 * 1024 * 1024 * scale))
    inp = make_input(size)
    qemu = shutil.which("qemu-x86_64") or shutil.which("qemu-x86_64-static")
    valgrind = shutil.which("valgrind")
    if not LARD.exists():
        die(f"{LARD} missing (make build)")
    lard = [str(LARD), "run", "--detector", "none"]

    # (name, argv); every row runs BENCH_REPS times, interleaved, except a
    # row whose first run took more than SLOW_CPU seconds (one run).
    def rows(p: str):
        args = ["-p", p, "-c", str(inp)]
        rs = [("native", [str(static), *args])]
        if qemu:
            rs.append(("qemu-user", [qemu, str(static), *args]))
        rs.append(("lard (bare)", [*lard, "--observe", "none", str(static), *args]))
        if p != "1":
            rs.append(("lard --observe all", [*lard, "--observe", "all", str(static), *args]))
            rs.append(("lard --detectors naive", [str(LARD), "run", "--detectors", "naive", str(static), *args]))
            if valgrind:
                for tool in ("drd", "helgrind"):
                    rs.append((f"valgrind {tool} (dynamic)", [valgrind, f"--tool={tool}", "-q", str(dynamic), *args]))
        return rs

    load = os.getloadavg()
    print(
        f"pigz 2.8, {size:,}-byte text input; CPU seconds (user+sys), median of {reps} interleaved runs "
        f"(1 run for a row whose first run took > {SLOW_CPU:.0f} CPU s)"
    )
    print(f"loadavg at start {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}, nproc={os.cpu_count()}")
    if not valgrind:
        print("valgrind not found: DRD/Helgrind rows skipped (Debian: valgrind)")
    for p in ("4", "1"):
        rs = rows(p)
        cpu: dict[str, list[float]] = {n: [] for n, _ in rs}
        wall: dict[str, list[float]] = {n: [] for n, _ in rs}
        digests: dict[str, set[str]] = {n: set() for n, _ in rs}
        for rep in range(reps):
            for name, argv in rs:
                if rep > 0 and cpu[name][0] > SLOW_CPU:
                    continue
                c, w, d = run_cpu(argv)
                cpu[name].append(c)
                wall[name].append(w)
                digests[name].add(d)
                print(f"  -p {p} rep {rep + 1}/{reps} {name:26} {c:8.2f} s CPU {w:8.2f} s wall", file=sys.stderr)
        if len(set().union(*digests.values())) != 1:
            die(f"-p {p}: runners disagree on the compressed output: {digests}")
        med = {n: statistics.median(v) for n, v in cpu.items()}
        medw = {n: statistics.median(v) for n, v in wall.items()}
        q = med.get("qemu-user")
        bare = med["lard (bare)"]
        print()
        print(f"== pigz -p {p} -c (output identical for every runner)")
        print(f"{'runner':26} {'CPU s':>8} {'wall s':>8} {'x qemu-user':>12} {'x bare lard':>12}")
        for name, _ in rs:
            xq = f"{med[name] / q:.2f}x" if q else "-"
            xb = f"{med[name] / bare:.2f}x" if name.startswith("lard") else "-"
            print(f"{name:26} {med[name]:8.2f} {medw[name]:8.2f} {xq:>12} {xb:>12}")
        if p == "4":
            print(f"   TARGET --observe all <= 2x bare: {med['lard --observe all'] / bare:.2f}x")
        if p == "4" and valgrind:
            naive, drd = "lard --detectors naive", "valgrind drd (dynamic)"
            print(
                f"   TARGET --detectors naive faster than valgrind DRD: CPU {med[naive]:.2f} s vs {med[drd]:.2f} s "
                f"({'faster' if med[naive] < med[drd] else 'SLOWER'}); wall {medw[naive]:.2f} s vs {medw[drd]:.2f} s"
            )
        if q:
            print(f"   TARGET bare <= 2x qemu-user: {bare / q:.2f}x")

if __name__ == "__main__":
    main()
