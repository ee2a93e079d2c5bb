//! `lard explore`: run a program under many schedules and report what
//! some of them do that the first does not (docs/explore.md).
//!
//! 1. The *first run* is `lard run`'s default schedule (round-robin,
//!    quantum 1000). It records the exit status, the output, the races, the
//!    instructions and the scheduling steps (K for PCT).
//! 2. Runs 1…N each use one schedule — `--sched pct` (`--pct-steps K`) or
//!    `--sched random` — with `--seed BASE+i`, as a child `lard run`
//!    ([`command`]), `--jobs` at a time, each with a wall-clock
//!    `--timeout` and `--max-insns` at 20× the first run's instructions.
//! 3. Each run is compared with the first ([`classify`]): a crash, a fault,
//!    a deadlock, a hang or timeout, another exit status, other output, a
//!    race the first run did not report. Distinct findings keep the first
//!    run that showed them and the command that replays it.
//!
//! A first SIGINT or SIGTERM stops launching runs and passes the signal to
//! the running ones; what the finished runs found is reported.

pub mod classify;
pub mod cli;
pub mod command;
pub mod report;

use crate::cmd::pool::{self, interrupted, Flow};
use classify::{Findings, Kind, Observation, RunRecord};
use command::{command_line, RunWords, Schedule, Strategy};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A run may retire this many times the first run's instructions.
pub const HANG_FACTOR: u64 = 20;
/// ... and at least this many.
pub const MIN_MAX_INSNS: u64 = 1_000_000;

/// When to stop launching runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Until {
    /// After the first run with a finding (runs after it are not made or
    /// not counted).
    First,
    /// After all runs.
    All,
}

/// What the user asked for.
#[derive(Clone, Debug)]
pub struct ExploreArgs {
    /// The `lard` executable to run children with.
    pub lard: PathBuf,
    /// How replay commands spell `lard`.
    pub lard_name: String,
    /// The guest.
    pub guest: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// How schedules are drawn.
    pub strategy: Strategy,
    /// Runs after the first.
    pub runs: u64,
    /// Child processes at a time.
    pub jobs: usize,
    /// When to stop.
    pub until: Until,
    /// Run `i` uses `--seed seed + i`.
    pub seed: u64,
    /// `--quantum` of the runs.
    pub quantum: u64,
    /// `--timeout` of every run.
    pub timeout: Duration,
    /// `lard run` options of every run (`--run-option`), before the
    /// schedule's.
    pub options: Vec<String>,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Set (to a signal number) when the user interrupts.
    pub interrupt: Option<Arc<AtomicUsize>>,
}

/// `lard run` options `lard explore` sets itself; `--run-option` may not.
pub const OWN_OPTIONS: &[&str] = &[
    "--sched",
    "--seed",
    "--quantum",
    "--pct-depth",
    "--pct-steps",
    "--realtime-start",
    "--report-json",
    "--stats-json",
    "--max-insns",
    "--timeout",
    "--gdb",
];

impl ExploreArgs {
    /// `w` with the user's `lard run` options first.
    fn with_options(&self, mut w: RunWords) -> RunWords {
        w.schedule.splice(0..0, self.options.iter().cloned());
        w
    }
}

/// Why an exploration could not be made.
#[derive(Debug)]
pub enum ExploreError {
    /// A scratch file or the child process could not be created.
    Io(String, std::io::Error),
    /// The first run did not write its reports.
    FirstRun {
        /// Its exit status.
        status: i32,
        /// lard's last line on stderr.
        message: String,
    },
    /// The user interrupted the first run.
    Interrupted,
}

impl std::fmt::Display for ExploreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExploreError::Io(what, e) => write!(f, "{what}: {e}"),
            ExploreError::FirstRun { status, message } => {
                let message = message.strip_prefix("lard: ").unwrap_or(message);
                let message = message.strip_prefix("error: ").unwrap_or(message);
                write!(f, "the first run failed (exit status {status}): {message}")
            }
            ExploreError::Interrupted => write!(f, "interrupted during the first run"),
        }
    }
}

impl std::error::Error for ExploreError {}

impl ExploreError {
    /// `lard explore`'s exit status: 126 or 127 as `lard run` for a guest
    /// that cannot run or be found, 2 when `lard run` refused the run
    /// options, 130 when interrupted, else 125.
    pub fn exit_status(&self) -> u8 {
        match self {
            ExploreError::FirstRun { status, .. } if matches!(status, 2 | 126 | 127) => {
                *status as u8
            }
            ExploreError::Interrupted => 130,
            _ => 125,
        }
    }
}

/// The first run.
#[derive(Clone, Debug)]
pub struct FirstRun {
    /// Its command line.
    pub command: String,
    /// What it did.
    pub record: RunRecord,
    /// Its instructions.
    pub instructions: u64,
    /// Its scheduling steps.
    pub steps: u64,
    /// Its wall-clock seconds.
    pub seconds: f64,
}

/// The outcome of an exploration.
#[derive(Clone, Debug)]
pub struct ExploreResult {
    /// The first run.
    pub first: FirstRun,
    /// The strategy.
    pub strategy: Strategy,
    /// `--pct-steps` of the runs (the first run's steps, at least 1).
    pub steps: u64,
    /// The runs' quantum.
    pub quantum: u64,
    /// The runs' `--max-insns`.
    pub max_insns: u64,
    /// Runs asked for.
    pub runs: u64,
    /// Runs made and classified.
    pub completed: u64,
    /// Per kind, the runs that showed it.
    pub counts: BTreeMap<Kind, u64>,
    /// Runs that showed nothing new.
    pub clean: u64,
    /// The first run (1-based) with a finding.
    pub first_finding: Option<u64>,
    /// The distinct findings.
    pub findings: Findings,
    /// Distinct races (racy PC pairs) seen in all runs, the first included.
    pub races: usize,
    /// Whether the user interrupted the exploration.
    pub interrupted: bool,
    /// Wall-clock seconds of the whole exploration.
    pub seconds: f64,
}

/// A scratch directory for the runs' files, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, ExploreError> {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lard-explore-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .map_err(|e| ExploreError::Io(format!("cannot create {}", dir.display()), e))?;
        Ok(Scratch(dir))
    }

    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The exit status as a shell shows it.
fn status_of(s: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

/// One finished child run.
struct Child {
    record: RunRecord,
    stats: Option<serde_json::Value>,
    /// The user interrupted it: its result does not count.
    interrupted: bool,
}

/// Runs `lard run WORDS --report-json … GUEST ARGS` with its output in
/// scratch files named after `tag`; passes an interrupt on to it.
fn run_child(
    a: &ExploreArgs,
    scratch: &Scratch,
    tag: &str,
    words: &RunWords,
    stats: bool,
) -> Result<Child, ExploreError> {
    let (out, err, report, stats_file) = (
        scratch.file(&format!("{tag}.out")),
        scratch.file(&format!("{tag}.err")),
        scratch.file(&format!("{tag}.json")),
        scratch.file(&format!("{tag}.stats.json")),
    );
    let create = |p: &Path| {
        std::fs::File::create(p)
            .map_err(|e| ExploreError::Io(format!("cannot create {}", p.display()), e))
    };
    let mut c = Command::new(&a.lard);
    c.arg("run")
        .args(&words.schedule)
        .args(&words.limits)
        .arg("--report-json")
        .arg(&report);
    if stats {
        c.arg("--stats-json").arg(&stats_file);
    }
    let mut child = c
        .arg(&a.guest)
        .args(&a.args)
        .stdin(Stdio::null())
        .stdout(create(&out)?)
        .stderr(create(&err)?)
        .spawn()
        .map_err(|e| ExploreError::Io(format!("cannot run {}", a.lard.display()), e))?;
    let mut signalled = false;
    let mut nap = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break status_of(s),
            Ok(None) => {}
            Err(e) => return Err(ExploreError::Io("cannot wait for a run".into(), e)),
        }
        if !signalled && interrupted(&a.interrupt) {
            // The child is not reaped yet: its pid is still its own.
            // SAFETY: kill(2) on a pid this process started and has not
            // waited for.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            signalled = true;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    let read = |p: &Path| std::fs::read(p).ok();
    let report = read(&report).map(|b| String::from_utf8_lossy(&b).into_owned());
    let record = RunRecord::new(
        status,
        read(&out).unwrap_or_default(),
        &String::from_utf8_lossy(&read(&err).unwrap_or_default()),
        report.as_deref(),
    );
    let stats = read(&stats_file).and_then(|b| serde_json::from_slice(&b).ok());
    for p in [out, err, scratch.file(&format!("{tag}.json")), stats_file] {
        let _ = std::fs::remove_file(p);
    }
    Ok(Child {
        record,
        stats,
        interrupted: signalled || (interrupted(&a.interrupt) && matches!(status, 130 | 143)),
    })
}

/// The first run: the default schedule, with the guest's clock pinned.
fn first_run(a: &ExploreArgs, scratch: &Scratch, realtime: u64) -> Result<FirstRun, ExploreError> {
    let mut words = a.with_options(RunWords::first(realtime));
    words.limit("--timeout", a.timeout.as_secs_f64().to_string());
    let start = Instant::now();
    let c = run_child(a, scratch, "first", &words, true)?;
    let seconds = start.elapsed().as_secs_f64();
    if c.interrupted {
        return Err(ExploreError::Interrupted);
    }
    let (Some(stats), Some(_)) = (&c.stats, &c.record.races) else {
        return Err(ExploreError::FirstRun {
            status: c.record.status,
            message: c.record.ending.last().cloned().unwrap_or_default(),
        });
    };
    Ok(FirstRun {
        command: command_line(&a.lard_name, &words.schedule, &a.guest, &a.args),
        instructions: stats["instructions"].as_u64().unwrap_or(0),
        steps: stats["steps"].as_u64().unwrap_or(0),
        record: c.record,
        seconds,
    })
}

/// Runs the whole exploration.
pub fn explore(a: &ExploreArgs) -> Result<ExploreResult, ExploreError> {
    let start = Instant::now();
    let scratch = Scratch::new()?;
    let realtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let first = first_run(a, &scratch, realtime)?;
    let steps = first.steps.max(1);
    let max_insns = (first.instructions.saturating_mul(HANG_FACTOR)).max(MIN_MAX_INSNS);
    let schedule = |i: u64| Schedule {
        strategy: a.strategy,
        steps,
        quantum: a.quantum,
        seed: a.seed.wrapping_add(i),
    };
    let bar = crate::cmd::progress_bar(a.progress, "explore", a.runs, Some("0 with findings"));
    // --until first: no run after the first one with a finding.
    let last = AtomicU64::new(a.runs);
    let with_findings = AtomicU64::new(0);
    // Per run: what it showed that the first run did not, and its races.
    type Seen = (Vec<Observation>, Vec<String>);
    let results: Mutex<BTreeMap<u64, Seen>> = Mutex::new(BTreeMap::new());
    let failure: Mutex<Option<ExploreError>> = Mutex::new(None);
    // Job j is run j + 1 (run 0 is the first run).
    pool::run(
        a.jobs,
        &a.interrupt,
        |j| j < last.load(Ordering::Relaxed),
        |j| {
            let i = j + 1;
            let mut words = a.with_options(RunWords::of(&schedule(i), realtime));
            words.limit("--max-insns", max_insns.to_string());
            words.limit("--timeout", a.timeout.as_secs_f64().to_string());
            let c = match run_child(a, &scratch, &format!("run{i}"), &words, false) {
                Ok(c) => c,
                Err(e) => {
                    failure
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(e);
                    last.store(0, Ordering::Relaxed);
                    return Flow::Stop;
                }
            };
            if c.interrupted {
                return Flow::Stop;
            }
            let obs = classify::observe(&first.record, &c.record);
            if !obs.is_empty() {
                let n = with_findings.fetch_add(1, Ordering::Relaxed) + 1;
                bar.set_message(format!("{n} with findings"));
                if a.until == Until::First {
                    last.fetch_min(i, Ordering::Relaxed);
                }
            }
            results
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(i, (obs, c.record.race_keys()));
            bar.inc(1);
            Flow::Next
        },
    );
    bar.finish_and_clear();
    if let Some(e) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    let last = last.load(Ordering::Relaxed);
    // The first run's abnormal end and races are findings too.
    let mut findings = Findings::default();
    let mut first_obs: Vec<Observation> = first.record.abnormal_observation().into_iter().collect();
    first_obs.extend(first.record.race_observations());
    findings.add(0, 0, &first.command, first_obs);
    let mut races: std::collections::BTreeSet<String> =
        first.record.race_keys().into_iter().collect();
    let mut counts: BTreeMap<Kind, u64> = BTreeMap::new();
    let (mut completed, mut clean, mut first_finding) = (0, 0, None);
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    for (i, (obs, mut keys)) in results.into_iter().filter(|&(i, _)| i <= last) {
        completed += 1;
        // A race of the first run seen again counts as one more run of
        // that finding.
        keys.sort();
        keys.dedup();
        for k in &keys {
            if !obs.iter().any(|o| o.kind == Kind::Race && &o.key == k) {
                findings.seen_again(Kind::Race, k);
            }
        }
        races.extend(keys);
        if obs.is_empty() {
            clean += 1;
            continue;
        }
        first_finding.get_or_insert(i);
        let mut kinds: Vec<Kind> = obs.iter().map(|o| o.kind).collect();
        kinds.dedup();
        for k in kinds {
            *counts.entry(k).or_default() += 1;
        }
        let s = schedule(i);
        let mut words = a.with_options(RunWords::of(&s, realtime));
        // A limit is part of the replay when the finding is the limit's.
        if obs.iter().any(|o| o.kind == Kind::Hang) {
            words.limit("--max-insns", max_insns.to_string());
        }
        if obs.iter().any(|o| o.kind == Kind::Timeout) {
            words.limit("--timeout", a.timeout.as_secs_f64().to_string());
        }
        let all: Vec<String> = words
            .schedule
            .iter()
            .chain(&words.limits)
            .cloned()
            .collect();
        let cmd = command_line(&a.lard_name, &all, &a.guest, &a.args);
        findings.add(i, s.seed, &cmd, obs);
    }
    Ok(ExploreResult {
        first,
        strategy: a.strategy,
        steps,
        quantum: a.quantum,
        max_insns,
        runs: a.runs,
        completed,
        counts,
        clean,
        first_finding,
        findings,
        races: races.len(),
        interrupted: interrupted(&a.interrupt),
        seconds: start.elapsed().as_secs_f64(),
    })
}
