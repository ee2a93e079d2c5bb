//! LARDISH against the canonical oracle on seeded random traces, under
//! several machine configurations, plus sanity checks of its statistics.
//!
//! For every access both detectors must return the same report (racy flag,
//! kinds and earlier accesses: LARDISH's software manager keeps canonical
//! histories). The CI run processes 360,000 events; a longer run:
//!
//! ```text
//! LARD_DIFF_EVENTS=10000000 cargo test -p lard-detector-hw --release \
//!     --test lardish --target-dir /tmp/target-dhw -- --nocapture
//! ```
//!
//! `LARD_DIFF_SEED` sets the first seed (default 0).

use lard_detector_hw::event::Event;
use lard_detector_hw::lardish::{CacheGeom, HwConfig, Lardish};
use lard_detector_hw::trace::{random_trace, TraceParams};
use lard_detector_hw::{Canonical, Detector};

const EVENTS_PER_SEED: usize = 10_000;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn shapes() -> Vec<TraceParams> {
    let base = TraceParams {
        events: EVENTS_PER_SEED,
        ..TraceParams::default()
    };
    vec![
        base.clone(),
        TraceParams {
            kernel_threads: 2,
            lang_threads: 8,
            locks: 2,
            lock_percent: 20,
            switch_percent: 6,
            ..base.clone()
        },
        TraceParams {
            kernel_threads: 4,
            lang_threads: 6,
            write_percent: 10,
            span: 4096,
            ..base.clone()
        },
        TraceParams {
            clear_percent: 4,
            copy_percent: 6,
            span: 256,
            ..base.clone()
        },
        TraceParams {
            lock_percent: 30,
            tracked_percent: 100,
            kernel_identity_percent: 0,
            switch_percent: 1,
            ..base
        },
    ]
}

fn tiny() -> HwConfig {
    HwConfig {
        l1: CacheGeom {
            size: 1024,
            ways: 2,
            latency: 1,
        },
        l2: CacheGeom {
            size: 2048,
            ways: 2,
            latency: 10,
        },
        l3: CacheGeom {
            size: 4096,
            ways: 4,
            latency: 35,
        },
        ..HwConfig::default()
    }
}

fn configs() -> Vec<(&'static str, HwConfig)> {
    vec![
        ("baseline", HwConfig::default()),
        ("tiny", tiny()),
        (
            "tiny+3-entry clock table+async",
            HwConfig {
                clock_table_entries: 3,
                async_cores: 2,
                ..tiny()
            },
        ),
        (
            "3 cores, expanded, 32B lines",
            HwConfig {
                cores: 3,
                compact_metadata: false,
                line_bytes: 32,
                clock_table_entries: 3,
                ..tiny()
            },
        ),
    ]
}

fn run(trace: &[Event], cfg: &HwConfig, what: &str) -> Lardish {
    let mut oracle = Canonical::new();
    let mut l = Lardish::new(cfg.clone());
    for e in trace {
        let o = oracle.event(e);
        let h = l.event(e);
        assert_eq!(o, h, "{what}: reports differ at {e:?}");
    }
    l
}

#[test]
fn lardish_matches_canonical() {
    let total = env_u64("LARD_DIFF_EVENTS", 360_000) as usize;
    let first = env_u64("LARD_DIFF_SEED", 0);
    let shapes = shapes();
    let configs = configs();
    let seeds = total.div_ceil(EVENTS_PER_SEED).max(1) as u64;
    let (mut events, mut racy, mut rollovers, mut evictions, mut sw) = (0u64, 0, 0, 0, 0);
    for i in 0..seeds {
        let seed = first + i;
        let params = &shapes[(seed % shapes.len() as u64) as usize];
        let (name, cfg) = &configs[((seed / shapes.len() as u64) % configs.len() as u64) as usize];
        let trace = random_trace(seed, params);
        let l = run(&trace, cfg, &format!("seed {seed} on {name}"));
        let s = l.stats();
        assert_eq!(s.permission_violations, 0, "seed {seed} on {name}\n{s}");
        assert_eq!(s.checked() + s.untracked, s.accesses);
        events += s.events;
        racy += s.racy;
        rollovers += s.rollovers;
        evictions += s.md_evictions;
        sw += s.sw_checks;
    }
    eprintln!(
        "lardish vs canonical: {events} events, {racy} racy, {rollovers} rollovers, {evictions} md evictions, {sw} sw checks"
    );
    assert!(events as usize >= total);
    assert!(racy > 0 && rollovers > 0 && evictions > 0 && sw > 0);
}

fn single_thread(events: usize) -> Vec<Event> {
    random_trace(
        3,
        &TraceParams {
            events,
            kernel_threads: 1,
            lang_threads: 1,
            tracked_percent: 100,
            kernel_identity_percent: 0,
            lock_percent: 0,
            clear_percent: 0,
            copy_percent: 0,
            ..TraceParams::default()
        },
    )
}

#[test]
fn single_thread_needs_no_software_checks_after_warm_up() {
    let trace = single_thread(40_000);
    let mut l = Lardish::default();
    for e in &trace[..20_000] {
        assert!(l.event(e).is_none());
    }
    let warm = l.stats().sw_checks;
    assert!(warm > 0);
    for e in &trace[20_000..] {
        assert!(l.event(e).is_none());
    }
    let s = l.stats();
    assert_eq!(s.sw_checks, warm, "{s}");
    assert!(s.cycles_lardish >= s.cycles_no_detection, "{s}");
    assert!(s.permission_hits > s.hw_checks, "{s}");
}

#[test]
fn tiny_caches_evict_more_metadata() {
    let trace = random_trace(
        11,
        &TraceParams {
            events: 20_000,
            span: 8192,
            ..TraceParams::default()
        },
    );
    let base = run(&trace, &HwConfig::default(), "baseline");
    let small = run(&trace, &tiny(), "tiny");
    assert!(
        small.stats().md_evictions > base.stats().md_evictions,
        "{} vs {}",
        small.stats().md_evictions,
        base.stats().md_evictions
    );
    assert!(small.stats().cycles_lardish > base.stats().cycles_lardish);
}

#[test]
fn clock_table_overflow_rolls_over() {
    let trace = random_trace(
        5,
        &TraceParams {
            events: 20_000,
            lock_percent: 30,
            ..TraceParams::default()
        },
    );
    let three = HwConfig {
        clock_table_entries: 3,
        ..HwConfig::default()
    };
    let l = run(&trace, &three, "3-entry table");
    assert!(l.stats().rollovers >= 1, "{}", l.stats());
    let l = run(&trace, &HwConfig::default(), "63-entry table");
    assert_eq!(l.stats().occupancy.len(), 2);
}

#[test]
fn cost_models_and_samples_are_reported() {
    let trace = random_trace(
        9,
        &TraceParams {
            events: 20_000,
            lock_percent: 30,
            tracked_percent: 100,
            kernel_identity_percent: 0,
            ..TraceParams::default()
        },
    );
    let l = run(&trace, &HwConfig::default(), "baseline");
    let s = l.stats();
    assert!(s.cycles_fasttrack > s.cycles_no_detection, "{s}");
    assert!(!s.occupancy.is_empty());
    eprintln!("{s}");
}
