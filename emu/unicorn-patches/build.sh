#!/usr/bin/env bash
# Builds the patched unicorn core the emulator links (docs/unicorn-patches.md).
#
# The upstream source is the unicorn-engine-sys crate from the package
# registry (cargo's cache; `cargo fetch` downloads it when absent), checked
# against Cargo.lock's checksum. The numbered patches in this directory are
# applied in order; unicorn is built for x86 only as one static archive and
# installed under target/unicorn/<key>, where <key> hashes the series and
# this script, so editing a patch rebuilds and an unchanged series is reused.
# target/unicorn/current points at the build in use; .cargo/config.toml makes
# unicorn-engine-sys find it through pkg-config, and emu/build.rs refuses to
# build against a missing or stale core.
set -euo pipefail

VERSION=2.1.5
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=$ROOT/target/unicorn
CARGO=${CARGO:-cargo}
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}

die() { echo "unicorn-patches: $*" >&2; exit 1; }

shopt -s nullglob
series=("$HERE"/[0-9][0-9][0-9][0-9]-*.patch)
[ ${#series[@]} -gt 0 ] || die "no patches in $HERE"
KEY=$(cat "${series[@]}" "$HERE/build.sh" | sha256sum | cut -c1-16)
PREFIX=$OUT/$KEY

use() {
    ln -sfn "$KEY" "$OUT/current"
    # rustc bundles a static library into the rlib of the crate that links
    # it, so unicorn-engine-sys must be rebuilt to take the new core; its
    # build script does not watch the library. (Its bindings come from its
    # own header and do not change.)
    (cd "$ROOT" && "$CARGO" clean -q -p unicorn-engine-sys && "$CARGO" clean -q --release -p unicorn-engine-sys) \
        || die "cargo clean -p unicorn-engine-sys failed"
    touch "$PREFIX/lib/libunicorn.a"
}

if [ -f "$PREFIX/lib/libunicorn.a" ] && [ -f "$PREFIX/lib/pkgconfig/unicorn.pc" ]; then
    if [ "$(readlink "$OUT/current" 2>/dev/null)" != "$KEY" ]; then use; fi
    echo "unicorn-patches: patched unicorn $VERSION is up to date (target/unicorn/$KEY)"
    exit 0
fi

# nullglob is on: an unmatched pattern expands to nothing (a bare `ls` would
# then list the working directory), so take the first match explicitly.
find_crate() {
    local hits=("$CARGO_HOME"/registry/cache/*/"unicorn-engine-sys-$VERSION.crate")
    [ ${#hits[@]} -gt 0 ] && echo "${hits[0]}"
    return 0
}
crate=$(find_crate)
if [ -z "$crate" ]; then
    echo "unicorn-patches: fetching unicorn-engine-sys $VERSION through cargo"
    (cd "$ROOT" && "$CARGO" fetch --locked >/dev/null) || die "cargo fetch failed"
    crate=$(find_crate)
    [ -n "$crate" ] || die "unicorn-engine-sys-$VERSION.crate not in $CARGO_HOME/registry/cache after cargo fetch"
fi
want=$(awk -v v="$VERSION" '
    /^name = "unicorn-engine-sys"$/ { n = 1; next }
    n && /^version = / { n = ($3 == "\"" v "\"") ? 2 : 0; next }
    n == 2 && /^checksum = / { gsub(/"/, "", $3); print $3; exit }' "$ROOT/Cargo.lock")
got=$(sha256sum "$crate" | cut -d' ' -f1)
[ -n "$want" ] || die "Cargo.lock does not pin unicorn-engine-sys $VERSION"
[ "$want" = "$got" ] || die "$crate does not match Cargo.lock's checksum"

work=$OUT/build-$KEY
rm -rf "$work" "$PREFIX.tmp"
mkdir -p "$work"
tar xzf "$crate" -C "$work"
src=$work/unicorn-engine-sys-$VERSION
for p in "${series[@]}"; do
    patch -d "$src" -p1 --batch --forward --silent <"$p" >/dev/null \
        || die "$(basename "$p") does not apply to unicorn-engine-sys $VERSION"
done

echo "unicorn-patches: building unicorn $VERSION (x86 only) with ${#series[@]} patches"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# Release like the crate's own cmake build (NDEBUG, -O3), plus -g so that
# perf can name unicorn's functions; PIC because Rust links PIE executables.
cmake -S "$src" -B "$work/build" "${gen[@]}" -Wno-dev \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="-g" \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DUNICORN_ARCH=x86 \
    -DBUILD_SHARED_LIBS=OFF \
    -DUNICORN_LEGACY_STATIC_ARCHIVE=ON \
    -DUNICORN_BUILD_TESTS=OFF \
    -DUNICORN_INSTALL=OFF >"$work/configure.log" 2>&1 \
    || { tail -n 20 "$work/configure.log" >&2; die "cmake configure failed ($work/configure.log)"; }
cmake --build "$work/build" >"$work/build.log" 2>&1 \
    || { tail -n 30 "$work/build.log" >&2; die "build failed ($work/build.log)"; }

lib=$(find "$work/build" -maxdepth 1 -name libunicorn.a | head -n 1)
[ -n "$lib" ] || die "the build produced no libunicorn.a"
mkdir -p "$PREFIX.tmp/lib/pkgconfig" "$PREFIX.tmp/series"
cp "$lib" "$PREFIX.tmp/lib/libunicorn.a"
cp "${series[@]}" "$PREFIX.tmp/series/"
# libdir names `current`, not <key>: unicorn-engine-sys's build script keeps
# the path pkg-config gave it, and must keep linking whatever `current` is.
cat >"$PREFIX.tmp/lib/pkgconfig/unicorn.pc" <<PC
libdir=$OUT/current/lib
Name: unicorn
Description: unicorn $VERSION with lard's patch series (emu/unicorn-patches)
Version: $VERSION
Libs: -L\${libdir} -lunicorn
PC
mv "$PREFIX.tmp" "$PREFIX"
rm -rf "$work"
use
echo "unicorn-patches: built target/unicorn/$KEY"
