//! Per-access cost of the object race detector against FastTrack on a
//! recorded trace (no emulation): `make bench` (bench/detectors.py).
//!
//! ```text
//! cargo run --release -p lard-detector-hw --example object_cost -- TRACE [--repeat N]
//! ```
//!
//! Record the trace with `lard run --detector object --record-trace TRACE
//! GUEST` so that it carries the object-level events (static objects,
//! Block/Wake; docs/events.md). Each detector replays the whole trace on a
//! fresh instance, best of `--repeat` (default 5); the counting loop is the
//! baseline. Printed: ns per access for each, the detector's cost above the
//! baseline per access, and object/FastTrack. The two detectors answer
//! different questions, so their race counts are printed, not compared.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use lard_detector_hw::event::{Event, EventKind};
use lard_detector_hw::trace::TraceReader;
use lard_detector_hw::{Detector, FastTrack, ObjectDetector};

#[inline(never)]
fn run(d: &mut dyn Detector, trace: &[Event]) -> u64 {
    let mut races = 0;
    for e in trace {
        races += u64::from(d.event(e).is_some());
    }
    races
}

#[inline(never)]
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
    (0..repeat.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: object_cost TRACE [--repeat N]");
        return ExitCode::from(2);
    };
    let mut repeat = 5;
    if let (Some(flag), Some(n)) = (args.next(), args.next()) {
        match (flag.as_str(), n.parse()) {
            ("--repeat", Ok(n)) => repeat = n,
            _ => {
                eprintln!("object_cost: bad arguments (usage: object_cost TRACE [--repeat N])");
                return ExitCode::from(2);
            }
        }
    }
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("object_cost: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let trace: Result<Vec<Event>, _> = match TraceReader::new(std::io::BufReader::new(file)) {
        Ok(r) => r.collect(),
        Err(e) => {
            eprintln!("object_cost: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let trace = match trace {
        Ok(t) => t,
        Err(e) => {
            eprintln!("object_cost: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    let accesses = trace
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Access(_)))
        .count()
        .max(1) as f64;
    let ns = |t: Duration| t.as_secs_f64() * 1e9 / accesses;
    let base = best_of(repeat, || {
        std::hint::black_box(count(std::hint::black_box(&trace)));
    });
    let (mut ft_races, mut obj_races) = (0, 0);
    let ft = best_of(repeat, || ft_races = run(&mut FastTrack::new(), &trace));
    let obj = best_of(repeat, || {
        obj_races = run(&mut ObjectDetector::new(), &trace)
    });
    let above = |t: Duration| (ns(t) - ns(base)).max(0.0);
    println!(
        "{} events, {} accesses; ns/access: count {:.2}, fasttrack {:.2} (+{:.2}), object {:.2} (+{:.2}); object/fasttrack {:.2}x (above count {:.2}x); races: fasttrack {ft_races} racy accesses, object {obj_races} object races",
        trace.len(),
        accesses as u64,
        ns(base),
        ns(ft),
        above(ft),
        ns(obj),
        above(obj),
        obj.as_secs_f64() / ft.as_secs_f64().max(1e-12),
        above(obj) / above(ft).max(1e-9),
    );
    ExitCode::SUCCESS
}
