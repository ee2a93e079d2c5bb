//! Replays a recorded trace through detector variants the way
//! `lard run --detectors lard,VARIANT` runs them (one `VariantSet`), once on
//! FastTrack's
//! access-unit shadow and once on the per-byte reference layout
//! (`FastTrack::per_byte_reference`), alternating, and prints this thread's
//! CPU time per event for each.
//!
//! ```text
//! lard run --detectors naive --record-trace /tmp/t.trace GUEST ARGS...
//! cargo run --release -p lard-detector-hw --example variants_replay -- \
//!     /tmp/t.trace [VARIANT] [--repeat N]
//! ```
//!
//! `VARIANT` defaults to `naive`; `--repeat` (default 3) is the number of
//! runs of each layout. Loading the trace is not timed. Both layouts must
//! give the same accuracy table (exit status 1 if not; 2 for a usage or
//! trace error). CPU time comes from `/proc/thread-self/stat` (Linux).

use std::process::ExitCode;

use lard_detector_hw::event::Event;
use lard_detector_hw::trace::read_trace;
use lard_detector_hw::variants::{AccuracyRow, Variant, VariantSet};
use lard_detector_hw::FastTrack;

/// This thread's user + system CPU seconds.
fn thread_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// One replay; returns (CPU seconds, the table's rows).
fn replay(events: &[Event], variant: Variant, per_byte: bool) -> (f64, Vec<AccuracyRow>) {
    let mut set = VariantSet::with_fasttrack(&[Variant::Lard, variant], || {
        if per_byte {
            FastTrack::per_byte_reference()
        } else {
            FastTrack::new()
        }
    })
    .expect("lard is listed once");
    let start = thread_cpu().unwrap_or(0.0);
    for e in events {
        set.event(e);
    }
    let cpu = thread_cpu().unwrap_or(0.0) - start;
    if !per_byte {
        println!("repeats skipped: {}", set.repeats_skipped());
    }
    (cpu, set.accuracy().rows())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut path, mut variant, mut repeat) = (None, Variant::Naive, 3usize);
    while let Some(a) = args.next() {
        if a == "--repeat" {
            match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => repeat = n,
                None => {
                    eprintln!("variants_replay: --repeat needs a number");
                    return ExitCode::from(2);
                }
            }
        } else if path.is_none() {
            path = Some(a);
        } else {
            match a.parse() {
                Ok(v) if v != Variant::Lard => variant = v,
                _ => {
                    eprintln!("variants_replay: `{a}` is not a variant other than lard");
                    return ExitCode::from(2);
                }
            }
        }
    }
    let Some(path) = path else {
        eprintln!("usage: variants_replay TRACE [VARIANT] [--repeat N]");
        return ExitCode::from(2);
    };
    let events = match std::fs::File::open(&path)
        .map_err(|e| e.to_string())
        .and_then(|f| read_trace(std::io::BufReader::new(f)).map_err(|e| e.to_string()))
    {
        Ok(ev) => ev,
        Err(e) => {
            eprintln!("variants_replay: {path}: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{} events, variants lard,{variant}", events.len());
    let mut tables = Vec::new();
    for _ in 0..repeat {
        for per_byte in [false, true] {
            let (cpu, rows) = replay(&events, variant, per_byte);
            println!(
                "{:9} {cpu:7.3} s CPU {:7.1} ns/event",
                if per_byte { "per-byte" } else { "units" },
                cpu * 1e9 / events.len().max(1) as f64
            );
            tables.push(rows);
        }
    }
    if tables.windows(2).any(|w| w[0] != w[1]) {
        eprintln!("variants_replay: the layouts' accuracy tables differ");
        return ExitCode::from(1);
    }
    if let Some(rows) = tables.first() {
        for r in rows {
            println!("{}: {} racy accesses, {} racy PCs", r.name, r.dre, r.pcs);
        }
    }
    ExitCode::SUCCESS
}
