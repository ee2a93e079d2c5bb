//! `lard campaign run`: this shard's runs, `--jobs` at a time, each a
//! child `lard run` whose outcome is written to one result file named by
//! the run's key. A run whose result file exists is not made again, so a
//! campaign resumes where it stopped, and shards never write the same
//! file.

use super::spec::{Campaign, RunSpec};
use crate::cmd::pool::{self, interrupted, Flow};
use crate::cmd::report::RunReport;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A run that outlives its `--timeout` by this much is killed.
const KILL_GRACE: Duration = Duration::from_secs(30);
/// The host's environment variables a run keeps; the rest of its
/// environment is the campaign file's `env` and `env.NAME` axes.
pub const KEPT_VARS: &[&str] = &["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TZ"];
/// Bytes of a run's standard output kept in its result.
const STDOUT_KEPT: usize = 1 << 20;
/// Lines of a run's stderr kept in its result.
const STDERR_TAIL: usize = 5;

/// What `lard campaign run` was asked for.
#[derive(Clone, Debug)]
pub struct RunArgs {
    /// The `lard` executable for the child runs.
    pub lard: PathBuf,
    /// Where the result files go.
    pub out: PathBuf,
    /// Child runs at a time.
    pub jobs: usize,
    /// `(I, N)`: the runs whose index is I modulo N.
    pub shard: (usize, usize),
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Set (to a signal number) when the user interrupts.
    pub interrupt: Option<Arc<AtomicUsize>>,
}

/// What a `lard campaign run` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunSummary {
    /// Runs of this shard.
    pub shard_runs: usize,
    /// Results found from an earlier invocation.
    pub already: usize,
    /// Runs made now.
    pub made: usize,
    /// Of those, runs that failed (lard error, timeout, killed).
    pub failed: usize,
    /// Programs whose build failed (their runs are not made).
    pub build_failures: Vec<String>,
    /// The user interrupted.
    pub interrupted: bool,
}

/// Clears `cmd`'s environment but for [`KEPT_VARS`]: the environment
/// every campaign run starts from.
pub fn kept_env(cmd: &mut Command) {
    cmd.env_clear();
    for k in KEPT_VARS {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
}

/// The result file of run `key`.
pub fn result_path(out: &Path, key: &str) -> PathBuf {
    out.join(format!("{key}.json"))
}

/// Builds `program` once for the whole campaign directory: the first shard
/// to get the lock runs the build command in the campaign's directory;
/// the others wait for it and reuse its outcome.
fn build_once(c: &Campaign, out: &Path, program: usize) -> Result<(), String> {
    let p = &c.programs[program];
    let Some(cmd) = &p.build else { return Ok(()) };
    let key = super::spec::run_key(p, &[], &[], 0.0);
    let lock_path = out.join(format!(".build-{key}.lock"));
    let done = out.join(format!(".build-{key}.done"));
    let log = out.join(format!("build-{}.log", p.name));
    let lock = std::fs::File::create(&lock_path)
        .map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    use std::os::fd::AsRawFd;
    // SAFETY: flock(2) on a descriptor this function owns; released when
    // `lock` is dropped.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(format!("cannot lock {}", lock_path.display()));
    }
    if let Ok(status) = std::fs::read_to_string(&done) {
        return if status.trim() == "0" {
            Ok(())
        } else {
            Err(format!(
                "build of {} failed (see {})",
                p.name,
                log.display()
            ))
        };
    }
    let log_file =
        std::fs::File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(&c.dir)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
        .stderr(log_file)
        .status()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    let code = status.code().unwrap_or(-1);
    std::fs::write(&done, code.to_string())
        .map_err(|e| format!("cannot write {}: {e}", done.display()))?;
    if code == 0 {
        Ok(())
    } else {
        Err(format!(
            "build of {} failed (see {})",
            p.name,
            log.display()
        ))
    }
}

/// A child's end, with its resource usage.
struct Ended {
    status: i32,
    signalled: bool,
    cpu_seconds: f64,
    max_rss_kb: i64,
}

/// Waits for `pid`, killing it `deadline` after it started; passes an
/// interrupt on.
fn wait_child(pid: libc::pid_t, deadline: Duration, interrupt: &Option<Arc<AtomicUsize>>) -> Ended {
    let start = Instant::now();
    let mut nap = Duration::from_millis(1);
    let mut sent = false;
    loop {
        let mut st = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4(2) on our own child, with valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut st, libc::WNOHANG, &mut ru) };
        if r == pid {
            let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            let signalled = libc::WIFSIGNALED(st);
            return Ended {
                status: if signalled {
                    128 + libc::WTERMSIG(st)
                } else {
                    libc::WEXITSTATUS(st)
                },
                signalled,
                cpu_seconds: tv(ru.ru_utime) + tv(ru.ru_stime),
                max_rss_kb: ru.ru_maxrss,
            };
        }
        if r < 0 {
            return Ended {
                status: 125,
                signalled: false,
                cpu_seconds: 0.0,
                max_rss_kb: 0,
            };
        }
        if !sent && (interrupted(interrupt) || start.elapsed() > deadline) {
            let sig = if interrupted(interrupt) {
                libc::SIGINT
            } else {
                libc::SIGKILL
            };
            // SAFETY: kill(2) on our own child, not yet reaped.
            unsafe { libc::kill(pid, sig) };
            sent = true;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    }
}

/// Makes one run and returns its result (the run is interrupted when the
/// result says `"interrupted": true`).
fn make_run(c: &Campaign, a: &RunArgs, r: &RunSpec) -> Value {
    let p = &c.programs[r.program];
    let tmp = |ext: &str| a.out.join(format!(".{}.{ext}", r.key));
    let (report, stats, hw, profile, err, out) = (
        tmp("report"),
        tmp("stats"),
        tmp("hw"),
        tmp("profile"),
        tmp("err"),
        tmp("out"),
    );
    let hw_model = r.options.iter().any(|o| o == "lardish")
        || r.options.iter().any(|o| o.starts_with("--hw-config"));
    let mut cmd = Command::new(&a.lard);
    cmd.arg("run")
        .args(&r.options)
        .arg("--timeout")
        .arg(c.timeout.to_string())
        .arg("--report-json")
        .arg(&report)
        .arg("--stats-json")
        .arg(&stats);
    if hw_model {
        cmd.arg("--hw-stats-json").arg(&hw);
        if c.hw_profile {
            cmd.arg("--hw-profile").arg(&profile);
        }
    }
    // A run sees the same environment wherever it runs (here, on a Slurm
    // node): a few variables of the host, then the campaign's. What a batch
    // system adds to its tasks is not the program's (the environment's size
    // alone changes the C library's start-up, and so the schedule).
    kept_env(&mut cmd);
    cmd.arg("--")
        .args(&p.command)
        .current_dir(&c.dir)
        .envs(c.env.iter().chain(&r.env).map(|(k, v)| (k, v)))
        .stdin(Stdio::null());
    let started = Instant::now();
    let files = std::fs::File::create(&err).and_then(|e| Ok((e, std::fs::File::create(&out)?)));
    let ended = match files.map(|(e, o)| cmd.stderr(e).stdout(o).spawn()) {
        Ok(Ok(child)) => wait_child(
            child.id() as libc::pid_t,
            Duration::from_secs_f64(c.timeout) + KILL_GRACE,
            &a.interrupt,
        ),
        Ok(Err(e)) | Err(e) => {
            return json!({"key": r.key, "outcome": "error",
                          "error": format!("cannot run {}: {e}", a.lard.display())})
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let read_json = |p: &Path| -> Value {
        std::fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null)
    };
    let report_v = RunReport::read(&report);
    let stats_v = read_json(&stats);
    let hw_v = read_json(&hw);
    let profile_v = read_json(&profile);
    let stderr_text =
        String::from_utf8_lossy(&std::fs::read(&err).unwrap_or_default()).into_owned();
    let stdout_bytes = std::fs::read(&out).unwrap_or_default();
    let stdout_kept =
        String::from_utf8_lossy(&stdout_bytes[..stdout_bytes.len().min(STDOUT_KEPT)]).into_owned();
    for f in [&report, &stats, &hw, &profile, &err, &out] {
        let _ = std::fs::remove_file(f);
    }
    // lard refused the run's options: a usage error (exit status 2)
    // without a report (a guest that exits with 2 has one).
    let usage = ended.status == i32::from(crate::cmd::exit::EXIT_USAGE) && report_v.is_none();
    let tail: Vec<&str> = {
        let lines: Vec<&str> = stderr_text
            .lines()
            .filter(|l| l.starts_with("lard: ") || (usage && l.starts_with("error: ")))
            .collect();
        lines[lines.len().saturating_sub(STDERR_TAIL)..].to_vec()
    };
    let outcome = if interrupted(&a.interrupt) && matches!(ended.status, 130 | 143) {
        "interrupted"
    } else if ended.signalled && ended.status == 128 + libc::SIGKILL {
        "killed"
    } else {
        match ended.status {
            121 => "timeout",
            125..=127 => "error",
            _ if usage => "error",
            _ => "ok",
        }
    };
    let mut env = Map::new();
    for (k, v) in &r.env {
        env.insert(k.clone(), Value::String(v.clone()));
    }
    json!({
        "campaign": c.name,
        "key": r.key,
        "index": r.index,
        "program": p.name,
        "command": p.command,
        "racy": p.racy,
        "expect": p.expect.as_ref().map(|e| json!({"exit": e.exit, "stdout_fnv": e.stdout_fnv})),
        "params": r.params,
        "options": r.options,
        "env": env,
        "outcome": outcome,
        "exit": ended.status,
        "wall_seconds": wall,
        "cpu_seconds": ended.cpu_seconds,
        "max_rss_kb": ended.max_rss_kb,
        "stdout": stdout_kept,
        "stdout_bytes": stdout_bytes.len(),
        "stdout_fnv": super::spec::stdout_fnv(&stdout_bytes),
        "detectors": report_v.map_or(Value::Object(Map::new()), |r| r.figures()),
        "instructions": stats_v["instructions"],
        "steps": stats_v["steps"],
        "hw_stats": hw_v,
        "hw_profile": profile_v,
        "lard_messages": tail,
    })
}

/// Writes `v` to `path` atomically (a partial file is never a result).
fn write_result(path: &Path, v: &Value) -> Result<(), String> {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, format!("{v}\n"))
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Why a campaign could not start, or stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The campaign cannot run as written (a program that does not exist,
    /// a results directory that cannot be written): nothing was run.
    Input(String),
    /// A result could not be written.
    Io(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Input(m) | RunError::Io(m) => f.write_str(m),
        }
    }
}

/// Whether `word` (a program's first word) names a file: a path with a
/// `/` from the campaign's directory, else a file on `PATH`, as `execvp`
/// finds it.
fn program_exists(dir: &Path, word: &str) -> bool {
    if word.contains('/') {
        return dir.join(word).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(word).is_file()))
}

/// The results directory exists and takes files. The probe's name is this
/// process's own (pid and time): the shards of a job array probe the same
/// directory at once, and one must not remove another's probe.
fn writable(out: &Path) -> Result<(), RunError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let probe = out.join(format!(
        ".lard-campaign-probe-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(out)
        .and_then(|()| std::fs::write(&probe, b""))
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| RunError::Input(format!("results directory {}: {e}", out.display())))
}

/// Runs this shard of `c` and writes its results to `a.out`.
pub fn run(c: &Campaign, a: &RunArgs) -> Result<RunSummary, RunError> {
    writable(&a.out)?;
    let runs: Vec<RunSpec> = c
        .runs()
        .into_iter()
        .filter(|r| r.index % a.shard.1 == a.shard.0)
        .collect();
    let mut summary = RunSummary {
        shard_runs: runs.len(),
        ..RunSummary::default()
    };
    let todo: Vec<&RunSpec> = runs
        .iter()
        .filter(|r| !result_path(&a.out, &r.key).exists())
        .collect();
    summary.already = runs.len() - todo.len();
    // Builds first, once per program with runs to make.
    let mut unbuildable = vec![false; c.programs.len()];
    let mut programs: Vec<usize> = todo.iter().map(|r| r.program).collect();
    programs.dedup();
    for &p in &programs {
        if let Err(e) = build_once(c, &a.out, p) {
            eprintln!("lard: campaign {}: {e}", c.name);
            summary.build_failures.push(c.programs[p].name.clone());
            unbuildable[p] = true;
        }
    }
    // Every program to run exists (once built) before any run starts.
    for &p in programs.iter().filter(|&&p| !unbuildable[p]) {
        let prog = &c.programs[p];
        if !program_exists(&c.dir, &prog.command[0]) {
            return Err(RunError::Input(format!(
                "program {}: {}: no such file (from {})",
                prog.name,
                prog.command[0],
                c.dir.display()
            )));
        }
    }
    let bar = crate::cmd::progress_bar(a.progress, &c.name, todo.len() as u64, Some("0 failed"));
    let made = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let error: Mutex<Option<RunError>> = Mutex::new(None);
    pool::run(
        a.jobs,
        &a.interrupt,
        |i| (i as usize) < todo.len(),
        |i| {
            let r = todo[i as usize];
            if unbuildable[r.program] {
                bar.inc(1);
                return Flow::Next;
            }
            let v = make_run(c, a, r);
            if v["outcome"] == "interrupted" {
                return Flow::Stop;
            }
            if v["outcome"] != "ok" {
                let n = failed.fetch_add(1, Ordering::Relaxed) + 1;
                bar.set_message(format!("{n} failed"));
            }
            if let Err(e) = write_result(&result_path(&a.out, &r.key), &v).map_err(RunError::Io) {
                error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(e);
                return Flow::Stop;
            }
            made.fetch_add(1, Ordering::Relaxed);
            bar.inc(1);
            Flow::Next
        },
    );
    bar.finish_and_clear();
    if let Some(e) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    summary.made = made.into_inner();
    summary.failed = failed.into_inner();
    summary.interrupted = interrupted(&a.interrupt);
    Ok(summary)
}
