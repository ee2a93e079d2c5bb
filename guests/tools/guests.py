#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Build and natively check the guests listed in guests/manifest.toml.

  guests.py build BUILD    build the SDK and every guest into BUILD/<libc>/
  guests.py check BUILD    run every built guest natively; compare stdout and
                           exit status with the manifest (LARD ops are NOPs on
                           a CPU without LARD)
  guests.py lint           check the manifest against the sources (race_lines
                           are exactly the /* RACE */ lines, fields valid)

Per libc: glibc builds with $CC_GLIBC (default gcc), musl with $CC_MUSL
(default musl-gcc); both -std=c99 -D_POSIX_C_SOURCE=200809L -static -g -O2
against the SDK built into
BUILD/<libc>/sdk.  Binaries: BUILD/<libc>/<name>.
"""
import os
import subprocess
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
GUESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(GUESTS)
SDK = os.path.join(ROOT, "guest-sdk")
COMPILERS = {"glibc": os.environ.get("CC_GLIBC", "gcc"),
             "musl": os.environ.get("CC_MUSL", "musl-gcc")}
CFLAGS = os.environ.get("GUEST_CFLAGS", "-O2 -g").split()
RACE_MARK = "/* RACE */"


def manifest():
    with open(os.path.join(GUESTS, "manifest.toml"), "rb") as f:
        return tomllib.load(f)["guest"]


def lint():
    errors = []
    names = set()
    for g in manifest():
        n = g.get("name")
        if n in names:
            errors.append("%s: duplicate name" % n)
        names.add(n)
        for key in ("name", "source", "lang", "libc", "expect", "race_lines",
                    "stdout", "exit", "issue"):
            if key not in g:
                errors.append("%s: missing %s" % (n, key))
        src = os.path.join(GUESTS, g["source"])
        lines = open(src).read().splitlines()
        marked = [i + 1 for i, l in enumerate(lines) if RACE_MARK in l]
        if sorted(g["race_lines"]) != marked:
            errors.append("%s: race_lines %s but /* RACE */ on lines %s"
                          % (n, g["race_lines"], marked))
        if g["expect"] not in ("racy", "race-free"):
            errors.append("%s: bad expect" % n)
        if (g["expect"] == "racy") != bool(g["race_lines"]):
            errors.append("%s: expect and race_lines disagree" % n)
        always = g.get("race_lines_always", [])
        if not set(always) <= set(g["race_lines"]):
            errors.append("%s: race_lines_always not within race_lines" % n)
        if not set(g["libc"]) <= set(COMPILERS):
            errors.append("%s: unknown libc" % n)
        if g["issue"] not in (1, 2, 3, 4, 5, "plain"):
            errors.append("%s: bad issue" % n)
    for e in errors:
        print("lint: " + e, file=sys.stderr)
    return not errors


def run(cmd):
    print("+ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def build(out):
    out = os.path.abspath(out)
    guests = manifest()
    for libc, cc in COMPILERS.items():
        wanted = [g for g in guests if libc in g["libc"]]
        if not wanted:
            continue
        sdk = os.path.join(out, libc, "sdk")
        run(["make", "-s", "-C", SDK, "BUILD=" + sdk, "CC=" + cc])
        for g in wanted:
            run([cc, "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra",
                 "-Werror", *CFLAGS,
                 "-static", "-pthread", "-I" + os.path.join(SDK, "include"),
                 os.path.join(GUESTS, g["source"]), "-L" + sdk, "-llard",
                 "-o", os.path.join(out, libc, g["name"])])
    return True


def check(out):
    ok = True
    n = 0
    for g in manifest():
        for libc in g["libc"]:
            exe = os.path.join(out, libc, g["name"])
            if not os.path.exists(exe):
                print("MISSING %s/%s" % (libc, g["name"]))
                ok = False
                continue
            try:
                p = subprocess.run([exe], capture_output=True, text=True,
                                   timeout=60)
                got, code = p.stdout, p.returncode
            except subprocess.TimeoutExpired:
                got, code = "<timeout>", None
            n += 1
            if got == g["stdout"] and code == g["exit"]:
                print("ok   %s/%s" % (libc, g["name"]))
            else:
                ok = False
                print("FAIL %s/%s: exit %s (want %s), stdout %r (want %r)"
                      % (libc, g["name"], code, g["exit"], got, g["stdout"]))
    print("%d runs, %s" % (n, "all passed" if ok else "FAILURES"))
    return ok


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "lint":
        ok = lint()
    elif cmd == "build" and len(sys.argv) == 3:
        ok = lint() and build(sys.argv[2])
    elif cmd == "check" and len(sys.argv) == 3:
        ok = lint() and check(os.path.abspath(sys.argv[2]))
    else:
        sys.exit(__doc__)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
