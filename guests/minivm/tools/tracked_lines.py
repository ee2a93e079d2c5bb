#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""List the Tracked instructions of a minivm binary and where they come from.

  tracked_lines.py LARD ELF SOURCE

LARD is the `lard` emulator binary (for `lard disasm`), ELF a workload binary
built with -g, SOURCE its workload source file.  For every Tracked
instruction prints its address, function, and the innermost inlined-at
location in SOURCE (addr2line -i), i.e. the line a race report names.
Fails (exit 1) if a Tracked instruction lies in a function of the runtime
(vm.c, heap.c: the runtime must never emit Tracked accesses), or has no
location in SOURCE.  Prints the set of lines that hold Tracked accesses.
"""
import os
import re
import subprocess
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    lard, elf, source = sys.argv[1:]
    base = os.path.basename(source)
    dis = subprocess.run([lard, "disasm", elf], capture_output=True, text=True,
                         check=True).stdout
    func, found = None, []
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:", line)
        if m:
            func = m.group(1)
        elif "tracked " in line:
            addr = line.split(":")[0].strip()
            found.append((addr, func))
    ok, lines = True, set()
    for addr, func in found:
        out = subprocess.run(["addr2line", "-i", "-e", elf, "0x" + addr],
                             capture_output=True, text=True, check=True).stdout
        locs = [l.rsplit(" ", 1)[0] for l in out.splitlines()]
        mine = [l for l in locs if os.path.basename(l.split(":")[0]) == base]
        where = mine[0] if mine else "?"
        print("%s  %-28s %s" % (addr, func, where))
        if not mine or any(os.path.basename(l.split(":")[0]) in ("vm.c", "heap.c")
                           for l in locs):
            ok = False
        else:
            lines.add(int(where.rsplit(":", 1)[1]))
    print("tracked lines:", sorted(lines))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
