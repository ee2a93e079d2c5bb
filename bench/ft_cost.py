#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Measures the FastTrack cost shared by both LARDISH cost models.

Runs every scenario of detector-hw/examples/ft_cost.rs (one FastTrack check
path at a time, each measured access verified to take that path) under
callgrind, counting only the measured calls (--toggle-collect), and derives
the instructions per access, per shadow cell visited on each path, per read
vector clock entry, per location of ClearHistory/CopyHistory and per
ReadVC/WriteVC.

FastTrack keeps one shadow cell per access unit (an aligned 8-byte location
always accessed 8 bytes wide has one cell), so an access costs a fixed part
plus a part per cell it *visits*, not per byte: read8 (one 8-byte unit)
costs what read1 does. The per-cell part is isolated by an access that
visits several cells of one path: read8split reads 8 bytes of a granule
split into 1-byte units (8 cells), write4split writes 4 of them (4 cells):

    cell(read_same_epoch) = (read8split - read1) / 7
    base                  = read1 - cell(read_same_epoch)   (entry, clock,
                                                             page lookup)
    cell(path)            = scenario(path) - base           (one-cell scenarios)
    per entry             = slope between the 2- and 8-thread scenarios
    per location          = slope between the 64- and 1024-byte regions (or
                            the 1024-byte average if the fixed part would be
                            negative)

Checks printed beside: read8 - read1 and write8 - write1 (one cell each:
about 0), (write4split - write1) / 3 against cell(write), and
read8typesafe - read1 (an aligned 8-byte read with type-safe granularity,
the LARDISH default: one cell, in a split granule).

Prints the table docs/lardish.md quotes and the `[fasttrack]` TOML lines that
give the HwConfig defaults.  Needs valgrind.
"""
import os
import re
import subprocess
import tempfile
from pathlib import Path
from common import die

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = int(os.environ.get("FT_COST_ROUNDS", "2000"))


def main():
    cargo = os.environ.get("CARGO", "cargo")
    r = subprocess.run([cargo, "build", "-q", "--release", "-p", "lard-detector-hw", "--example", "ft_cost"],
                       cwd=ROOT)
    if r.returncode != 0:
        die("cargo build failed")
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    exe = target / "release" / "examples" / "ft_cost"
    names = subprocess.run([str(exe), "list"], stdout=subprocess.PIPE, check=True).stdout.decode().split()
    ir = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            out = Path(tmp) / f"{name}.cg"
            r = subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=*measured*",
                                f"--callgrind-out-file={out}", str(exe), name, str(ROUNDS)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if r.returncode != 0:
                die(f"{name}: {r.stderr.decode(errors='replace')[-2000:]}")
            m = re.search(r"measured=(\d+)", r.stdout.decode())
            t = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
            if not m or not t:
                die(f"{name}: no measurement")
            ir[name] = int(t.group(1)) / int(m.group(1))
    read_cell = (ir["read8split"] - ir["read1"]) / 7
    base = ir["read1"] - read_cell
    write_cell = (ir["write4split"] - ir["write1"]) / 3
    rs_entry = (ir["read_shared8"] - ir["read_shared2"]) / (4.5 - 1.5)
    ws_entry = (ir["write_shared8"] - ir["write_shared2"]) / (8 - 2)
    def region(op):
        # Linear fit over 64 and 1024 locations; if the fixed part comes out
        # negative (cost per location grows with the region), charge the
        # large region's average per location and no fixed part.
        loc = (ir[op + "1024"] - ir[op + "64"]) / 960
        fixed = ir[op + "64"] - 64 * loc
        return (fixed, loc) if fixed >= 0 else (0.0, ir[op + "1024"] / 1024)
    clear_op, clear_loc = region("clear")
    copy_op, copy_loc = region("copy")
    derived = [
        ("access", base, "per checked access: instrumentation entry, clock, shadow page"),
        ("read_same_epoch", read_cell, "per cell visited"),
        ("read_exclusive", ir["read_exclusive"] - base, "per cell visited"),
        ("read_share", ir["read_share"] - base, "per cell visited (allocates the read vector clock)"),
        ("read_shared", ir["read_shared2"] - base - 1.5 * rs_entry, "per cell visited, plus per entry"),
        ("read_shared_entry", rs_entry, "per read vector clock entry visited"),
        ("write", ir["write1"] - base, "per cell visited"),
        ("write_shared", ir["write_shared2"] - base - 2 * ws_entry, "per cell visited, plus per entry"),
        ("write_shared_entry", ws_entry, "per read vector clock entry checked"),
        ("clear_op", clear_op, "per ClearHistory"),
        ("clear_location", clear_loc, "per location cleared"),
        ("copy_op", copy_op, "per CopyHistory"),
        ("copy_location", copy_loc, "per location copied"),
        ("vc_op", (ir["write_vc"] + ir["read_vc"]) / 2, "per ReadVC/WriteVC"),
    ]
    print(f"== FastTrack instructions per scenario call (callgrind, {ROUNDS} rounds) ==")
    for name in names:
        print(f"  {name:16} {ir[name]:9.1f}")
    print(f"  checks: read8 - read1 = {ir['read8'] - ir['read1']:.1f}, write8 - write1 = "
          f"{ir['write8'] - ir['write1']:.1f} (one cell each); (write4split - write1) / 3 = "
          f"{write_cell:.1f} per write cell (write cell = write1 - base = {ir['write1'] - base:.1f}); "
          f"read8typesafe - read1 = {ir['read8typesafe'] - ir['read1']:.1f}")
    print("\n== derived cost (instructions) ==")
    for k, v, what in derived:
        print(f"  {k:20} {v:8.1f}   {what}")
    print("\n[fasttrack]")
    for k, v, _ in derived:
        print(f"{k} = {max(0, round(v))}")


if __name__ == "__main__":
    main()
