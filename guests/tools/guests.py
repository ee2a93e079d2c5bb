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
BUILD/<libc>/sdk.  Binaries: BUILD/<libc>/<name>.  Every C guest built for
glibc is also built as an ordinary dynamically linked executable (no -static;
PIE, libc.so through ld.so, the SDK's liblard.a linked in) into
BUILD/glibc-dynamic/<name>, with the same ground truth.

Rust guests (lang = "rust", glibc only): one cargo build of guests/rust
(`cargo build --release --target x86_64-unknown-linux-gnu` with
RUSTFLAGS=$GUEST_RUSTFLAGS, default "-C target-feature=+crt-static -g") into
BUILD/glibc/rust-target; binary src/bin/<stem>.rs is copied to
BUILD/glibc/<name>.  Their racy lines are marked `// RACE`.

minivm guests (runtime = "minivm"): C workloads linked with the minivm
managed runtime (guests/minivm/src, -Iguests/minivm/include); `check` runs
them once per entry of `configs` (extra command-line arguments), each run
compared with the guest's fields as overridden by that config's.
"""
import os
import shutil
import subprocess
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
GUESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(GUESTS)
SDK = os.path.join(ROOT, "guest-sdk")
COMPILERS = {"glibc": os.environ.get("CC_GLIBC", "gcc"),
             "musl": os.environ.get("CC_MUSL", "musl-gcc")}
# The dynamically linked glibc build of every C glibc guest.
DYNAMIC = "glibc-dynamic"
COMPILERS[DYNAMIC] = COMPILERS["glibc"]


def flavours(g):
    """The builds of guest g: its libcs, plus glibc-dynamic for C guests
    built for glibc (the manifest reader in emu/src/cmd/manifest.rs adds
    the same runs)."""
    out = list(g["libc"])
    if "glibc" in out and g.get("lang", "c") != "rust":
        out.append(DYNAMIC)
    return out
CFLAGS = os.environ.get("GUEST_CFLAGS", "-O2 -g").split()
RACE_MARK = "/* RACE */"
# Rust guests: see rust_build().
RACE_MARKS = {"rust": "// RACE"}
RUST_TARGET = "x86_64-unknown-linux-gnu"
RUSTFLAGS = os.environ.get("GUEST_RUSTFLAGS",
                           "-C target-feature=+crt-static -g")
# minivm guests: extra compiler arguments; per-config overridable fields.
MINIVM = os.path.join(GUESTS, "minivm")
RUNTIME_ARGS = {"minivm": ["-I" + os.path.join(MINIVM, "include")]
                + [os.path.join(MINIVM, "src", f)
                   for f in ("vm.c", "heap.c", "ctx_x86_64.S")]}
CONFIG_KEYS = ("expect", "race_lines", "race_lines_any", "race_lines_always",
               "stdout", "exit", "object_expect", "object_sites")
# Allocation sites of the objects the object race detector reports.
OBJECT_MARK = "/* OBJECT */"


def runs(g):
    """(label, args, fields) of each native run of guest g: one run without
    arguments, or one per config (its fields override the guest's)."""
    if "configs" not in g:
        return [("", [], g)]
    return [("[%s]" % c["id"], list(c["args"]),
             dict(g, **{k: c[k] for k in CONFIG_KEYS if k in c}))
            for c in g["configs"]]


def lint_configs(g, marked):
    n, errors, ids = g.get("name"), [], set()
    if "runtime" in g and g["runtime"] not in RUNTIME_ARGS:
        errors.append("%s: unknown runtime" % n)
    if "configs" not in g:
        return errors
    if not g["configs"]:
        errors.append("%s: empty configs" % n)
    for c in g["configs"]:
        if "id" not in c or not isinstance(c.get("args"), list) or c["id"] in ids:
            errors.append("%s: each config needs a unique id and args" % n)
            return errors
        ids.add(c["id"])
        bad = set(c) - set(CONFIG_KEYS) - {"id", "args"}
        if bad:
            errors.append("%s[%s]: unknown keys %s" % (n, c["id"], sorted(bad)))
    for label, _, r in runs(g):
        if not set(r["race_lines"]) <= set(marked):
            errors.append("%s%s: race_lines not marked" % (n, label))
        if r["expect"] not in ("racy", "race-free") or \
                (r["expect"] == "racy") != bool(r["race_lines"]):
            errors.append("%s%s: bad expect/race_lines" % (n, label))
        if not set(r.get("race_lines_always", [])) <= set(r["race_lines"]):
            errors.append("%s%s: race_lines_always not within race_lines"
                          % (n, label))
        errors += lint_object(n + label, r, None)
    return errors


def lint_object(n, g, object_marked):
    """object_expect is racy/race-free; object_sites (allocation lines of
    the reported objects, marked /* OBJECT */) imply object_expect = racy."""
    errors = []
    if "object_expect" in g and g["object_expect"] not in ("racy", "race-free"):
        errors.append("%s: bad object_expect" % n)
    sites = g.get("object_sites", [])
    if sites and g.get("object_expect") != "racy":
        errors.append("%s: object_sites without object_expect = racy" % n)
    if object_marked is not None and sorted(sites) != object_marked:
        errors.append("%s: object_sites %s but %s on lines %s"
                      % (n, sites, OBJECT_MARK, object_marked))
    return errors


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
        mark = RACE_MARKS.get(g.get("lang"), RACE_MARK)
        marked = [i + 1 for i, l in enumerate(lines) if mark in l]
        if sorted(g["race_lines"]) != marked:
            errors.append("%s: race_lines %s but %s on lines %s"
                          % (n, g["race_lines"], mark, marked))
        if g.get("lang") == "rust" and g["libc"] != ["glibc"]:
            errors.append("%s: Rust guests are built for glibc only" % n)
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
        if not set(g.get("issues", [])) <= {1, 2, 3, 4, 5}:
            errors.append("%s: bad issues" % n)
        object_marked = [i + 1 for i, l in enumerate(lines)
                         if OBJECT_MARK in l]
        errors += lint_object(n, g, object_marked)
        errors += lint_configs(g, marked)
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
        wanted = [g for g in guests if libc in flavours(g)
                  and g.get("lang", "c") != "rust"]
        if not wanted:
            continue
        sdk = os.path.join(out, libc, "sdk")
        run(["make", "-s", "-C", SDK, "BUILD=" + sdk, "CC=" + cc])
        for g in wanted:
            run([cc, "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra",
                 "-Werror", *CFLAGS,
                 *([] if libc == DYNAMIC else ["-static"]),
                 "-pthread", "-I" + os.path.join(SDK, "include"),
                 os.path.join(GUESTS, g["source"]),
                 *RUNTIME_ARGS.get(g.get("runtime"), []), "-L" + sdk, "-llard",
                 "-o", os.path.join(out, libc, g["name"])])
    rust_build(out, guests)
    return True


def rust_build(out, guests):
    """Build the Rust guests (one cargo package, guests/rust) statically."""
    wanted = [g for g in guests if g.get("lang") == "rust"]
    if not wanted:
        return
    tdir = os.path.join(out, "glibc", "rust-target")
    cmd = [os.environ.get("CARGO", "cargo"), "build", "--release", "--bins",
           "--manifest-path", os.path.join(GUESTS, "rust", "Cargo.toml"),
           "--target", RUST_TARGET, "--target-dir", tdir]
    print("+ RUSTFLAGS=%r %s" % (RUSTFLAGS, " ".join(cmd)), flush=True)
    env = dict(os.environ, RUSTFLAGS=RUSTFLAGS)
    env.pop("CARGO_ENCODED_RUSTFLAGS", None)  # would override RUSTFLAGS
    subprocess.run(cmd, check=True, env=env)
    os.makedirs(os.path.join(out, "glibc"), exist_ok=True)
    for g in wanted:
        stem = os.path.splitext(os.path.basename(g["source"]))[0]
        shutil.copy2(os.path.join(tdir, RUST_TARGET, "release", stem),
                     os.path.join(out, "glibc", g["name"]))


def check(out):
    ok = True
    n = 0
    for g in manifest():
        for libc in flavours(g):
            exe = os.path.join(out, libc, g["name"])
            if not os.path.exists(exe):
                print("MISSING %s/%s" % (libc, g["name"]))
                ok = False
                continue
            for label, args, r in runs(g):
                try:
                    p = subprocess.run([exe, *args], capture_output=True,
                                       text=True, timeout=60)
                    got, code = p.stdout, p.returncode
                except subprocess.TimeoutExpired:
                    got, code = "<timeout>", None
                n += 1
                if got == r["stdout"] and code == r["exit"]:
                    print("ok   %s/%s%s" % (libc, g["name"], label))
                else:
                    ok = False
                    print("FAIL %s/%s%s: exit %s (want %s), stdout %r (want %r)"
                          % (libc, g["name"], label, code, r["exit"], got,
                             r["stdout"]))
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
