//! The checker of a `lard run`: the observer built from `--detector` or
//! `--detectors`, holding the handles to the detector state it reports
//! from after the run.

use super::args::{DetectorArg, ObserveArg, OnRace, RunArgs, SimdArg};
use super::RunError;
use crate::machine::Machine;
use crate::observe::accuracy::{parse_variants, AccuracyLog, AccuracyObserver};
use crate::observe::detect::{DetectorObserver, RaceLog};
use crate::observe::objects;
use crate::observe::observer::{AccessMode, CountingObserver, Observer, Simd};
use crate::report;
use lard_detector_hw::{HwConfig, Lardish, ObjectDetector};
use std::cell::RefCell;
use std::rc::Rc;

/// What checks the run, and the state its reports are read from.
pub(super) enum Checker {
    /// No detector: accesses are counted (`--detector none`).
    Counting,
    /// A software happens-before detector (FastTrack, canonical).
    Detector {
        /// Its races.
        log: Rc<RefCell<RaceLog>>,
    },
    /// LARDISH, the hardware model.
    Lardish {
        /// The model, for its statistics.
        model: Rc<RefCell<Lardish>>,
        /// Its races.
        log: Rc<RefCell<RaceLog>>,
    },
    /// The object race detector.
    Object {
        /// The detector, for its object reports.
        det: Rc<RefCell<ObjectDetector>>,
        /// Its races.
        log: Rc<RefCell<RaceLog>>,
    },
    /// Detector variants compared with LARD (`--detectors`).
    Variants {
        /// The variants' races and their comparison.
        log: Rc<RefCell<AccuracyLog>>,
    },
}

/// What a report is rendered from.
pub(super) struct ReportContext<'a> {
    /// The machine after the run.
    pub(super) machine: &'a Machine,
    /// A process lard started for the guest: one line when it found no
    /// races.
    pub(super) descendant: bool,
    /// `--hw-stats`: LARDISH statistics in the text.
    pub(super) hw_stats: bool,
    /// `--gen-suppressions`: an entry per reported race in the text.
    pub(super) gen_suppressions: bool,
    /// `--stats`: the mode line, the pruning table and the detector's
    /// figures after the report.
    pub(super) stats: bool,
    /// `--sarif`: the SARIF log is made.
    pub(super) sarif: bool,
    /// `--report-html`: the page is made.
    pub(super) html: bool,
}

/// A checker's reports.
#[derive(Default)]
pub(super) struct Reports {
    /// Racy dynamic accesses (what `--race-exit-code` looks at).
    pub(super) races: u64,
    /// The race report on stderr.
    pub(super) text: String,
    /// The `--report-json` file.
    pub(super) json: Option<String>,
    /// The `--sarif` file.
    pub(super) sarif: Option<String>,
    /// The `--report-html` file.
    pub(super) html: Option<String>,
    /// LARDISH statistics on stderr (`--hw-stats`).
    pub(super) hw_text: Option<String>,
    /// The `--hw-stats-json` file.
    pub(super) hw_json: Option<String>,
    /// The `--hw-profile` file.
    pub(super) hw_profile: Option<String>,
}

/// lard's command line, shell-quoted.
fn command_line() -> String {
    std::env::args()
        .map(|w| crate::cmd::shell_quote(&w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--simd`: the counting observer's form, if this CPU runs it.
pub(super) fn simd(args: &RunArgs) -> Result<Simd, RunError> {
    let simd = match args.simd {
        SimdArg::Auto => Simd::best(),
        SimdArg::Scalar => Simd::Scalar,
        SimdArg::Avx2 => Simd::Avx2,
        SimdArg::Avx512 => Simd::Avx512,
    };
    if simd.available() {
        Ok(simd)
    } else {
        Err(RunError::Usage(format!(
            "--simd: this CPU does not run the {simd:?} form"
        )))
    }
}

/// `--hw-config`, or LARDISH's defaults.
fn hw_config(args: &RunArgs) -> Result<HwConfig, RunError> {
    let Some(p) = &args.hw_config else {
        return Ok(HwConfig::default());
    };
    let text = std::fs::read_to_string(p)
        .map_err(|e| RunError::BadInput(format!("cannot read {}: {e}", p.display())))?;
    HwConfig::from_toml_str(&text).map_err(|e| RunError::BadInput(format!("{}: {e}", p.display())))
}

impl Checker {
    /// The checker `args` ask for and its observer.
    pub(super) fn build(
        args: &RunArgs,
        simd: Simd,
    ) -> Result<(Checker, Box<dyn Observer>), RunError> {
        let raise = args.on_race == OnRace::Exception;
        if args.hw_profile.is_some()
            && (args.detectors.is_some() || args.detector != DetectorArg::Lardish)
        {
            return Err(RunError::Usage(
                "--hw-profile needs --detector lardish".into(),
            ));
        }
        if let Some(list) = &args.detectors {
            let (obs, log) = parse_variants(list)
                .and_then(|v| AccuracyObserver::new(&v))
                .map_err(|e| RunError::Usage(format!("--detectors: {e}")))?;
            let inline = raise || !args.detector_thread;
            let obs = obs.raise_on_race(raise).inline(inline);
            return Ok((Checker::Variants { log }, Box::new(obs)));
        }
        Ok(match args.detector {
            DetectorArg::None => {
                let mode = match args.observe {
                    ObserveArg::None => AccessMode::None,
                    ObserveArg::Tracked => AccessMode::Tracked,
                    ObserveArg::All => AccessMode::All,
                };
                let obs = CountingObserver::new(mode, args.observe_sync).with_simd(simd);
                (Checker::Counting, Box::new(obs))
            }
            DetectorArg::Lardish => {
                let mut lardish = Lardish::new(hw_config(args)?);
                if args.hw_profile.is_some() {
                    lardish.enable_profile();
                }
                let model = Rc::new(RefCell::new(lardish));
                let (obs, log) = DetectorObserver::hardware(model.clone());
                let obs = obs.raise_on_race(raise);
                (Checker::Lardish { model, log }, Box::new(obs))
            }
            DetectorArg::Object => {
                let det = Rc::new(RefCell::new(ObjectDetector::new()));
                let (obs, log) = DetectorObserver::object(det.clone());
                let obs = obs.raise_on_race(raise);
                (Checker::Object { det, log }, Box::new(obs))
            }
            DetectorArg::Fasttrack | DetectorArg::Canonical => {
                let (obs, log) = DetectorObserver::software(args.detector.name())
                    .expect("a software detector's name");
                let obs = obs.raise_on_race(raise);
                (Checker::Detector { log }, Box::new(obs))
            }
        })
    }

    /// The race log of a single detector (what `--gdb`'s monitor shows).
    pub(super) fn race_log(&self) -> Option<&Rc<RefCell<RaceLog>>> {
        match self {
            Checker::Detector { log }
            | Checker::Lardish { log, .. }
            | Checker::Object { log, .. } => Some(log),
            Checker::Counting | Checker::Variants { .. } => None,
        }
    }

    /// The reports after the run.
    pub(super) fn render(&self, cx: &ReportContext) -> Reports {
        let m = cx.machine;
        let mut r = Reports::default();
        // The races the reports show: the detector's less the suppressed.
        let mut shown = None;
        if let Some(log) = self.race_log() {
            let rep = report::reported(&log.borrow(), m);
            let log = &rep.log;
            r.races = log.dre;
            let extra = match self {
                Checker::Object { det, .. } => {
                    let det = det.borrow();
                    r.text.push_str(&objects::text(&det, m));
                    objects::json_fields(&det, m)
                }
                _ => {
                    r.text.push_str(&log.text(m));
                    String::new()
                }
            };
            r.json = Some(format!(
                "{{\"detectors\":{{{}}}}}\n",
                log.json_with(m, &extra)
            ));
            shown = Some(rep);
        }
        if let Checker::Variants { log } = self {
            let acc = log.borrow();
            let rep = report::reported(acc.lard(), m);
            r.races = rep.log.dre;
            r.text.push_str(&rep.log.text(m));
            r.text.push_str(&acc.table());
            r.json = Some(acc.json(m));
            shown = Some(rep);
        }
        if let Some(rep) = &shown {
            if cx.sarif {
                r.sarif = Some(report::sarif::sarif(&rep.log, m, &command_line()));
            }
            if cx.gen_suppressions {
                r.text.push_str(&report::suppression_entries(&rep.log, m));
            }
            r.text.push_str(&rep.suppressed_text());
            let summary = rep.log.summary(m);
            if cx.html {
                r.html = Some(report::html::html(&rep.log, m, &command_line(), &summary));
            }
            if !matches!(self, Checker::Object { .. }) {
                r.text.push_str(&summary);
            }
            if cx.stats {
                r.text.push_str(&rep.log.figures(m));
            }
        }
        if cx.descendant && r.races == 0 && !r.text.is_empty() {
            let what = match self.race_log() {
                Some(log) => log.borrow().detector,
                None => "variants",
            };
            r.text = format!("lard ({what}): no races\n");
        }
        if let Checker::Lardish { model, .. } = self {
            let mut model = model.borrow_mut();
            for t in &m.cpu.threads {
                model.add_instructions(t.core, t.insns);
            }
            if cx.hw_stats {
                r.hw_text = Some(model.stats().to_string());
            }
            r.hw_json = Some(model.stats().to_json());
            if let Some(p) = model.profile() {
                r.hw_profile = Some(report::hw_profile::json(p, m));
            }
        }
        r
    }
}
