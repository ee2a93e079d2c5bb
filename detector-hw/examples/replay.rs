//! Replays an event trace through the detectors: events per second and
//! dynamic race event (DRE) counts, which must agree across detectors.
//!
//! ```text
//! cargo run --release -p lard-detector-hw --example replay -- \
//!     [TRACE] [canonical|fasttrack|lardish|all] [--repeat N] \
//!     [--shape default|synchronized|single-thread|all] [--events N] [--seed S] [--save FILE]
//! ```
//!
//! * `TRACE` is a trace file (`lard run --record-trace FILE`, or
//!   `trace::write_trace`). It is loaded into memory first; loading is not
//!   timed.
//! * Without `TRACE`, random traces are generated with
//!   `trace::random_trace(seed, &params)` (seed 1, 2,000,000 events unless
//!   `--seed`/`--events` say otherwise) for each `--shape` (default `all`):
//!   * `default`: `TraceParams::default()`: 3 kernel threads running 5
//!     language threads, 3 locks, a 512-byte address range across a page
//!     boundary, sizes 1–16 (70% aligned), 90% tracked, 45% writes,
//!     10% lock operations, 30% of accesses under kernel identities that
//!     never synchronise: about 45% of the checked accesses are racy;
//!   * `synchronized`: the default with 30% lock operations, every access
//!     tracked and made by a language thread, 1% thread switches (still
//!     about 20% racy accesses: accesses outside the held lock's region);
//!   * `single-thread`: one kernel and one language thread, all tracked:
//!     no races, every access takes the same-thread paths.
//!
//!   `--save FILE` writes the (last) generated trace as a trace file.
//! * The detector argument (default `all`) picks the detectors. A `count`
//!   observer (counts events by kind, like the emulator's counting
//!   observer) is always timed first, as the baseline of the `vs count`
//!   column.
//! * Each detector runs `--repeat` times (default 3, fewer if a run takes
//!   over 2 s) on a fresh detector; the best time is reported.
//! * DREs: racy accesses, and those whose report includes each race kind
//!   (`WW`, `WR`, `RW`). They must be the same for every detector (exit
//!   status 1 if not; 2 for a usage or trace error).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use lard_detector_hw::event::{Event, EventKind};
use lard_detector_hw::trace::{random_trace, write_trace, TraceParams, TraceReader};
use lard_detector_hw::{Canonical, Detector, FastTrack, Lardish, Race, RaceKind};

/// Dynamic race events of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Dre {
    racy: u64,
    ww: u64,
    wr: u64,
    rw: u64,
}

impl Dre {
    /// Counts one racy access.
    fn add(&mut self, r: &Race) {
        self.racy += 1;
        let k = r.kinds();
        self.ww += u64::from(k.contains(RaceKind::WriteWrite));
        self.wr += u64::from(k.contains(RaceKind::WriteRead));
        self.rw += u64::from(k.contains(RaceKind::ReadWrite));
    }
}

#[inline(never)]
fn run(d: &mut dyn Detector, trace: &[Event]) -> Dre {
    let mut dre = Dre::default();
    for e in trace {
        if let Some(r) = d.event(e) {
            dre.add(&r);
        }
    }
    dre
}

/// The counting observer: events by kind.
fn count(trace: &[Event]) -> u64 {
    let mut n = [0u64; 5];
    for e in trace {
        let i = match e.kind {
            EventKind::Access(_) => 0,
            EventKind::Lard(_) => 1,
            EventKind::Sync(_) => 2,
            EventKind::ContextSwitch => 3,
            EventKind::Program(_) => 4,
        };
        n[std::hint::black_box(i)] += 1;
    }
    n.iter().sum()
}

fn best_of(repeat: u32, mut f: impl FnMut()) -> Duration {
    let mut best = Duration::MAX;
    let mut total = Duration::ZERO;
    for _ in 0..repeat.max(1) {
        let start = Instant::now();
        f();
        let t = start.elapsed();
        best = best.min(t);
        total += t;
        if total > Duration::from_secs(2) {
            break;
        }
    }
    best
}

/// LARDISH through its batch entry point ([`Lardish::events`], which
/// prefetches ahead), as `lard run` feeds it.
#[inline(never)]
fn run_lardish(trace: &[Event]) -> Dre {
    let mut dre = Dre::default();
    Lardish::default().events(trace, |_, r| dre.add(&r));
    dre
}

fn make(name: &str) -> Box<dyn Detector> {
    match name {
        "canonical" => Box::new(Canonical::new()),
        "fasttrack" => Box::new(FastTrack::new()),
        _ => Box::new(Lardish::default()),
    }
}

/// Replays `trace`; returns false if the detectors' DREs differ.
fn replay(label: &str, trace: &[Event], detectors: &[&str], repeat: u32) -> bool {
    let accesses = trace
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Access(_)))
        .count();
    println!("{label}: {} events ({accesses} accesses)", trace.len());
    let per_sec = |t: Duration| trace.len() as f64 / t.as_secs_f64().max(1e-9);
    let base = best_of(repeat.max(5), || {
        std::hint::black_box(count(std::hint::black_box(trace)));
    });
    println!("  {:<10} {:>9.1} M events/s", "count", per_sec(base) / 1e6);
    let mut first: Option<Dre> = None;
    let mut agree = true;
    for name in detectors {
        let mut dre = Dre::default();
        let t = best_of(repeat, || {
            dre = if *name == "lardish" {
                run_lardish(trace)
            } else {
                run(make(name).as_mut(), trace)
            }
        });
        println!(
            "  {name:<10} {:>9.2} M events/s  {:>6.1}x vs count  DRE racy {} (WW {} WR {} RW {})",
            per_sec(t) / 1e6,
            t.as_secs_f64() / base.as_secs_f64().max(1e-12),
            dre.racy,
            dre.ww,
            dre.wr,
            dre.rw
        );
        match first {
            None => first = Some(dre),
            Some(f) if f != dre => {
                println!("  MISMATCH: {name} disagrees with {}", detectors[0]);
                agree = false;
            }
            Some(_) => {}
        }
    }
    agree
}

fn shape(name: &str) -> Option<TraceParams> {
    Some(match name {
        "default" => TraceParams::default(),
        "synchronized" => TraceParams {
            lock_percent: 30,
            tracked_percent: 100,
            kernel_identity_percent: 0,
            switch_percent: 1,
            ..TraceParams::default()
        },
        "single-thread" => TraceParams {
            kernel_threads: 1,
            lang_threads: 1,
            tracked_percent: 100,
            ..TraceParams::default()
        },
        _ => return None,
    })
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("replay: {msg}");
    eprintln!(
        "usage: replay [TRACE] [canonical|fasttrack|lardish|all] [--repeat N] \
         [--shape default|synchronized|single-thread|all] [--events N] [--seed S] [--save FILE]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut file = None;
    let mut which = "all".to_string();
    let mut repeat = 3u32;
    let mut shape_name = "all".to_string();
    let mut events = 2_000_000usize;
    let mut seed = 1u64;
    let mut save = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        let num = |v: Result<String, String>| -> Result<u64, String> {
            let v = v?;
            v.replace('_', "")
                .parse()
                .map_err(|_| format!("not a number: {v}"))
        };
        let r = match a.as_str() {
            "--repeat" => num(value("--repeat")).map(|n| repeat = n as u32),
            "--events" => num(value("--events")).map(|n| events = n as usize),
            "--seed" => num(value("--seed")).map(|n| seed = n),
            "--shape" => value("--shape").map(|s| shape_name = s),
            "--save" => value("--save").map(|s| save = Some(s)),
            "canonical" | "fasttrack" | "lardish" | "all" => {
                which = a.clone();
                Ok(())
            }
            _ if a.starts_with("--") => Err(format!("unknown option {a}")),
            _ if file.is_none() => {
                file = Some(a.clone());
                Ok(())
            }
            _ => Err(format!("unexpected argument {a}")),
        };
        if let Err(e) = r {
            return usage(&e);
        }
    }
    let detectors: Vec<&str> = match which.as_str() {
        "all" => vec!["canonical", "fasttrack", "lardish"],
        one => vec![one],
    };
    let mut ok = true;
    if let Some(path) = file {
        let reader = std::fs::File::open(&path)
            .map_err(lard_detector_hw::trace::TraceError::Io)
            .and_then(TraceReader::new);
        let trace: Result<Vec<Event>, _> = reader.and_then(|r| r.collect());
        match trace {
            Ok(trace) => ok &= replay(&path, &trace, &detectors, repeat),
            Err(e) => {
                eprintln!("replay: {path}: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        let names: Vec<&str> = match shape_name.as_str() {
            "all" => vec!["default", "synchronized", "single-thread"],
            one => vec![one],
        };
        for name in names {
            let Some(params) = shape(name) else {
                return usage(&format!("unknown shape {name}"));
            };
            let trace = random_trace(seed, &TraceParams { events, ..params });
            if let Some(path) = &save {
                let written = std::fs::File::create(path)
                    .and_then(|f| write_trace(&mut std::io::BufWriter::new(f), &trace));
                if let Err(e) = written {
                    eprintln!("replay: {path}: {e}");
                    return ExitCode::from(2);
                }
            }
            let label = format!("random {name} trace (seed {seed})");
            ok &= replay(&label, &trace, &detectors, repeat);
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("replay: detectors disagree on the DRE counts");
        ExitCode::from(1)
    }
}
