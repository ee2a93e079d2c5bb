#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`: Debian's Rust binaries in binary mode (docs/rust.md,
"Debian's Rust programs in binary mode"), against Valgrind DRD and
Helgrind on the same runs.

The binary packages ripgrep, fd-find and b3sum are fetched with `apt-get
download` into target/bench/debian-rust/ and unpacked there with `dpkg-deb
-x` (nothing is installed); a package the distribution lacks is named and
its row skipped. Debian ships them stripped (no symbols, no DWARF): in
binary mode the whole executable is program code, Rust's std and the
crates included. Each runs on a real workload with four threads:
  * rg -j4 -c struct /usr/include (a search over a source tree);
  * fd -j4 -e h . /usr/include (a walk of the same tree);
  * b3sum --num-threads 4 over three deterministic files of BENCH_SCALE x
    4 MiB (rayon's join over memory-mapped files).
Every run must print the native run's lines (sorted: the threads' order
varies). The table gives CPU seconds (user + sys of the process tree) and
what each tool reports: lard (`lard run PROG`, FastTrack, the default)
its race pairs, distinct racy PCs and where the racy locations are (from
its JSON report); DRD and Helgrind their error contexts (ERROR SUMMARY).
As far as anyone knows the three programs are race-free. A line per
distinct pair of racy instructions follows (executable offsets), which
docs/rust.md explains.

BENCH_DEBIAN_RUST_UPSTREAM=1 adds rows for the same versions built from
crates.io with debug information (`cargo install --locked`,
CARGO_PROFILE_RELEASE_DEBUG=2, into target/bench/debian-rust/upstream/;
a few minutes per program on first use): with DWARF, binary mode knows
their inlined atomic operations.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from common import LARD, OUT, die, env_number, run

HERE = OUT / "debian-rust"
ROOT_FS = HERE / "root"
TREE = Path("/usr/include")
# package (Debian's and crates.io's name) -> (executable inside the
# package, argv after it; {files} is b3sum's input)
PROGRAMS = {
    "ripgrep": ("usr/bin/rg", ["-j4", "-c", "struct", str(TREE)]),
    "fd-find": ("usr/lib/cargo/bin/fd", ["-j4", "-e", "h", ".", str(TREE)]),
    "b3sum": ("usr/bin/b3sum", ["--num-threads", "4", "{files}"]),
}


def upstream(pkg: str, exe: Path) -> Path:
    """The crates.io release of the Debian package's version, built with
    debug information once; its executable."""
    deb = sorted((HERE / "debs").glob(f"{pkg}_*.deb"))[-1]
    version = deb.name.split("_")[1].split("-")[0]
    root = HERE / "upstream" / f"{pkg}-{version}"
    built = root / "bin" / exe.name
    if not built.exists():
        env = dict(os.environ, CARGO_PROFILE_RELEASE_DEBUG="2")
        run([os.environ.get("CARGO", "cargo"), "install", "--locked", "--quiet", "--root", str(root),
             f"{pkg}@{version}"], env=env)
    return built


def fetch() -> dict[str, Path]:
    """package -> its unpacked executable; packages apt does not know are
    reported and left out."""
    debs = HERE / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    exes = {}
    for pkg, (rel, _) in PROGRAMS.items():
        exe = ROOT_FS / rel
        if not exe.exists():
            if not list(debs.glob(f"{pkg}_*.deb")):
                r = subprocess.run(["apt-get", "download", "-qq", pkg], cwd=debs,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                if r.returncode != 0:
                    print(f"{pkg}: not available from apt ({r.stderr.decode(errors='replace').strip()[-200:]}); row skipped")
                    continue
            deb = sorted(debs.glob(f"{pkg}_*.deb"))[-1]
            run(["dpkg-deb", "-x", str(deb), str(ROOT_FS)])
        if not exe.exists():
            die(f"{pkg}: {rel} not in the package")
        exes[pkg] = exe
    return exes


def b3sum_input(scale: float) -> list[str]:
    """Three files of pseudo-random bytes (a SHA-256 chain), made once."""
    import hashlib

    size = max(64 * 1024, int(4 * 1024 * 1024 * scale)) // 32 * 32
    files = []
    for i in range(1, 4):
        f = HERE / "data" / f"f{i}-{size}.bin"
        if not f.exists():
            f.parent.mkdir(parents=True, exist_ok=True)
            h = hashlib.sha256(str(i).encode()).digest()
            with open(f, "wb") as out:
                for _ in range(size // 32):
                    h = hashlib.sha256(h).digest()
                    out.write(h)
        files.append(str(f))
    return files


def run_cpu(argv: list[str]) -> tuple[float, list[str], str]:
    """(CPU seconds of the process tree, sorted stdout lines, stderr)."""
    with tempfile.TemporaryFile() as outf, tempfile.TemporaryFile() as errf:
        p = subprocess.Popen(argv, stdout=outf, stderr=errf)
        _, status, ru = os.wait4(p.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        outf.seek(0)
        errf.seek(0)
        out, err = outf.read().decode(errors="replace"), errf.read().decode(errors="replace")
    if code != 0:
        die(f"`{' '.join(argv)}` exited with status {code}: {err[-2000:]}")
    return ru.ru_utime + ru.ru_stime, sorted(out.splitlines()), err


def where(data: str) -> str:
    """The kind of a racy location, from the report's description."""
    if data.startswith("heap block"):
        return "heap"
    m = re.match(r"\[(\w+)\]", data)
    return m.group(1) if m else "static"


def lard_summary(report: Path, exe: str) -> tuple[str, list[str]]:
    """(pairs, PCs and locations in a cell, one line per distinct pair)."""
    rep = json.loads(report.read_text())
    d = next(v for v in rep["detectors"].values() if isinstance(v, dict) and "dre" in v)
    kinds = Counter(where(r["data"]) for r in d["races"])
    cell = f"{len(d['races'])} pairs, {len(d['racy_pcs'])} PCs"
    if kinds:
        cell += " (" + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + ")"
    off = lambda s: s.removeprefix(f"{exe}+") if s else "?"
    lines = sorted(
        {f"  {r['kind']:10} {off(r['symbol']):>9} {off(r['prev_symbol']):>9}  {r['size']:>2} B  {where(r['data'])}"
         for r in d["races"]}
    )
    return cell, lines


def valgrind_contexts(err: str) -> int:
    m = re.search(r"ERROR SUMMARY: (\d+) errors? from (\d+) contexts?", err)
    if not m:
        die(f"no ERROR SUMMARY in valgrind's output:\n{err[-2000:]}")
    return int(m.group(2))


def main() -> None:
    if not LARD.exists():
        die(f"{LARD} is not built (make build)")
    if not TREE.is_dir():
        die(f"{TREE} missing (Debian: libc6-dev)")
    exes = {pkg: (exe, exe.name) for pkg, exe in fetch().items()}
    if os.environ.get("BENCH_DEBIAN_RUST_UPSTREAM") == "1":
        for pkg, (exe, name) in list(exes.items()):
            exes[f"{pkg} upstream"] = (upstream(pkg, exe), f"{name} -g")
    files = b3sum_input(env_number("BENCH_SCALE", 1.0))
    valgrind = shutil.which("valgrind")
    report = HERE / "lard.json"
    nfiles = sum(len(fs) for _, _, fs in os.walk(TREE))
    print(f"== Debian's Rust binaries (stripped) in binary mode: rg and fd over {TREE} ({nfiles} files), "
          f"b3sum over 3 x {Path(files[0]).stat().st_size:,} bytes; 4 threads each; CPU seconds")
    if not valgrind:
        print("valgrind not found: DRD/Helgrind columns empty (Debian: valgrind)")
    print(f"{'program':8} {'native':>7} {'lard':>7} {'drd':>7} {'helgrind':>8}  "
          f"{'lard races':44} {'drd ctx':>7} {'hg ctx':>7}")
    details = []
    for pkg, (exe, label) in exes.items():
        args = []
        for a in PROGRAMS[pkg.split()[0]][1]:
            args += files if a == "{files}" else [a]
        native, want, _ = run_cpu([str(exe), *args])
        lard, got, err = run_cpu([str(LARD), "run", "--report-json", str(report), str(exe), *args])
        if got != want:
            die(f"{pkg} under lard: output differs from the native run\n{err[-2000:]}")
        cell, lines = lard_summary(report, exe.name)
        cols = {}
        for tool in ("drd", "helgrind"):
            if valgrind:
                c, got, err = run_cpu([valgrind, f"--tool={tool}", str(exe), *args])
                if got != want:
                    die(f"{pkg} under valgrind --tool={tool}: output differs from the native run")
                cols[tool] = (f"{c:7.2f}", valgrind_contexts(err))
            else:
                cols[tool] = ("-", "-")
        print(f"{label:8} {native:7.2f} {lard:7.2f} {cols['drd'][0]:>7} {cols['helgrind'][0]:>8}  "
              f"{cell:44} {cols['drd'][1]:>7} {cols['helgrind'][1]:>7}")
        sys.stdout.flush()
        details.append((label, lines))
    print("lard's reported races: kind, PC and previous PC (executable offsets), size, location")
    for name, lines in details:
        print(f"{name}:")
        for line in lines:
            print(line)


if __name__ == "__main__":
    main()
