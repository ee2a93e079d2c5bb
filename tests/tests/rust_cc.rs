//! lard-rustc end to end (docs/rust.md): the Rust twins of guests/rust-cc/,
//! one construct each, built with the installed `lard-rustc` (rustc's
//! ThreadSanitizer instrumentation on lard-cc's runtime), run natively and
//! under `lard run` with the default schedule and a random one: the same
//! output, and races exactly on the lines marked `// RACE`, where a race's
//! line is the innermost frame of each stack in the program's file.
//!
//! Race-free twins whose locks are contended are ordered by std's
//! precompiled slow paths, which lard-rustc links to the runtime's stubs
//! (rust_std.c); built without them (`LARD_RUSTC_STD_SYNC=0`) the same
//! twins report races, which shows that their runs took those paths.

use lard_e2e::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The twins: file names under guests/rust-cc/.
const TWINS: &[&str] = &[
    "static_counter_race",
    "mutex_counter",
    "mutex_unlocked_race",
    "flag_acquire",
    "flag_relaxed_race",
    "flag_late_race",
    "flag_units",
    "flag_units_race",
    "channel",
    "channel_race",
    "scope_disjoint",
    "scope_race",
    "raw_overlap_race",
    "raw_disjoint",
    "rwlock",
    "rwlock_race",
    "condvar",
    "condvar_race",
    "barrier",
    "barrier_race",
    "alloc_reuse",
    "once",
    "once_race",
    "stdout_lock",
    "stdout_lock_race",
    "park",
    "park_race",
    "tls_drop",
    "tls_drop_race",
];

/// The race-free twins whose runs take std's precompiled slow paths.
const STD_SLOW_PATHS: &[&str] = &[
    "mutex_counter",
    "rwlock",
    "condvar",
    "barrier",
    "once",
    "stdout_lock",
    "park",
];

/// The schedules each twin runs under.
const SCHEDULES: [&[&str]; 2] = [&[], &["--sched", "random", "--seed", "1"]];

fn built(name: &str) -> PathBuf {
    let out = guest_dir().join("lard-rustc").join(name);
    build_lard_rustc(&format!("rust-cc/{name}.rs"), &out);
    out
}

/// `name` built by `lard-rustc` without the stubs for std's slow paths.
fn built_without_std_stubs(name: &str) -> PathBuf {
    let prefix = lard_cc_prefix();
    let out = guest_dir()
        .join("lard-rustc")
        .join(format!("{name}-no-std-stubs"));
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let o = std::process::Command::new(prefix.join("bin/lard-rustc"))
        .args(["-O", "-g"])
        .arg(root().join(format!("guests/rust-cc/{name}.rs")))
        .arg("-o")
        .arg(&out)
        .env("LARD_RUSTC_STD_SYNC", "0")
        .output()
        .expect("lard-rustc");
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// The program lines of the races in a `--report-json` file: for each
/// race, the innermost frame of each of its two stacks in `file`.
fn race_lines(json: &str, file: &str) -> Result<BTreeSet<i64>, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let races = v["detectors"]["fasttrack"]["races"]
        .as_array()
        .ok_or("no races array")?;
    let mut lines = BTreeSet::new();
    for r in races {
        for side in ["frames", "prev_frames"] {
            let line = r[side]
                .as_array()
                .into_iter()
                .flatten()
                .find(|f| f["file"].as_str().is_some_and(|p| p.ends_with(file)))
                .and_then(|f| f["line"].as_i64())
                .ok_or_else(|| format!("a race with no {side} in {file}: {r}"))?;
            lines.insert(line);
        }
    }
    Ok(lines)
}

/// Runs `bin` under lard with `sched`: its output must be the native one;
/// returns the race lines.
fn lines_under(bin: &Path, name: &str, sched: &[&str]) -> Result<BTreeSet<i64>, String> {
    let json = scratch_file("rust-cc");
    let mut args = sched.to_vec();
    let j = json.to_string_lossy().to_string();
    args.extend(["--report-json", &j]);
    let l = lard_run(&args, bin, &[]);
    let n = native(bin, &[]);
    if stdout(&l) != stdout(&n) || shell_status(&l) != 0 {
        return Err(format!(
            "{name} {sched:?}: output {:?} status {}, natively {:?}; {}",
            stdout(&l),
            shell_status(&l),
            stdout(&n),
            stderr(&l)
        ));
    }
    let text = std::fs::read_to_string(&json).map_err(|e| format!("{name}: {e}"))?;
    let _ = std::fs::remove_file(&json);
    race_lines(&text, &format!("rust-cc/{name}.rs")).map_err(|e| format!("{name}: {e}"))
}

#[test]
fn lard_rustc_twins_report_exactly_their_racing_lines() {
    let mut failures = Vec::new();
    for &name in TWINS {
        let bin = built(name);
        let want = marked_lines(&format!("rust-cc/{name}.rs"), "// RACE");
        for sched in SCHEDULES {
            match lines_under(&bin, name, sched) {
                Ok(got) if got != want => failures.push(format!(
                    "{name} {sched:?}: races on lines {got:?}, marked {want:?}"
                )),
                Ok(_) => {}
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The race-free twins that synchronize in std's precompiled code (a
/// contended lock, a standard stream's lock, a park), built without the
/// stubs for it: false races under at least one schedule, so their runs
/// do take the paths the stubs order.
#[test]
fn without_the_std_stubs_contended_locks_are_unordered() {
    for &name in STD_SLOW_PATHS {
        assert!(marked_lines(&format!("rust-cc/{name}.rs"), "// RACE").is_empty());
        let bin = built_without_std_stubs(name);
        let mut union = BTreeSet::new();
        for sched in SCHEDULES {
            union.extend(lines_under(&bin, name, sched).unwrap());
        }
        assert!(!union.is_empty(), "{name}: no race without the stubs");
    }
}

/// The twins built with plain `rustc -O -g` (no instrumentation) in binary
/// mode (docs/binary-mode.md), default schedule: atomics are recognized
/// from DWARF's inlined `core::sync::atomic` frames with their memory
/// orders, so the heap `AtomicBool` handshake of flag_acquire is quiet and
/// flag_relaxed_race's is a race. Races on the marked lines exactly. (The
/// synchronization taken from std's code can order a racy twin's threads
/// under a schedule where the first ends before the second starts; the
/// default schedule's threads overlap in every twin.)
#[test]
fn plain_rustc_twins_in_binary_mode() {
    let mut failures = Vec::new();
    for &name in TWINS {
        let bin = build_rust_dynamic(&format!("rust-cc/{name}.rs"), &format!("plain_{name}"));
        failures.extend(marked_lines_differ(&bin, name));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Under the default schedule, twin `name` built as `bin` reports races on
/// exactly its `// RACE` lines; else what went wrong.
fn marked_lines_differ(bin: &Path, name: &str) -> Option<String> {
    let want = marked_lines(&format!("rust-cc/{name}.rs"), "// RACE");
    match lines_under(bin, name, &[]) {
        Ok(got) if got != want => Some(format!("{name}: races on lines {got:?}, marked {want:?}")),
        Ok(_) => None,
        Err(e) => Some(e),
    }
}

/// Binary mode on a build with 16 codegen units: the atomic operations
/// of module `mailbox` are inlined into callers in other codegen units,
/// whose DWARF refers to the operations' abstract DIEs in another
/// compilation unit. The Release/Acquire handshake of flag_units is
/// quiet, and flag_units_race's race is on its marked lines only.
#[test]
fn plain_rustc_atomics_inlined_across_codegen_units() {
    let mut failures = Vec::new();
    for name in ["flag_units", "flag_units_race"] {
        let bin = build_rust_dynamic_with(
            &format!("rust-cc/{name}.rs"),
            &format!("plain_cgu16_{name}"),
            &["-C", "codegen-units=16"],
        );
        failures.extend(marked_lines_differ(&bin, name));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Reports name Rust functions as Rust does: generic instances and
/// closures, demangled both from the symbol table (the `<symbol+off>` of
/// the access, a static's name) and from DWARF (the frames).
#[test]
fn reports_name_rust_functions_demangled() {
    let bin = built("scope_race");
    let err = stderr(&lard_run(&[], &bin, &[]));
    let at = err
        .lines()
        .find(|l| l.trim_start().starts_with("at 0x"))
        .unwrap_or_else(|| panic!("no access line: {err}"));
    assert!(at.contains("scope_race::main::{closure#0}"), "{at}");
    assert!(err.contains("#0 <scope_race::Counter>::add "), "{err}");
    assert!(!err.contains("_R"), "a mangled v0 name: {err}");
    let bin = built("static_counter_race");
    let err = stderr(&lard_run(&[], &bin, &[]));
    assert!(err.contains("<static_counter_race::COUNTER"), "{err}");
}

/// `lard cargo ARGS` on guests/rust-cargo (a library with a build script
/// and a proc-macro, a race-free and a racy test file, a doctest), offline,
/// in its own target directory.
fn lard_cargo(args: &[&str]) -> std::process::Output {
    let prefix = lard_cc_prefix();
    let manifest = root().join("guests/rust-cargo/Cargo.toml");
    std::process::Command::new(lard())
        .arg("cargo")
        .args(args)
        .arg("--offline")
        .arg("--manifest-path")
        .arg(&manifest)
        .env("LARD_RUSTC", prefix.join("bin/lard-rustc"))
        .env("CARGO_TARGET_DIR", guest_dir().join("lard-cargo"))
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .output()
        .expect("cannot run lard cargo")
}

/// `lard cargo test`: the build script and the proc-macro run on the host
/// (uninstrumented, or the build fails), the race-free tests and the
/// doctest pass under `lard run` with no race, and the racy test binary
/// exits 66 with its race reported on the RACE line.
#[test]
fn lard_cargo_test_runs_the_tests_under_lard() {
    let _g = CARGO_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    // (--stats: the report's figures name the mode and count racy PCs.)
    let free = lard_cargo(&["--run-option=--stats", "test", "--test", "free"]);
    let err = stderr(&free);
    assert!(free.status.success(), "{err}");
    assert!(stdout(&free).contains("test counts_the_even_numbers ... ok"));
    assert!(err.contains("mode: LARD (Tracked accesses"), "{err}");
    assert!(err.contains("distinct racy PCs: 0"), "{err}");

    let doc = lard_cargo(&["test", "--doc"]);
    // (rustdoc prints a failing doctest's output on stdout.)
    assert!(doc.status.success(), "{}\n{}", stdout(&doc), stderr(&doc));
    assert!(stdout(&doc).contains("1 passed"), "{}", stdout(&doc));
    // Race-free in every schedule: the doctest links std's slow-path stubs
    // too (a worker's end orders it before the scope's end even when the
    // main thread never parks).
    for seed in ["2", "3", "5"] {
        let doc = lard_cargo(&[
            "--run-option=--sched",
            "--run-option=random",
            &format!("--run-option=--seed={seed}"),
            "test",
            "--doc",
        ]);
        assert!(doc.status.success(), "seed {seed}: {}", stderr(&doc));
    }
    // The doctest runs under lard run: a bad lard option fails it.
    let bad = lard_cargo(&["--run-option=--no-such-option", "test", "--doc"]);
    assert!(!bad.status.success(), "{}", stdout(&bad));

    let racy = lard_cargo(&["test", "--test", "racy"]);
    let err = stderr(&racy);
    // cargo exits with the status of the test binary that failed.
    assert_eq!(racy.status.code(), Some(66), "{err}");
    assert!(err.contains("(exit status: 66)"), "{err}");
    let line = marked_lines("rust-cargo/tests/racy.rs", "// RACE");
    let at: Vec<String> = line
        .iter()
        .map(|l| format!("rust-cargo/tests/racy.rs:{l}"))
        .collect();
    assert_eq!(at.len(), 1);
    assert!(err.contains(&at[0]), "{err}");
}

/// Bad input: no `lard-rustc` to be found is one line and status 127.
#[test]
fn lard_cargo_without_lard_rustc_says_so() {
    let o = std::process::Command::new(lard())
        .args(["cargo", "build"])
        .env("LARD_RUSTC", "/nonexistent/lard-rustc")
        .output()
        .expect("cannot run lard cargo");
    assert_eq!(o.status.code(), Some(127));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("LARD_RUSTC=/nonexistent/lard-rustc"), "{err}");
}

/// One `lard cargo` at a time in this test binary (one target directory).
static CARGO_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `lard-rustc` as cargo's `RUSTC_WRAPPER` (its first argument the rustc
/// to run) instruments and links like `lard-rustc` alone; under cargo
/// (`CARGO_CRATE_NAME` set), a crate of the program itself
/// (`CARGO_PRIMARY_PACKAGE`) without `--target` is refused with one line
/// and status 2 (cargo got no `--target`), and a dependency without one is
/// compiled unchanged (cargo builds it for a build script or proc-macro,
/// on the host).
#[test]
fn lard_rustc_as_a_wrapper_and_without_a_target() {
    let prefix = lard_cc_prefix();
    let src = root().join("guests/rust-cc/static_counter_race.rs");
    let out = guest_dir()
        .join("lard-rustc")
        .join("wrapped_static_counter_race");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let o = std::process::Command::new(prefix.join("bin/lard-rustc"))
        .args(["rustc", "-O", "-g"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("lard-rustc");
    assert!(o.status.success(), "{}", stderr(&o));
    let want = marked_lines("rust-cc/static_counter_race.rs", "// RACE");
    let got = lines_under(&out, "static_counter_race", &[]).unwrap();
    assert_eq!(got, want);

    let o = std::process::Command::new(prefix.join("bin/lard-rustc"))
        .args(["--crate-name", "prog", "--crate-type", "bin"])
        .arg(&src)
        .env("CARGO_CRATE_NAME", "prog")
        .env("CARGO_PRIMARY_PACKAGE", "1")
        .current_dir(guest_dir())
        .output()
        .expect("lard-rustc");
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--target"), "{err}");

    let dir = guest_dir().join("lard-rustc").join("host-dep");
    std::fs::create_dir_all(&dir).unwrap();
    let o = std::process::Command::new(prefix.join("bin/lard-rustc"))
        .args(["--crate-name", "tally_macro_support", "--crate-type", "lib"])
        .arg(root().join("guests/rust-cargo/macro-support/src/lib.rs"))
        .arg("--out-dir")
        .arg(&dir)
        .env("CARGO_CRATE_NAME", "tally_macro_support")
        .env("LARD_CC_VERBOSE", "1")
        .output()
        .expect("lard-rustc");
    // (LARD_CC_VERBOSE=1: the command it ran, on stderr.)
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(dir.join("libtally_macro_support.rlib").is_file());
    assert!(err.contains("lib.rs"), "{err}");
    assert!(!err.contains("sanitizer"), "instrumented: {err}");
}
