//! `lard run`: one guest program on the LARDx86 CPU, checked by a race
//! detector, with its reports and exit status (docs/cli.md).
//!
//! * `args.rs`: the options;
//! * `guest.rs`: the program, found as `execvp` finds it;
//! * `config.rs`: the machine's configuration from the options;
//! * `checker.rs`: the observer and the reports it renders;
//! * `report.rs`: what ended the run, and the one write of the report;
//! * `exec.rs`: the hand-off when the guest calls `execve`.

mod args;
mod checker;
mod config;
mod exec;
mod guest;
mod report;

pub use args::RunArgs;

use crate::linux::hostfd::{self, StderrCopy};
use crate::linux::process;
use crate::observe::detect::RaceLog;
use crate::observe::observer::{Observer, RecordingObserver};
use crate::run::{Emulator, Outcome, RunLimits, StopReason};
use checker::{Checker, ReportContext};
use guest::Guest;
use std::cell::RefCell;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::atomic::{AtomicI32, Ordering};

pub use crate::cmd::exit::*;

/// `--sched pct` without `--pct-depth`.
pub const PCT_DEPTH: u32 = 2;
/// `--sched pct` without `--pct-steps`.
pub const PCT_STEPS: u64 = 100_000;
/// The largest `--quantum`: a random quantum (up to twice it) must fit the
/// clock's block count (emu/src/cpu/uc.rs, `Clock`).
pub const MAX_QUANTUM: u64 = 1 << 25;

/// Why a run did not start or could not finish; each prints as
/// `lard: MESSAGE` and ends lard with its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// Options that do not go together ([`EXIT_USAGE`]).
    Usage(String),
    /// An unusable input file ([`EXIT_BAD_INPUT`]).
    BadInput(String),
    /// The guest, its interpreter or the sysroot is missing
    /// ([`EXIT_NOT_FOUND`]).
    NotFound(String),
    /// The guest cannot run ([`EXIT_NOT_RUNNABLE`]).
    NotRunnable(String),
    /// `--gdb` failed ([`EXIT_GDB`]).
    Gdb(String),
    /// lard itself failed ([`EXIT_INTERNAL`]).
    Internal(String),
}

impl RunError {
    /// lard's exit status for this error.
    pub fn exit_status(&self) -> u8 {
        match self {
            RunError::Usage(_) => EXIT_USAGE,
            RunError::BadInput(_) => EXIT_BAD_INPUT,
            RunError::NotFound(_) => EXIT_NOT_FOUND,
            RunError::NotRunnable(_) => EXIT_NOT_RUNNABLE,
            RunError::Gdb(_) => EXIT_GDB,
            RunError::Internal(_) => EXIT_INTERNAL,
        }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Usage(m)
            | RunError::BadInput(m)
            | RunError::NotFound(m)
            | RunError::NotRunnable(m)
            | RunError::Gdb(m)
            | RunError::Internal(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for RunError {}

/// Checks `lard run` option words (no guest) as `lard run` checks them
/// before the guest starts: clap's parse (names, values, their types and
/// ranges) and the options that must go together. The error is one line
/// naming the problem. `lard explore` checks its runs' options with it
/// before the first run.
pub fn check_options<S: AsRef<std::ffi::OsStr>>(words: &[S]) -> Result<(), String> {
    check_options_in(words, None)
}

/// [`check_options`] for runs started in directory `dir` (`None`: this
/// process's): relative files the options name (`--suppressions`) are
/// read from there. `lard campaign` checks its runs' options with it.
pub fn check_options_in<S: AsRef<std::ffi::OsStr>>(
    words: &[S],
    dir: Option<&std::path::Path>,
) -> Result<(), String> {
    let mut args = parse_options(words)?;
    guest::identity(&args).map_err(|e| e.to_string())?;
    config::sched_policy(&args).map_err(|e| e.to_string())?;
    checker::simd(&args).map_err(|e| e.to_string())?;
    let shown: Vec<String> = args
        .suppressions
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if let Some(dir) = dir {
        for p in &mut args.suppressions {
            *p = dir.join(&*p);
        }
    }
    guest::suppressions(&args, &shown).map_err(|e| e.to_string())?;
    if let Some(list) = &args.detectors {
        crate::observe::accuracy::parse_variants(list).map_err(|e| format!("--detectors: {e}"))?;
    }
    Ok(())
}

/// Checks `lard run` option words that are part of a run's options: each
/// option's name, value, type and range; what the words need from other
/// options (an option another requires, options that conflict) is left to
/// [`check_options`] of the whole. The error is one line.
pub fn check_option_words<S: AsRef<std::ffi::OsStr>>(words: &[S]) -> Result<(), String> {
    use clap::error::ErrorKind;
    match parse(words) {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::MissingRequiredArgument | ErrorKind::ArgumentConflict
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(clap_line(&e)),
    }
}

/// Parses `lard run` option words (no guest) as clap does. The error is
/// one line.
fn parse_options<S: AsRef<std::ffi::OsStr>>(words: &[S]) -> Result<RunArgs, String> {
    parse(words).map_err(|e| clap_line(&e))
}

fn parse<S: AsRef<std::ffi::OsStr>>(words: &[S]) -> Result<RunArgs, clap::Error> {
    #[derive(clap::Parser)]
    #[command(name = "lard run")]
    struct Probe {
        #[command(flatten)]
        run: RunArgs,
    }
    use clap::Parser as _;
    let argv = std::iter::once(std::ffi::OsStr::new("lard run"))
        .chain(words.iter().map(AsRef::as_ref))
        .chain(["--", "GUEST"].map(std::ffi::OsStr::new));
    Probe::try_parse_from(argv).map(|p| p.run)
}

/// clap's error in one line: its message, and its tip or the possible
/// values if it names them (`unexpected argument '--detecter' found (tip:
/// a similar argument exists: '--detector')`).
fn clap_line(e: &clap::Error) -> String {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return "--help and --version are not options of a run".into();
    }
    let text = e.to_string();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("invalid options");
    let mut out = first.strip_prefix("error: ").unwrap_or(first).to_string();
    // The arguments a message lists on the lines after it (required ones).
    let listed: Vec<&str> = lines
        .clone()
        .take_while(|l| l.starts_with("  "))
        .map(str::trim)
        .take_while(|l| !l.starts_with('[') && !l.starts_with("tip: "))
        .collect();
    if !listed.is_empty() {
        out = format!("{} {}", out, listed.join(", "));
    }
    let more = lines
        .map(str::trim)
        .find(|l| l.starts_with("tip: ") || l.starts_with("[possible values: "));
    if let Some(more) = more {
        out = format!("{out} ({})", more.trim_matches(['[', ']']));
    }
    out
}

/// `lard run`: runs the guest `args` name and reports; lard's log goes to
/// the descriptor `log_fd` holds (lard's stderr copy while the guest
/// runs).
pub fn run(args: RunArgs, log_fd: &AtomicI32) -> ExitCode {
    match run_guest(args, log_fd) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("lard: {e}");
            ExitCode::from(e.exit_status())
        }
    }
}

fn run_guest(mut args: RunArgs, log_fd: &AtomicI32) -> Result<u8, RunError> {
    let identity = guest::identity(&args)?;
    let shown: Vec<String> = args
        .suppressions
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let options_dir = guest::absolute_paths(&mut args);
    guest::output_dirs(&args)?;
    let suppressions = guest::suppressions(&args, &shown)?;
    let guest = Guest::locate(&args, options_dir)?;
    let mut config = config::config(&args, &guest, identity)?;
    config.suppressions = std::sync::Arc::new(suppressions);
    let stderr_copy = match args.report_fd {
        Some(fd) => StderrCopy::adopt(fd),
        None => StderrCopy::save(),
    };
    config.host_fds.extend(stderr_copy.fd());
    config.report_fd = stderr_copy.fd();
    if let Some(fd) = stderr_copy.fd() {
        log_fd.store(fd, Ordering::Relaxed);
    }
    config::check_sysroot(&args)?;
    let simd = checker::simd(&args)?;
    let (checker, observer) = Checker::build(&args, simd)?;
    let observer: Box<dyn Observer> = match &args.record_trace {
        None => observer,
        Some(path) => {
            let f = std::fs::File::create(path)
                .and_then(hostfd::move_high)
                .map_err(|e| {
                    RunError::BadInput(format!("cannot create {}: {e}", path.display()))
                })?;
            config.host_fds.push(f.as_raw_fd());
            Box::new(RecordingObserver::new(observer, f))
        }
    };
    let envp: Vec<Vec<u8>> = std::env::vars_os()
        .map(|(k, v)| {
            let mut e = k.into_encoded_bytes();
            e.push(b'=');
            e.extend(v.into_encoded_bytes());
            e
        })
        .collect();
    // lard's own handlers come first: the guest's first thread takes the
    // host's mask (and clears it), and a signal an `execve` kept pending
    // must find them.
    let interrupt = crate::cmd::interrupt_flag();
    let mut emu =
        Emulator::new(&guest.file, &guest.argv, &envp, config, observer).map_err(|e| {
            let msg = format!("{}: {e}", args.guest.display());
            if e.is_missing_file() {
                RunError::NotFound(msg)
            } else {
                RunError::NotRunnable(msg)
            }
        })?;
    emu.set_limits(RunLimits {
        max_insns: args.max_insns,
        timeout: args.timeout,
        interrupt,
    });
    let mut gdb_replay = None;
    let mut outcome = match &args.gdb {
        None => run_past_suppressed(&mut emu, checker.race_log()),
        Some(addr) => {
            let facts = gdb_facts(
                checker.race_log().cloned(),
                emu.machine().process.realtime_base,
            );
            let announce = &mut |a: &str| eprintln!("lard: waiting for gdb on {a}");
            let served = crate::gdb::serve(&mut emu, addr, &facts, announce)
                .map_err(|e| RunError::Gdb(format!("--gdb: {e}")))?;
            gdb_replay = Some(served.replay);
            served.outcome
        }
    };
    // After a fork this is the child's identity.
    let identity = emu.machine().config.process;
    if let Outcome::Stopped(StopReason::Timeout(t)) = outcome {
        wait_for_children(t);
    }
    if let Outcome::Exec(_) = &outcome {
        // From here to the exec every signal waits (blocked); one that
        // came before it stops the run as it would have a moment earlier.
        crate::linux::signals::host::block_for_exec(!0);
        if let Some(sig) = emu.interrupted() {
            outcome = Outcome::Stopped(StopReason::Signal(sig));
        }
    }
    // Everything this process reports goes out in one write at the end
    // (labelled with its pid when it is part of a process tree), so the
    // reports of processes that end together do not interleave.
    let mut out = String::new();
    let mut status = report::outcome(&emu, &outcome, &args.guest, &mut out);
    let mut failed_writes = Vec::new();
    let mut write_file = |path: &Option<PathBuf>, text: &str| {
        let Some(path) = path
            .as_deref()
            .and_then(|p| process::per_process_path(p, &identity))
        else {
            return;
        };
        if let Err(e) = std::fs::write(&path, text) {
            failed_writes.push(format!("lard: cannot write {}: {e}\n", path.display()));
        }
    };
    let reports = checker.render(&ReportContext {
        machine: emu.machine(),
        descendant: identity.descendant,
        hw_stats: args.hw_stats,
        gen_suppressions: args.gen_suppressions,
        stats: args.stats,
        sarif: args.sarif.is_some(),
        html: args.report_html.is_some(),
    });
    if let Some(json) = &reports.json {
        write_file(&args.report_json, json);
    }
    if let Some(sarif) = &reports.sarif {
        write_file(&args.sarif, sarif);
    }
    if let Some(html) = &reports.html {
        write_file(&args.report_html, html);
    }
    if let (Some(code), Outcome::Exited(_)) = (args.race_exit_code, &outcome) {
        if reports.races > 0 {
            status = code;
        }
    }
    out.push_str(&reports.text);
    out.extend(reports.hw_text);
    if let Some(json) = &reports.hw_json {
        write_file(&args.hw_stats_json, json);
    }
    if let Some(json) = &reports.hw_profile {
        write_file(&args.hw_profile, json);
    }
    if let (Some(adv), Some(c)) = (
        &emu.machine().obs.adversary,
        &emu.machine().config.adversarial,
    ) {
        out.push_str(&crate::cmd::adversarial::summary(
            adv.memory.heuristic(),
            &adv.memory.stats(),
            &c.triggers,
        ));
    }
    if args.stats {
        out.push_str(&emu.report().text());
    }
    write_file(&args.stats_json, &emu.report().json());
    if !failed_writes.is_empty() {
        out.extend(failed_writes);
        status = EXIT_INTERNAL;
    }
    if identity.labelled {
        out = report::label(&out, &identity, &guest.argv);
    }
    if let Outcome::Exec(req) = &outcome {
        // The program before the exec reports only what it found: its
        // races (shells fork and exec for every command).
        if reports.races > 0 {
            report::emit(&out, stderr_copy.fd());
        }
        let err = exec::hand_off(
            req,
            &guest,
            &identity,
            args.trace_children,
            stderr_copy,
            log_fd,
        );
        return Err(RunError::Internal(err));
    }
    // The guest's file descriptors are lard's: a guest that closed (or
    // reopened) fd 2, as every coreutils program does at exit, must not
    // swallow the report.
    log_fd.store(2, Ordering::Relaxed);
    stderr_copy.restore();
    report::emit(&out, None);
    // A process a guest started dies of its guest's signal, so that its
    // parent's wait sees what it would natively.
    // So does one lard's own SIGINT/SIGTERM handler stopped (the guest
    // left the signal at its default action).
    if identity.descendant {
        if let Outcome::Signaled { signal, .. } | Outcome::Stopped(StopReason::Signal(signal)) =
            outcome
        {
            process::die_of(signal);
        }
    }
    // Under --gdb with reverse execution, this process may be a replay's:
    // the process the shell started exits with the status.
    if let Some(r) = &gdb_replay {
        r.relay_exit(status);
    }
    Ok(status)
}

/// After the wall-clock limit stopped this process, which may have stopped
/// while waiting for a child: the guest's child processes (lard processes
/// under the same limit of their own, or native ones) are waited for, up
/// to `limit` more, so that their reports come before this process's and
/// lard ends after its tree, as when the guest's own wait returned.
fn wait_for_children(limit: std::time::Duration) {
    let end = std::time::Instant::now() + limit;
    loop {
        // SAFETY: reaps any child of this process; the status is not read.
        let r = unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) };
        if r < 0 || (r == 0 && std::time::Instant::now() >= end) {
            return;
        }
        if r == 0 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Runs the guest; a data-race exception (`--on-race exception`) for a
/// race the suppressions hide is no stop: the run goes on as after a
/// debugger's `continue`.
fn run_past_suppressed(emu: &mut Emulator, log: Option<&Rc<RefCell<RaceLog>>>) -> Outcome {
    let mut shown = 0;
    loop {
        let outcome = emu.run();
        let (Outcome::ObserverStop { .. }, Some(log)) = (&outcome, log) else {
            return outcome;
        };
        let now = crate::report::reported(&log.borrow(), emu.machine())
            .log
            .pairs
            .len();
        if now > shown {
            return outcome;
        }
        shown = now;
    }
}

/// What `lard run --gdb`'s monitor commands know: the command line that
/// replays this run (without `--gdb`, with the run's `--realtime-start`),
/// the race report so far.
fn gdb_facts(race_log: Option<Rc<RefCell<RaceLog>>>, realtime: u64) -> crate::gdb::MonitorData {
    let mut words: Vec<String> = Vec::new();
    let mut args = std::env::args().peekable();
    while let Some(a) = args.next() {
        if a == "--gdb" {
            args.next();
            continue;
        }
        if a.starts_with("--gdb=") {
            continue;
        }
        words.push(a);
    }
    // The guest's only input from the host clock, pinned.
    if !words.iter().any(|w| w.starts_with("--realtime-start")) {
        let at = words.len().min(2);
        words.splice(
            at..at,
            ["--realtime-start".to_string(), realtime.to_string()],
        );
    }
    let replay_command = words
        .iter()
        .map(|w| crate::cmd::shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ");
    crate::gdb::MonitorData {
        replay_command,
        race_text: race_log.map(|log| -> crate::gdb::RaceText {
            Box::new(move |m| crate::report::reported(&log.borrow(), m).log.text(m))
        }),
    }
}
