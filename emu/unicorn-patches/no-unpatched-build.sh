#!/bin/sh
# Stands in for cmake inside cargo builds (.cargo/config.toml): unicorn-engine-sys
# calls it only when pkg-config did not find the patched core, i.e. when it
# would otherwise build and link the unpatched upstream source.
echo "lard: the patched unicorn core is not built; run \`make unicorn\` (docs/unicorn-patches.md)" >&2
exit 1
