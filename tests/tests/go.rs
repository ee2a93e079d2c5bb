//! Go programs as LARD programs: `lard go build` and `lard go test` with
//! lard's race runtime (docs/go.md), on the racy and race-free twins of
//! guests/go/ (ground truth: each program's header says whether it races,
//! and every racing access is on a line marked `// RACE`).

use lard_e2e::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// The guests' Go module.
fn module() -> PathBuf {
    root().join("guests").join("go")
}

/// Where `lard go` keeps its runtime and Go tree for these tests.
fn cache() -> PathBuf {
    guest_dir().join("lard-cache")
}

/// `lard go ARGS` in the guests' module.
fn lard_go(args: &[&str]) -> Output {
    Command::new(lard())
        .arg("go")
        .args(args)
        .current_dir(module())
        .env("LARD_CACHE_DIR", cache())
        .output()
        .expect("cannot run lard go")
}

static BUILD: Mutex<()> = Mutex::new(());

/// `lard go build` of guests/go/NAME, once per test run.
fn build(name: &str) -> PathBuf {
    let _g = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let dir = guest_dir().join("go");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(name);
    let o = lard_go(&["build", "-o", out.to_str().unwrap(), &format!("./{name}")]);
    assert!(o.status.success(), "lard go build {name}: {}", stderr(&o));
    out
}

/// The lines of guests/go/NAME/main.go marked `// RACE`.
fn race_lines(name: &str) -> BTreeSet<u64> {
    let src = std::fs::read_to_string(module().join(name).join("main.go")).unwrap();
    src.lines()
        .enumerate()
        .filter(|(_, l)| l.contains("// RACE"))
        .map(|(i, _)| i as u64 + 1)
        .collect()
}

/// A run's verdict: the racy dynamic accesses and the program lines of
/// both accesses of every race (each stack's innermost frame in the
/// program's own file).
fn verdict(name: &str, json: &serde_json::Value) -> (u64, BTreeSet<u64>) {
    let ft = &json["detectors"]["fasttrack"];
    let file = format!("/guests/go/{name}/main.go");
    let mut lines = BTreeSet::new();
    for r in ft["races"].as_array().unwrap() {
        for stack in ["frames", "prev_frames"] {
            let frame = r[stack]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["file"].as_str().is_some_and(|p| p.ends_with(&file)));
            if let Some(f) = frame {
                lines.insert(f["line"].as_u64().unwrap());
            }
        }
    }
    (ft["dre"].as_u64().unwrap(), lines)
}

/// `lard run OPTS GUEST` with `env`: its output and report.
fn run(g: &Path, opts: &[&str], env: &[(&str, &str)]) -> (Output, serde_json::Value) {
    let json = scratch_file("go-report");
    let o = Command::new(lard())
        .arg("run")
        .args(opts)
        .arg("--report-json")
        .arg(&json)
        .arg(g)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_default();
    let _ = std::fs::remove_file(&json);
    (
        o,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}

/// Checks guest NAME's verdict under several schedules, with the
/// goroutines on one kernel thread and on several: race-free programs
/// report nothing; racy ones report races, every one on `// RACE` lines,
/// and every marked line.
fn check(name: &str) {
    let g = build(name);
    let native = Command::new(&g).output().unwrap();
    assert!(
        native.status.success(),
        "{name} natively: {}",
        stderr(&native)
    );
    let want = race_lines(name);
    let schedules: &[&[&str]] = &[
        &[],
        &["--sched", "random", "--seed", "1"],
        &["--sched", "random", "--seed", "2"],
        &["--sched", "pct", "--seed", "3"],
    ];
    for opts in schedules {
        // A run that hangs fails rather than holding the test run.
        let opts = [&["--timeout", "600"], *opts].concat();
        for procs in ["1", "4"] {
            let (o, v) = run(&g, &opts, &[("GOMAXPROCS", procs)]);
            let what = format!("{name} {opts:?} GOMAXPROCS={procs}");
            assert_eq!(shell_status(&o), 0, "{what}: {}", stderr(&o));
            assert_eq!(stdout(&o), stdout(&native), "{what}");
            let (dre, lines) = verdict(name, &v);
            if want.is_empty() {
                assert_eq!(dre, 0, "{what}: false races\n{}", stderr(&o));
            } else {
                assert!(dre > 0, "{what}: race missed\n{}", stderr(&o));
                assert_eq!(lines, want, "{what}: lines\n{}", stderr(&o));
            }
        }
    }
}

#[test]
fn goroutines_with_a_mutex() {
    check("mutex_free");
    check("mutex_racy");
}

#[test]
fn channels_unbuffered_and_buffered() {
    check("chan_free");
    check("chan_racy");
}

#[test]
fn wait_groups() {
    check("wg_free");
    check("wg_racy");
}

#[test]
fn goroutines_started_and_waited_for_round_after_round() {
    check("rounds_free");
    check("rounds_racy");
}

/// Under the default (round-robin) schedule a thread that wakes others
/// past half its quantum yields to them: the goroutines the stopping one
/// wakes get to run before it stops the world again (without that
/// preemption the run never ends). With one processor, the monitor thread
/// must see the world running between two stops: quanta of one length
/// end at the same phase of the loop, inside a stop, every time. The random and PCT schedules keep their
/// own switch points and only bound the starvation, so only the default
/// schedule is run here.
#[test]
fn threads_woken_between_two_stops_of_the_world_run() {
    let g = build("stw_free");
    // Processors enough to run every goroutine at once (as Go's own
    // LockOSThreadTemplateThreadRace test asks), and one.
    for procs in ["4", "1"] {
        let (o, v) = run(&g, &["--timeout", "120"], &[("GOMAXPROCS", procs)]);
        assert_eq!(shell_status(&o), 0, "GOMAXPROCS={procs}: {}", stderr(&o));
        assert_eq!(stdout(&o), "OK\n");
        assert_eq!(verdict("stw_free", &v).0, 0, "{}", stderr(&o));
    }
}

/// With one processor, a goroutine that never yields runs until the
/// runtime preempts it by a signal, which Go acts on only at a safe point of
/// Go code: the signal must interrupt the loop anywhere in it (quanta of
/// one length end at one phase of the loop: in the race runtime's code,
/// every time).
#[test]
fn goroutines_that_never_yield_are_preempted_by_signal() {
    check("preempt_free");
    check("preempt_racy");
}

#[test]
fn sync_atomic_publication() {
    check("atomic_free");
    check("atomic_racy");
}

#[test]
fn read_write_mutexes() {
    check("rwmutex_free");
    check("rwmutex_racy");
}

#[test]
fn goroutines_multiplexed_on_one_kernel_thread() {
    check("onethread_free");
    check("onethread_racy");
}

#[test]
fn maps() {
    check("map_free");
    check("map_racy");
}

#[test]
fn memory_the_collector_frees_is_reused_without_false_races() {
    check("gc_reuse_free");
}

#[test]
fn ten_thousand_live_goroutines() {
    check("many_free");
    check("many_racy");
}

#[test]
fn go_test_fails_the_racy_test_and_package_only() {
    let o = lard_go(&["test", "-v", "./testpkg_free", "./testpkg_racy"]);
    let out = stdout(&o) + &stderr(&o);
    assert_eq!(shell_status(&o), 1, "{out}");
    // Go's testing fails the test that raced, with the report in Go's
    // format inside that test's output.
    assert!(out.contains("--- PASS: TestFine"), "{out}");
    assert!(out.contains("--- PASS: TestSumsOverChannel"), "{out}");
    let racy = out
        .split("=== RUN   TestSharedTotal")
        .nth(1)
        .and_then(|rest| rest.split("--- FAIL: TestSharedTotal").next())
        .unwrap_or_else(|| panic!("no failed TestSharedTotal:\n{out}"));
    assert!(racy.contains("WARNING: DATA RACE"), "{out}");
    assert!(
        racy.contains("race detected during execution of test"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("ok") && l.contains("testpkg_free")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("FAIL") && l.contains("testpkg_racy")),
        "{out}"
    );
    // The report names the racing line (sum_test.go: `total++ // RACE`),
    // and where the racing goroutines were created: the go statement in
    // TestSharedTotal, in the installed Go tree's testing.tRunner.
    let src = std::fs::read_to_string(module().join("testpkg_racy/sum_test.go")).unwrap();
    let line = src.lines().position(|l| l.contains("// RACE")).unwrap() + 1;
    assert!(racy.contains(&format!("sum_test.go:{line}")), "{out}");
    let test = src
        .lines()
        .position(|l| l.contains("func TestSharedTotal"))
        .unwrap();
    let go_stmt = test
        + src
            .lines()
            .skip(test)
            .position(|l| l.contains("go func()"))
            .unwrap();
    let created = racy
        .split("(running) created at:")
        .nth(1)
        .unwrap_or_else(|| panic!("no creation site:\n{out}"));
    assert!(
        created.contains(&format!("sum_test.go:{}", go_stmt + 1)),
        "{out}"
    );
    let goroot = Command::new("go").args(["env", "GOROOT"]).output().unwrap();
    let tree = format!("{}/src/testing/testing.go", stdout(&goroot).trim());
    assert!(created.contains(&tree), "{out}");
}

#[test]
fn a_go_build_runs_natively_and_carries_lardx86() {
    let g = build("wg_free");
    // The LARD runtime is linked: `lard run` picks LARD mode by itself.
    let (o, _) = run(&g, &["--stats"], &[]);
    let e = stderr(&o);
    assert!(e.contains("mode: LARD"), "{e}");
}

#[test]
fn a_plain_go_build_is_run_unchecked_with_one_line_saying_why() {
    let out = guest_dir().join("go").join("wg_racy_plain");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let b = Command::new("go")
        .args(["build", "-o", out.to_str().unwrap(), "./wg_racy"])
        .current_dir(module())
        .output()
        .expect("cannot run go");
    assert!(b.status.success(), "{}", stderr(&b));
    let native = Command::new(&out).output().unwrap();
    let (o, v) = run(&out, &[], &[]);
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&native));
    let e = stderr(&o);
    let mode: Vec<&str> = e.lines().filter(|l| l.starts_with("mode:")).collect();
    assert_eq!(mode.len(), 1, "{e}");
    assert!(mode[0].contains("lard go build"), "{e}");
    // None of Go's runtime is reported as racing.
    assert_eq!(v["detectors"]["fasttrack"]["dre"], 0, "{e}");
    assert_eq!(v["detectors"]["fasttrack"]["mode"], "none");
}

/// Go's own race suite (`runtime/race/testdata` of the installed Go), run
/// and scored as Go's `race_test.go` does: `go test -v` with
/// `GOMAXPROCS=1`; a `TestRace…` must print a report within its output, a
/// `TestNoRace…` must not (the cgo cases aside). Every verdict right:
/// 352 of 352, where Go's own detector scores 350 on this machine (a
/// race that depends on a wall-clock sleep may take a rerun of its test
/// alone on a loaded host; see below).
#[test]
fn go_s_own_race_suite_scores_every_test_right() {
    let goroot = Command::new("go").args(["env", "GOROOT"]).output().unwrap();
    let dir = PathBuf::from(stdout(&goroot).trim()).join("src/runtime/race");
    let mut files: Vec<String> = std::fs::read_dir(dir.join("testdata"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("_test.go") && !n.starts_with("cgo_test"))
        .map(|n| format!("testdata/{n}"))
        .collect();
    files.sort();
    // `lard go test -v` of the suite with `extra` arguments: its output.
    let go_test = |extra: &[&str]| {
        let o = Command::new(lard())
            .args(["go", "test", "-v"])
            .args(extra)
            .args(&files)
            .current_dir(&dir)
            .env("LARD_CACHE_DIR", cache())
            .env("GOMAXPROCS", "1")
            .env_remove("GORACE")
            .output()
            .unwrap();
        stdout(&o) + &stderr(&o)
    };
    let out = go_test(&[]);
    assert!(
        !out.contains("fatal error:"),
        "the Go runtime crashed:\n{out}"
    );
    let mut tests = Vec::new();
    let mut current: Option<(String, bool)> = None;
    for line in out.lines() {
        if let Some(name) = line.strip_prefix("=== RUN   Test") {
            tests.extend(current.take());
            current = Some((name.to_string(), false));
        } else if let Some((_, raced)) = current.as_mut() {
            *raced |= line.contains("DATA RACE");
        }
    }
    tests.extend(current);
    let scored: Vec<&(String, bool)> = tests
        .iter()
        .filter(|(n, _)| n.starts_with("Race") || n.starts_with("NoRace"))
        .collect();
    assert!(scored.len() > 300, "too few tests parsed:\n{out}");
    // A Race test whose race needs goroutines to run within a sleep of
    // wall-clock time (TestRaceChanWrongSend's 10 ms) can miss its
    // schedule on a loaded host: it runs again alone, up to three times,
    // and must report its race in one of them. A NoRace test that reports
    // a race is wrong at once.
    let wrong: Vec<&str> = scored
        .iter()
        .filter(|(n, raced)| n.starts_with("Race") != *raced)
        .map(|(n, _)| n.as_str())
        .filter(|n| {
            !n.starts_with("Race")
                || !(0..3).any(|_| go_test(&["-run", &format!("^Test{n}$")]).contains("DATA RACE"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "wrong verdicts: {wrong:?} of {}",
        scored.len()
    );
}

/// The instructions a run retired and its racy accesses.
fn instructions_and_dre(g: &Path, detector: &str) -> (u64, u64) {
    let (o, v) = run(g, &["--stats", "--detector", detector], &[]);
    let e = stderr(&o);
    let dre = v["detectors"][detector]["dre"].as_u64();
    (
        stats_number(&e, "instructions retired"),
        dre.unwrap_or_else(|| panic!("{detector}: no report\n{e}")),
    )
}

#[test]
fn a_go_run_is_the_same_for_every_detector_and_every_time() {
    // Go's runtime reads the time-stamp counter (to seed its per-thread
    // random numbers): the run must not depend on the host's. LARDISH and
    // the canonical detector see the same execution, and agree.
    for name in ["mutex_racy", "many_racy", "gc_reuse_free"] {
        let g = build(name);
        let first = instructions_and_dre(&g, "fasttrack");
        for detector in ["fasttrack", "canonical", "lardish"] {
            assert_eq!(
                instructions_and_dre(&g, detector),
                first,
                "{name} under {detector}"
            );
        }
    }
}

#[test]
fn go_test_passes_a_racy_test_whose_race_is_suppressed() {
    let supp = scratch_file("go-supp").with_extension("supp");
    std::fs::write(&supp, "# a known race\nrace:TestSharedTotal\n").unwrap();
    let opt = format!("--run-option=--suppressions={}", supp.display());
    let o = lard_go(&[&opt, "test", "-v", "./testpkg_racy"]);
    let out = stdout(&o) + &stderr(&o);
    assert_eq!(shell_status(&o), 0, "{out}");
    assert!(out.contains("--- PASS: TestSharedTotal"), "{out}");
    assert!(!out.contains("WARNING: DATA RACE"), "{out}");
    assert!(
        out.contains(&format!("suppressed by {}", supp.display())),
        "{out}"
    );
}
