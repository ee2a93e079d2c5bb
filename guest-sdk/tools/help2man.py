#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Writes a short man page NAME.1 for each command from its --help output.

usage: help2man.py MANDIR COMMAND...   (lard-cc also yields lard-c++.1, lard-rustc
                                        lard-rustdoc.1)
"""
import os
import subprocess
import sys


def page(name, text):
    lines = text.rstrip("\n").split("\n")
    first = next((l for l in lines if l.strip()), name)
    esc = lambda t: t.replace("\\", "\\\\").replace("-", "\\-")
    body = "\n".join(".br\n" + esc(l) if l.strip() else ".PP" for l in lines)
    return (f'.TH {name.upper()} 1 "" "lard" "User Commands"\n'
            f".SH NAME\n{name} \\- {esc(first)}\n.SH DESCRIPTION\n.nf\n{body}\n.fi\n"
            f".SH SEE ALSO\nlard(1), lard\\-cc(1), docs/lard-cc.md, docs/cli.md\n")


def main():
    mandir, cmds = sys.argv[1], sys.argv[2:]
    os.makedirs(mandir, exist_ok=True)
    for cmd in cmds:
        name = os.path.basename(cmd)
        text = subprocess.run([cmd, "--help"], capture_output=True, text=True, check=True).stdout
        twin = {"lard-cc": "lard-c++", "lard-rustc": "lard-rustdoc"}.get(name)
        names = [name, twin] if twin else [name]
        for n in names:
            with open(os.path.join(mandir, n + ".1"), "w") as f:
                f.write(page(n, text.replace("lard-cc", n) if name == "lard-cc" else text))


if __name__ == "__main__":
    main()
