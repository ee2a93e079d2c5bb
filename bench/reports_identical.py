#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Exactness check of a detector optimization: two lard binaries must give
byte-identical `--detectors all` report JSON, stdout and exit status.

    python3 bench/reports_identical.py BEFORE_LARD [AFTER_LARD]

AFTER_LARD defaults to this tree's target/release/lard. Runs every guest of
guests/manifest.toml (built by `make -C guests` into
target/e2e-guests/manifest, as the e2e tests do; every libc build and
every runtime configuration) under `lard run --detectors all --sched random
--seed 2 --report-json F`, then pigz 2.8 `-p 4 -c` on the 1 MiB text of
bench/pigz.py (unless PIGZ=0). Then binary mode's default run (`lard run
--sched random --seed 2`, FastTrack, pruning on) of pigz and of the
programs bench/debian_src.py has built (plain flavour: x264, zstd,
pbzip2, on bench/real_programs.py's inputs), comparing its report JSON,
stdout, stderr (the report and the pruning table; not x264's frame
rate), exit status and
`--stats-json` (but its wall time and MIPS). Prints one line per run and
exits 1 if any run differs. Not timed: performance is measured by the
other bench scripts.
"""

import json
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from common import ROOT, LARD, die, run

BUILD = ROOT / "target" / "e2e-guests" / "manifest"


def guest_runs():
    """(label, binary, args) for every manifest run."""
    run(["make", "-s", "-C", str(ROOT / "guests"), f"BUILD={BUILD}"])
    manifest = tomllib.loads((ROOT / "guests" / "manifest.toml").read_text())
    for g in manifest["guest"]:
        for libc in g["libc"]:
            binary = BUILD / libc / g["name"]
            configs = g.get("configs") or [{"id": "", "args": []}]
            for c in configs:
                label = f"{libc}/{g['name']}" + (f" [{c['id']}]" if c["id"] else "")
                yield label, binary, c["args"]


def report(lard, binary, args, tmp):
    """(exit status, stdout, report JSON) of one run."""
    json = Path(tmp) / "report.json"
    if json.exists():
        json.unlink()
    # stdout to a file, as in default_report: a pipe makes pigz's run
    # differ run to run.
    with open(Path(tmp) / "stdout", "w+b") as out:
        r = subprocess.run(
            [str(lard), "run", "--detectors", "all", "--sched", "random", "--seed", "2",
             "--report-json", str(json), str(binary), *map(str, args)],
            stdout=out, stderr=subprocess.DEVNULL,
        )
        out.seek(0)
        r.stdout = out.read()
    return r.returncode, r.stdout, json.read_bytes() if json.exists() else None


def default_report(lard, binary, args, tmp):
    """(exit status, stdout, stderr, report JSON, statistics) of a default
    run; the statistics without wall time and MIPS."""
    rep, st = Path(tmp) / "report.json", Path(tmp) / "stats.json"
    for f in (rep, st):
        if f.exists():
            f.unlink()
    # stdout to a file, not a pipe: how much of a write a pipe takes
    # depends on how fast its reader is, and a partial write is one more
    # system call (pigz's default run then differs run to run).
    with open(Path(tmp) / "stdout", "w+b") as out:
        r = subprocess.run(
            [str(lard), "run", "--sched", "random", "--seed", "2", "--report-json", str(rep),
             "--stats-json", str(st), str(binary), *map(str, args)],
            stdout=out, stderr=subprocess.PIPE,
        )
        out.seek(0)
        r.stdout = out.read()
    stats = json.loads(st.read_text()) if st.exists() else {}
    for k in ("wall_seconds", "guest_mips"):
        stats.pop(k, None)
    # (x264 prints its frame rate on stderr.)
    err = b"\n".join(l for l in r.stderr.split(b"\n") if not l.startswith(b"encoded "))
    return r.returncode, r.stdout, err, rep.read_bytes() if rep.exists() else None, stats


def default_runs(tmp):
    """(label, binary, args) of binary mode's default runs."""
    sys.path.insert(0, str(ROOT / "bench"))
    import debian_src
    import real_programs

    if __import__("os").environ.get("PIGZ", "1") != "0":
        import pigz

        static, _ = pigz.build()
        yield "default: pigz -p 4 1 MiB", static, ["-p", "4", "-c", pigz.make_input(1 << 20)]
    for name, prog in debian_src.PROGRAMS.items():
        exe = debian_src.DEBIAN / "plain" / name / prog.executable
        if exe.exists():
            w = debian_src.workload(name, 4, Path(tmp) / name, real_programs.SCALES[name])
            yield f"default: {name}", exe, w.args


def main():
    if len(sys.argv) not in (2, 3):
        die("usage: reports_identical.py BEFORE_LARD [AFTER_LARD]")
    before = Path(sys.argv[1])
    after = Path(sys.argv[2]) if len(sys.argv) == 3 else LARD
    for b in (before, after):
        if not b.exists():
            die(f"{b} not found")
    runs = list(guest_runs())
    if "PIGZ=0" not in sys.argv and __import__("os").environ.get("PIGZ", "1") != "0":
        sys.path.insert(0, str(ROOT / "bench"))
        import pigz

        static, _ = pigz.build()
        runs.append(("pigz -p 4 1 MiB", static, ["-p", "4", "-c", pigz.make_input(1 << 20)]))
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        for label, binary, args in runs:
            a = report(before, binary, args, tmp)
            b = report(after, binary, args, tmp)
            same = a == b
            differ += not same
            size = len(a[2]) if a[2] is not None else 0
            print(f"{'same' if same else 'DIFFERS'}  {label}: exit {a[0]}, report {size} bytes")
        for label, binary, args in default_runs(tmp):
            runs.append(label)
            a = default_report(before, binary, args, tmp)
            b = default_report(after, binary, args, tmp)
            same = a == b
            differ += not same
            size = len(a[3]) if a[3] is not None else 0
            print(f"{'same' if same else 'DIFFERS'}  {label}: exit {a[0]}, report {size} bytes")
    print(f"{len(runs) - differ} of {len(runs)} runs identical")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
