//! lard's Go race runtime as the object Go links: the guest SDK's sources
//! (guest-sdk/go/ on the lard-cc runtime, docs/go.md), carried in the
//! `lard` binary and compiled with the system C compiler once per version
//! into lard's cache, then combined (`ld -r`) into one relocatable object
//! that takes the place of Go's `race_linux_amd64.syso`.

use super::{cache_dir, stable_hash, GoError};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The runtime's sources, by their path under guest-sdk/.
const SOURCES: &[(&str, &str)] = &[
    ("go/race.c", include_str!("../../../../guest-sdk/go/race.c")),
    (
        "go/access.S",
        include_str!("../../../../guest-sdk/go/access.S"),
    ),
    ("cc/rt.h", include_str!("../../../../guest-sdk/cc/rt.h")),
    ("cc/core.c", include_str!("../../../../guest-sdk/cc/core.c")),
    (
        "cc/clock.c",
        include_str!("../../../../guest-sdk/cc/clock.c"),
    ),
    (
        "cc/stack.c",
        include_str!("../../../../guest-sdk/cc/stack.c"),
    ),
    (
        "cc/atomic.c",
        include_str!("../../../../guest-sdk/cc/atomic.c"),
    ),
    ("cc/site.S", include_str!("../../../../guest-sdk/cc/site.S")),
    (
        "src/internal.h",
        include_str!("../../../../guest-sdk/src/internal.h"),
    ),
    (
        "src/identity.c",
        include_str!("../../../../guest-sdk/src/identity.c"),
    ),
    (
        "src/thread.c",
        include_str!("../../../../guest-sdk/src/thread.c"),
    ),
    (
        "src/sync.c",
        include_str!("../../../../guest-sdk/src/sync.c"),
    ),
    (
        "src/note.c",
        include_str!("../../../../guest-sdk/src/note.c"),
    ),
    (
        "src/alloc.c",
        include_str!("../../../../guest-sdk/src/alloc.c"),
    ),
    (
        "include/lard.h",
        include_str!("../../../../guest-sdk/include/lard.h"),
    ),
];

/// C flags: position-independent (Go may link a PIE), initial-exec TLS
/// (the runtime is always in the executable), no instrumentation.
const CFLAGS: &[&str] = &[
    "-std=gnu11",
    "-O2",
    "-g",
    "-fPIC",
    "-ftls-model=initial-exec",
    "-fno-sanitize=all",
    "-fno-stack-protector",
    "-fno-strict-aliasing",
];

/// The runtime object, built if the cache does not hold it yet.
pub fn object(cc: &str) -> Result<PathBuf, GoError> {
    let mut key = String::from(cc);
    for (path, text) in SOURCES {
        key.push_str(path);
        key.push_str(text);
    }
    CFLAGS.iter().for_each(|f| key.push_str(f));
    key.push_str("-fdebug-prefix-map");
    let dir = cache_dir()?.join(format!("go-race-runtime-{:016x}", stable_hash(&key)));
    let out = dir.join("race_linux_amd64.syso");
    if out.is_file() {
        return Ok(out);
    }
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    build(cc, &tmp, &dir).inspect_err(|_| {
        let _ = std::fs::remove_dir_all(&tmp);
    })?;
    // Another `lard go` may have finished first: either copy is the same.
    if std::fs::rename(&tmp, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if out.is_file() {
        Ok(out)
    } else {
        Err(GoError::Cache(dir))
    }
}

/// Builds the runtime in `dir`, which becomes `home` once built: the
/// debug information names the sources there (gdb shows lard's runtime
/// code at a race stop).
fn build(cc: &str, dir: &Path, home: &Path) -> Result<(), GoError> {
    let src = dir.join("src");
    for (path, text) in SOURCES {
        let p = src.join(path);
        std::fs::create_dir_all(p.parent().unwrap_or(&src))
            .and_then(|_| std::fs::write(&p, text))
            .map_err(|e| GoError::Io(p.clone(), e))?;
    }
    let mut objects = Vec::new();
    for (path, _) in SOURCES {
        if !(path.ends_with(".c") || path.ends_with(".S")) {
            continue;
        }
        let obj = dir.join(path.replace('/', "_")).with_extension("o");
        let mut c = Command::new(cc);
        let mut map = std::ffi::OsString::from("-fdebug-prefix-map=");
        map.push(dir);
        map.push("=");
        map.push(home);
        c.args(CFLAGS)
            .arg(map)
            .arg("-I")
            .arg(src.join("include"))
            .arg("-c")
            .arg(src.join(path))
            .arg("-o")
            .arg(&obj);
        run(c, cc)?;
        objects.push(obj);
    }
    let mut ld = Command::new("ld");
    ld.arg("-r")
        .args(&objects)
        .arg("-o")
        .arg(dir.join("race_linux_amd64.syso"));
    run(ld, "ld")
}

fn run(mut c: Command, what: &str) -> Result<(), GoError> {
    let out = c
        .output()
        .map_err(|e| GoError::Tool(what.into(), e.to_string()))?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err.lines().next().unwrap_or("failed").to_string();
        Err(GoError::Tool(what.into(), first))
    }
}
