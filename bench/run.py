#!/usr/bin/env python3
"""`make bench`: wall-time ratios of lard against native and qemu-user.

Builds the guests in bench/guests/ into target/bench/, builds lard (release),
then runs each guest under every runner K times (interleaved, best run kept)
and prints tables of ratios. The same figures go to target/bench/results.json.

This is a benchmark, not a test: it fails only when a runner fails or when the
runners disagree on a guest's output (checksum). Knobs (environment or flags):
  BENCH_SCALE / --scale N   multiply every guest's work by N (default 1)
  BENCH_REPS  / --reps K    runs per (guest, runner); the best is kept (default 3)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from common import die, env_number

ROOT = Path(__file__).resolve().parent.parent
GUEST_SRC = ROOT / "bench" / "guests"
OUT = ROOT / "target" / "bench"
LARD = ROOT / "target" / "release" / "lard"

# name -> (source, function giving the argument list for a scale factor, what it is)
GUESTS = {
    "compute_bound": (
        "compute_bound.c",
        lambda s: [str(max(1, round(100 * s)))],  # 10^6 iterations
        "register-only xorshift/multiply loop, ARG x 10^6 iterations of 16 insns",
    ),
    "memory_bound": (
        "memory_bound.c",
        lambda s: [str(max(1, round(150 * s))), "256"],  # passes, KiB
        "ARG1 passes over an ARG2-KiB array, 3 data accesses per 14 insns",
    ),
}

LARD_MODES = ["none", "tracked", "all"]


def build(cargo: str) -> dict[str, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    bins = {}
    for name, (src, _, _) in GUESTS.items():
        exe = OUT / name
        cmd = ["gcc", "-static", "-O2", "-o", str(exe), str(GUEST_SRC / src)]
        r = subprocess.run(cmd)
        if r.returncode != 0:
            die(f"building guest {name} failed: {' '.join(cmd)}")
        bins[name] = exe
    # A no-op when target/release/lard is fresh.
    r = subprocess.run([cargo, "build", "--release", "-p", "lard-emu"], cwd=ROOT)
    if r.returncode != 0 or not LARD.exists():
        die("cargo build --release -p lard-emu failed")
    return bins


def find_qemu() -> str | None:
    for n in ("qemu-x86_64", "qemu-x86_64-static"):
        p = shutil.which(n)
        if p:
            return p
    return None


def lard_extra_args() -> list[str]:
    """`lard run` grew a `--detector` option (default: a race detector). The
    benchmark measures the plain counting observer, so ask for `--detector none`
    whenever this lard build has the option."""
    r = subprocess.run([str(LARD), "run", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return ["--detector", "none"] if b"--detector" in r.stdout else []


def runners(qemu: str | None, extra: list[str]) -> list[tuple[str, callable]]:
    """(name, argv builder taking (exe, args, stats_json_path))."""
    rs = [("native", lambda exe, args, _sj: [str(exe), *args])]
    if qemu:
        rs.append(("qemu-user", lambda exe, args, _sj: [qemu, str(exe), *args]))
    for mode in LARD_MODES:
        rs.append(
            (
                f"lard {mode}",
                lambda exe, args, sj, mode=mode: [
                    str(LARD), "run", *extra, "--observe", mode, "--stats-json", str(sj),
                    str(exe), *args,
                ],
            )
        )
    return rs


def timed(argv: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        die(
            f"`{' '.join(argv)}` exited with status {r.returncode}\n"
            f"stdout: {r.stdout.decode(errors='replace')}\n"
            f"stderr: {r.stderr.decode(errors='replace')}"
        )
    return dt, r.stdout.decode(errors="replace")


def measure(name: str, exe: Path, args: list[str], rs, reps: int, tmp: Path) -> dict:
    times: dict[str, list[float]] = {r: [] for r, _ in rs}
    accesses = None
    outputs: dict[str, set[str]] = {r: set() for r, _ in rs}
    insns: dict[str, set[int]] = {}
    lard_wall: dict[str, list[float]] = {}
    for rep in range(reps):
        # Interleave the runners so a burst of load on the shared machine does
        # not hit one column only.
        for rname, argv_of in rs:
            sj = tmp / f"{name}-{rname.replace(' ', '_')}-{rep}.json"
            dt, out = timed(argv_of(exe, args, sj))
            times[rname].append(dt)
            outputs[rname].add(out)
            if rname.startswith("lard"):
                try:
                    st = json.loads(sj.read_text())
                except (OSError, ValueError) as e:
                    die(f"{rname}: cannot read --stats-json output {sj}: {e}")
                insns.setdefault(rname, set()).add(int(st["instructions"]))
                mode = rname.split()[1]
                seen = st.get("accesses_observed", mode)
                if seen != mode:
                    die(
                        f"{name}: `{' '.join(argv_of(exe, args, sj))}` reports "
                        f"accesses_observed={seen!r}, not {mode!r}: this lard ignores --observe"
                    )
                if mode == "all":
                    accesses = sum(
                        int(st.get(k, {}).get(rw, 0))
                        for k in ("tracked", "untracked", "stack")
                        for rw in ("reads", "writes")
                    )
                lard_wall.setdefault(rname, []).append(float(st["wall_seconds"]))
            print(f"  {name:14} rep {rep + 1}/{reps}  {rname:12} {dt:8.3f} s", file=sys.stderr)

    all_outputs = set().union(*outputs.values())
    if len(all_outputs) != 1:
        lines = [f"{r}: {sorted(o)!r}" for r, o in outputs.items()]
        die(f"{name}: runners disagree on the guest's output:\n  " + "\n  ".join(lines))
    all_insns = set().union(*insns.values())
    if len(all_insns) != 1:
        die(f"{name}: lard reported different instruction counts: {insns}")
    n_insns = all_insns.pop()

    best = {r: min(t) for r, t in times.items()}
    res = {
        "args": args,
        "output": all_outputs.pop().strip(),
        "instructions": n_insns,
        "data_accesses": accesses,  # counted by `lard --observe all`
        "runners": {},
    }
    prev = None
    for rname, _ in rs:
        b = best[rname]
        row = {
            "seconds": b,
            "seconds_all": times[rname],
            "mips": n_insns / b / 1e6,
            "x_native": b / best["native"],
            "x_qemu_user": b / best["qemu-user"] if "qemu-user" in best else None,
            "x_previous": None,
        }
        if rname.startswith("lard"):
            if prev is not None:
                row["x_previous"] = b / best[prev]
            row["lard_wall_seconds_best"] = min(lard_wall[rname])
            prev = rname
        res["runners"][rname] = row
    return res


def fmt_x(v) -> str:
    return "-" if v is None else f"{v:.2f}x"


def table(name: str, desc: str, res: dict) -> str:
    head = ["runner", "seconds", "MIPS", "x native", "x qemu-user", "x previous"]
    rows = []
    for rname, r in res["runners"].items():
        prevname = {"lard tracked": " (vs none)", "lard all": " (vs tracked)"}.get(rname, "")
        rows.append(
            [
                rname,
                f"{r['seconds']:.3f}",
                f"{r['mips']:.0f}",
                fmt_x(r["x_native"]),
                fmt_x(r["x_qemu_user"]),
                fmt_x(r["x_previous"]) + (prevname if r["x_previous"] is not None else ""),
            ]
        )
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]

    def line(cells):
        return "  ".join(
            c.ljust(w) if i in (0, 5) else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [
        f"== {name} {' '.join(res['args'])}: {desc}",
        f"   guest output: {res['output']}",
        f"   guest instructions (lard --stats-json): {res['instructions']:,}; "
        f"data accesses (lard --observe all): {res['data_accesses']:,}",
        line(head),
        line(["-" * w for w in widths]),
    ]
    out += [line(r) for r in rows]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=env_number("BENCH_SCALE", 1.0))
    ap.add_argument("--reps", type=int, default=int(env_number("BENCH_REPS", 3, int)))
    ap.add_argument("--no-build", action="store_true", help="use existing target/bench and target/release/lard")
    opts = ap.parse_args()
    if opts.scale <= 0 or opts.reps <= 0:
        die("--scale and --reps must be positive")

    if opts.no_build:
        bins = {n: OUT / n for n in GUESTS}
        for p in [*bins.values(), LARD]:
            if not p.exists():
                die(f"--no-build: {p} is missing")
    else:
        bins = build(os.environ.get("CARGO", "cargo"))

    qemu = find_qemu()
    extra = lard_extra_args()
    rs = runners(qemu, extra)
    now = datetime.datetime.now().astimezone()
    nproc = os.cpu_count()
    load = os.getloadavg()
    t_start = time.perf_counter()

    results = {}
    with tempfile.TemporaryDirectory(prefix="lard-bench-") as tmp:
        for name, (_, args_of, desc) in GUESTS.items():
            results[name] = measure(name, bins[name], args_of(opts.scale), rs, opts.reps, Path(tmp))

    mem = results["memory_bound"]["runners"]
    comp = results["compute_bound"]["runners"]
    target_ratio = mem["lard all"]["seconds"] / mem["lard none"]["seconds"]
    acc = results["memory_bound"]["data_accesses"]
    ns_per_access = (
        (mem["lard all"]["seconds"] - mem["lard none"]["seconds"]) / acc * 1e9 if acc else None
    )
    comp_ratio = comp["lard all"]["seconds"] / comp["lard none"]["seconds"]

    print(f"lard benchmark  {now.isoformat(timespec='seconds')}")
    print(
        f"host: {platform.node()}  nproc={nproc}  loadavg(1/5/15 min) at start="
        f"{load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f}  {platform.machine()}"
    )
    print(
        f"scale={opts.scale:g}  reps={opts.reps} (best wall time of {opts.reps} interleaved runs)  "
        f"qemu-user: {qemu or 'NOT FOUND (column skipped; install Debian qemu-user)'}"
    )
    print("MIPS = lard's guest instruction count / that runner's wall time (same count for every column).")
    print(
        f"lard runs use `lard run {' '.join(extra + [''])}--observe MODE --stats-json F`; "
        "'x previous' is none -> tracked -> all."
    )
    for name, (_, _, desc) in GUESTS.items():
        print()
        print(table(name, desc, results[name]))
    print()
    # The targets: --observe all <= 2x bare, <= 10 ns per observed
    # access, bare <= 2x qemu-user.
    verdict = "within" if target_ratio <= 2.0 else "ABOVE"
    print(
        f"SUMMARY: memory_bound  lard --observe all / --observe none = {target_ratio:.2f}x "
        f"(target <= 2x: {verdict} target)"
    )
    if ns_per_access is not None:
        verdict = "within" if ns_per_access <= 10.0 else "ABOVE"
        print(
            f"         memory_bound  cost of --observe all: {ns_per_access:.0f} ns per observed access "
            f"({acc:,} accesses; target <= 10 ns: {verdict} target)"
        )
    print(f"         compute_bound lard --observe all / --observe none = {comp_ratio:.2f}x")
    if qemu:
        print(
            f"         lard --observe none vs qemu-user: memory_bound "
            f"{mem['lard none']['x_qemu_user']:.2f}x, compute_bound {comp['lard none']['x_qemu_user']:.2f}x "
            "(target <= 2x)"
        )
    elapsed = time.perf_counter() - t_start
    print(f"(measurement took {elapsed:.0f} s; results in {OUT / 'results.json'})")

    doc = {
        "date": now.isoformat(timespec="seconds"),
        "host": platform.node(),
        "nproc": nproc,
        "loadavg_at_start": list(load),
        "scale": opts.scale,
        "reps": opts.reps,
        "qemu_user": qemu,
        "lard_extra_args": extra,
        "guests": {
            n: {"description": GUESTS[n][2], **results[n]} for n in GUESTS
        },
        "summary": {
            "memory_bound_lard_all_over_none": target_ratio,
            "memory_bound_target_max": 3.0,
            "memory_bound_observe_all_ns_per_access": ns_per_access,
            "memory_bound_within_target": target_ratio <= 3.0,
            "compute_bound_lard_all_over_none": comp_ratio,
        },
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
