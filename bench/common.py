# SPDX-License-Identifier: GPL-2.0-or-later
"""What every bench script shares: where things are, failing with one line,
running a command that must succeed, and numeric settings from the
environment (BENCH_SCALE, BENCH_REPS, ...)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LARD = ROOT / "target" / "release" / "lard"
OUT = ROOT / "target" / "bench"


def die(msg):
    """Prints `bench/<script>: error: msg` and exits with status 1."""
    print(f"bench/{Path(sys.argv[0]).stem}: error: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    """Runs `cmd` with its output captured; dies with the tail of its stderr
    if it fails."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace")[-3000:]
        die(f"`{' '.join(map(str, cmd))}` failed ({r.returncode}):\n{err}")
    return r


def env_number(name, default, kind=float):
    """A positive number from the environment variable `name`, or `default`."""
    raw = os.environ.get(name, "")
    if raw == "":
        return default
    try:
        v = kind(raw)
    except ValueError:
        die(f"{name}={raw!r} is not a number")
    if v <= 0:
        die(f"{name} must be positive")
    return v


def build_tracked_memory():
    """Builds the SDK, bench/guests/tracked_memory.c against it and lard
    (release); returns (sdk build dir, guest executable)."""
    OUT.mkdir(parents=True, exist_ok=True)
    sdk = OUT / "sdk"
    run(["make", "-s", "-C", str(ROOT / "guest-sdk"), f"BUILD={sdk}"])
    exe = OUT / "tracked_memory"
    run(["gcc", "-static", "-O2", "-pthread", "-I", str(ROOT / "guest-sdk/include"), "-o", str(exe),
         str(ROOT / "bench/guests/tracked_memory.c"), f"-L{sdk}", "-llard"])
    run([os.environ.get("CARGO", "cargo"), "build", "--release", "-p", "lard-emu"], cwd=ROOT)
    return sdk, exe
