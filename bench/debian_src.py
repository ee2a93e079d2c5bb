# SPDX-License-Identifier: GPL-2.0-or-later
"""Real multi-threaded programs from Debian's source packages, for the
benchmarks that compare lard with other tools on programs nobody wrote for
it (bench/binary.py, bench/lardish_table.py, ...).

`build(name, flavour)` fetches the package's source with `apt-get source`
(adding a bookworm `deb-src` entry with the same URI and keyring as the
machine's `deb` entry if it has none), builds it once per flavour into
target/bench/debian/<flavour>/<name>/ and returns the executable:
  * "plain": `gcc -O2 -g`, dynamically linked (what a user's build is);
  * "static": the same, linked statically;
  * "tsan": `-O2 -g -fsanitize=thread`.
`workload(name, threads, workdir)` writes the program's deterministic input
into workdir and returns the arguments that run it with `threads` threads
and write its result to stdout or to a file in workdir (`Workload.output`).

Programs (PROGRAMS): x264 (RADISH's Figure-7 program; frame threads, CLI
encoder, assembly disabled so every instruction is C), zstd (`-T` worker
pool) and pbzip2 (C++, a pthread producer/consumer queue).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from common import OUT, die, run

DEBIAN = OUT / "debian"
SOURCES = Path("/etc/apt/sources.list.d")
DEB_SRC = SOURCES / "lard-bench-deb-src.sources"

FLAVOURS = {
    "plain": ("-O2 -g", ""),
    "static": ("-O2 -g", "-static"),
    "tsan": ("-O2 -g -fsanitize=thread", "-fsanitize=thread"),
}


@dataclass
class Workload:
    """How to run a program on its bench input."""

    args: list[str]
    # A file in the work directory the program writes its result to, or
    # None when the result is its stdout.
    output: Path | None


def _has_deb_src() -> bool:
    files = list(SOURCES.glob("*.sources")) + list(SOURCES.glob("*.list")) + [Path("/etc/apt/sources.list")]
    for f in files:
        if f.exists():
            for line in f.read_text().splitlines():
                words = line.replace(":", " ").split()
                if words[:1] == ["deb-src"] or (words[:1] == ["Types"] and "deb-src" in words):
                    return True
    return False


def ensure_deb_src() -> None:
    """Adds a bookworm `deb-src` entry (URI and keyring of the machine's
    `deb` entry) and runs `apt-get update`, unless one exists."""
    if _has_deb_src():
        return
    main = SOURCES / "debian.sources"
    uri, keyring = "http://deb.debian.org/debian", "/usr/share/keyrings/debian-archive-keyring.gpg"
    if main.exists():
        for line in main.read_text().splitlines():
            if line.startswith("URIs:") and "security" not in line:
                uri = line.split(":", 1)[1].strip()
                break
        for line in main.read_text().splitlines():
            if line.startswith("Signed-By:"):
                keyring = line.split(":", 1)[1].strip()
                break
    if os.geteuid() != 0:
        die(f"no deb-src entry for apt and not root: add one for bookworm ({uri}) and run apt-get update")
    DEB_SRC.write_text(
        f"Types: deb-src\nURIs: {uri}\nSuites: bookworm\nComponents: main\nSigned-By: {keyring}\n"
    )
    run(["apt-get", "update", "-qq"])


def source(package: str) -> Path:
    """The unpacked source tree of Debian package `package` (patched by
    dpkg-source), fetched once into target/bench/debian/src/."""
    src = DEBIAN / "src"
    src.mkdir(parents=True, exist_ok=True)
    found = [d for d in src.glob(f"{package}-*") if d.is_dir()]
    if not found:
        ensure_deb_src()
        run(["apt-get", "source", "-qq", package], cwd=src)
        found = [d for d in src.glob(f"{package}-*") if d.is_dir()]
        if not found:
            die(f"apt-get source {package} unpacked nothing into {src}")
    return sorted(found)[-1]


@dataclass
class Program:
    """A Debian source package and how to build and run it."""

    package: str
    # Executable inside the build tree.
    executable: str
    # Shell commands run in a copy of the source tree; {cflags} and
    # {ldflags} are the flavour's flags.
    build: list[str]


PROGRAMS = {
    "x264": Program(
        "x264",
        "x264",
        [
            "./configure --disable-asm --disable-opencl --disable-lavf --disable-swscale --disable-ffms"
            " --disable-gpac --disable-lsmash --disable-avs --extra-cflags='{cflags}' --extra-ldflags='{ldflags}'",
            "make -j2 x264",
        ],
    ),
    "zstd": Program(
        "libzstd",
        "programs/zstd",
        ["make -j2 -C programs zstd CFLAGS='{cflags}' LDFLAGS='{ldflags}'"],
    ),
    "pbzip2": Program(
        "pbzip2",
        "pbzip2",
        ["make -j2 pbzip2 CXXFLAGS='{cflags} -pthread' LDFLAGS='{ldflags} -pthread'"],
    ),
}


def build(name: str, flavour: str = "plain") -> Path:
    """The executable of PROGRAMS[name] built with `flavour`, built once."""
    prog = PROGRAMS[name]
    cflags, ldflags = FLAVOURS[flavour]
    tree = DEBIAN / flavour / name
    exe = tree / prog.executable
    if exe.exists():
        return exe
    if tree.exists():
        shutil.rmtree(tree)
    tree.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source(prog.package), tree, symlinks=True)
    for cmd in prog.build:
        cmd = cmd.format(cflags=cflags, ldflags=ldflags)
        r = subprocess.run(cmd, shell=True, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            die(f"building {name} ({flavour}): `{cmd}` failed ({r.returncode}):\n"
                f"{r.stdout.decode(errors='replace')[-3000:]}")
    if not exe.exists():
        die(f"building {name} ({flavour}) made no {exe}")
    return exe


def _text(size: int) -> bytes:
    """Deterministic, compressible text of `size` bytes."""
    words = [b"race", b"detector", b"vector", b"clock", b"epoch", b"thread", b"lock", b"history",
             b"tracked", b"access", b"happens", b"before", b"shadow", b"memory"]
    out, x = bytearray(), 12345
    while len(out) < size:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out += words[x % len(words)] + (b"\n" if x % 11 == 0 else b" ")
    return bytes(out[:size])


def _yuv(width: int, height: int, frames: int) -> bytes:
    """Deterministic raw I420 video with moving gradients."""
    out = bytearray()
    for f in range(frames):
        for y in range(height):
            out += bytes(((x * 3 + y * 2 + f * 5) ^ (x * y >> 3)) & 255 for x in range(width))
        out += bytes([(128 + f) & 255]) * (width * height // 2)
    return bytes(out)


def workload(name: str, threads: int, workdir: Path, scale: float = 1.0) -> Workload:
    """Writes `name`'s input into `workdir` and returns how to run it with
    `threads` threads. `scale` multiplies the input size."""
    workdir.mkdir(parents=True, exist_ok=True)
    if name == "x264":
        frames = max(2, int(12 * scale))
        (workdir / "in.yuv").write_bytes(_yuv(176, 144, frames))
        out = workdir / "out.264"
        return Workload(["--quiet", "--no-progress", "--threads", str(threads), "--input-res", "176x144",
                         "-o", str(out), str(workdir / "in.yuv")], out)
    if name == "zstd":
        (workdir / "in.txt").write_bytes(_text(int(4 << 20) if scale >= 1 else int((4 << 20) * scale)))
        # A small job size so that every worker gets jobs on a few MiB.
        return Workload(["-q", f"-T{threads}", "-3", "--long=20", "-B262144", "-c", str(workdir / "in.txt")], None)
    if name == "pbzip2":
        (workdir / "in.txt").write_bytes(_text(int((2 << 20) * scale)))
        return Workload([f"-p{threads}", "-b1", "-c", "-k", str(workdir / "in.txt")], None)
    raise KeyError(name)


if __name__ == "__main__":
    # `python3 bench/debian_src.py [NAME...]`: builds and runs each program
    # natively once, as a check of the recipes.
    import sys
    import tempfile

    for n in sys.argv[1:] or list(PROGRAMS):
        exe = build(n)
        with tempfile.TemporaryDirectory() as d:
            w = workload(n, 4, Path(d))
            r = run([str(exe)] + w.args)
            size = w.output.stat().st_size if w.output else len(r.stdout)
            print(f"{n}: {exe} -> {size} bytes of output")
