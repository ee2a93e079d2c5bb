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
