#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`: race detection on real programs against ThreadSanitizer and
Valgrind (docs/performance.md, "Real programs").

Programs, each with 4 threads on a small deterministic input: pigz 2.8
(bench/pigz.py's build, `-p 4 -c`), and x264, zstd and pbzip2 from Debian's
source packages (bench/debian_src.py, `-O2 -g`); then two bench guests
that stand for SPLASH-2-style code (`gcc -O2 -g -pthread`):
bench/guests/nbody_tree.c (a Barnes-Hut step: recursive tree walks, tree
nodes every thread reads, three lock pairs per body) and
bench/guests/lock_pairs.c (800,000 intercepted lock/unlock pairs). The
target's geometric mean is over the real programs; the guests have their
own. Runners:
  * native: the plain dynamic build;
  * lard: `lard run PROG` (binary mode, FastTrack, pruning on) and
    `lard run --no-prune PROG` on the same build;
  * tsan: the program rebuilt with `-fsanitize=thread`,
    `TSAN_OPTIONS=atexit_sleep_ms=0`;
  * tsan 1 core: the same, pinned to one core (`taskset -c 0`): lard runs
    the guest's threads on one host thread, and on two cores
    ThreadSanitizer's threads also spend CPU waiting for each other (its
    CPU time on nbody_tree about doubles);
  * drd, helgrind: `valgrind --tool=drd|helgrind` on the plain build.
Every run must write the native run's output (stdout or output file,
SHA-256). For each run: CPU seconds (user + sys of the runner's process
tree, from wait4), wall seconds and peak RSS (GNU time's %M: ru_maxrss of the child).
The table gives the median of BENCH_REPS runs (lard, native and tsan rows;
Valgrind rows run once), ratios to native and to ThreadSanitizer, and their
geometric means over the programs. The verdicts table lists, per program
and tool, the racy source lines (`file:line` of the innermost program frame
of each reported access, both accesses of a race).

Knobs: BENCH_SCALE (input size factor), BENCH_REPS (default 1),
BENCH_PROGRAMS (comma-separated subset of
pigz,x264,zstd,pbzip2,nbody_tree,lock_pairs),
BENCH_RUNNERS (comma-separated subset of the runners; native and tsan
always run, the ratios need them), BENCH_LARD (another lard binary, e.g.
an older build for a before/after comparison).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import LARD, OUT, ROOT, die, env_number
from common import run as must_run
import debian_src
import pigz

PROGRAMS = ["pigz", "x264", "zstd", "pbzip2", "nbody_tree", "lock_pairs"]
# The bench guests (bench/guests/NAME.c), apart in the geometric means.
GUESTS = ["nbody_tree", "lock_pairs"]
# Input size per program at BENCH_SCALE=1 (debian_src.workload's scale):
# each lard run a few seconds.
SCALES = {"x264": 0.25, "zstd": 1.0, "pbzip2": 0.5}
PIGZ_BYTES = 1 << 20
RUNNERS = ["native", "lard", "lard --no-prune", "tsan", "tsan 1 core", "drd", "helgrind"]
# GNU time (Debian: time), for the peak RSS of each run.
TIME = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
# TSan's exit status when it reported a race (its default `exitcode`).
TSAN_RACES_STATUS = 66


@dataclass
class Result:
    """One run."""

    cpu: float
    wall: float
    rss_mib: float
    digest: str
    stderr: str


def run(argv: list[str], output: Path | None, env: dict | None = None, ok=(0,)) -> Result:
    """Runs argv; CPU (user+sys of the tree), wall, peak RSS, the SHA-256 of
    its result (stdout, or `output` when the program writes a file) and its
    stderr."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as errf, tempfile.NamedTemporaryFile() as rss:
        # Peak RSS through GNU time: a child forked by this Python process
        # counts the Python image it ran before exec in its ru_maxrss.
        timed = [TIME, "-f", "%M", "-o", rss.name, *argv] if TIME else argv
        p = subprocess.Popen(timed, stdout=subprocess.PIPE, stderr=errf, env=env)
        h = hashlib.sha256()
        assert p.stdout is not None
        for chunk in iter(lambda: p.stdout.read(1 << 16), b""):
            h.update(chunk)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        errf.seek(0)
        err = errf.read().decode(errors="replace")
        kib = rss.read().decode().strip().splitlines()
        maxrss = int(kib[-1]) if TIME and kib and kib[-1].isdigit() else ru.ru_maxrss
    if code not in ok:
        die(f"`{' '.join(argv)}` exited with status {code}: {err[-2000:]}")
    if output is not None:
        h = hashlib.sha256(output.read_bytes())
        output.unlink()
    return Result(ru.ru_utime + ru.ru_stime, wall, maxrss / 1024, h.hexdigest(), err)


def build_guest(name: str) -> tuple[Path, Path]:
    """bench/guests/NAME.c built plain and with ThreadSanitizer."""
    out = OUT / "real"
    out.mkdir(parents=True, exist_ok=True)
    src = ROOT / "bench" / "guests" / f"{name}.c"
    plain, tsan = out / name, out / f"{name}-tsan"
    must_run(["gcc", "-O2", "-g", "-pthread", "-o", str(plain), str(src), "-lm"])
    must_run(["gcc", "-O2", "-g", "-pthread", "-fsanitize=thread", "-o", str(tsan), str(src), "-lm"])
    return plain, tsan


def loc(file: str, line: str) -> str:
    return f"{Path(file).name}:{line}"


def lard_lines(report: Path) -> set[str]:
    """Racy source lines of a lard JSON report (innermost frame of both
    accesses of every race)."""
    rep = json.loads(report.read_text())["detectors"]["fasttrack"]
    out = set()
    for r in rep["races"]:
        for frames in (r.get("frames") or [], r.get("prev_frames") or []):
            if frames and frames[0].get("file"):
                out.add(loc(frames[0]["file"], frames[0]["line"]))
    return out


TSAN_FRAME = re.compile(r"^\s+#\d+ \S+ (\S+):(\d+)(?::\d+)? \(")
TSAN_ACCESS = re.compile(r"^\s+(Previous )?(atomic )?(read|write|Read|Write|Atomic)")


def tsan_lines(err: str) -> set[str]:
    """Racy source lines of ThreadSanitizer's data race reports: the first
    frame outside the sanitizer runtime of each access's stack."""
    out, want = set(), False
    in_race = False
    for line in err.splitlines():
        if line.startswith("WARNING: ThreadSanitizer:"):
            in_race = "data race" in line
            continue
        if not in_race:
            continue
        if TSAN_ACCESS.match(line):
            want = True
            continue
        m = TSAN_FRAME.match(line)
        if want and m and "sanitizer" not in m.group(1) and "libtsan" not in line:
            out.add(loc(m.group(1), m.group(2)))
            want = False
    return out


VG_HEADER = re.compile(r"==\d+== (Conflicting (load|store)|Possible data race|This conflicts with a previous)")
VG_FRAME = re.compile(r"==\d+==\s+(at|by) 0x[0-9A-F]+: .* \(([^():]+):(\d+)\)$")


def valgrind_lines(err: str) -> set[str]:
    """Racy source lines of DRD's / Helgrind's race reports: the first frame
    with a source line of each access's stack."""
    out, want = set(), False
    for line in err.splitlines():
        if VG_HEADER.search(line):
            want = True
            continue
        m = VG_FRAME.match(line)
        if want and m:
            out.add(loc(m.group(2), m.group(3)))
            want = False
    return out


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main() -> None:
    lard = Path(os.environ.get("BENCH_LARD", LARD))
    if not lard.exists():
        die(f"{lard} missing (make build)")
    wanted = set(os.environ.get("BENCH_RUNNERS", ",".join(RUNNERS)).split(",")) | {"native", "tsan"}
    for r in wanted:
        if r not in RUNNERS:
            die(f"BENCH_RUNNERS: unknown runner {r!r} (known: {', '.join(RUNNERS)})")
    scale = env_number("BENCH_SCALE", 1.0)
    reps = int(env_number("BENCH_REPS", 1, int))
    chosen = [p for p in os.environ.get("BENCH_PROGRAMS", ",".join(PROGRAMS)).split(",") if p]
    for p in chosen:
        if p not in PROGRAMS:
            die(f"BENCH_PROGRAMS: unknown program {p!r} (known: {', '.join(PROGRAMS)})")
    valgrind = shutil.which("valgrind")
    taskset = shutil.which("taskset")
    work = Path(tempfile.mkdtemp(prefix="lard-bench-real-"))
    report = work / "report.json"
    tsan_env = dict(os.environ, TSAN_OPTIONS="atexit_sleep_ms=0")

    load = os.getloadavg()
    print(f"real programs, 4 threads; CPU and wall seconds, peak RSS MiB; median of {reps} (Valgrind: 1 run); {lard}")
    print(f"loadavg at start {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}, nproc={os.cpu_count()}")
    if not valgrind:
        print("valgrind not found: DRD/Helgrind rows skipped (Debian: valgrind)")

    table: dict[str, dict[str, Result]] = {}
    verdicts: dict[str, dict[str, set[str]]] = {}
    for prog in chosen:
        if prog == "pigz":
            _, plain = pigz.build()
            tsan = pigz.build_tsan()
            size = max(64 * 1024, int(PIGZ_BYTES * scale))
            args, output = ["-p", "4", "-c", str(pigz.make_input(size))], None
            what = f"pigz -p 4 -c, {size:,}-byte text"
        elif prog in GUESTS:
            plain, tsan = build_guest(prog)
            args, output = [], None
            what = f"bench/guests/{prog}.c"
        else:
            plain, tsan = debian_src.build(prog, "plain"), debian_src.build(prog, "tsan")
            w = debian_src.workload(prog, 4, work / prog, SCALES[prog] * scale)
            args, output = w.args, w.output
            what = f"{prog} {' '.join(a if '/' not in a else Path(a).name for a in args)}"
        print(f"  {prog}: {what}", file=sys.stderr)
        runners = {
            "native": ([str(plain), *args], None, (0,), reps),
            "lard": ([str(lard), "run", "--report-json", str(report), str(plain), *args], None, (0,), reps),
            "lard --no-prune": (
                [str(lard), "run", "--no-prune", "--report-json", str(report), str(plain), *args],
                None, (0,), reps,
            ),
            "tsan": ([str(tsan), *args], tsan_env, (0, TSAN_RACES_STATUS), reps),
        }
        if taskset:
            runners["tsan 1 core"] = (
                [taskset, "-c", "0", str(tsan), *args], tsan_env, (0, TSAN_RACES_STATUS), reps,
            )
        if valgrind:
            for tool in ("drd", "helgrind"):
                runners[tool] = ([valgrind, f"--tool={tool}", str(plain), *args], None, (0,), 1)
        runners = {k: v for k, v in runners.items() if k in wanted}
        results: dict[str, list[Result]] = {r: [] for r in runners}
        lines: dict[str, set[str]] = {}
        want = None
        for rep in range(reps):
            for name, (argv, env, ok, n) in runners.items():
                if rep >= n:
                    continue
                r = run(argv, output, env, ok)
                want = want or r.digest
                if r.digest != want:
                    die(f"{prog}, {name}: output differs from the native run")
                results[name].append(r)
                print(f"  {prog:10} {name:16} rep {rep + 1}/{n} {r.cpu:8.2f} s CPU {r.wall:8.2f} s wall "
                      f"{r.rss_mib:7.0f} MiB", file=sys.stderr)
                if name.startswith("lard"):
                    got = lard_lines(report)
                    if name in lines and lines[name] != got:
                        die(f"{prog}, {name}: racy lines differ between runs")
                    lines[name] = got
                elif name.startswith("tsan"):
                    lines[name] = tsan_lines(r.stderr)
                elif name in ("drd", "helgrind"):
                    lines[name] = valgrind_lines(r.stderr)
        med = {}
        for name, rs in results.items():
            med[name] = Result(
                statistics.median(r.cpu for r in rs),
                statistics.median(r.wall for r in rs),
                statistics.median(r.rss_mib for r in rs),
                rs[0].digest,
                "",
            )
        table[prog] = med
        verdicts[prog] = lines

    print()
    print("== real programs, 4 threads (output identical for every runner)")
    head = f"{'program':10} {'runner':16} {'CPU s':>8} {'wall s':>8} {'RSS MiB':>8} {'xnative':>8} {'xTSan CPU':>10} {'xTSan wall':>11} {'xTSan RSS':>10}"
    print(head)
    ratios: dict[str, dict[str, list[float]]] = {}
    guest_ratios: dict[str, dict[str, list[float]]] = {}
    for prog, med in table.items():
        nat, ts = med["native"], med["tsan"]
        for name in RUNNERS:
            if name not in med:
                continue
            r = med[name]
            xn, xc, xw, xr = r.cpu / max(nat.cpu, 0.01), r.cpu / ts.cpu, r.wall / ts.wall, r.rss_mib / ts.rss_mib
            group = guest_ratios if prog in GUESTS else ratios
            agg = group.setdefault(name, {"xn": [], "xc": [], "xw": [], "xr": []})
            for k, v in (("xn", xn), ("xc", xc), ("xw", xw), ("xr", xr)):
                agg[k].append(v)
            print(f"{prog:10} {name:16} {r.cpu:8.2f} {r.wall:8.2f} {r.rss_mib:8.0f} {xn:7.1f}x {xc:9.2f}x {xw:10.2f}x {xr:9.2f}x")
    for title, group in (("geomean, real programs", ratios), ("geomean, bench guests", guest_ratios)):
        if not group:
            continue
        print(title)
        for name in RUNNERS:
            if name in group:
                g = {k: geomean(v) for k, v in group[name].items()}
                print(f"{'':10} {name:16} {'':>8} {'':>8} {'':>8} {g['xn']:7.1f}x {g['xc']:9.2f}x {g['xw']:10.2f}x {g['xr']:9.2f}x")
    for title, group in (("real programs", ratios), ("bench guests", guest_ratios)):
        if "lard" in group:
            line = f"   TARGET lard default <= 2x ThreadSanitizer CPU (geomean, {title}): {geomean(group['lard']['xc']):.2f}x"
            if "tsan 1 core" in group:
                one = geomean([a / b for a, b in zip(group["lard"]["xc"], group["tsan 1 core"]["xc"])])
                line += f" (against ThreadSanitizer on one core: {one:.2f}x)"
            print(line)
    print("(native CPU below 0.01 s counts as 0.01 s in xnative)")

    print()
    print("== verdicts: racy source lines (innermost program frame of both accesses of each race)")
    for prog, lines in verdicts.items():
        base = lines.get("lard", set())
        for name in RUNNERS:
            if name not in lines:
                continue
            got = lines[name]
            same = "= lard" if got == base else f"{len(got & base)} shared with lard"
            shown = ", ".join(sorted(got)[:8]) + (", ..." if len(got) > 8 else "")
            print(f"{prog:10} {name:16} {len(got):4} lines ({same}): {shown or '-'}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
