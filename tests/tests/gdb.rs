//! `lard run --gdb`: the real gdb, in batch mode, debugs a racy guest built
//! from guests/plain/gdb_race.c under the real emulator (docs/debugging.md).
//! Ground truth comes from the guest's design: both writers write `shared`
//! at the line marked RACE after a barrier (three threads alive), main
//! writes `watched = shared + 40` once at the line marked WATCHED.

use lard_e2e::*;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SRC: &str = "plain/gdb_race.c";

fn guest() -> PathBuf {
    build_c_with("gcc", SRC, "gdb_race", &["-O0", "-static"])
}

/// What one debugged run gave.
struct Debugged {
    /// gdb's stdout and stderr.
    gdb: String,
    /// lard's status, stdout and stderr.
    status: i32,
    stdout: String,
    stderr: String,
}

/// Runs `lard run LARD_ARGS --gdb 127.0.0.1:0 GUEST`, then gdb in batch mode
/// on the port lard announces with `-ex` for each of `commands`, and waits
/// for both.
/// The whole environment of every lard these tests start, with or without
/// gdb: the guest's stack holds it, so the tests' own (make's variables,
/// the machine's) would move where the scheduler switches threads and
/// make a debugged run differ from the plain one it is compared with.
/// `LARD_TEST_VAR` is the variable `lard_run` gives a guest.
const GUEST_ENV: [(&str, &str); 2] = [
    ("PATH", "/usr/bin:/bin"),
    ("LARD_TEST_VAR", "from-the-test"),
];

/// `lard run LARD_ARGS GUEST ARGS` in [`GUEST_ENV`].
fn run_plain(lard_args: &[&str], guest: &Path, args: &[&str]) -> Output {
    Command::new(lard())
        .arg("run")
        .args(lard_args)
        .arg(guest)
        .args(args)
        .env_clear()
        .envs(GUEST_ENV)
        .output()
        .expect("cannot run lard")
}

fn debug(lard_args: &[&str], guest: &Path, commands: &[&str]) -> Debugged {
    debug_with_stdin(lard_args, guest, commands, Stdio::null())
}

/// [`debug`] with the guest's stdin.
fn debug_with_stdin(lard_args: &[&str], guest: &Path, commands: &[&str], stdin: Stdio) -> Debugged {
    let mut lard = Command::new(lard())
        .arg("run")
        .args(lard_args)
        .args(["--gdb", "127.0.0.1:0"])
        .arg(guest)
        .env_clear()
        .envs(GUEST_ENV)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lard");
    let mut err = BufReader::new(lard.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).expect("lard's announcement");
    let addr = first
        .trim()
        .strip_prefix("lard: waiting for gdb on ")
        .unwrap_or_else(|| panic!("no announcement: {first}"))
        .to_string();
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).ok();
        s
    });
    let mut gdb = Command::new("gdb");
    gdb.args(["-batch", "-nx"])
        .arg("-ex")
        .arg(format!("target remote {addr}"));
    for c in commands {
        gdb.arg("-ex").arg(c);
    }
    let g = gdb.arg(guest).output().expect("run gdb");
    let mut stdout = String::new();
    lard.stdout.take().unwrap().read_to_string(&mut stdout).ok();
    let status = lard.wait().expect("lard ends");
    Debugged {
        gdb: format!(
            "{}{}",
            String::from_utf8_lossy(&g.stdout),
            String::from_utf8_lossy(&g.stderr)
        ),
        status: status.code().unwrap_or(-1),
        stdout,
        stderr: rest.join().unwrap(),
    }
}

/// The race section of a report (from its header to the statistics).
fn races(stderr: &str) -> &str {
    let at = stderr.find("== lard races").expect("a race report");
    let s = &stderr[at..];
    &s[..s.find("== lard stats").unwrap_or(s.len())]
}

#[test]
fn a_race_exception_stops_at_the_racy_line_with_memory_unchanged() {
    let g = guest();
    let line = marker_line(SRC, "/* RACE */");
    let s = debug(
        &["--on-race", "exception"],
        &g,
        &[
            "continue",
            "bt",
            "print shared",
            "print v",
            "monitor race",
            "monitor threads",
            "monitor seed",
            "continue",
        ],
    );
    let out = &s.gdb;
    assert!(out.contains("received signal SIGTRAP"), "{out}");
    assert!(
        out.contains("#0  0x") && out.contains("in writer (arg="),
        "{out}"
    );
    assert!(out.contains(&format!("gdb_race.c:{line}")), "{out}");
    // The racy write did not happen: `shared` holds the other writer's value.
    let value = |name: &str| -> i64 {
        let l = out
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"));
        l.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let (shared, v) = (value("$1 = "), value("$2 = "));
    assert!([1, 2].contains(&v), "{out}");
    assert_eq!(shared, 3 - v, "memory changed by the racy write: {out}");
    // The monitor commands: the report, the threads, the replay command.
    assert!(out.contains("race 1: write-write race"), "{out}");
    assert!(
        out.contains("<writer+") && out.contains("runnable"),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.contains(" run ")
            && l.contains("--on-race exception")
            && !l.contains("--gdb")
            && l.ends_with("gdb_race")),
        "{out}"
    );
    // Continuing executes the racy write; the guest's only racy PC pair
    // raised its exception, so the run goes on to its normal end: main
    // prints `watched = shared + 40`, shared being the later writer's.
    assert!(out.contains("exited normally"), "{out}");
    assert_eq!(s.status, 0, "{}", s.stderr);
    assert_eq!(s.stdout, format!("watched = {}\n", v + 40));
    assert!(
        s.stderr.contains("data-race exception in thread"),
        "{}",
        s.stderr
    );
    assert!(races(&s.stderr).contains("race 1: write-write race"));
}

#[test]
fn breakpoints_threads_and_steps_leave_the_run_as_without_gdb() {
    let g = guest();
    // A quantum longer than main's run up to its first join: both writers
    // exist, and main waits, when the first reaches the breakpoint.
    let quantum = ["--quantum", "100000"];
    let s = debug(
        &quantum,
        &g,
        &[
            "break writer",
            "continue",
            "info threads",
            "delete",
            "stepi",
            "next",
            "next",
            "info registers fs_base orig_rax",
            "continue",
        ],
    );
    let out = &s.gdb;
    assert!(out.contains("hit Breakpoint 1, writer (arg="), "{out}");
    // main and both writers (the barrier keeps them alive).
    let threads = out
        .lines()
        .filter(|l| {
            let w: Vec<&str> = l.trim_start_matches('*').split_whitespace().collect();
            w.len() > 2 && w[0].parse::<u32>().is_ok() && w[1] == "Thread"
        })
        .count();
    assert_eq!(threads, 3, "{out}");
    // With each thread's detector identity and state.
    assert!(out.contains("(T0, futex wait on 0x"), "{out}");
    assert!(out.contains("(T1, runnable)"), "{out}");
    let race = marker_line(SRC, "/* RACE */");
    assert!(
        out.contains(&format!("{race}\t    shared = v; /* RACE */")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("fs_base") && !l.contains(" 0x0 ")),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("orig_rax")), "{out}");
    assert!(out.contains("exited normally"), "{out}");
    // The debugged run is the undebugged run: output, status, races.
    let plain = run_plain(&quantum, &g, &[]);
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(s.status, shell_status(&plain));
    assert_eq!(races(&s.stderr), races(&stderr(&plain)));
}

#[test]
fn a_write_watchpoint_stops_after_the_writing_instruction() {
    let g = guest();
    let line = marker_line(SRC, "/* WATCHED */");
    let s = debug(
        &[],
        &g,
        &["watch watched", "continue", "info line *$pc", "continue"],
    );
    let out = &s.gdb;
    assert!(out.contains("Hardware watchpoint 1: watched"), "{out}");
    assert!(out.contains("Old value = 0"), "{out}");
    let new = out
        .lines()
        .find_map(|l| l.strip_prefix("New value = "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(["41", "42"].contains(&new), "{out}");
    // The stop is in main, on the writing line or the next statement's first
    // instruction.
    assert!(
        out.contains("main () at") || out.contains("in main ()"),
        "{out}"
    );
    assert!(
        out.contains(&format!("Line {line} of")) || out.contains(&format!("Line {} of", line + 1)),
        "{out}"
    );
    assert_eq!(s.stdout, format!("watched = {new}\n"));
}

#[test]
fn a_port_in_use_is_a_one_line_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let o = run_plain(&["--gdb", &format!("127.0.0.1:{port}")], &guest(), &[]);
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 119, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("lard: --gdb: cannot listen on 127.0.0.1:"),
        "{err}"
    );
    let bad = run_plain(&["--gdb", "no-such-address"], &guest(), &[]);
    assert_eq!(shell_status(&bad), 2, "{}", stderr(&bad));
}

#[test]
fn detaching_lets_the_run_finish_with_its_report() {
    let g = guest();
    let s = debug(&[], &g, &["break writer", "continue", "detach"]);
    assert!(s.gdb.contains("hit Breakpoint 1"), "{}", s.gdb);
    let plain = run_plain(&[], &g, &[]);
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(s.status, 0);
    assert_eq!(races(&s.stderr), races(&stderr(&plain)));
}

/// The registers compared after stepping back and forth.
const REGS: &str = "info registers rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15 rip eflags fs_base gs_base";

/// The register lines [`REGS`] printed after `marker`.
fn registers_after(out: &str, marker: &str) -> String {
    let at = out
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker} in {out}"));
    out[at + marker.len()..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("$"))
        .filter(|l| l.split_whitespace().count() >= 2 && !l.starts_with("0x"))
        .take(20)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn reverse_stepi_then_stepi_returns_to_the_same_registers() {
    let g = guest();
    let s = debug(
        &[],
        &g,
        &[
            "break writer",
            "continue",
            "stepi",
            "stepi",
            "stepi",
            "stepi",
            "echo FORWARD\\n",
            REGS,
            "reverse-stepi",
            "reverse-stepi",
            "reverse-stepi",
            "reverse-stepi",
            "echo BACK\\n",
            "info registers rip",
            "stepi",
            "stepi",
            "stepi",
            "stepi",
            "echo AGAIN\\n",
            REGS,
            "delete",
            "continue",
        ],
    );
    let out = &s.gdb;
    let forward = registers_after(out, "FORWARD");
    let again = registers_after(out, "AGAIN");
    assert!(
        forward.contains("rip") && forward.contains("fs_base"),
        "{out}"
    );
    assert_eq!(forward, again, "{out}");
    // Four steps back is the breakpoint's instruction.
    let back = registers_after(out, "BACK");
    let bp = out
        .lines()
        .find_map(|l| l.strip_prefix("Breakpoint 1 at "))
        .and_then(|l| l.split(':').next())
        .unwrap_or_else(|| panic!("{out}"))
        .to_string();
    assert!(back.contains(&bp), "{bp} not in {back}\n{out}");
    // The replays wrote nothing twice; the run ends as without gdb.
    let plain = run_plain(&[], &g, &[]);
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(s.status, 0);
    assert_eq!(races(&s.stderr), races(&stderr(&plain)));
}

#[test]
fn reverse_continue_and_reverse_next_go_back_to_earlier_stops() {
    let g = guest();
    let s = debug(
        &[],
        &g,
        &[
            "break writer",
            "continue",
            "continue",
            "echo REVERSE-CONTINUE\\n",
            "reverse-continue",
            "delete",
            "next",
            "next",
            "echo REVERSE-NEXT\\n",
            "reverse-next",
            "continue",
        ],
    );
    let out = &s.gdb;
    let after = |m: &str| &out[out.find(m).unwrap_or_else(|| panic!("no {m}: {out}"))..];
    // The second hit is the other writer; reverse-continue goes back to the first.
    let first = out
        .lines()
        .find(|l| l.contains("hit Breakpoint 1, writer (arg="))
        .unwrap_or_else(|| panic!("{out}"))
        .to_string();
    let rc = after("REVERSE-CONTINUE");
    assert!(
        rc.lines().any(|l| l == first),
        "{first} not after reverse-continue:\n{out}"
    );
    // Two lines forward, one line back.
    let line = marker_line(SRC, "pthread_barrier_wait(&meet);");
    assert!(
        after("REVERSE-NEXT")
            .lines()
            .find(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .is_some_and(|l| l.starts_with(&format!("{line}\t"))),
        "{out}"
    );
    let plain = run_plain(&[], &g, &[]);
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(s.status, 0);
}

#[test]
fn monitor_history_names_the_previous_access_and_its_thread() {
    let g = guest();
    let line = marker_line(SRC, "/* RACE */");
    // At the exception the detector has recorded the racy access itself;
    // one instruction back, the history is the one it was checked against.
    let s = debug(
        &["--on-race", "exception"],
        &g,
        &[
            "continue",
            "reverse-stepi",
            "echo HISTORY\\n",
            "monitor history &shared",
            "monitor history watched",
            "monitor history nosuch",
            "continue",
        ],
    );
    let out = &s.gdb;
    // The stopped writer is one kernel thread; the history names the other.
    let stopped: u32 = out
        .lines()
        .find_map(|l| l.strip_prefix("[Switching to Thread 1."))
        .and_then(|t| t.trim_end_matches(']').parse().ok())
        .unwrap_or_else(|| panic!("{out}"));
    let other = if stopped == 4001 { 4002 } else { 4001 };
    let h = &out[out.find("HISTORY").unwrap()..];
    assert!(h.contains("<shared+0x0> (8 byte(s)):"), "{out}");
    assert!(
        h.contains("last write by thread T") && h.contains(&format!("(kernel {other}) at clock")),
        "{out}"
    );
    assert!(
        h.contains("#0 writer ") && h.contains(&format!("gdb_race.c:{line}")),
        "{out}"
    );
    assert!(
        h.contains("<watched+0x0> (8 byte(s)):\n  no accesses"),
        "{out}"
    );
    assert!(
        h.contains("monitor history: `nosuch` is neither a number nor a data symbol"),
        "{out}"
    );
    // (The final continue runs the guest to its end.)
    assert_eq!(s.status, 0, "{}", s.stderr);
}

#[test]
fn a_unix_socket_serves_gdb_too() {
    let g = guest();
    let sock = scratch_file("gdb-sock").with_extension("sock");
    let mut lard = Command::new(lard())
        .args(["run", "--gdb"])
        .arg(&sock)
        .arg(&g)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lard");
    let mut err = BufReader::new(lard.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert_eq!(
        first.trim(),
        format!("lard: waiting for gdb on {}", sock.display())
    );
    let o = Command::new("gdb")
        .args(["-batch", "-nx", "-ex"])
        .arg(format!("target remote {}", sock.display()))
        .args(["-ex", "break main", "-ex", "continue", "-ex", "continue"])
        .arg(&g)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Breakpoint 1, main ()"), "{out}");
    assert!(out.contains("exited normally"), "{out}");
    assert!(lard.wait().unwrap().success());
    assert!(!sock.exists(), "the socket is removed");
}

#[test]
fn replays_read_the_same_input_and_print_it_once() {
    let g = build_c_with("gcc", "plain/gdb_stdin.c", "gdb_stdin", &["-O0", "-static"]);
    let input = scratch_file("gdb-stdin").with_extension("txt");
    let text = "abcdefghijklmnopqrstuvwxyz\n";
    std::fs::write(&input, text).unwrap();
    let s = debug_with_stdin(
        &[],
        &g,
        &[
            "break got",
            "continue",
            "continue",
            "continue",
            "reverse-continue",
            "print *b@n",
            "reverse-stepi",
            "stepi",
            "print *b@n",
            "delete",
            "continue",
        ],
        Stdio::from(std::fs::File::open(&input).unwrap()),
    );
    let out = &s.gdb;
    assert!(out.contains("$1 = \"efgh\""), "{out}");
    assert!(out.contains("$2 = \"efgh\""), "{out}");
    assert_eq!(s.stdout, text, "{out}");
    assert_eq!(s.status, 0);
    std::fs::remove_file(&input).ok();
}

#[test]
fn a_lost_connection_lets_the_run_finish_and_kill_stops_it() {
    let g = guest();
    let plain = run_plain(&[], &g, &[]);
    // gdb dies (SIGKILL, no detach) at a breakpoint.
    let s = debug(
        &[],
        &g,
        &["break writer", "continue", "shell kill -9 $PPID"],
    );
    assert!(s.gdb.contains("hit Breakpoint 1"), "{}", s.gdb);
    assert!(
        s.stderr
            .lines()
            .any(|l| l.starts_with("lard: gdb: ") && l.ends_with("; the guest runs on to its end")),
        "{}",
        s.stderr
    );
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(s.status, 0);
    assert_eq!(races(&s.stderr), races(&stderr(&plain)));
    // gdb's kill stops the guest, which reports as stopped by SIGKILL.
    let k = debug(&[], &g, &["break writer", "continue", "kill"]);
    assert_eq!(k.status, 137, "{}", k.stderr);
    assert!(k.stderr.contains("stopped by signal 9"), "{}", k.stderr);
    assert_eq!(k.stdout, "");
}

#[test]
fn a_fault_and_a_deadlock_stop_where_they_happen() {
    let seg = build_c_with(
        "gcc",
        "plain/segfault.c",
        "gdb_segfault",
        &["-O0", "-static"],
    );
    let line = marker_line("plain/segfault.c", "*p = 'x';");
    let s = debug(&[], &seg, &["continue", "bt 1", "continue"]);
    let out = &s.gdb;
    assert!(out.contains("received signal SIGSEGV"), "{out}");
    assert!(out.contains(&format!("segfault.c:{line}")), "{out}");
    assert!(
        out.contains("Program terminated with signal SIGSEGV"),
        "{out}"
    );
    assert_eq!(s.status, 139, "{}", s.stderr);
    assert_eq!(s.stdout, "about to fault\n");

    let dl = build_c_with(
        "gcc",
        "plain/deadlock.c",
        "gdb_deadlock",
        &["-O0", "-static"],
    );
    let s = debug(&[], &dl, &["continue", "monitor threads", "continue"]);
    let out = &s.gdb;
    assert!(out.contains("received signal SIGSTOP"), "{out}");
    assert_eq!(out.matches(": futex wait on 0x").count(), 3, "{out}");
    assert_eq!(s.status, 122, "{}", s.stderr);
    assert!(
        s.stderr.contains("deadlock: every live thread is blocked"),
        "{}",
        s.stderr
    );
}

#[test]
fn ctrl_c_interrupts_a_spinning_guest() {
    let g = build_c_with(
        "gcc",
        "plain/spin_forever.c",
        "gdb_spin",
        &["-O0", "-static"],
    );
    let line = marker_line("plain/spin_forever.c", "spins++;");
    // gdb's SIGINT while it waits in `continue` is the user's Ctrl-C.
    let s = debug(
        &[],
        &g,
        &[
            "shell (sleep 1; kill -INT $PPID) &",
            "continue",
            "print spins > 1000",
            "kill",
        ],
    );
    let out = &s.gdb;
    assert!(out.contains("received signal SIGINT"), "{out}");
    assert!(out.contains(&format!("spin_forever.c:{line}")), "{out}");
    assert!(out.contains("$1 = 1"), "{out}");
    assert_eq!(s.status, 137, "{}", s.stderr);
}

/// The statistics lines that depend on the schedule.
fn schedule_stats(stderr: &str) -> (u64, u64) {
    (
        stats_number(stderr, "instructions retired"),
        stats_number(stderr, "context switches"),
    )
}

#[test]
fn stops_steps_and_replays_leave_a_random_schedule_unchanged() {
    let g = build_c_with(
        "gcc",
        "plain/racy_sum.c",
        "gdb_racy_sum",
        &["-O0", "-static"],
    );
    let args = [
        "--sched",
        "random",
        "--seed",
        "7",
        "--quantum",
        "5",
        "--stats",
    ];
    let plain = run_plain(&args, &g, &[]);
    let s = debug(
        &args,
        &g,
        &[
            "break work",
            "continue",
            "stepi",
            "stepi",
            "stepi",
            "reverse-stepi",
            "stepi",
            "continue",
            "next",
            "delete",
            "watch counter",
            "continue",
            "continue",
            "delete",
            "continue",
        ],
    );
    assert!(
        s.gdb.contains("Hardware watchpoint 2: counter"),
        "{}",
        s.gdb
    );
    assert!(s.gdb.contains("exited normally"), "{}", s.gdb);
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(schedule_stats(&s.stderr), schedule_stats(&stderr(&plain)));
    assert_eq!(races(&s.stderr), races(&stderr(&plain)));
}

#[test]
fn monitor_seed_replays_the_run_including_its_clock() {
    // date(1) prints CLOCK_REALTIME: its only input from the host.
    let date = Path::new("/bin/date");
    let s = debug(&[], date, &["monitor seed", "continue"]);
    let cmd = s
        .gdb
        .lines()
        .find(|l| l.contains(" run --realtime-start "))
        .unwrap_or_else(|| panic!("{}", s.gdb));
    let words: Vec<&str> = cmd.split_whitespace().collect();
    assert_eq!(words.last(), Some(&"/bin/date"), "{cmd}");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let again = Command::new(lard())
        .args(&words[1..])
        .env("LARD_TEST_VAR", "from-the-test")
        .output()
        .unwrap();
    assert_eq!(s.status, 0, "{}", s.stderr);
    assert!(!s.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&again.stdout), s.stdout, "{cmd}");
}

#[test]
fn gdb_writes_memory_and_registers() {
    let g = guest();
    let line = marker_line(SRC, "/* WATCHED */");
    // At `watched = shared + 40`: memory first, then the loaded register.
    let s = debug(
        &[],
        &g,
        &[
            &format!("break {line}"),
            "continue",
            "set var shared = 100",
            "stepi",
            "info registers rax",
            "set $rax = 1000",
            "delete",
            "continue",
        ],
    );
    assert!(
        s.gdb
            .lines()
            .any(|l| l.starts_with("rax") && l.ends_with(" 100")),
        "{}",
        s.gdb
    );
    assert_eq!(s.stdout, "watched = 1040\n", "{}", s.gdb);
}

#[test]
fn reverse_continue_stops_before_each_watched_write() {
    let g = guest();
    let line = marker_line(SRC, "/* RACE */");
    let s = debug(
        &[],
        &g,
        &[
            "watch shared",
            "continue",
            "continue",
            "echo BACK\\n",
            "reverse-continue",
            "print shared",
            "reverse-continue",
            "print shared",
            "delete",
            "continue",
        ],
    );
    let out = &s.gdb;
    // Forward: 0 -> first writer's value -> second writer's value.
    let news: Vec<i64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("New value = "))
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(news.len(), 4, "{out}");
    let (first, second) = (news[0], news[1]);
    // Backwards: stopped before the second write (the first's value), then
    // before the first write (0), each at the writing line.
    assert_eq!(news[2..], [first, 0], "{out}");
    let back = &out[out.find("BACK").unwrap()..];
    assert!(
        back.contains(&format!("$1 = {first}")) && back.contains("$2 = 0"),
        "{out}"
    );
    assert_eq!(
        back.matches(&format!("gdb_race.c:{line}")).count(),
        2,
        "{out}"
    );
    assert!([1, 2].contains(&second) && first + second == 3, "{out}");
    assert_eq!(s.stdout, format!("watched = {}\n", second + 40));
}

#[test]
fn reverse_execution_is_refused_in_one_line_with_a_detector_thread() {
    let g = guest();
    let plain = run_plain(&["--detector", "lardish"], &g, &[]);
    let s = debug(
        &["--detector", "lardish"],
        &g,
        &[
            "break writer",
            "continue",
            "stepi",
            "reverse-stepi",
            "delete",
            "continue",
        ],
    );
    assert!(
        s.gdb.contains("No more reverse-execution history."),
        "{}",
        s.gdb
    );
    let why: Vec<&str> = s
        .stderr
        .lines()
        .filter(|l| l.starts_with("lard: gdb: reverse execution: "))
        .collect();
    assert_eq!(why.len(), 1, "{}", s.stderr);
    assert!(why[0].contains("detector thread"), "{}", s.stderr);
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(races(&s.stderr), races(&stderr(&plain)));
}

#[test]
fn the_event_stream_of_a_debugged_run_is_the_undebugged_one() {
    let g = build_c_with(
        "gcc",
        "plain/racy_sum.c",
        "gdb_racy_sum",
        &["-O0", "-static"],
    );
    let args = [
        "--detector",
        "none",
        "--observe",
        "all",
        "--observe-sync",
        "--sched",
        "random",
        "--seed",
        "3",
        "--stats",
    ];
    let plain = run_plain(&args, &g, &[]);
    let hash = |e: &str| stats_line(e, "event stream hash").to_string();
    // Pauses before the first thread switch, in the middle of blocks, and
    // replays (every event the observer sees, in order, is hashed).
    let s = debug(
        &args,
        &g,
        &[
            "break main",
            "continue",
            "stepi",
            "stepi",
            "reverse-stepi",
            "break work",
            "continue",
            "next",
            "delete",
            "continue",
        ],
    );
    assert!(s.gdb.contains("exited normally"), "{}", s.gdb);
    assert_eq!(hash(&s.stderr), hash(&stderr(&plain)));
    assert_eq!(schedule_stats(&s.stderr), schedule_stats(&stderr(&plain)));
}

#[test]
fn ctrl_c_while_waiting_for_gdb_ends_lard() {
    let mut lard = Command::new(lard())
        .args(["run", "--gdb", "127.0.0.1:0"])
        .arg(guest())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lard");
    let mut err = BufReader::new(lard.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(first.starts_with("lard: waiting for gdb on "), "{first}");
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(lard.id() as i32, libc::SIGINT) };
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = lard.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        rest.contains("stopped by signal 2 after 0 instructions"),
        "{rest}"
    );
}

#[test]
fn reverse_continue_goes_back_across_checkpoint_intervals() {
    let g = build_c_with("gcc", "plain/gdb_long.c", "gdb_long", &["-O0", "-static"]);
    let plain = run_plain(&["--stats"], &g, &[]);
    let insns = stats_number(&stderr(&plain), "instructions retired");
    assert!(
        insns > 3 << 22,
        "{insns} instructions: fewer than 3 checkpoint intervals"
    );
    let s = debug(
        &[],
        &g,
        &[
            "break mark",
            "continue",
            "continue",
            "echo BACK\\n",
            "reverse-continue",
            "reverse-continue",
            "echo FORWARD\\n",
            "continue",
            "continue",
            "delete",
            "continue",
        ],
    );
    let out = &s.gdb;
    let back = &out[out.find("BACK").unwrap()..out.find("FORWARD").unwrap()];
    assert!(back.contains("Breakpoint 1, mark (which=1)"), "{out}");
    assert!(back.contains("No more reverse-execution history."), "{out}");
    let forward = &out[out.find("FORWARD").unwrap()..];
    assert!(
        forward.contains("mark (which=1)") && forward.contains("mark (which=2)"),
        "{out}"
    );
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(s.status, 0);
}

const PIE_SRC: &str = "plain/gdb_two_races.c";

/// gdb_two_races.c built as gcc builds by default: a position-independent
/// executable, dynamically linked (checked: ELF type ET_DYN, with an
/// interpreter).
fn pie_guest() -> PathBuf {
    let g = build_c_with("gcc", PIE_SRC, "gdb_two_races", &["-O0"]);
    let elf = std::fs::read(&g).unwrap();
    assert_eq!(u16::from_le_bytes([elf[16], elf[17]]), 3, "not a PIE");
    assert!(
        elf.windows(27).any(|w| w == b"/lib64/ld-linux-x86-64.so.2"),
        "not dynamically linked"
    );
    g
}

#[test]
fn a_default_gcc_build_stops_at_breakpoints_with_its_shared_libraries() {
    let g = pie_guest();
    let line = marker_line(PIE_SRC, "/* RACE1 */");
    let s = debug(
        &[],
        &g,
        &[
            "break deposit",
            "continue",
            "bt",
            "info sharedlibrary",
            "delete",
            "continue",
        ],
    );
    let out = &s.gdb;
    // The breakpoint, set before the program (and its libraries) was
    // relocated, is hit at the function's first line.
    assert!(out.contains("hit Breakpoint 1, deposit (v="), "{out}");
    assert!(
        out.contains(&format!("gdb_two_races.c:{line}\n{line}\t")),
        "{out}"
    );
    assert!(out.contains("in worker (arg="), "{out}");
    // ld.so and libc are known, with their symbols, and so are libc's
    // frames.
    for lib in ["/lib64/ld-linux-x86-64.so.2", "libc.so.6"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with("0x") && l.contains(" Yes ") && l.ends_with(lib)),
            "{lib}: {out}"
        );
    }
    assert!(out.contains("in start_thread"), "{out}");
    assert!(out.contains("exited normally"), "{out}");
    assert_eq!(s.status, 0, "{}", s.stderr);
    assert!(s.stdout.starts_with("balance = 3 audit = "), "{}", s.stdout);
}

/// A report's race list and summary, and its racy dynamic accesses when
/// `--stats` printed them (not the pruning table of the figures, which
/// counts the accesses a debugged run re-executed after their stops).
fn race_list(stderr: &str) -> String {
    let r = races(stderr);
    let list = &r[..r.find("== lard race figures").unwrap_or(r.len())];
    let dre = r
        .lines()
        .find(|l| l.starts_with("racy dynamic accesses"))
        .unwrap_or_default();
    format!("{list}{dre}")
}

#[test]
fn each_new_race_stops_and_the_run_goes_on_to_its_end() {
    let g = pie_guest();
    let (race1, race2) = (
        marker_line(PIE_SRC, "/* RACE1 */"),
        marker_line(PIE_SRC, "/* RACE2 */"),
    );
    // (A random schedule, whose every switch the stops must leave alone.)
    let sched = ["--sched", "random", "--seed", "7", "--stats"];
    let plain = run_plain(&sched, &g, &[]);
    let s = debug(
        &[&sched[..], &["--on-race", "exception"]].concat(),
        &g,
        &[
            "continue",
            "echo STOP1\\n",
            "bt 2",
            "print balance",
            "stepi",
            "echo STEPPED\\n",
            "continue",
            "echo STOP2\\n",
            "bt 1",
            "continue",
            "echo STOP3\\n",
            "bt 1",
            "continue",
        ],
    );
    let out = &s.gdb;
    let part = |from: &str, to: &str| {
        let a = out.find(from).unwrap_or_else(|| panic!("no {from}: {out}"));
        let b = out[a..].find(to).map_or(out.len(), |b| a + b);
        out[a..b].to_string()
    };
    // Three racy PC pairs: deposit's read and write of `balance`, then
    // record's write of `audit`, each a stop at its racy line with the
    // access not yet made.
    let one = part("STOP1", "STEPPED");
    assert!(
        one.contains("deposit (v=") && one.contains(&format!("gdb_two_races.c:{race1}")),
        "{out}"
    );
    assert!(one.contains("in worker (arg="), "{out}");
    let two = part("STOP2", "STOP3");
    assert!(
        two.contains("deposit (v=") && two.contains(&format!("gdb_two_races.c:{race1}")),
        "{out}"
    );
    let three = part("STOP3", "exited");
    assert!(
        three.contains("record (v=") && three.contains(&format!("gdb_two_races.c:{race2}")),
        "{out}"
    );
    assert_eq!(out.matches("received signal SIGTRAP").count(), 3, "{out}");
    // The run ends as the plain run does: output, races, status, and the
    // same instructions and context switches.
    assert!(out.contains("exited normally"), "{out}");
    assert_eq!(s.status, 0, "{}", s.stderr);
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(race_list(&s.stderr), race_list(&stderr(&plain)));
    assert!(race_list(&s.stderr).contains("race 3:"), "{}", s.stderr);
    assert_eq!(
        schedule_stats(&s.stderr),
        schedule_stats(&stderr(&plain)),
        "{}",
        s.stderr
    );
    assert_eq!(
        s.stderr.matches("lard: gdb: data-race exception").count(),
        3,
        "{}",
        s.stderr
    );
}

#[test]
fn kill_or_detach_at_a_race_stop() {
    let g = pie_guest();
    // Detached at the first race stop, the run goes on without stops.
    let plain = run_plain(&[], &g, &[]);
    let d = debug(&["--on-race", "exception"], &g, &["continue", "detach"]);
    assert_eq!(d.status, 0, "{}", d.stderr);
    assert_eq!(d.stdout, stdout(&plain));
    assert_eq!(race_list(&d.stderr), race_list(&stderr(&plain)));
    assert_eq!(
        d.stderr.matches("data-race exception").count(),
        1,
        "{}",
        d.stderr
    );
    // gdb's kill there is SIGKILL.
    let s = debug(&["--on-race", "exception"], &g, &["continue", "kill"]);
    assert!(s.gdb.contains("received signal SIGTRAP"), "{}", s.gdb);
    assert_eq!(s.status, 137, "{}", s.stderr);
    assert!(s.stderr.contains("stopped by signal 9"), "{}", s.stderr);
    assert!(s.stderr.contains("race 1:"), "{}", s.stderr);
    assert_eq!(s.stdout, "");
    // At a fault's stop too: gdb's kill is SIGKILL, not the fault.
    let seg = build_c_with(
        "gcc",
        "plain/segfault.c",
        "gdb_segfault",
        &["-O0", "-static"],
    );
    let f = debug(&[], &seg, &["continue", "kill"]);
    assert!(f.gdb.contains("received signal SIGSEGV"), "{}", f.gdb);
    assert_eq!(f.status, 137, "{}", f.stderr);
}

#[test]
fn gdb_reads_the_libraries_the_guest_loaded_under_a_sysroot() {
    let g = pie_guest();
    // A sysroot with copies of ld.so and libc; the copy of ld.so carries
    // bytes after its end (which loading ignores), so that it differs from
    // the host's.
    let root = scratch_file("gdb-sysroot").with_extension("d");
    let ld = root.join("lib64/ld-linux-x86-64.so.2");
    let libc = root.join("lib/x86_64-linux-gnu/libc.so.6");
    for (copy, host) in [
        (&ld, "/lib64/ld-linux-x86-64.so.2"),
        (&libc, "/lib/x86_64-linux-gnu/libc.so.6"),
    ] {
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(host, copy).unwrap();
    }
    let mut bytes = std::fs::read(&ld).unwrap();
    bytes.extend_from_slice(b"LARD-SYSROOT-COPY");
    std::fs::write(&ld, &bytes).unwrap();
    let got = scratch_file("gdb-sysroot-ld.so");
    let s = debug(
        &["--sysroot", root.to_str().unwrap()],
        &g,
        &[
            &format!("remote get /lib64/ld-linux-x86-64.so.2 {}", got.display()),
            "break record",
            "continue",
            "info sharedlibrary",
            "delete",
            "continue",
        ],
    );
    let out = &s.gdb;
    // gdb's file transfers read the files under the sysroot.
    assert_eq!(std::fs::read(&got).unwrap(), bytes, "{out}");
    assert!(out.contains("hit Breakpoint 1, record (v="), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains(" Yes ") && l.ends_with("libc.so.6")),
        "{out}"
    );
    assert!(out.contains("exited normally"), "{out}");
    assert_eq!(s.status, 0, "{}", s.stderr);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn reverse_continue_goes_back_across_race_stops() {
    let g = pie_guest();
    let plain = run_plain(&[], &g, &[]);
    let s = debug(
        &["--on-race", "exception"],
        &g,
        &[
            "continue",
            "continue",
            "continue",
            "echo AT-RECORD\\n",
            "bt 1",
            "break deposit",
            "reverse-continue",
            "echo BACK\\n",
            "bt 1",
            "detach",
        ],
    );
    let out = &s.gdb;
    let at = out.find("AT-RECORD").unwrap_or_else(|| panic!("{out}"));
    let back = out.find("BACK").unwrap_or_else(|| panic!("{out}"));
    assert!(out[at..back].contains("in record (v="), "{out}");
    // Back past the three race stops (a replay passes them) to the last
    // time a thread entered deposit().
    assert!(
        out[at..back].contains("hit Breakpoint 1, deposit (v="),
        "{out}"
    );
    assert!(out[back..].contains("#0  deposit (v="), "{out}");
    // Detached there, the run goes on to the end it has without gdb.
    assert_eq!(s.status, 0, "{}", s.stderr);
    assert_eq!(s.stdout, stdout(&plain));
    assert_eq!(race_list(&s.stderr), race_list(&stderr(&plain)));
    // The three stops were said once each; without gdb nothing stops.
    assert_eq!(
        s.stderr.matches("lard: gdb: data-race exception").count(),
        3,
        "{}",
        s.stderr
    );
}

/// A signal the guest handles stops gdb first, as under ptrace: gdb
/// names it, continuing runs the handler, `signal 0` drops it, and
/// `handle SIGUSR1 nostop noprint` lets every one through unseen. The
/// guest (a default PIE build) counts the signals its handler took.
#[test]
fn a_handled_signal_stops_gdb_first_and_gdb_decides_its_fate() {
    let g = build_c_with("gcc", "plain/gdb_signals.c", "gdb_signals", &["-O0"]);
    assert_eq!(stdout(&native(&g, &[])), "taken 3\n");
    let d = debug(
        &[],
        &g,
        &[
            "break on_usr1",
            "continue",
            "continue",
            "continue",
            "signal 0",
            "continue",
        ],
    );
    let stops = d.gdb.matches("received signal SIGUSR1").count();
    assert_eq!(stops, 3, "{}", d.gdb);
    assert_eq!(
        d.gdb.matches("Breakpoint 1, on_usr1").count(),
        2,
        "{}",
        d.gdb
    );
    assert_eq!(d.stdout, "taken 2\n", "{}\n{}", d.gdb, d.stderr);
    assert_eq!(d.status, 0, "{}", d.stderr);
    let quiet = debug(&[], &g, &["handle SIGUSR1 nostop noprint", "continue"]);
    assert!(!quiet.gdb.contains("received signal"), "{}", quiet.gdb);
    assert_eq!(quiet.stdout, "taken 3\n", "{}", quiet.gdb);
    assert_eq!(quiet.status, 0, "{}", quiet.stderr);
}
