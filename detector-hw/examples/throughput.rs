//! Events per second of each detector on random traces.
//!
//! ```text
//! cargo run -p lard-detector-hw --release --example throughput --target-dir /tmp/target-dhw [EVENTS [canonical|fasttrack|lardish]]
//! ```
//!
//! Trace generation is not timed. Three trace shapes: the default (many
//! unsynchronised accesses, so about half the accesses are racy and build
//! reports; branches are unpredictable), a mostly lock-protected one, and a
//! single-thread one (no races: the fast paths).

use std::time::Instant;

use lard_detector_hw::event::Event;
use lard_detector_hw::trace::{random_trace, TraceParams};
use lard_detector_hw::{Canonical, Detector, FastTrack, Lardish};

fn measure(name: &str, d: &mut dyn Detector, trace: &[Event]) {
    let start = Instant::now();
    let mut racy = 0usize;
    for e in trace {
        if d.event(e).is_some() {
            racy += 1;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "  {name:<10} {:>8.1} M events/s  ({racy} racy accesses, {:.3} s)",
        trace.len() as f64 / secs / 1e6,
        secs
    );
}

fn main() {
    let events: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4_000_000);
    // Optional second argument: run only this detector (for profiling).
    let only: Option<String> = std::env::args().nth(2);
    let shapes = [
        ("default", TraceParams::default()),
        (
            "mostly-synchronized",
            TraceParams {
                lock_percent: 30,
                tracked_percent: 100,
                kernel_identity_percent: 0,
                switch_percent: 1,
                ..TraceParams::default()
            },
        ),
        (
            // One thread: no races, every access takes the same-thread path.
            "single-thread",
            TraceParams {
                kernel_threads: 1,
                lang_threads: 1,
                tracked_percent: 100,
                ..TraceParams::default()
            },
        ),
    ];
    for (label, shape) in shapes {
        let trace = random_trace(1, &TraceParams { events, ..shape });
        println!("{label} trace, {events} events:");
        if only.as_deref().is_none_or(|o| o == "canonical") {
            measure("canonical", &mut Canonical::new(), &trace);
        }
        if only.as_deref().is_none_or(|o| o == "fasttrack") {
            measure("fasttrack", &mut FastTrack::new(), &trace);
        }
        if only.as_deref().is_none_or(|o| o == "lardish") {
            measure("lardish", &mut Lardish::default(), &trace);
        }
    }
}
