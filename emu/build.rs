//! Refuses to build the emulator against a missing or stale unicorn core.
//!
//! unicorn-engine-sys links whatever `unicorn` pkg-config finds, and
//! .cargo/config.toml points pkg-config at `target/unicorn/current`, which
//! `make unicorn` (emu/unicorn-patches/build.sh) builds from the registry's
//! source plus our patch series. That build keeps a copy of the series it
//! applied; if it differs from emu/unicorn-patches, the core is stale.

use std::path::{Path, PathBuf};
use std::process::exit;

fn fail(what: &str) -> ! {
    eprintln!("lard: {what}; run `make unicorn` (docs/unicorn-patches.md)");
    exit(1);
}

fn series(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "patch"))
                .filter_map(|p| {
                    let name = p.file_name()?.to_string_lossy().into_owned();
                    Some((name, std::fs::read(&p).ok()?))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let patches = manifest.join("unicorn-patches");
    println!("cargo:rerun-if-changed={}", patches.display());
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_LIBDIR");
    let Some(pc_dir) = std::env::var_os("PKG_CONFIG_LIBDIR").map(PathBuf::from) else {
        fail("PKG_CONFIG_LIBDIR is not set (.cargo/config.toml sets it to the patched unicorn)");
    };
    // <prefix>/lib/pkgconfig -> <prefix>
    let prefix = pc_dir.join("../..");
    let lib = prefix.join("lib/libunicorn.a");
    println!("cargo:rerun-if-changed={}", lib.display());
    if !lib.is_file() {
        fail("the patched unicorn core is not built");
    }
    let wanted = series(&patches);
    for (name, _) in &wanted {
        println!("cargo:rerun-if-changed={}", patches.join(name).display());
    }
    if series(&prefix.join("series")) != wanted {
        fail("the unicorn core was built from another patch series");
    }
}
