//! lard-rustc end to end (docs/rust.md): the Rust twins of guests/rust-cc/,
//! one construct each, built with the installed `lard-rustc` (rustc's
//! ThreadSanitizer instrumentation on lard-cc's runtime), run natively and
//! under `lard run` with the default schedule and a random one: the same
//! output, and races exactly on the lines marked `// RACE`, where a race's
//! line is the innermost frame of each stack in the program's file.
//!
//! Known limitations, asserted as they are so that a fix shows: three
//! race-free twins are ordered only by std's precompiled, uninstrumented
//! synchronization (Mutex, RwLock, the end of a scope); lard reports their
//! accesses as races, on lines marked `// STD-SYNC`, under at least one of
//! the two schedules.

use lard_e2e::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The twins: file name under guests/rust-cc/, and whether std's
/// uninstrumented synchronization is all that orders its accesses.
const TWINS: &[(&str, bool)] = &[
    ("static_counter_race", false),
    ("mutex_counter", true),
    ("mutex_unlocked_race", false),
    ("flag_acquire", false),
    ("flag_relaxed_race", false),
    ("channel", false),
    ("channel_race", false),
    ("scope_disjoint", true),
    ("scope_race", false),
    ("raw_overlap_race", false),
    ("raw_disjoint", false),
    ("rwlock", true),
    ("alloc_reuse", false),
];

/// The schedules each twin runs under.
const SCHEDULES: [&[&str]; 2] = [&[], &["--sched", "random", "--seed", "1"]];

fn built(name: &str) -> PathBuf {
    let out = guest_dir().join("lard-rustc").join(name);
    build_lard_rustc(&format!("rust-cc/{name}.rs"), &out);
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
    for &(name, std_sync) in TWINS {
        let bin = built(name);
        let rel = format!("rust-cc/{name}.rs");
        let want = marked_lines(&rel, "// RACE");
        let known = marked_lines(&rel, "// STD-SYNC");
        assert!(
            want.is_empty() || !std_sync,
            "{name}: a racy twin cannot be a known limitation"
        );
        let mut union = BTreeSet::new();
        for sched in SCHEDULES {
            match lines_under(&bin, name, sched) {
                Ok(got) if std_sync => union.extend(got),
                Ok(got) if got != want => failures.push(format!(
                    "{name} {sched:?}: races on lines {got:?}, marked {want:?}"
                )),
                Ok(_) => {}
                Err(e) => failures.push(e),
            }
        }
        if std_sync && (union.is_empty() || !union.is_subset(&known)) {
            failures.push(format!(
                "{name}: the known false races (std's uninstrumented synchronization) \
                 are on lines {union:?}, expected a non-empty subset of the STD-SYNC \
                 lines {known:?}; if they are gone, make it an ordinary race-free twin"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
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
    assert!(doc.status.success(), "{}", stderr(&doc));
    assert!(stdout(&doc).contains("1 passed"), "{}", stdout(&doc));
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
/// without `--target` (`CARGO_CRATE_NAME` set) it refuses with one line
/// and status 2.
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
        .current_dir(guest_dir())
        .output()
        .expect("lard-rustc");
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--target"), "{err}");
}
