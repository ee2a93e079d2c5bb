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

use lard_detector_hw::event::{Access, AccessKind, LardOp, Origin};
use lard_detector_hw::event::{Event, EventKind};
use lard_detector_hw::lardish::{
    CacheGeom, HwCause, HwConfig, Lardish, MdGranularity, Mechanism, SwCause,
};
use lard_detector_hw::trace::{random_trace, TraceParams};
use lard_detector_hw::{Canonical, Detector, FastTrack, FtPath};

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

/// The machines of the differential tests: four with type-safe metadata
/// (the default) and two with byte metadata.
fn configs() -> Vec<(&'static str, HwConfig)> {
    let byte = |cfg: HwConfig| HwConfig {
        granularity: MdGranularity::Byte,
        ..cfg
    };
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
        (
            "byte metadata, tiny+3-entry clock table+async",
            byte(HwConfig {
                clock_table_entries: 3,
                async_cores: 2,
                ..tiny()
            }),
        ),
        (
            "byte metadata, 3 cores, expanded, 32B lines",
            byte(HwConfig {
                cores: 3,
                compact_metadata: false,
                line_bytes: 32,
                clock_table_entries: 3,
                ..tiny()
            }),
        ),
    ]
}

/// `trace` with every third access marked as a thread-stack access (the
/// same bytes are reached by stack and other accesses, from every thread).
fn with_stack_accesses(mut trace: Vec<Event>) -> Vec<Event> {
    let mut i = 0;
    for e in &mut trace {
        if let EventKind::Access(a) = &mut e.kind {
            a.stack = i % 3 == 0;
            i += 1;
        }
    }
    trace
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
    let mut reclaims = 0;
    let (mut conflicts, mut stack) = (0, 0);
    let mut sw_causes = [0u64; SwCause::ALL.len()];
    let mut hw_causes = [0u64; HwCause::ALL.len()];
    for i in 0..seeds {
        let seed = first + i;
        let params = &shapes[(seed % shapes.len() as u64) as usize];
        let (name, cfg) = &configs[((seed / shapes.len() as u64) % configs.len() as u64) as usize];
        let mut trace = random_trace(seed, params);
        if seed % 2 == 1 {
            trace = with_stack_accesses(trace);
        }
        let mut l = run(&trace, cfg, &format!("seed {seed} on {name}"));
        let s = l.stats();
        assert_eq!(s.permission_violations, 0, "seed {seed} on {name}\n{s}");
        assert_eq!(s.checked() + s.untracked + s.stack_accesses, s.accesses);
        assert_eq!(
            s.cycles_by_mechanism.iter().sum::<u64>(),
            s.cycles_lardish,
            "seed {seed} on {name}"
        );
        // Every software and hardware check has exactly one cause.
        assert_eq!(
            s.sw_causes.iter().sum::<u64>(),
            s.sw_checks,
            "seed {seed} on {name}\n{s}"
        );
        assert_eq!(
            s.hw_causes.iter().sum::<u64>(),
            s.hw_checks,
            "seed {seed} on {name}\n{s}"
        );
        for (t, n) in sw_causes.iter_mut().zip(s.sw_causes) {
            *t += n;
        }
        for (t, n) in hw_causes.iter_mut().zip(s.hw_causes) {
            *t += n;
        }
        if cfg.granularity == MdGranularity::Byte {
            assert_eq!(s.granularity_conflicts, 0, "seed {seed} on {name}");
        }
        conflicts += s.granularity_conflicts;
        stack += s.stack_accesses;
        events += s.events;
        racy += s.racy;
        rollovers += s.rollovers;
        reclaims += s.reclaims;
        evictions += s.md_evictions;
        sw += s.sw_checks;
    }
    eprintln!(
        "lardish vs canonical: {events} events, {racy} racy, {rollovers} rollovers, {evictions} md evictions, {sw} sw checks"
    );
    eprintln!("sw check causes {sw_causes:?}, hw check causes {hw_causes:?}");
    assert!(events as usize >= total);
    assert!(racy > 0 && rollovers > 0 && evictions > 0 && sw > 0);
    assert!(reclaims > 0, "no clock-table merge exercised");
    // The random traces mix access widths on the same bytes.
    assert!(conflicts > 0, "no granularity conflict");
    assert!(stack > 0, "no thread-local stack access");
    if total >= 360_000 {
        // These traces exercise every mechanism that sends an access to
        // software (inflation needs a compact line resident while another
        // core's expanded half is not: not asserted).
        for c in [
            SwCause::Cold,
            SwCause::Evicted,
            SwCause::HistoryOp,
            SwCause::Rollover,
            SwCause::ThreadSwitch,
        ] {
            assert!(
                sw_causes[c as usize] > 0,
                "no software check caused by {c:?}"
            );
        }
        for c in HwCause::ALL {
            assert!(
                hw_causes[c as usize] > 0,
                "no hardware check caused by {c:?}"
            );
        }
    }
}

/// The FastTrack cost is one price shared by both cost models: raising the
/// per-access FastTrack cost by `d` raises software FastTrack's cycles by
/// `d` per checked access and LARDISH's by `d` per software check (its
/// software check runs the same FastTrack check); raising LARDISH's
/// transition cost changes nothing for FastTrack. No other statistic moves.
#[test]
fn fasttrack_cost_is_shared_and_transition_is_lardish_only() {
    let trace = random_trace(
        21,
        &TraceParams {
            events: 20_000,
            lock_percent: 20,
            ..TraceParams::default()
        },
    );
    let base = HwConfig::default();
    let d = 1000u64;
    let mut more_ft = base.clone();
    more_ft.ft.access += d as u32;
    let mut more_transition = base.clone();
    more_transition.transition_cycles += d as u32;
    let s0 = run(&trace, &base, "base").stats().clone();
    let s1 = run(&trace, &more_ft, "ft.access + d").stats().clone();
    let s2 = run(&trace, &more_transition, "transition + d")
        .stats()
        .clone();
    assert!(s0.sw_checks > 0 && s0.checked() > s0.sw_checks, "{s0}");
    assert_eq!(s1.cycles_fasttrack - s0.cycles_fasttrack, d * s0.checked());
    assert_eq!(s1.cycles_lardish - s0.cycles_lardish, d * s0.sw_checks);
    let sw = Mechanism::SwCheck as usize;
    assert_eq!(
        s1.cycles_by_mechanism[sw] - s0.cycles_by_mechanism[sw],
        d * s0.sw_checks
    );
    assert_eq!(s2.cycles_fasttrack, s0.cycles_fasttrack);
    let entries = s0.sw_checks + s0.clear_ops + s0.copy_ops;
    assert!(s2.cycles_lardish - s0.cycles_lardish >= d * entries);
    let strip = |s: &lard_detector_hw::HwStats| {
        let mut s = s.clone();
        (s.cycles_lardish, s.cycles_fasttrack) = (0, 0);
        s.cycles_by_mechanism = Default::default();
        s
    };
    assert_eq!(strip(&s1), strip(&s0));
    assert_eq!(strip(&s2), strip(&s0));
}

/// FastTrack reports the check path of every cell it visits.
/// ClearHistory and CopyHistory cost what exists: raising the
/// per-location costs by `d` raises both cost models' cycles by `d` per
/// history that exists (counted on `Canonical`'s histories before each
/// operation: cleared, or copied from a source that holds one), and the
/// per-word cost by `d` per presence word the regions span; no other
/// statistic moves.
#[test]
fn history_operations_cost_the_histories_that_exist() {
    use lard_detector_hw::lard::MAX_REGION_LEN;
    let trace = random_trace(
        33,
        &TraceParams {
            events: 20_000,
            clear_percent: 3,
            copy_percent: 3,
            ..TraceParams::default()
        },
    );
    let mut oracle = Canonical::new();
    let (mut cleared, mut copied, mut words, mut empty) = (0u64, 0u64, 0u64, 0u64);
    let span = |at: u64, len: u64| at / 64..=at.wrapping_add(len - 1) / 64;
    for e in &trace {
        let regions = match e.kind {
            EventKind::Lard(LardOp::ClearHistory { addr, len }) if len > 0 => {
                vec![(addr, len.min(MAX_REGION_LEN))]
            }
            EventKind::Lard(LardOp::CopyHistory { src, dst, len }) if len > 0 => {
                let len = len.min(MAX_REGION_LEN);
                vec![(src, len), (dst, len)]
            }
            _ => vec![],
        };
        let held = |at: u64, i: u64| !oracle.history(at + i).unwrap_or_default().is_empty();
        // The summary words of the region's 4 KiB pages, then the presence
        // words of its part of each page that holds a history.
        for &(at, len) in &regions {
            let pages = at / 4096..=(at + len - 1) / 4096;
            words += (pages.end() / 64 - pages.start() / 64) + 1;
            for p in pages {
                let (from, to) = ((p * 4096).max(at), ((p + 1) * 4096).min(at + len));
                if (p * 4096..(p + 1) * 4096).any(|x| held(x, 0)) {
                    words += span(from, to - from).count() as u64;
                }
            }
        }
        match regions[..] {
            [(at, len)] => {
                let n = (0..len).filter(|&i| held(at, i)).count() as u64;
                cleared += n;
                empty += u64::from(n == 0);
            }
            [(src, len), (dst, _)] => {
                for i in 0..len {
                    copied += u64::from(held(src, i));
                    cleared += u64::from(!held(src, i) && held(dst, i));
                }
            }
            _ => {}
        }
        oracle.event(e);
    }
    assert!(
        cleared > 0 && copied > 0 && empty > 0,
        "{cleared} {copied} {empty}"
    );
    let base = HwConfig::default();
    let d = 1000u64;
    let s0 = run(&trace, &base, "base").stats().clone();
    let strip = |s: &lard_detector_hw::HwStats| {
        let mut s = s.clone();
        (s.cycles_lardish, s.cycles_fasttrack) = (0, 0);
        s.cycles_by_mechanism = Default::default();
        s
    };
    for (key, n) in [
        ("clear_location", cleared),
        ("copy_location", copied),
        ("history_word", words),
    ] {
        let mut cfg = base.clone();
        match key {
            "clear_location" => cfg.ft.clear_location += d as u32,
            "copy_location" => cfg.ft.copy_location += d as u32,
            _ => cfg.ft.history_word += d as u32,
        }
        let s1 = run(&trace, &cfg, key).stats().clone();
        assert_eq!(s1.cycles_fasttrack - s0.cycles_fasttrack, d * n, "{key}");
        // LARDISH's software manager clears only the histories it holds
        // (the rest are in hardware only: the test below); it copies
        // every source history (evicted into software first) and scans
        // the same presence words, and one more word (its metadata line's
        // data) in each software check.
        let h = Mechanism::HistoryOp as usize;
        let lardish = s1.cycles_by_mechanism[h] - s0.cycles_by_mechanism[h];
        if key == "clear_location" {
            assert!(
                lardish.is_multiple_of(d) && lardish > 0 && lardish < d * n,
                "{lardish}"
            );
        } else {
            assert_eq!(lardish, d * n, "{key}");
        }
        let checks = if key == "history_word" {
            s0.sw_checks
        } else {
            0
        };
        assert_eq!(
            s1.cycles_lardish - s0.cycles_lardish,
            lardish + d * checks,
            "{key}"
        );
        let sw = Mechanism::SwCheck as usize;
        assert_eq!(
            s1.cycles_by_mechanism[sw] - s0.cycles_by_mechanism[sw],
            d * checks,
            "{key}"
        );
        assert_eq!(strip(&s1), strip(&s0), "{key}");
    }
}

/// With asynchronous checking cores a software check runs on an idle one
/// at once or, every one busy, on its own core (RADISH §4.5: the handlers
/// "may execute on any available processor"): a core stalls at a
/// synchronization for at most the checks it handed off, so a run costs no
/// more than the synchronous run plus one enqueue per software check.
#[test]
fn asynchronous_checks_never_cost_more_than_synchronous_ones() {
    let (mut local, mut stalled) = (0u64, 0u64);
    for (i, shape) in shapes().iter().enumerate() {
        let trace = random_trace(50 + i as u64, shape);
        for (what, sync) in [("baseline", HwConfig::default()), ("tiny", tiny())] {
            let s = run(&trace, &sync, what).stats().clone();
            for cores in [1, 2] {
                let cfg = HwConfig {
                    async_cores: cores,
                    ..sync.clone()
                };
                let a = run(&trace, &cfg, what).stats().clone();
                assert_eq!(a.sw_checks, s.sw_checks, "{what}, shape {i}");
                let enqueue = u64::from(cfg.async_enqueue_cycles) * a.sw_checks;
                assert!(
                    a.cycles_lardish <= s.cycles_lardish + enqueue,
                    "{what}, shape {i}, {cores} async cores: {} > {} + {enqueue}",
                    a.cycles_lardish,
                    s.cycles_lardish
                );
                local += a.async_local_checks;
                stalled += a.async_stall_cycles;
            }
        }
    }
    assert!(local > 0 && stalled > 0, "{local} {stalled}");
}

/// LARDISH's software manager clears only the histories it holds (LARD
/// §5.3): a software check imports records into hardware without writing
/// the variable map and new records are stored in hardware (RADISH §4.5,
/// Table 1), so a buffer written and cleared while its metadata stayed in
/// the caches costs LARDISH no history of its own, and software FastTrack,
/// whose shadow holds every history, one per byte; so does a buffer whose
/// writer's core switched threads since (lazy flushing keeps the lines).
/// Once its metadata went to software (an eviction, or a software check
/// that flushed a switched-out thread's records), LARDISH clears every
/// byte's too, also after a software check imported the records back or a
/// newer write replaced them in hardware: the variable map keeps its entry.
#[test]
fn lardish_clears_only_the_histories_its_software_holds() {
    let o = thread_on;
    let (buf, len) = (0x40_0000u64, 256u64);
    let accesses = |origin: Origin, kind: AccessKind| -> Vec<Step> {
        (0..len / 8)
            .map(|i| access8(origin, buf + 8 * i, kind))
            .collect()
    };
    let clear = || {
        Step::Event(Event {
            pc: 0x2000,
            origin: o(1, 0),
            kind: EventKind::Lard(LardOp::ClearHistory { addr: buf, len }),
        })
    };
    let write = || accesses(o(1, 0), AccessKind::Write);
    let read = || accesses(o(1, 0), AccessKind::Read);
    // A thread switch on core 0: thread 2 runs there and touches other data.
    let other = || vec![access8(o(2, 0), 0x80_0000, AccessKind::Write)];
    let scenarios: Vec<(&str, Vec<Step>, u64)> = vec![
        ("cached", [write(), vec![clear()]].concat(), 0),
        (
            "evicted",
            [write(), vec![Step::Flush, clear()]].concat(),
            len,
        ),
        (
            "switched out, still cached",
            [write(), other(), vec![clear()]].concat(),
            0,
        ),
        (
            "switched out, then flushed by a software check",
            [
                write(),
                other(),
                accesses(o(3, 1), AccessKind::Read),
                vec![clear()],
            ]
            .concat(),
            len,
        ),
        (
            "imported back",
            [write(), vec![Step::Flush], read(), vec![clear()]].concat(),
            len,
        ),
        (
            "replaced in hardware",
            [write(), vec![Step::Flush], write(), vec![clear()]].concat(),
            len,
        ),
        (
            "cleared before",
            [write(), vec![Step::Flush, clear()], write(), vec![clear()]].concat(),
            len,
        ),
    ];
    let d = 1000u64;
    for (what, steps, lardish_histories) in scenarios {
        let stats = |cfg: &HwConfig| run_steps(&steps, cfg, what);
        let base = HwConfig {
            granularity: MdGranularity::Byte,
            ..HwConfig::default()
        };
        let mut more = base.clone();
        more.ft.clear_location += d as u32;
        let (s0, s1) = (stats(&base), stats(&more));
        // Each clear's bytes each held a history; LARDISH's software held
        // those of the first clear only, none of the second.
        let ft_histories = if what == "cleared before" {
            2 * len
        } else {
            len
        };
        assert_eq!(
            s1.cycles_fasttrack - s0.cycles_fasttrack,
            d * ft_histories,
            "{what}"
        );
        assert_eq!(
            s1.cycles_lardish - s0.cycles_lardish,
            d * lardish_histories,
            "{what}"
        );
    }
}

/// One step of a hand-written LARDISH run.
#[derive(Clone)]
enum Step {
    Event(Event),
    /// Every metadata line leaves the caches through the eviction handler.
    Flush,
}

/// Language thread `t` on core `core`.
fn thread_on(t: u64, core: u16) -> Origin {
    Origin {
        kthread: t as u32,
        lthread: Some(t),
        core,
    }
}

/// An 8-byte Tracked access of `origin` at `addr`.
fn access8(origin: Origin, addr: u64, kind: AccessKind) -> Step {
    Step::Event(Event {
        pc: 0x1000,
        origin,
        kind: EventKind::Access(Access {
            pc: 0x1000,
            addr,
            size: 8,
            kind,
            tracked: true,
            stack: false,
            origin,
        }),
    })
}

/// The statistics of `steps` on machine `cfg`, every report checked
/// against `Canonical`'s.
fn run_steps(steps: &[Step], cfg: &HwConfig, what: &str) -> lard_detector_hw::HwStats {
    let mut oracle = Canonical::new();
    let mut l = Lardish::new(cfg.clone());
    for step in steps {
        match step {
            Step::Event(e) => assert_eq!(oracle.event(e), l.event(e), "{what}"),
            Step::Flush => l.flush_metadata(),
        }
    }
    l.stats().clone()
}

/// A software check checks and imports its whole metadata line (RADISH
/// §4.5), but the software manager reads the line's presence word first
/// and checks only the locations that hold a history: on a fresh line it
/// checks the access alone; after another thread wrote the line's eight
/// items (then evicted), all eight. Raising FastTrack's `write` cell cost
/// by *d* raises LARDISH's cycles by *d* per cell so checked.
#[test]
fn a_software_check_checks_the_locations_that_hold_histories() {
    let o = thread_on;
    let line = 0x40_0000u64;
    let write = |origin: Origin, addr: u64| access8(origin, addr, AccessKind::Write);
    let items = |origin: Origin| (0..8).map(move |i| write(origin, line + 8 * i));
    let fresh = vec![write(o(1, 0), line)];
    // (Thread 2's write races with thread 1's: the check is the same.)
    let written: Vec<Step> = items(o(1, 0))
        .chain([Step::Flush, write(o(2, 1), line)])
        .collect();
    let d = 1000u64;
    for (what, steps, cells) in [("fresh line", fresh, 1), ("written line", written, 1 + 8)] {
        let stats = |cfg: &HwConfig| run_steps(&steps, cfg, what);
        let base = HwConfig::default();
        let mut more = base.clone();
        more.ft.cell[FtPath::Write as usize] += d as u32;
        let (s0, s1) = (stats(&base), stats(&more));
        assert_eq!(s0.sw_checks, if cells == 1 { 1 } else { 2 }, "{what}: {s0}");
        let sw = Mechanism::SwCheck as usize;
        assert_eq!(
            s1.cycles_by_mechanism[sw] - s0.cycles_by_mechanism[sw],
            d * cells,
            "{what}"
        );
    }
}

/// The presence structure has two levels, a summary bit per 4 KiB page and
/// a presence bit per byte: a history operation scans the summary words of
/// its region's pages, then the presence words of its part of each page
/// that holds a history (anywhere in the page). Raising `history_word` by
/// *d* raises both models' history-operation cycles by *d* per word so
/// counted.
#[test]
fn history_operations_scan_only_the_pages_that_hold_histories() {
    let o = thread_on(1, 0);
    let base = 0x4000_0000u64;
    let write = |addr: u64| access8(o, addr, AccessKind::Write);
    let clear = |addr: u64, len: u64| {
        Step::Event(Event {
            pc: 0x2000,
            origin: o,
            kind: EventKind::Lard(LardOp::ClearHistory { addr, len }),
        })
    };
    // A region is at most a page (`MAX_REGION_LEN`): one summary word.
    let cases: Vec<(&str, Vec<Step>, u64)> = vec![
        (
            "a page written",
            vec![write(base + 0x100), clear(base, 4096)],
            1 + 64,
        ),
        ("a page never written", vec![clear(base, 4096)], 1),
        // The history lies in the page, outside the region: the region's
        // half of the page is scanned.
        (
            "half a page whose other half holds a history",
            vec![write(base + 3000), clear(base, 2048)],
            1 + 32,
        ),
        (
            "a page whose neighbour holds a history",
            vec![write(base + 4096), clear(base, 4096)],
            1,
        ),
    ];
    let d = 1000u64;
    for (what, trace, words) in cases {
        let mut more = HwConfig::default();
        more.ft.history_word += d as u32;
        let s0 = run_steps(&trace, &HwConfig::default(), what);
        let s1 = run_steps(&trace, &more, what);
        assert_eq!(
            s1.cycles_fasttrack - s0.cycles_fasttrack,
            d * words,
            "{what}"
        );
        // (LARDISH's software checks read a presence word too.)
        let h = Mechanism::HistoryOp as usize;
        assert_eq!(
            s1.cycles_by_mechanism[h] - s0.cycles_by_mechanism[h],
            d * words,
            "{what}"
        );
    }
}

/// With type-safe metadata an item's history is one record: clearing a
/// page written 8 bytes at a time touches one variable-map line per item
/// (512 lines), with byte metadata one per byte (2,560 lines of 40-byte
/// cells); on caches too small to keep them each costs at least an L3
/// access. The instructions (per byte that holds a history) are the same,
/// and a page that holds none costs the same either way.
#[test]
fn a_history_operation_touches_one_record_per_item() {
    let o = Origin {
        kthread: 1,
        lthread: Some(1),
        core: 0,
    };
    let page = 0x40_0000u64;
    let mut trace: Vec<Event> = (0..512u64)
        .map(|i| Event {
            pc: 0x1000,
            origin: o,
            kind: EventKind::Access(Access {
                pc: 0x1000,
                addr: page + 8 * i,
                size: 8,
                kind: AccessKind::Write,
                tracked: true,
                stack: false,
                origin: o,
            }),
        })
        .collect();
    for addr in [page, page + 0x10_0000] {
        trace.push(Event {
            pc: 0x2000,
            origin: o,
            kind: EventKind::Lard(LardOp::ClearHistory { addr, len: 4096 }),
        });
    }
    let history = |cfg: HwConfig, upto: usize| {
        let mut l = run(&trace[..upto], &cfg, "clear");
        l.stats().cycles_by_mechanism[Mechanism::HistoryOp as usize]
    };
    let byte = HwConfig {
        granularity: MdGranularity::Byte,
        ..tiny()
    };
    let n = trace.len();
    let (typed, bytes) = (history(tiny(), n), history(byte.clone(), n));
    let (typed_full, bytes_full) = (history(tiny(), n - 1), history(byte, n - 1));
    // The clear of a page without histories: the same on both machines.
    assert_eq!(typed - typed_full, bytes - bytes_full);
    let l3 = u64::from(tiny().l3.latency);
    assert!(
        bytes_full >= typed_full + (2560 - 512) * l3,
        "{typed_full} {bytes_full}"
    );
}

/// A read the software checked gets the exact permission, and the
/// thread's own later reads keep it: data whose last write a thread
/// switch moved to software is checked in software once per reader, then
/// read on the permission.
#[test]
fn own_reads_keep_the_permission_a_software_check_granted() {
    let o = |t: u64, core: u16| Origin {
        kthread: t as u32,
        lthread: Some(t),
        core,
    };
    let ev = |origin: Origin, kind: EventKind| Event {
        pc: 0x1000,
        origin,
        kind,
    };
    let access = |origin: Origin, addr: u64, kind: AccessKind| {
        ev(
            origin,
            EventKind::Access(Access {
                pc: 0x1000,
                addr,
                size: 8,
                kind,
                tracked: true,
                stack: false,
                origin,
            }),
        )
    };
    let (a, b, c) = (o(1, 0), o(2, 1), o(3, 0));
    let mut l = Lardish::default();
    for e in [
        access(a, 0x8000, AccessKind::Write),
        // Thread 3 on thread 1's core: thread 1's records go to software.
        access(c, 0x9000, AccessKind::Write),
        ev(
            b,
            EventKind::Lard(LardOp::WriteVc {
                tid: 1,
                value: 1000,
            }),
        ),
    ] {
        assert!(l.event(&e).is_none());
    }
    let before = l.stats().clone();
    for _ in 0..5 {
        assert!(l.event(&access(b, 0x8000, AccessKind::Read)).is_none());
    }
    let s = l.stats();
    assert_eq!(s.sw_checks - before.sw_checks, 1, "{s}");
    assert_eq!(
        s.sw_causes[SwCause::ThreadSwitch as usize]
            - before.sw_causes[SwCause::ThreadSwitch as usize],
        1
    );
    assert_eq!(s.permission_hits - before.permission_hits, 4, "{s}");
    assert_eq!(s.permission_violations, 0);
}

#[test]
fn fasttrack_reports_its_check_paths() {
    let o = |t: u64| Origin {
        kthread: t as u32,
        lthread: Some(t),
        core: t as u16,
    };
    let a = |t: u64, size: u32, kind: AccessKind| Access {
        pc: 0x1000 + t,
        addr: 0x8000,
        size,
        kind,
        tracked: true,
        stack: false,
        origin: o(t),
    };
    let mut ft = FastTrack::new();
    let step = |ft: &mut FastTrack, acc: Access, path: FtPath, cells: u32, entries: u32| {
        assert!(ft.access(&acc).is_none(), "{acc:?} raced");
        let w = ft.last_work();
        assert_eq!(w.cells[path as usize], cells, "{acc:?}: {w:?}");
        assert_eq!(w.total_cells(), cells, "{acc:?}: {w:?}");
        assert_eq!(w.shared_entries, entries, "{acc:?}: {w:?}");
    };
    // Thread 3 knows everything 1 and 2 do; 2 knows 1.
    for (me, other) in [(3, 1), (3, 2), (2, 1)] {
        ft.lard(
            &o(me),
            &LardOp::WriteVc {
                tid: other,
                value: 1 << 30,
            },
        );
    }
    step(
        &mut ft,
        a(1, 4, AccessKind::Read),
        FtPath::ReadSameEpoch,
        4,
        0,
    );
    step(
        &mut ft,
        a(1, 4, AccessKind::Read),
        FtPath::ReadSameEpoch,
        4,
        0,
    );
    step(
        &mut ft,
        a(2, 1, AccessKind::Read),
        FtPath::ReadExclusive,
        1,
        0,
    );
    step(&mut ft, a(1, 1, AccessKind::Read), FtPath::ReadShare, 1, 0);
    step(&mut ft, a(2, 1, AccessKind::Read), FtPath::ReadShared, 1, 1);
    step(
        &mut ft,
        a(3, 1, AccessKind::Write),
        FtPath::WriteShared,
        1,
        2,
    );
    step(&mut ft, a(3, 2, AccessKind::Write), FtPath::Write, 2, 0);
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
    let mut base = run(&trace, &HwConfig::default(), "baseline");
    let mut small = run(&trace, &tiny(), "tiny");
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
        reclaim_past: false,
        ..HwConfig::default()
    };
    let mut l = run(&trace, &three, "3-entry table");
    assert!(l.stats().rollovers >= 1, "{}", l.stats());
    let mut l = run(&trace, &HwConfig::default(), "63-entry table");
    assert_eq!(l.stats().occupancy.len(), 2);
}

/// Merging the clock-table entries that compare alike against every live
/// thread replaces rollovers; every report stays Canonical's, no
/// permission is granted that a racy access uses, and the merge is priced.
#[test]
fn merged_clock_entries_replace_rollovers() {
    let trace = random_trace(
        5,
        &TraceParams {
            events: 20_000,
            lock_percent: 30,
            ..TraceParams::default()
        },
    );
    let cfg = |reclaim_past| HwConfig {
        clock_table_entries: 4,
        reclaim_past,
        ..HwConfig::default()
    };
    let mut off = run(&trace, &cfg(false), "4-entry table, no merge");
    let mut on = run(&trace, &cfg(true), "4-entry table, merges");
    let (off, on) = (off.stats().clone(), on.stats().clone());
    assert_eq!(off.reclaims, 0);
    assert!(on.reclaims > 0, "{on}");
    assert!(
        on.rollovers < off.rollovers,
        "{} vs {}",
        on.rollovers,
        off.rollovers
    );
    assert_eq!(on.permission_violations, 0);
    assert_eq!((on.racy, on.accesses), (off.racy, off.accesses));
    // Raising the per-line price of a merge raises LARDISH's cycles.
    let mut pricier = cfg(true);
    pricier.reclaim_line_cycles += 1000;
    let mut p = run(&trace, &pricier, "4-entry table, pricier merges");
    assert!(p.stats().cycles_lardish > on.cycles_lardish);
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
    let mut l = run(&trace, &HwConfig::default(), "baseline");
    let s = l.stats();
    assert!(s.cycles_fasttrack > s.cycles_no_detection, "{s}");
    assert!(!s.occupancy.is_empty());
    eprintln!("{s}");
}

/// The optimized model (chunked variable map, cache directory and
/// shortcuts, ...) gives byte-identical statistics and identical reports to
/// the straightforward reference model (`Lardish::reference`), computed in
/// the same run, on recorded traces (written in the trace format and read
/// back) of every shape under every machine. `tests/tests/lardish_reference.rs`
/// does the same on traces of real guests.
#[test]
fn optimized_model_changes_no_statistic() {
    use lard_detector_hw::trace::{read_trace, write_trace};
    for (k, params) in shapes().iter().enumerate() {
        let params = TraceParams {
            events: 6_000,
            ..params.clone()
        };
        let mut file = Vec::new();
        let mut trace = random_trace(100 + k as u64, &params);
        if k % 2 == 1 {
            trace = with_stack_accesses(trace);
        }
        write_trace(&mut file, &trace).expect("write trace");
        let trace = read_trace(&file[..]).expect("read trace");
        for (name, cfg) in configs() {
            let mut fast = Lardish::new(cfg.clone());
            let mut reference = Lardish::reference(cfg.clone());
            for e in &trace {
                assert_eq!(
                    fast.event(e),
                    reference.event(e),
                    "shape {k} on {name}: {e:?}"
                );
            }
            let (f, r) = (fast.stats(), reference.stats());
            assert_eq!(f.to_json(), r.to_json(), "shape {k} on {name}");
            assert_eq!(f, r, "shape {k} on {name}");
        }
    }
}

/// The batch entry point (`Lardish::events`, which prefetches ahead and is
/// what `lard run` feeds) gives every report, at the same event, and every
/// statistic of the reference model fed one event at a time, for slices of
/// several lengths (shorter and longer than the prefetch distance), under
/// every machine and trace shape.
#[test]
fn batched_events_change_no_report_or_statistic() {
    for (k, params) in shapes().iter().enumerate() {
        let params = TraceParams {
            events: 3_000,
            ..params.clone()
        };
        let trace = random_trace(300 + k as u64, &params);
        for (name, cfg) in configs() {
            let mut reference = Lardish::reference(cfg.clone());
            let expected: Vec<_> = trace.iter().map(|e| reference.event(e)).collect();
            let want = reference.stats().to_json();
            for len in [1, 5, 64, 1000] {
                let mut batched = Lardish::new(cfg.clone());
                let mut got = vec![None; trace.len()];
                for (c, slice) in trace.chunks(len).enumerate() {
                    batched.events(slice, |i, r| got[c * len + i] = Some(r));
                }
                for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                    assert_eq!(g, e, "shape {k} on {name}, slices of {len}, event {i}");
                }
                assert_eq!(
                    batched.stats().to_json(),
                    want,
                    "shape {k} on {name}, slices of {len}"
                );
            }
        }
    }
}

/// The baseline cost models (no detection, software FastTrack) run on a
/// second host thread and hand their cycles over when the statistics are
/// read: reading them every few events (each read waits for the thread and
/// adds what it summed since the last) ends with the same statistics as
/// reading them once, and as the reference model (which runs everything on
/// one thread), under every machine; the intermediate reads agree with the
/// reference model's at the same event.
#[test]
fn statistics_read_mid_trace_match_the_reference() {
    for (k, params) in shapes().iter().enumerate() {
        let params = TraceParams {
            events: 3_000,
            ..params.clone()
        };
        let trace = random_trace(200 + k as u64, &params);
        for (name, cfg) in configs() {
            let mut often = Lardish::new(cfg.clone());
            let mut once = Lardish::new(cfg.clone());
            let mut reference = Lardish::reference(cfg.clone());
            for (i, e) in trace.iter().enumerate() {
                let r = reference.event(e);
                assert_eq!(often.event(e), r, "shape {k} on {name}: {e:?}");
                assert_eq!(once.event(e), r, "shape {k} on {name}: {e:?}");
                if i % 97 == 0 {
                    assert_eq!(
                        often.stats().to_json(),
                        reference.stats().to_json(),
                        "shape {k} on {name}, event {i}"
                    );
                }
            }
            let r = reference.stats().to_json();
            assert_eq!(often.stats().to_json(), r, "shape {k} on {name}");
            assert_eq!(once.stats().to_json(), r, "shape {k} on {name}");
            assert!(
                reference.stats().cycles_fasttrack > 0,
                "shape {k} on {name}"
            );
        }
    }
}
