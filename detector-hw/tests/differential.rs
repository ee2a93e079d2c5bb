//! Differential test: FastTrack against the canonical oracle on seeded random
//! traces ([`lard_detector_hw::trace::random_trace`]).
//!
//! For every access, both detectors must agree on whether it is racy and on
//! the set of race kinds; FastTrack's earlier accesses must be a subset of
//! Canonical's, and identical for the last write (`WriteWrite`/`WriteRead`).
//!
//! The CI run processes 1,000,000 events per configuration check (split
//! over many seeds). A longer run is one command:
//!
//! ```text
//! LARD_DIFF_EVENTS=100000000 cargo test -p lard-detector-hw --release \
//!     --test differential --target-dir /tmp/target-dhw -- --nocapture
//! ```
//!
//! `LARD_DIFF_SEED` sets the first seed (default 0), to explore new traces.

use lard_detector_hw::event::{Event, EventKind};
use lard_detector_hw::trace::{random_trace, TraceParams};
use lard_detector_hw::{Canonical, Detector, FastTrack, FtWork, Granularity, Race, RaceKind};

const EVENTS_PER_SEED: usize = 20_000;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// Total events for the whole test (`LARD_DIFF_EVENTS`, default 1,000,000).
fn total_events() -> usize {
    env_u64("LARD_DIFF_EVENTS", 1_000_000) as usize
}

/// The trace shapes the seeds cycle through.
fn configurations() -> Vec<TraceParams> {
    let base = TraceParams {
        events: EVENTS_PER_SEED,
        ..TraceParams::default()
    };
    vec![
        base.clone(),
        // Many language threads on two kernel threads, more locking.
        TraceParams {
            kernel_threads: 2,
            lang_threads: 8,
            locks: 2,
            lock_percent: 20,
            switch_percent: 6,
            ..base.clone()
        },
        // Read-mostly: read-shared histories, larger read vector clocks.
        TraceParams {
            kernel_threads: 4,
            lang_threads: 6,
            write_percent: 10,
            span: 128,
            ..base.clone()
        },
        // Heavy history movement.
        TraceParams {
            clear_percent: 4,
            copy_percent: 6,
            span: 256,
            ..base.clone()
        },
        // Mostly lock-protected: long race-free stretches.
        TraceParams {
            lock_percent: 30,
            tracked_percent: 100,
            kernel_identity_percent: 0,
            switch_percent: 1,
            ..base.clone()
        },
        // All unaligned, all tracked, no kernel identities.
        TraceParams {
            aligned_percent: 0,
            tracked_percent: 100,
            kernel_identity_percent: 0,
            ..base
        },
    ]
}

#[derive(Default, Debug)]
struct Stats {
    events: usize,
    accesses: usize,
    racy: usize,
    strict_subset: usize,
}

/// Checks one access's reports; `what` names the comparison for messages.
fn compare(oracle: &Option<Race>, other: &Option<Race>, e: &Event, what: &str, stats: &mut Stats) {
    match (oracle, other) {
        (None, None) => {}
        (Some(o), Some(f)) => {
            stats.racy += 1;
            assert_eq!(
                o.kinds(),
                f.kinds(),
                "{what}: kinds differ at {e:?}\n{o:?}\n{f:?}"
            );
            for p in &f.priors {
                assert!(
                    o.priors.contains(p),
                    "{what}: {p:?} not in oracle at {e:?}\n{o:?}"
                );
            }
            let writes = |r: &Race| -> Vec<_> {
                r.priors
                    .iter()
                    .filter(|p| p.kind != RaceKind::ReadWrite)
                    .copied()
                    .collect()
            };
            assert_eq!(writes(o), writes(f), "{what}: last write differs at {e:?}");
            if o.priors.len() != f.priors.len() {
                stats.strict_subset += 1;
            }
        }
        _ => panic!("{what}: racy flag differs at {e:?}\noracle: {oracle:?}\nother: {other:?}"),
    }
}

fn run_pair(
    events: &[Event],
    oracle: &mut dyn Detector,
    other: &mut dyn Detector,
    what: &str,
    stats: &mut Stats,
) {
    for e in events {
        let o = oracle.event(e);
        let f = other.event(e);
        stats.events += 1;
        if let EventKind::Access(_) = e.kind {
            stats.accesses += 1;
        }
        compare(&o, &f, e, what, stats);
    }
}

#[test]
fn fasttrack_matches_canonical() {
    let total = total_events();
    let first_seed = env_u64("LARD_DIFF_SEED", 0);
    let configs = configurations();
    let seeds = total.div_ceil(EVENTS_PER_SEED).max(1) as u64;
    let mut stats = Stats::default();
    for i in 0..seeds {
        let seed = first_seed + i;
        let params = &configs[(seed % configs.len() as u64) as usize];
        let trace = random_trace(seed, params);
        let what = format!("seed {seed}");
        run_pair(
            &trace,
            &mut Canonical::new(),
            &mut FastTrack::new(),
            &what,
            &mut stats,
        );
    }
    eprintln!("fasttrack vs canonical: {stats:?}");
    assert!(stats.events >= total);
    // The traces must exercise both outcomes and FastTrack's forgetting.
    assert!(stats.racy > stats.accesses / 100, "{stats:?}");
    assert!(stats.racy < stats.accesses * 9 / 10, "{stats:?}");
    assert!(stats.strict_subset > 0, "{stats:?}");
}

/// On type-safe traces, coarsened histories give the byte-exact reports.
#[test]
fn type_safe_granularity_is_exact_on_type_safe_traces() {
    let seeds = (total_events() / 10).div_ceil(EVENTS_PER_SEED).max(1) as u64;
    let params = TraceParams {
        events: EVENTS_PER_SEED,
        type_safe: true,
        ..TraceParams::default()
    };
    let mut stats = Stats::default();
    for seed in 0..seeds {
        let trace = random_trace(seed, &params);
        let what = format!("type-safe seed {seed}");
        let mut bytes = Canonical::new();
        let mut units = Canonical::with_granularity(Granularity::TypeSafe);
        let mut ft = FastTrack::with_granularity(Granularity::TypeSafe);
        for e in &trace {
            let b = bytes.event(e);
            let u = units.event(e);
            let f = ft.event(e);
            assert_eq!(b, u, "{what}: coarsened canonical differs at {e:?}");
            compare(&b, &f, e, &what, &mut stats);
        }
    }
    assert!(stats.racy > 0, "{stats:?}");
}

/// Clearing the reads on a write changes no racy verdict as long as no write
/// has raced (see the `canonical` module docs).
#[test]
fn read_clearing_preserves_verdicts_until_a_racy_write() {
    let params = TraceParams {
        events: 2_000,
        ..TraceParams::default()
    };
    let mut compared = 0usize;
    for seed in 0..200 {
        let trace = random_trace(seed, &params);
        let mut clearing = Canonical::new();
        let mut keeping = Canonical::new().with_read_clearing(false);
        for e in &trace {
            let c = clearing.event(e);
            let k = keeping.event(e);
            assert_eq!(c.is_some(), k.is_some(), "seed {seed} at {e:?}");
            compared += 1;
            let racy_write = matches!(
                (&e.kind, &k),
                (EventKind::Access(a), Some(_)) if a.kind == lard_detector_hw::event::AccessKind::Write
            );
            if racy_write {
                break;
            }
        }
    }
    assert!(compared > 2_000, "{compared}");
}

/// Moves every other PC site (by `pc / 4`) above 2^48, where no packed
/// shadow word holds a PC directly.
fn high_pcs(trace: &mut [Event]) {
    let high = |pc: u64| {
        if (pc / 4) % 2 == 1 {
            pc | 0xffff_0000_0000_0000
        } else {
            pc
        }
    };
    for e in trace {
        e.pc = high(e.pc);
        if let EventKind::Access(a) = &mut e.kind {
            a.pc = high(a.pc);
        }
    }
}

/// FastTrack's access-unit shadow (one cell per aligned unit, split on
/// partial accesses, merged on whole-granule writes and clears) against the
/// straightforward one-cell-per-byte layout: identical reports (every
/// earlier access, PC and kind) and identical per-byte work on every access,
/// on every trace shape (unaligned, page-crossing, mixed sizes, PCs that
/// do not fit a packed shadow word,
/// ClearHistory/CopyHistory, read-shared histories, type-safe items).
#[test]
fn unit_shadow_matches_per_byte_shadow() {
    let mut configs = configurations();
    configs.push(TraceParams {
        events: EVENTS_PER_SEED,
        type_safe: true,
        ..TraceParams::default()
    });
    // Mostly aligned and write-heavy: units split and merge back often.
    configs.push(TraceParams {
        events: EVENTS_PER_SEED,
        aligned_percent: 95,
        write_percent: 60,
        clear_percent: 3,
        copy_percent: 3,
        ..TraceParams::default()
    });
    let seeds = (total_events() / 2).div_ceil(EVENTS_PER_SEED).max(1) as u64;
    let first_seed = env_u64("LARD_DIFF_SEED", 0);
    let (mut accesses, mut racy) = (0usize, 0usize);
    let mut work = [0u64; 6];
    let mut shared_entries = 0u64;
    for i in 0..seeds {
        let seed = first_seed + i;
        let params = &configs[(seed % configs.len() as u64) as usize];
        let mut trace = random_trace(seed, params);
        if seed % 3 == 2 {
            // Half of the PC sites above 2^48: the unit layout packs
            // their epochs wide (module `fasttrack::cell`), the others
            // directly, in the same cells.
            high_pcs(&mut trace);
        }
        let mut units = FastTrack::new();
        let mut bytes = FastTrack::per_byte_reference();
        // What `lard run` uses: the same detector without the work counts.
        let mut lean = FastTrack::new().without_work();
        for e in &trace {
            let u = units.event(e);
            let b = bytes.event(e);
            assert_eq!(u, b, "seed {seed}: reports differ at {e:?}");
            assert_eq!(lean.event(e), u, "seed {seed}: without work at {e:?}");
            assert_eq!(*lean.last_work(), FtWork::default(), "seed {seed}");
            assert_eq!(
                units.last_work().per_byte(),
                bytes.last_work().per_byte(),
                "seed {seed}: work differs at {e:?}"
            );
            // The per-byte shadow visits one cell per byte.
            assert_eq!(
                bytes.last_work().units,
                bytes.last_work().cells,
                "seed {seed}: {e:?}"
            );
            if let EventKind::Access(_) = e.kind {
                accesses += 1;
                racy += usize::from(u.is_some());
                for (t, c) in work.iter_mut().zip(units.last_work().cells) {
                    *t += u64::from(c);
                }
                shared_entries += u64::from(units.last_work().shared_entries);
            }
        }
    }
    eprintln!(
        "unit vs per-byte shadow: {accesses} accesses, {racy} racy, work {work:?}, \
         {shared_entries} shared entries"
    );
    assert!(racy > accesses / 100 && racy < accesses * 9 / 10);
    // Every FastTrack path was taken, read-shared histories included.
    assert!(work.iter().all(|&c| c > 0), "{work:?}");
    assert!(shared_entries > 0);
}
