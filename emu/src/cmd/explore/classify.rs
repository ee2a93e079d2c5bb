//! What one `lard explore` run found, compared with the first run, and the
//! distinct findings of a whole exploration.

use crate::cmd::exit;
use crate::cmd::report::{Frame, RunReport};
use std::collections::BTreeMap;

// `lard run`'s statuses (crate::cmd::exit) as a shell shows them.
const EXIT_MAX_INSNS: i32 = exit::EXIT_MAX_INSNS as i32;
const EXIT_TIMEOUT: i32 = exit::EXIT_TIMEOUT as i32;
const EXIT_DEADLOCK: i32 = exit::EXIT_DEADLOCK as i32;
const EXIT_INTERNAL: i32 = exit::EXIT_INTERNAL as i32;
/// 128 + SIGILL: an invalid instruction or a LARD fault.
const EXIT_SIGILL: i32 = 128 + 4;

/// A kind of finding, from the most to the least severe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Killed by a signal (a segfault, an abort), other than SIGILL.
    Crash,
    /// An invalid instruction or a LARD fault (SIGILL).
    Fault,
    /// Every thread blocked (lard's exit status 122).
    Deadlock,
    /// The run reached `--max-insns` (20× the first run's instructions):
    /// a livelock or a much longer run.
    Hang,
    /// The run reached `--timeout`.
    Timeout,
    /// lard itself failed (exit status 125).
    Error,
    /// The guest exited with another status than in the first run.
    Exit,
    /// The guest printed something else than in the first run.
    Output,
    /// A race (a pair of racy PCs) the first run and the earlier runs did
    /// not report.
    Race,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 9] = [
        Kind::Crash,
        Kind::Fault,
        Kind::Deadlock,
        Kind::Hang,
        Kind::Timeout,
        Kind::Error,
        Kind::Exit,
        Kind::Output,
        Kind::Race,
    ];

    /// The name in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Crash => "crash",
            Kind::Fault => "fault",
            Kind::Deadlock => "deadlock",
            Kind::Hang => "hang",
            Kind::Timeout => "timeout",
            Kind::Error => "error",
            Kind::Exit => "exit",
            Kind::Output => "output",
            Kind::Race => "race",
        }
    }
}

/// One race of a report: a pair of racy PCs and how to name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Race {
    /// The two PCs, the smaller first (the same race seen in either order).
    pub pcs: (u64, u64),
    /// `kind race on data: first (file:line) / second (file:line)`.
    pub text: String,
}

/// What one `lard run` did.
#[derive(Clone, Debug, Default)]
pub struct RunRecord {
    /// Exit status as a shell shows it.
    pub status: i32,
    /// The guest's standard output.
    pub stdout: Vec<u8>,
    /// lard's lines about how the run ended (`lard: …` and the indented
    /// lines after them).
    pub ending: Vec<String>,
    /// The races of its `--report-json`, if it wrote one.
    pub races: Option<Vec<Race>>,
}

impl RunRecord {
    /// A record from a run's exit status, output, standard error and
    /// report JSON text.
    pub fn new(status: i32, stdout: Vec<u8>, stderr: &str, report: Option<&str>) -> RunRecord {
        RunRecord {
            status,
            stdout,
            ending: ending_lines(stderr),
            races: report.and_then(RunReport::parse).map(|r| races_of(&r)),
        }
    }

    /// The kind of the run's end, if it did not exit by itself: crash,
    /// fault, deadlock, hang, timeout, lard error.
    pub fn abnormal(&self) -> Option<Kind> {
        match self.status {
            EXIT_DEADLOCK => Some(Kind::Deadlock),
            EXIT_MAX_INSNS => Some(Kind::Hang),
            EXIT_TIMEOUT => Some(Kind::Timeout),
            EXIT_INTERNAL => Some(Kind::Error),
            EXIT_SIGILL => Some(Kind::Fault),
            s if (129..=128 + 64).contains(&s) => Some(Kind::Crash),
            _ => None,
        }
    }

    /// The run's abnormal end as an observation, if it had one.
    pub fn abnormal_observation(&self) -> Option<Observation> {
        let kind = self.abnormal()?;
        Some(Observation {
            kind,
            key: self.signature(kind),
            detail: self.ending.first().cloned().unwrap_or_default(),
        })
    }

    /// What tells two abnormal ends apart: for a crash or fault, the
    /// status and the faulting function; for a deadlock, where each thread
    /// waits; otherwise the kind alone.
    fn signature(&self, kind: Kind) -> String {
        let symbols = |lines: &[String]| -> Vec<String> {
            lines
                .iter()
                .filter_map(|l| {
                    let a = l.rfind(" <")?;
                    let b = a + l[a..].find('>')?;
                    Some(l[a + 2..b].to_string())
                })
                .collect()
        };
        match kind {
            Kind::Crash | Kind::Fault => {
                let first = self.ending.first().cloned().into_iter().collect::<Vec<_>>();
                format!("{} {}", self.status, symbols(&first).join(" "))
            }
            Kind::Deadlock => {
                let mut s = symbols(&self.ending[self.ending.len().min(1)..]);
                s.sort();
                s.join(" ")
            }
            Kind::Exit => self.status.to_string(),
            _ => String::new(),
        }
    }
}

/// lard's own lines about the run's end in `stderr`: every `lard: ` line
/// that is not a warning, with the indented lines that follow it, and the
/// first line of a command-line error (`error: …`).
fn ending_lines(stderr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for l in stderr.lines() {
        if l.starts_with("lard: ") || (l.starts_with("error: ") && out.is_empty()) {
            inside = true;
            out.push(l.to_string());
        } else if inside && l.starts_with("  ") {
            out.push(l.to_string());
        } else {
            inside = false;
        }
    }
    out
}

/// The races of a `--report-json` report (its first detector's).
fn races_of(report: &RunReport) -> Vec<Race> {
    let Some(det) = report.first() else {
        return Vec::new();
    };
    let site = |sym: &Option<String>, frames: &[Frame]| -> String {
        let sym = sym.as_deref().unwrap_or("?");
        let line = frames
            .first()
            .and_then(|f| {
                let file = f.file.as_deref()?;
                let file = file.rsplit('/').next().unwrap_or(file);
                Some(format!(" ({file}:{})", f.line?))
            })
            .unwrap_or_default();
        format!("{sym}{line}")
    };
    det.races
        .iter()
        .map(|r| {
            let (a, b) = (r.pc, r.prev_pc);
            Race {
                pcs: (a.min(b), a.max(b)),
                text: format!(
                    "{} race on {}: {} then {}",
                    r.kind.as_deref().unwrap_or("?"),
                    r.data.as_deref().unwrap_or("?"),
                    site(&r.prev_symbol, &r.prev_frames),
                    site(&r.symbol, &r.frames),
                ),
            }
        })
        .collect()
}

impl RunRecord {
    /// Each race of the run as an observation (the first run's races are
    /// findings of the first run).
    pub fn race_observations(&self) -> Vec<Observation> {
        let mut out: Vec<Observation> = Vec::new();
        for r in self.races.as_deref().unwrap_or(&[]) {
            let key = race_key(r);
            if !out.iter().any(|o| o.key == key) {
                out.push(Observation {
                    kind: Kind::Race,
                    key,
                    detail: r.text.clone(),
                });
            }
        }
        out
    }

    /// The keys of the run's races (its racy PC pairs).
    pub fn race_keys(&self) -> Vec<String> {
        self.races
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .map(race_key)
            .collect()
    }
}

/// What tells races apart: their two PCs.
fn race_key(r: &Race) -> String {
    format!("{:#x} {:#x}", r.pcs.0, r.pcs.1)
}

/// The first `n` characters of `bytes` as text, quoted.
fn start_of(bytes: &[u8], n: usize) -> String {
    let shown: String = String::from_utf8_lossy(bytes).chars().take(n).collect();
    format!("{shown:?}")
}

/// What a run showed that the first run did not, before deduplication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// The kind.
    pub kind: Kind,
    /// What tells it from other observations of the same kind.
    pub key: String,
    /// One line describing it.
    pub detail: String,
}

/// Everything `run` showed that differs from `first`: its abnormal end (or
/// another exit status, or other output, when both exited normally), and
/// each race the first run did not report.
pub fn observe(first: &RunRecord, run: &RunRecord) -> Vec<Observation> {
    let mut out = Vec::new();
    match run.abnormal_observation() {
        // The first run's own abnormal end is known: the same end again is
        // no news.
        Some(o)
            if first.abnormal_observation().map(|f| (f.kind, f.key))
                != Some((o.kind, o.key.clone())) =>
        {
            out.push(o);
        }
        Some(_) => {}
        None if first.abnormal().is_none() => {
            if run.status != first.status {
                out.push(Observation {
                    kind: Kind::Exit,
                    key: run.signature(Kind::Exit),
                    detail: format!("exit status {} (first run: {})", run.status, first.status),
                });
            } else if run.stdout != first.stdout {
                out.push(Observation {
                    kind: Kind::Output,
                    key: String::from_utf8_lossy(&run.stdout).into_owned(),
                    detail: format!(
                        "output differs: {} bytes, starting {} (first run: {} bytes, starting {})",
                        run.stdout.len(),
                        start_of(&run.stdout, 60),
                        first.stdout.len(),
                        start_of(&first.stdout, 60),
                    ),
                });
            }
        }
        None => {}
    }
    let known = first.races.as_deref().unwrap_or(&[]);
    for r in run.races.as_deref().unwrap_or(&[]) {
        let key = race_key(r);
        // The same two PCs in the other order are the same race.
        let seen = out.iter().any(|o| o.kind == Kind::Race && o.key == key);
        if !seen && !known.iter().any(|k| k.pcs == r.pcs) {
            out.push(Observation {
                kind: Kind::Race,
                key,
                detail: r.text.clone(),
            });
        }
    }
    out
}

/// A distinct finding: the first run that showed it and how many did.
#[derive(Clone, Debug)]
pub struct Finding {
    /// What was found.
    pub observation: Observation,
    /// The run that showed it first (1-based; 0 is the first run).
    pub run: u64,
    /// Its seed.
    pub seed: u64,
    /// The command that replays that run.
    pub command: String,
    /// The runs that showed it.
    pub runs: u64,
}

/// The distinct findings of an exploration, in the order of the runs that
/// first showed them.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    list: Vec<Finding>,
    index: BTreeMap<(Kind, String), usize>,
}

impl Findings {
    /// Adds run `run`'s observations (runs must come in order).
    pub fn add(&mut self, run: u64, seed: u64, command: &str, obs: Vec<Observation>) {
        for o in obs {
            let key = (o.kind, o.key.clone());
            match self.index.get(&key) {
                Some(&i) => self.list[i].runs += 1,
                None => {
                    self.index.insert(key, self.list.len());
                    self.list.push(Finding {
                        observation: o,
                        run,
                        seed,
                        command: command.to_string(),
                        runs: 1,
                    });
                }
            }
        }
    }

    /// Counts one more run that showed a known finding; false if it is
    /// not one.
    pub fn seen_again(&mut self, kind: Kind, key: &str) -> bool {
        match self.index.get(&(kind, key.to_string())) {
            Some(&i) => {
                self.list[i].runs += 1;
                true
            }
            None => false,
        }
    }

    /// The findings.
    pub fn list(&self) -> &[Finding] {
        &self.list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: i32, out: &str, stderr: &str, report: Option<&str>) -> RunRecord {
        RunRecord::new(status, out.as_bytes().to_vec(), stderr, report)
    }

    const REPORT: &str = r#"{"detectors":{"fasttrack":{"races":[
        {"pc":20,"prev_pc":10,"kind":"write-read","data":"x+0x0","symbol":"b+0x4",
         "prev_symbol":"a+0x2","frames":[{"file":"/s/g.c","line":7}],"prev_frames":[]}]}}}"#;

    #[test]
    fn runs_are_told_from_the_first() {
        let first = run(
            0,
            "ok\n",
            "",
            Some(r#"{"detectors":{"fasttrack":{"races":[]}}}"#),
        );
        assert!(observe(&first, &first).is_empty());
        let crash = run(
            139,
            "",
            "lard: ./g: thread 4002: read of unmapped memory at address 0x0 (signal 11) at 0x40173f <worker+0x3f>: mov\n",
            None,
        );
        let o = observe(&first, &crash);
        assert_eq!(o.len(), 1);
        assert_eq!(
            (o[0].kind, o[0].key.as_str()),
            (Kind::Crash, "139 worker+0x3f")
        );
        let dl = run(
            122,
            "",
            "lard: ./g: deadlock: every live thread is blocked\n  thread 4001: futex wait on 0x1 at 0x2 <b+0x1>: syscall\n  thread 4002: futex wait at 0x3 <a+0x2>: syscall\nother\n",
            None,
        );
        let o = observe(&first, &dl);
        assert_eq!(
            (o[0].kind, o[0].key.as_str()),
            (Kind::Deadlock, "a+0x2 b+0x1")
        );
        assert_eq!(
            observe(&first, &run(3, "ok\n", "", None))[0].kind,
            Kind::Exit
        );
        assert_eq!(
            observe(&first, &run(0, "no\n", "", None))[0].kind,
            Kind::Output
        );
        let racy = run(0, "ok\n", "", Some(REPORT));
        let o = observe(&first, &racy);
        assert_eq!(o[0].kind, Kind::Race);
        assert_eq!(
            o[0].detail,
            "write-read race on x+0x0: a+0x2 then b+0x4 (g.c:7)"
        );
        // Known races are no news.
        assert!(observe(&racy, &racy).is_empty());
    }

    #[test]
    fn findings_are_distinct_and_counted() {
        let first = run(0, "ok\n", "", None);
        let mut f = Findings::default();
        for (i, status) in [0, 139, 122, 139, 0].into_iter().enumerate() {
            let r = run(
                status,
                "ok\n",
                "lard: x (signal 11) at 0x1 <f+0x1>: mov\n",
                None,
            );
            f.add(i as u64 + 1, 10 + i as u64, "cmd", observe(&first, &r));
        }
        let kinds: Vec<(Kind, u64, u64)> = f
            .list()
            .iter()
            .map(|f| (f.observation.kind, f.run, f.runs))
            .collect();
        assert_eq!(kinds, [(Kind::Crash, 2, 2), (Kind::Deadlock, 3, 1)]);
    }
}
