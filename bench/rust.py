#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`: Rust programs under lard (`lard cargo build`) against
ThreadSanitizer's build of the same program.

Two programs, each built three ways with the installed toolchain from the
same sources and lock file: plainly (`cargo build --release`), with
ThreadSanitizer (`-Zsanitizer=thread`, rustc's bundled runtime,
RUSTC_BOOTSTRAP=1, std not rebuilt) and with `lard cargo build --release`
(lard-rustc, docs/rust.md):

- bench/guests/rust_histogram: four threads, a relaxed atomic, joins;
  BENCH_SCALE x 20,000,000 items;
- ripgrep 13.0.0 from crates.io (a real crate graph: regex, crossbeam,
  ignore's parallel walker, termcolor; fetched by `cargo install --locked`,
  whose unpacked source is then built three ways): `rg -j4 -c struct
  /usr/include`, output compared sorted. BENCH_RUST_CRATES=0 skips it.

The table gives CPU seconds (user + system of the process tree) natively,
under ThreadSanitizer and under `lard run` (FastTrack), the ratio of lard
to ThreadSanitizer, and the races each reported.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

from common import LARD, OUT, ROOT, die, env_number, run

TARGET = "x86_64-unknown-linux-gnu"


def cpu_seconds(cmd, env=None):
    """Runs `cmd`; returns (CPU seconds of its process tree, its result)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r


RIPGREP = "ripgrep-13.0.0"


def ripgrep_source(out, cargo):
    """The unpacked crates.io source of ripgrep 13.0.0 (with its lock file),
    copied under `out`: `cargo install --locked` fetches and unpacks it (its
    build is the plain one, unused)."""
    src = out / RIPGREP
    if (src / "Cargo.lock").exists():
        return src
    run([cargo, "install", "--locked", "--root", str(out / "rg-install"), "ripgrep@13.0.0"])
    home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    found = sorted(home.glob(f"registry/src/*/{RIPGREP}"))
    if not found:
        die(f"cargo install left no {RIPGREP} under {home}/registry/src")
    shutil.copytree(found[0], src)
    # Its own workspace: target/bench lies inside lard's.
    with open(src / "Cargo.toml", "a") as f:
        f.write("\n[workspace]\n")
    return src


def measure(name, items, build, args, env_run=None, sort=False):
    """Builds `name` three ways with `build(kind, env, lard)` (returning the
    executable) and runs each with `args`: the table row."""
    exe = {kind: build(kind) for kind in ("plain", "tsan", "lard")}
    norm = (lambda b: b"".join(sorted(b.splitlines(True)))) if sort else (lambda b: b)
    native, r = cpu_seconds([exe["plain"]] + args)
    if r.returncode != 0:
        die(f"{name} natively: exit {r.returncode}")
    want = norm(r.stdout)
    tsan, r = cpu_seconds([exe["tsan"]] + args)
    if norm(r.stdout) != want:
        die(f"{name} under ThreadSanitizer: output differs from the native run")
    tsan_races = r.stderr.decode(errors="replace").count("WARNING: DATA RACE")
    report = OUT / "rust" / f"{name}.json"
    lard, r = cpu_seconds([str(LARD), "run", "--report-json", str(report), exe["lard"]] + args)
    if norm(r.stdout) != want:
        die(f"{name} under lard: output differs from the native run\n"
            + r.stderr.decode(errors="replace")[-2000:])
    v = json.loads(report.read_text())
    lard_races = sum(len(d.get("races", [])) for d in v["detectors"].values())
    return (f"{name:<16} {items:>14} {native:8.2f} {tsan:8.2f} {lard:8.2f} "
            f"{lard / max(tsan, 1e-3):8.1f}x {tsan_races:>10} {lard_races:>10}")


def main() -> None:
    if not LARD.exists():
        die(f"{LARD} is not built (make build)")
    out = OUT / "rust"
    out.mkdir(parents=True, exist_ok=True)
    prefix = out / "prefix"
    run(["make", "-s", "-C", str(ROOT / "guest-sdk"), "install-cc", f"PREFIX={prefix}",
         f"BUILD={out / 'sdk-build'}", "CC=gcc"])
    cargo = os.environ.get("CARGO", "cargo")
    tsan_env = dict(os.environ, RUSTC_BOOTSTRAP="1",
                    RUSTFLAGS="-Zsanitizer=thread -Cunsafe-allow-abi-mismatch=sanitizer")
    lard_env = dict(os.environ, LARD_RUSTC=str(prefix / "bin" / "lard-rustc"))

    def builder(manifest, exe_name, flags, tag):
        def build(kind):
            base = ["build", "--release", "--target", TARGET, "--manifest-path", str(manifest),
                    "--target-dir", str(out / f"{tag}-{kind}")] + flags
            if kind == "plain":
                run([cargo] + base)
            elif kind == "tsan":
                run([cargo] + base, env=tsan_env)
            else:
                run([str(LARD), "cargo"] + base, env=lard_env)
            return str(out / f"{tag}-{kind}" / TARGET / "release" / exe_name)
        return build

    rows = []
    n = str(int(env_number("BENCH_SCALE", 1) * 20_000_000))
    rows.append(measure("rust_histogram", n,
                        builder(ROOT / "bench/guests/rust_histogram/Cargo.toml",
                                "rust_histogram", ["--offline"], "histogram"), [n]))
    if os.environ.get("BENCH_RUST_CRATES", "1") != "0":
        src = ripgrep_source(out, cargo)
        rows.append(measure("ripgrep 13.0.0", "/usr/include",
                            builder(src / "Cargo.toml", "rg", ["--locked"], "rg"),
                            ["-j4", "-c", "struct", "/usr/include"], sort=True))

    print("== Rust programs: lard (lard cargo) against ThreadSanitizer (-Zsanitizer=thread), "
          "CPU seconds ==")
    print(f"{'program':<16} {'items':>14} {'native':>8} {'tsan':>8} {'lard':>8} {'lard/tsan':>9} "
          f"{'races tsan':>10} {'races lard':>10}")
    for row in rows:
        print(row)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
