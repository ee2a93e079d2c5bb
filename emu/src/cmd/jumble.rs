//! `lard jumble`: tell destructive races from benign ones (JUMBLE,
//! Flanagan & Freund, PLDI 2010, §6 and Figure 9).
//!
//! 1. A reference run (`lard run`, FastTrack) records the behaviour — exit
//!    status, standard output, instructions, time — and the races.
//! 2. The races are grouped into *locations*: a global's races by the data
//!    they touch (`symbol+offset`); heap races by the PCs they share.
//! 3. For each location alone (JUMBLE's one-field-at-a-time mode), `runs`
//!    runs per configuration: `none` (plain memory), `sc` and each
//!    heuristic, with adversarial memory triggered by the location's racy
//!    PCs. Run `i` uses `--sched random --seed i` in every configuration.
//! 4. Each run is compared with the reference: a different exit status
//!    (a crash, a fault, a deadlock) or different output is *erroneous*;
//!    more than 10× the reference's instructions (enforced with
//!    `--max-insns`) is a *QoS* problem ([`Behaviour`], shared with
//!    `lard campaign collect`).
//! 5. A location is `destructive` if some run was erroneous under some
//!    heuristic, else `qos` if some run hit the QoS bound, else `benign`;
//!    the program's verdict is the worst of its locations'.
//!
//! The runs of step 3 are a campaign (docs/campaigns.md): one program per
//! location, an `adversarial` axis and a `seed` axis, made by the campaign
//! runner on the host's cores into a results directory with its
//! `campaign.toml`, which `lard campaign collect` draws as JUMBLE's
//! Figure 9.

use crate::cmd::campaign::collect::{behaviour, Behaviour};
use crate::cmd::campaign::runner::{self, RunArgs};
use crate::cmd::campaign::spec::{self, Axis, AxisValue, Campaign, Expect, Program};
use crate::cmd::report::{RaceReport, RunReport};
use lard_detector_hw::adversarial::Heuristic;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Exit status when the guest or the analysis is unusable.
use crate::cmd::exit::EXIT_BAD_INPUT;

/// A run may take this many times the reference's instructions.
pub const QOS_FACTOR: u64 = 10;

/// What the user asked for.
#[derive(Clone, Debug)]
pub struct JumbleArgs {
    /// The `lard` executable to run children with.
    pub lard: PathBuf,
    /// The guest.
    pub guest: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Runs per heuristic (and of `none`).
    pub runs: u64,
    /// Adversarial heuristics (besides `none` and `sc`, always run).
    pub heuristics: Vec<String>,
    /// Parallel child processes.
    pub jobs: usize,
    /// Draw a progress bar on stderr.
    pub progress: bool,
    /// Where the campaign and its results go (`None`: a temporary
    /// directory, removed at the end).
    pub out: Option<PathBuf>,
    /// Set (to a signal number) when the user interrupts.
    pub interrupt: Option<Arc<AtomicUsize>>,
}

/// The reference behaviour.
#[derive(Clone, Debug, Default)]
pub struct Reference {
    /// Exit status as a shell shows it.
    pub exit: i32,
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Instructions retired.
    pub instructions: u64,
    /// Wall-clock seconds of the reference run.
    pub seconds: f64,
    /// Racy dynamic accesses FastTrack reported.
    pub dre: u64,
}

/// One racy location.
#[derive(Clone, Debug)]
pub struct Location {
    /// `symbol+offset` for globals, the memory region otherwise.
    pub data: String,
    /// `file:line` of the (later) racy access, innermost frame in the guest.
    pub line: String,
    /// The racy PCs (both accesses of each race) that trigger monitoring.
    pub pcs: Vec<u64>,
    /// Per configuration (`sc`, heuristics): the outcome counts.
    pub counts: BTreeMap<String, Counts>,
}

/// Outcomes of a set of runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Runs made.
    pub runs: u64,
    /// Erroneous runs (other exit status or output).
    pub erroneous: u64,
    /// Of those, crashes (killed by a signal or a fault) and deadlocks.
    pub crashes: u64,
    /// Runs that exceeded the QoS bound (and were not erroneous otherwise).
    pub qos: u64,
}

impl Counts {
    fn add(&mut self, o: Behaviour) {
        self.runs += 1;
        match o {
            Behaviour::Same => {}
            Behaviour::Qos => self.qos += 1,
            Behaviour::Output | Behaviour::Exit => self.erroneous += 1,
            Behaviour::Crash => {
                self.erroneous += 1;
                self.crashes += 1;
            }
        }
    }

    fn merge(&mut self, o: &Counts) {
        self.runs += o.runs;
        self.erroneous += o.erroneous;
        self.crashes += o.crashes;
        self.qos += o.qos;
    }

    /// Percent of runs that misbehaved (erroneous or QoS).
    pub fn percent(&self) -> u64 {
        (self.erroneous + self.qos) * 100 / self.runs.max(1)
    }

    /// This set of runs' verdict.
    pub fn verdict(&self) -> Verdict {
        if self.erroneous > 0 {
            Verdict::Destructive
        } else if self.qos > 0 {
            Verdict::Qos
        } else {
            Verdict::Benign
        }
    }

    fn json(&self) -> String {
        format!(
            "{{\"runs\":{},\"erroneous\":{},\"crashes\":{},\"qos\":{},\"percent\":{}}}",
            self.runs,
            self.erroneous,
            self.crashes,
            self.qos,
            self.percent()
        )
    }
}

/// A location's or program's classification.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// No heuristic changed the behaviour.
    Benign,
    /// Only slowdowns beyond the QoS bound.
    Qos,
    /// Some heuristic made the program crash, exit differently or print
    /// something else.
    Destructive,
}

impl Verdict {
    /// The name printed and written to JSON.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Benign => "benign",
            Verdict::Qos => "qos",
            Verdict::Destructive => "destructive",
        }
    }
}

/// The whole result.
#[derive(Clone, Debug)]
pub struct JumbleResult {
    /// The reference run.
    pub reference: Reference,
    /// Runs per configuration.
    pub runs: u64,
    /// The configurations in column order (`none`, `sc`, heuristics).
    pub columns: Vec<String>,
    /// The racy locations.
    pub locations: Vec<Location>,
    /// The user interrupted: the counts are of the runs made.
    pub interrupted: bool,
}

fn status_of(o: &std::process::Output) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    o.status
        .code()
        .unwrap_or_else(|| 128 + o.status.signal().unwrap_or(0))
}

fn scratch(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "lard-jumble-{}-{tag}-{}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Runs the reference and returns it with the report JSON.
fn reference(a: &JumbleArgs) -> Result<(Reference, RunReport), String> {
    let (report, stats) = (scratch("report"), scratch("stats"));
    let start = Instant::now();
    let mut cmd = Command::new(&a.lard);
    // The environment of the campaign's runs, so that only memory and
    // schedule differ between the reference and them.
    runner::kept_env(&mut cmd);
    let out = cmd
        .arg("run")
        .arg("--report-json")
        .arg(&report)
        .arg("--stats-json")
        .arg(&stats)
        .arg(&a.guest)
        .args(&a.args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", a.lard.display()))?;
    let seconds = start.elapsed().as_secs_f64();
    let read = |p: &Path| -> Option<Value> {
        let text = std::fs::read_to_string(p).ok();
        let _ = std::fs::remove_file(p);
        serde_json::from_str(&text?).ok()
    };
    let report_read = RunReport::read(&report);
    let _ = std::fs::remove_file(&report);
    let (report, stats) = (report_read, read(&stats));
    let (Some(report), Some(stats)) = (report, stats) else {
        return Err(format!(
            "the reference run of {} failed (exit status {}): {}",
            a.guest.display(),
            status_of(&out),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    };
    let dre = report.dre("fasttrack");
    Ok((
        Reference {
            exit: status_of(&out),
            stdout: out.stdout,
            instructions: stats["instructions"].as_u64().unwrap_or(0),
            seconds,
            dre,
        },
        report,
    ))
}

/// Groups the races of a `--report-json` report into locations.
pub fn locations_of(report: &RunReport) -> Vec<Location> {
    let races: &[RaceReport] = report.detectors.get("fasttrack").map_or(&[], |d| &d.races);
    // Union-find over races: same global data, or heap races sharing a PC.
    let n = races.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], i: usize) -> usize {
        let mut r = i;
        while p[r] != r {
            r = p[r];
        }
        p[i] = r;
        r
    }
    let data = |r: &RaceReport| r.data.as_deref().unwrap_or("?").to_string();
    let global = |d: &str| d.contains("+0x");
    let pcs = |r: &RaceReport| [r.pc, r.prev_pc];
    for i in 0..n {
        for j in 0..i {
            let (di, dj) = (data(&races[i]), data(&races[j]));
            let same = if global(&di) || global(&dj) {
                di == dj
            } else {
                pcs(&races[i]).iter().any(|p| pcs(&races[j]).contains(p))
            };
            if same {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                parent[a] = b;
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let r = find(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    let mut out: Vec<Location> = groups
        .values()
        .map(|members| {
            let first = &races[members[0]];
            let mut all: Vec<u64> = members.iter().flat_map(|&i| pcs(&races[i])).collect();
            all.sort_unstable();
            all.dedup();
            // The innermost frame outside headers (the SDK's and a
            // runtime's inlined accessors live in .h files).
            let frames = &first.frames;
            let frame = frames
                .iter()
                .find(|f| f.file.as_deref().is_some_and(|n| !n.ends_with(".h")))
                .or(frames.last())
                .cloned()
                .unwrap_or_default();
            let file = frame.file.as_deref().unwrap_or("?");
            let file = Path::new(file)
                .file_name()
                .map_or(file.to_string(), |f| f.to_string_lossy().into_owned());
            let line = match frame.line {
                Some(l) => format!("{file}:{l}"),
                None => first.symbol.as_deref().unwrap_or("?").to_string(),
            };
            Location {
                data: data(first),
                line,
                pcs: all,
                counts: BTreeMap::new(),
            }
        })
        .collect();
    out.sort_by(|a, b| (&a.line, &a.data).cmp(&(&b.line, &b.data)));
    out
}

/// The campaign of step 3: one program per location (its racy PCs as
/// `--adversarial-at`, the reference's behaviour as `expect`), crossed
/// with `adversarial` = `columns` and `seed` = 0..runs.
pub fn campaign(
    a: &JumbleArgs,
    r: &Reference,
    locations: &[Location],
    columns: &[String],
) -> Result<Campaign, String> {
    let dir = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let guest = std::path::absolute(&a.guest).unwrap_or_else(|_| a.guest.clone());
    let command: Vec<String> = std::iter::once(guest.to_string_lossy().into_owned())
        .chain(a.args.iter().cloned())
        .collect();
    let mut names = std::collections::BTreeSet::new();
    let programs = locations
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut name = format!("{} ({})", l.data, l.line);
            if !names.insert(name.clone()) {
                name = format!("{name} #{}", i + 1);
            }
            let at: Vec<String> = l.pcs.iter().map(|p| format!("{p:#x}")).collect();
            Program {
                name,
                command: command.clone(),
                build: None,
                racy: Some(true),
                options: vec!["--adversarial-at".into(), at.join(",")],
                expect: Some(Expect {
                    exit: Some(i64::from(r.exit)),
                    stdout_fnv: Some(spec::stdout_fnv(&r.stdout)),
                }),
            }
        })
        .collect();
    let option_axis = |name: &str, values: Vec<String>| Axis {
        name: name.into(),
        values: values
            .into_iter()
            .map(|v| AxisValue {
                options: vec![format!("--{name}"), v.clone()],
                label: v,
                env: Vec::new(),
            })
            .collect(),
    };
    Ok(Campaign {
        name: "jumble".into(),
        dir,
        timeout: spec::DEFAULT_TIMEOUT,
        env: Vec::new(),
        options: [
            "--detector",
            "none",
            "--observe",
            "none",
            "--sched",
            "random",
            "--max-insns",
        ]
        .map(String::from)
        .into_iter()
        .chain([(r.instructions.max(1) * QOS_FACTOR).to_string()])
        .collect(),
        programs,
        axes: vec![
            option_axis("adversarial", columns.to_vec()),
            option_axis("seed", (0..a.runs).map(|i| i.to_string()).collect()),
        ],
        hw_profile: false,
    })
}

/// Runs the whole analysis.
pub fn jumble(a: &JumbleArgs) -> Result<JumbleResult, String> {
    let (reference, report) = reference(a)?;
    let mut locations = locations_of(&report);
    let mut columns = vec!["none".to_string(), "sc".to_string()];
    columns.extend(
        a.heuristics
            .iter()
            .filter(|h| !columns.contains(h))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let mut interrupted = false;
    if !locations.is_empty() {
        let camp = campaign(a, &reference, &locations, &columns)?;
        let (out, temporary) = match &a.out {
            Some(d) => (d.clone(), false),
            None => (
                std::env::temp_dir().join(format!("lard-jumble-{}", std::process::id())),
                true,
            ),
        };
        let args = RunArgs {
            lard: a.lard.clone(),
            out: out.clone(),
            jobs: a.jobs,
            shard: (0, 1),
            progress: a.progress,
            interrupt: a.interrupt.clone(),
        };
        let made = std::fs::create_dir_all(&out)
            .map_err(|e| e.to_string())
            .and_then(|()| crate::cmd::campaign::make(&camp, &out.join("campaign.toml"), &args))
            .map_err(|e| format!("results directory {}: {e}", out.display()))?;
        for (spec, v) in &made.results {
            if let Some(b) = v.as_ref().and_then(behaviour) {
                let column = spec.params["adversarial"].clone();
                locations[spec.program]
                    .counts
                    .entry(column)
                    .or_default()
                    .add(b);
            }
        }
        if temporary {
            let _ = std::fs::remove_dir_all(&out);
        }
        interrupted = made.summary.map_err(|e| e.to_string())?.interrupted;
    }
    Ok(JumbleResult {
        reference,
        runs: a.runs,
        columns,
        locations,
        interrupted,
    })
}

impl Location {
    /// The location's verdict: the worst over its adversarial heuristics
    /// (`sc` is the baseline and does not count).
    pub fn verdict(&self) -> Verdict {
        self.counts
            .iter()
            .filter(|(h, _)| *h != "sc" && *h != "none")
            .map(|(_, c)| c.verdict())
            .max()
            .unwrap_or(Verdict::Benign)
    }

    fn cell(&self, column: &str) -> Counts {
        self.counts.get(column).copied().unwrap_or_default()
    }
}

impl JumbleResult {
    /// The program's verdict: the worst of its locations'.
    pub fn verdict(&self) -> Verdict {
        self.locations
            .iter()
            .map(Location::verdict)
            .max()
            .unwrap_or(Verdict::Benign)
    }

    /// True if a baseline (`none` or `sc`) run misbehaved: the program's
    /// behaviour then depends on scheduling, not only on the memory model.
    pub fn baseline_misbehaved(&self) -> bool {
        self.locations.iter().any(|l| {
            ["none", "sc"]
                .iter()
                .any(|b| l.counts.get(*b).is_some_and(|c| c.percent() > 0))
        })
    }

    /// Totals per configuration over all locations.
    pub fn totals(&self) -> BTreeMap<String, Counts> {
        let mut t: BTreeMap<String, Counts> = BTreeMap::new();
        for l in &self.locations {
            for (h, c) in &l.counts {
                t.entry(h.clone()).or_default().merge(c);
            }
        }
        t
    }

    /// The Figure-9-style table.
    pub fn table(&self, guest: &Path) -> String {
        let r = &self.reference;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "== lard jumble: {} ==\nreference: exit {}, {} instructions, {:.2} s, {} bytes of output; {} racy location(s) (FastTrack, {} racy accesses); {} run(s) per configuration",
            guest.display(),
            r.exit,
            r.instructions,
            r.seconds,
            r.stdout.len(),
            self.locations.len(),
            r.dre,
            self.runs
        );
        let name_w = self
            .locations
            .iter()
            .map(|l| l.data.len() + l.line.len() + 3)
            .max()
            .unwrap_or(8)
            .max(8);
        let _ = write!(s, "{:<name_w$}", "location");
        for c in &self.columns {
            let _ = write!(s, "  {c:>w$}", w = c.len().max(4));
        }
        let _ = writeln!(s, "  verdict");
        for l in &self.locations {
            let _ = write!(s, "{:<name_w$}", format!("{} ({})", l.data, l.line));
            for c in &self.columns {
                let _ = write!(s, "  {:>w$}", l.cell(c).percent(), w = c.len().max(4));
            }
            let _ = writeln!(s, "  {}", l.verdict().name());
        }
        let _ = writeln!(
            s,
            "cells: % of runs that crashed, exited differently, printed something else, or ran over {QOS_FACTOR}x the reference's instructions"
        );
        if self.baseline_misbehaved() {
            let _ = writeln!(
                s,
                "warning: runs without adversarial memory (none) or with sc misbehaved: the program's behaviour depends on scheduling; the verdicts are not reliable"
            );
        }
        let _ = writeln!(s, "program verdict: {}", self.verdict().name());
        s
    }

    /// The JSON report (docs/cli.md).
    pub fn json(&self) -> String {
        let r = &self.reference;
        let esc = |t: &str| t.replace('\\', "\\\\").replace('"', "\\\"");
        let heur: Vec<String> = self
            .totals()
            .iter()
            .map(|(h, c)| format!("\"{}\":{}", esc(h), c.json()))
            .collect();
        let locs: Vec<String> = self
            .locations
            .iter()
            .map(|l| {
                let cells: Vec<String> = self
                    .columns
                    .iter()
                    .map(|c| format!("\"{}\":{}", esc(c), l.cell(c).json()))
                    .collect();
                format!(
                    "{{\"data\":\"{}\",\"line\":\"{}\",\"pcs\":[{}],\"heuristics\":{{{}}},\"verdict\":\"{}\"}}",
                    esc(&l.data),
                    esc(&l.line),
                    l.pcs.iter().map(u64::to_string).collect::<Vec<_>>().join(","),
                    cells.join(","),
                    l.verdict().name()
                )
            })
            .collect();
        format!(
            "{{\"reference\":{{\"exit\":{},\"stdout_bytes\":{},\"instructions\":{},\"wall_seconds\":{:.3},\"dre\":{}}},\"runs_per_configuration\":{},\"heuristics\":{{{}}},\"locations\":[{}],\"baseline_misbehaved\":{},\"verdict\":\"{}\"}}\n",
            r.exit,
            r.stdout.len(),
            r.instructions,
            r.seconds,
            r.dre,
            self.runs,
            heur.join(","),
            locs.join(","),
            self.baseline_misbehaved(),
            self.verdict().name()
        )
    }
}

/// `lard jumble`'s command line.
#[derive(clap::Args)]
pub struct JumbleCli {
    /// Runs per configuration (each heuristic, `sc`, and `none`).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=100000))]
    runs: u64,
    /// Adversarial heuristics to try (comma-separated; `sc` and `none` are
    /// always run as baselines).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "oldest,oldest-different,random,random-different"
    )]
    heuristics: String,
    /// Child processes at a time (default: the host's cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Write the result as JSON to FILE (docs/cli.md).
    #[arg(long, value_name = "FILE")]
    report_json: Option<PathBuf>,
    /// Keep the runs as a campaign in DIR (its campaign.toml and one result
    /// per run): a second jumble with the same DIR makes only the runs
    /// missing, and `lard campaign collect DIR` draws JUMBLE's Figure 9.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    /// The guest program (after `--`).
    #[arg(required = true)]
    guest: PathBuf,
    /// Arguments for the guest.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// `lard jumble`: the analysis, its table on stdout and its JSON report.
pub fn run(a: JumbleCli) -> ExitCode {
    if let Err(e) = crate::binary::elf::ElfFile::open(&a.guest) {
        eprintln!("lard: {e}");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let mut heuristics = Vec::new();
    for h in a.heuristics.split(',').map(str::trim) {
        match h.parse::<Heuristic>() {
            Ok(h) => heuristics.push(h.name().to_string()),
            Err(e) => {
                eprintln!("lard: --heuristics: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let args = JumbleArgs {
        lard: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lard")),
        guest: a.guest.clone(),
        args: a.args,
        runs: a.runs,
        heuristics,
        jobs: crate::cmd::jobs_or_cores(a.jobs.map(|j| j as u64)),
        progress: !a.no_progress,
        out: a.out.clone(),
        interrupt: crate::cmd::interrupt_flag(),
    };
    let result = match jumble(&args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lard: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    print!("{}", result.table(&a.guest));
    if let Some(path) = &a.report_json {
        if let Err(e) = std::fs::write(path, result.json()) {
            eprintln!("lard: cannot write {}: {e}", path.display());
            return ExitCode::from(crate::cmd::exit::EXIT_INTERNAL);
        }
    }
    if result.interrupted {
        eprintln!("lard: jumble interrupted: the table counts the runs made");
        return ExitCode::from(130);
    }
    ExitCode::SUCCESS
}
