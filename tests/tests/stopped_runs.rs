//! A run that is stopped from outside still reports: the
//! guest races, then loops forever; `--max-insns`, `--timeout`, SIGINT and
//! SIGTERM each end it, and the race found before the stop is in the text
//! report and the JSON, with the exit status docs/cli.md documents.

use lard_e2e::*;
use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The racing line of guests/c/basic/race_then_spin.c (its manifest race_lines).
const RACE_LINE: &str = "\"line\":17";

fn guest() -> PathBuf {
    build_manifest_guests().join("glibc/race_then_spin")
}

/// The report names the race (text and JSON) at the guest's racing line.
fn assert_reported(stderr: &str, json: &Path) {
    assert!(
        stderr.contains("race 1: write-write race") && stderr.contains("race_then_spin.c:17"),
        "race missing from the text report:\n{stderr}"
    );
    let json = std::fs::read_to_string(json).expect("the JSON report was written");
    assert!(
        json.contains("\"kind\":\"write-write\"") && json.contains(RACE_LINE),
        "race missing from the JSON report: {json}"
    );
}

#[test]
fn max_insns_stops_the_guest_and_reports() {
    let json = scratch_file("stop-insns");
    let j = json.to_str().unwrap();
    let o = lard_run(
        &["--max-insns", "3000000", "--report-json", j, "--stats"],
        &guest(),
        &["spin"],
    );
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 120, "{err}");
    assert_eq!(stdout(&o), "x = 1\n");
    assert!(err.contains("stopped by --max-insns"), "{err}");
    assert_reported(&err, &json);
    // Statistics are printed too, and the limit is honoured to the block.
    let insns = stats_number(&err, "instructions retired");
    assert!((3_000_000..3_001_000).contains(&insns), "{insns}");
}

#[test]
fn timeout_stops_the_guest_and_reports() {
    let json = scratch_file("stop-timeout");
    let j = json.to_str().unwrap();
    let start = std::time::Instant::now();
    let o = lard_run(
        &["--timeout", "0.5", "--report-json", j],
        &guest(),
        &["spin"],
    );
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 121, "{err}");
    assert!(err.contains("stopped by --timeout"), "{err}");
    assert!(start.elapsed().as_secs() < 60);
    assert_reported(&err, &json);
}

/// Starts `lard run ARGS` with piped standard streams.
fn spawn_lard_run<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Child {
    Command::new(lard())
        .arg("run")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lard")
}

/// Waits for lard, its standard input open and empty until it has ended,
/// or for a minute at most (then lard is killed): the status tells which
/// ended the run.
fn wait_holding_input(mut child: Child) -> Output {
    let input = child.stdin.take();
    let pid = child.id() as i32;
    let (done, ended) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let late = ended
            .recv_timeout(std::time::Duration::from_secs(60))
            .is_err();
        drop(input);
        if late {
            // SAFETY: plain kill(2) on our own child, still running.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    });
    let o = child.wait_with_output().expect("wait for lard");
    let _ = done.send(());
    holder.join().unwrap();
    o
}

/// `lard run ARGS PROGRAM PROGRAM_ARGS` with an input that stays open and
/// empty ([`wait_holding_input`]).
fn run_with_open_input(args: &[&str], program: &Path, program_args: &[&str]) -> Output {
    let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    all.push(program.as_os_str());
    all.extend(program_args.iter().map(OsStr::new));
    wait_holding_input(spawn_lard_run(all))
}

/// A guest blocked in the host kernel (a `read` of a standard input that
/// stays open and empty) is stopped at the deadline too, not when the
/// input ends: lard's watchdog interrupts the call.
#[test]
fn timeout_stops_a_guest_blocked_in_a_read_and_reports() {
    let json = scratch_file("stop-timeout-blocked");
    let j = json.to_str().unwrap();
    let o = run_with_open_input(&["--timeout", "1", "--report-json", j], &guest(), &["wait"]);
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 121, "{err}");
    assert_eq!(stdout(&o), "x = 1\n");
    assert!(err.contains("stopped by --timeout"), "{err}");
    assert_reported(&err, &json);
}

/// A process tree: the shell waits for `cat`, which waits for input.
/// Both stop at the deadline and report, the child first (the parent
/// waits for its tree before it ends, as its own wait would have).
#[test]
fn timeout_stops_a_blocked_process_tree_and_each_process_reports() {
    let o = run_with_open_input(
        &["--timeout", "1"],
        Path::new("/bin/sh"),
        &["-c", "cat; echo done"],
    );
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 121, "{err}");
    assert_eq!(stdout(&o), "", "{err}");
    let cat = err.find("cat: stopped by --timeout").expect(&err);
    let sh = err.find("/bin/sh: stopped by --timeout").expect(&err);
    assert!(cat < sh, "{err}");
}

/// Starts lard on the guest in `mode` (`spin`, or `wait`: blocked reading
/// a standard input that stays open and empty), waits until the guest has
/// printed (the race is behind it), sends `sig` and returns (status,
/// stderr). lard is killed if it has not ended a minute later.
fn stop_with_signal(sig: i32, json: &Path, mode: &str) -> (i32, String) {
    let guest = guest();
    let mut child = spawn_lard_run([
        OsStr::new("--report-json"),
        json.as_os_str(),
        guest.as_os_str(),
        OsStr::new(mode),
    ]);
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 64];
    while !seen.ends_with(b"x = 1\n") {
        let n = out.read(&mut buf).expect("read guest output");
        assert!(n > 0, "the guest ended before spinning");
        seen.extend_from_slice(&buf[..n]);
    }
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let o = wait_holding_input(child);
    (shell_status(&o), stderr(&o))
}

#[test]
fn sigint_stops_the_guest_and_reports() {
    let json = scratch_file("stop-sigint");
    let (status, err) = stop_with_signal(libc::SIGINT, &json, "spin");
    assert_eq!(status, 130, "{err}");
    assert!(err.contains("stopped by signal 2"), "{err}");
    assert_reported(&err, &json);
}

#[test]
fn sigterm_stops_the_guest_and_reports() {
    let json = scratch_file("stop-sigterm");
    let (status, err) = stop_with_signal(libc::SIGTERM, &json, "spin");
    assert_eq!(status, 143, "{err}");
    assert!(err.contains("stopped by signal 15"), "{err}");
    assert_reported(&err, &json);
}

/// A guest blocked in the host kernel (a `read` of an input that never
/// comes) is stopped too: the signal interrupts the call, and the guest
/// never sees it (natively SIGINT and SIGTERM kill it).
#[test]
fn signals_stop_a_guest_blocked_in_a_read_and_report() {
    for (sig, status) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let json = scratch_file("stop-blocked");
        let (got, err) = stop_with_signal(sig, &json, "wait");
        assert_eq!(got, status, "{err}");
        assert!(err.contains(&format!("stopped by signal {sig}")), "{err}");
        assert_reported(&err, &json);
    }
}

#[test]
fn bad_limits_are_command_line_errors() {
    for args in [
        ["--timeout", "-1"],
        ["--timeout", "soon"],
        ["--max-insns", "0"],
    ] {
        let o = lard_run(&args, &guest(), &[]);
        assert_eq!(shell_status(&o), 2, "{args:?}: {}", stderr(&o));
    }
}
