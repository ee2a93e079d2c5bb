#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`make bench`: a Rust program under lard (`lard cargo build`) against
ThreadSanitizer's build of the same program.

bench/guests/rust_histogram (four threads, a relaxed atomic, joins) is
built three ways with the installed toolchain: plainly (`cargo build
--release`), with ThreadSanitizer (`-Zsanitizer=thread`, rustc's bundled
runtime, RUSTC_BOOTSTRAP=1) and with `lard cargo build --release`
(lard-rustc, docs/rust.md). Each runs once on BENCH_SCALE x 20,000,000
items: the table gives CPU seconds (user + system of the process tree)
natively, under ThreadSanitizer and under `lard run` (FastTrack), the
ratio of lard to ThreadSanitizer, and the races each reported.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

from common import LARD, OUT, ROOT, die, env_number, run

TARGET = "x86_64-unknown-linux-gnu"


def cpu_seconds(cmd, env=None):
    """Runs `cmd`; returns (CPU seconds of its process tree, its result)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r


def main() -> None:
    if not LARD.exists():
        die(f"{LARD} is not built (make build)")
    out = OUT / "rust"
    out.mkdir(parents=True, exist_ok=True)
    prefix = out / "prefix"
    run(["make", "-s", "-C", str(ROOT / "guest-sdk"), "install-cc", f"PREFIX={prefix}",
         f"BUILD={out / 'sdk-build'}", "CC=gcc"])
    manifest = str(ROOT / "bench/guests/rust_histogram/Cargo.toml")
    cargo = os.environ.get("CARGO", "cargo")
    base = ["build", "--release", "--offline", "--target", TARGET, "--manifest-path", manifest]
    run([cargo] + base + ["--target-dir", str(out / "plain")])
    tsan_env = dict(os.environ, RUSTC_BOOTSTRAP="1",
                    RUSTFLAGS="-Zsanitizer=thread -Cunsafe-allow-abi-mismatch=sanitizer")
    run([cargo] + base + ["--target-dir", str(out / "tsan")], env=tsan_env)
    lard_env = dict(os.environ, LARD_RUSTC=str(prefix / "bin" / "lard-rustc"))
    run([str(LARD), "cargo"] + base + ["--target-dir", str(out / "lard")], env=lard_env)
    exe = lambda kind: str(out / kind / TARGET / "release" / "rust_histogram")
    n = str(int(env_number("BENCH_SCALE", 1) * 20_000_000))

    native, r = cpu_seconds([exe("plain"), n])
    if r.returncode != 0:
        die(f"natively: exit {r.returncode}")
    want = r.stdout
    tsan, r = cpu_seconds([exe("tsan"), n])
    if r.stdout != want:
        die(f"under ThreadSanitizer: output {r.stdout!r}, natively {want!r}")
    tsan_races = r.stderr.decode(errors="replace").count("WARNING: DATA RACE")
    report = out / "lard.json"
    lard, r = cpu_seconds([str(LARD), "run", "--report-json", str(report), exe("lard"), n])
    if r.stdout != want:
        die(f"under lard: output {r.stdout!r}, natively {want!r}\n"
            + r.stderr.decode(errors="replace")[-2000:])
    v = json.loads(report.read_text())
    lard_races = sum(len(d.get("races", [])) for d in v["detectors"].values())

    print("== A Rust program: lard (lard cargo) against ThreadSanitizer (-Zsanitizer=thread), "
          "CPU seconds ==")
    print(f"{'program':<16} {'items':>10} {'native':>8} {'tsan':>8} {'lard':>8} {'lard/tsan':>9} "
          f"{'races tsan':>10} {'races lard':>10}")
    print(f"{'rust_histogram':<16} {n:>10} {native:8.2f} {tsan:8.2f} {lard:8.2f} "
          f"{lard / max(tsan, 1e-3):8.1f}x {tsan_races:>10} {lard_races:>10}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
