#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`: what running OpenMP iterations as logical threads costs.

A lard-cc build runs the chunks of `schedule(static)` loops (iterations
without a chunk size) and SIMD lanes as logical threads: by default in a
window of 61 per thread (`--lard-omp-iterations=window:61`), each its own
with `--lard-omp-iterations` ("all"), or as the thread's implicit task with
`--lard-omp-iterations=off` (docs/lard-cc-openmp.md, "Iteration windows").
Each program is built five ways: plain gcc (`-O2 -g -fopenmp`, run
natively), `gcc -fsanitize=thread` (libtsan, run natively) and lard-cc
with each choice (run under `lard run`, FastTrack); every run prints the
same output. The table gives CPU seconds (user + system of the process
tree, best of BENCH_REPS, default 3) and the races each tool reported.

Programs:
  * omp_tiny_loop (bench/guests): DataRaceBench DRB037's shape without its
    race, a `parallel for` of 1,000 tiny iterations inside a sequential
    loop of 1,000 steps (10^6 iterations, 1,000 loops);
  * GraphicsMagick's `gm` (Debian's graphicsmagick source package, its
    image operations are OpenMP loops over rows, `schedule(static)` among
    them), resizing, blurring and sharpening a generated 384x384 image.
OMP_NUM_THREADS is 2 (this machine's cores) and OMP_WAIT_POLICY passive:
libgomp's spinning waiters would otherwise bill the CPU time of whatever
else the machine runs to the native and ThreadSanitizer rows.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import debian_src
from common import LARD, OUT, ROOT, die, run

WORK = OUT / "omp_iterations"
CHOICES = ("off", "window", "all")
FLAG = {"off": "--lard-omp-iterations=off", "window": "--lard-omp-iterations=window:61",
        "all": "--lard-omp-iterations"}
GM_CONFIGURE = (
    "./configure -q --disable-shared --enable-static --without-x --without-magick-plus-plus"
    " --without-perl --without-modules --without-bzlib --without-jpeg --without-png"
    " --without-tiff --without-zlib --without-zstd --without-lzma --without-lcms2 --without-xml"
    " --without-webp --without-jbig --without-wmf --without-ttf --without-fpx --without-jp2"
    " --without-trio --without-dps --without-gslib --without-heif --without-jxl"
    " CC='{cc}' CFLAGS='-O2 -g' LDFLAGS='{ldflags}'"
)


def install_sdk() -> Path:
    run(["make", "-s", "-C", str(ROOT / "guest-sdk"), "install-cc", f"PREFIX={WORK / 'sdk'}",
         f"BUILD={WORK / 'sdk-build'}", "CC=gcc"])
    return WORK / "sdk" / "bin" / "lard-cc"


def compilers(lard_cc: Path) -> dict[str, tuple[str, str]]:
    """Build kind -> (C compiler command, extra link flags)."""
    kinds = {"plain": ("gcc", ""), "tsan": ("gcc -fsanitize=thread", "-fsanitize=thread")}
    for c in CHOICES:
        kinds[c] = (f"{lard_cc} {FLAG[c]}", "")
    return kinds


def build_tiny(kinds) -> dict[str, Path]:
    src = ROOT / "bench" / "guests" / "omp_tiny_loop.c"
    exes = {}
    for k, (cc, ld) in kinds.items():
        exe = WORK / f"omp_tiny_loop-{k}"
        run(cc.split() + ["-O2", "-g", "-fopenmp", str(src), "-o", str(exe)] + ld.split())
        exes[k] = exe
    return exes


def build_gm(kinds) -> dict[str, Path]:
    tree = debian_src.source("graphicsmagick")
    exes = {}
    for k, (cc, ld) in kinds.items():
        dest = WORK / f"gm-{k}"
        exe = dest / "utilities" / "gm"
        if not exe.exists():
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(tree, dest, symlinks=True)
            for cmd in (GM_CONFIGURE.format(cc=cc, ldflags=ld), "make -s -j2 utilities/gm"):
                r = subprocess.run(cmd, shell=True, cwd=dest, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
                if r.returncode != 0:
                    die(f"building gm ({k}): `{cmd}` failed ({r.returncode}):\n"
                        f"{r.stdout.decode(errors='replace')[-3000:]}")
        exes[k] = exe
    return exes


def ppm(width: int, height: int) -> bytes:
    """A deterministic colour gradient with noise, as binary PPM."""
    px = bytearray()
    seed = 12345
    for y in range(height):
        for x in range(width):
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            n = seed >> 27
            px += bytes(((x + n) & 255, (y * 2 + n) & 255, (x + y + n) & 255))
    return f"P6 {width} {height} 255\n".encode() + bytes(px)


def cpu_run(argv, env) -> tuple[float, subprocess.CompletedProcess]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r


def races(kind: str, r: subprocess.CompletedProcess, report: Path) -> str:
    if kind == "plain":
        return "-"
    if kind == "tsan":
        return str(r.stderr.decode(errors="replace").count("WARNING: ThreadSanitizer: data race"))
    try:
        import json
        v = json.loads(report.read_text())
        return str(len(v["detectors"]["fasttrack"]["races"]))
    except (OSError, ValueError, KeyError):
        return "?"


def main() -> None:
    reps = int(os.environ.get("BENCH_REPS", "3"))
    if not LARD.exists():
        die(f"{LARD} missing (make bench builds it)")
    WORK.mkdir(parents=True, exist_ok=True)
    kinds = compilers(install_sdk())
    image = WORK / "in.ppm"
    image.write_bytes(ppm(384, 384))
    out_image = WORK / "out.ppm"
    programs = [
        ("omp_tiny_loop", build_tiny(kinds), []),
        ("gm", build_gm(kinds),
         ["convert", str(image), "-resize", "150%", "-blur", "0x1.5", "-sharpen", "0x1",
          str(out_image)]),
    ]
    env = dict(os.environ, OMP_NUM_THREADS="2", OMP_WAIT_POLICY="passive")
    rows = []
    for name, exes, args in programs:
        cells = {}
        ref = None
        for k in ["plain", "tsan"] + list(CHOICES):
            report = WORK / f"{name}-{k}.json"
            argv = [str(exes[k])] + args
            if k in CHOICES:
                argv = [str(LARD), "run", "--report-json", str(report)] + argv
            best, found = None, "?"
            for _ in range(reps):
                cpu, r = cpu_run(argv, env)
                if k != "tsan" and r.returncode != 0:
                    die(f"{name} ({k}): exit {r.returncode}:\n{r.stderr.decode(errors='replace')[-2000:]}")
                out = r.stdout + (out_image.read_bytes() if name == "gm" else b"")
                if ref is None:
                    ref = out
                elif out != ref:
                    die(f"{name} ({k}): output differs from the plain native run")
                best = cpu if best is None else min(best, cpu)
                found = races(k, r, report)
            cells[k] = (best, found)
        rows.append((name, cells))
        print(f"  {name}: done", file=sys.stderr)

    print("== OpenMP iterations as logical threads: CPU seconds (races reported) ==")
    print(f"{'program':<14} {'native':>8} {'tsan':>14} " +
          " ".join(f"{'lard ' + c:>16}" for c in CHOICES) + f" {'window/tsan':>11}")
    for name, cells in rows:
        t = lambda k: f"{cells[k][0]:7.2f} ({cells[k][1]:>4})"
        print(f"{name:<14} {cells['plain'][0]:8.2f} {t('tsan'):>14} " +
              " ".join(f"{t(c):>16}" for c in CHOICES) +
              f" {cells['window'][0] / max(cells['tsan'][0], 1e-3):10.1f}x")
    print("   lard off/window/all: lard-cc --lard-omp-iterations=off, =window:61 (the default), "
          "--lard-omp-iterations (each its own)")


if __name__ == "__main__":
    main()
