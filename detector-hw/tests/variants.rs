//! Detector variants (LARD §5.2): hand-written cases for each variant, the
//! randomized differential tests of the relationships that are theorems
//! (AllSync ⊆ LARD, NoClear ⊇ LARD, NoCopy ⊆ LARD when destinations are
//! empty, NoThread = LARD on 1:1 executions, LARD variant = its inner
//! detector), and the accuracy aggregator.

use lard_detector_hw::event::{
    Access, AccessKind, Event, EventKind, LardOp, LowLevelSync, Origin, ThreadKey,
};
use lard_detector_hw::trace::{random_trace, SplitMix64, SyncModel, TraceParams};
use lard_detector_hw::variants::{Accuracy, Variant, VariantDetector, VariantSet};
use lard_detector_hw::{Canonical, Detector, FastTrack};

// ---------------------------------------------------------------------------
// Event builders

fn o(k: u32, l: Option<u64>) -> Origin {
    Origin {
        kthread: k,
        lthread: l,
        core: k as u16,
    }
}

/// Kernel thread `k` running language thread `100 + k`.
fn t(k: u32) -> Origin {
    o(k, Some(100 + u64::from(k)))
}

/// Kernel thread `k` with no language thread.
fn kt(k: u32) -> Origin {
    o(k, None)
}

fn acc(origin: Origin, kind: AccessKind, addr: u64, pc: u64, tracked: bool, stack: bool) -> Event {
    Event {
        pc,
        origin,
        kind: EventKind::Access(Access {
            pc,
            addr,
            size: 8,
            kind,
            tracked,
            stack,
            origin,
        }),
    }
}

fn w(origin: Origin, addr: u64, pc: u64) -> Event {
    acc(origin, AccessKind::Write, addr, pc, true, false)
}

fn r(origin: Origin, addr: u64, pc: u64) -> Event {
    acc(origin, AccessKind::Read, addr, pc, true, false)
}

fn uw(origin: Origin, addr: u64, pc: u64) -> Event {
    acc(origin, AccessKind::Write, addr, pc, false, false)
}

fn sync(origin: Origin, s: LowLevelSync) -> Event {
    Event {
        pc: 0x7000,
        origin,
        kind: EventKind::Sync(s),
    }
}

fn lard(origin: Origin, op: LardOp) -> Event {
    Event {
        pc: 0x6000,
        origin,
        kind: EventKind::Lard(op),
    }
}

fn thread(origin: Origin) -> Event {
    lard(
        origin,
        LardOp::Thread {
            id: origin.lthread.unwrap_or(0),
        },
    )
}

/// Runs `events` through `variant` (in front of FastTrack) and returns the
/// verdict of each access, in order.
fn verdicts(variant: Variant, events: &[Event]) -> Vec<bool> {
    verdicts_with(VariantDetector::fasttrack(variant), events)
}

fn verdicts_with(mut d: VariantDetector, events: &[Event]) -> Vec<bool> {
    events
        .iter()
        .filter_map(|e| {
            let race = d.event(e);
            matches!(e.kind, EventKind::Access(_)).then_some(race.is_some())
        })
        .collect()
}

fn canonical(variant: Variant) -> VariantDetector {
    VariantDetector::new(variant, Box::new(Canonical::new()))
}

// ---------------------------------------------------------------------------
// Names

#[test]
fn names_round_trip() {
    for v in Variant::ALL {
        assert_eq!(v.name().parse::<Variant>(), Ok(v));
        assert_eq!(v.name().to_uppercase().parse::<Variant>(), Ok(v));
        assert_eq!(VariantDetector::fasttrack(v).name(), v.name());
    }
    assert_eq!("Naïve".parse::<Variant>(), Ok(Variant::Naive));
    assert_eq!(" AllSync ".parse::<Variant>(), Ok(Variant::AllSync));
    let err = "radish".parse::<Variant>().unwrap_err().to_string();
    assert!(err.contains("radish") && err.contains("nothread"), "{err}");
    let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(
        names,
        ["lard", "allmem", "allsync", "noclear", "nocopy", "nothread", "naive"]
    );
}

// ---------------------------------------------------------------------------
// AllSync

/// LARD §3.2 (system synchronization): a runtime barrier built on futex wake/wait between
/// two racing tracked writes. LARD reports the race; AllSync misses it,
/// whichever order the wake and the wait-done are reported in.
#[test]
fn allsync_misses_race_across_runtime_futex_barrier() {
    const X: u64 = 0x1000;
    const BARRIER: u64 = 0x2000;
    for wake_first in [true, false] {
        let mut ev = vec![thread(t(0)), thread(t(1)), w(t(0), X, 0x10)];
        let wake = sync(t(0), LowLevelSync::FutexWake { addr: BARRIER });
        let done = sync(t(1), LowLevelSync::FutexWaitDone { addr: BARRIER });
        if wake_first {
            ev.extend([wake, done]);
        } else {
            // The emulator's order: each woken thread's FutexWaitDone, then
            // the waker's FutexWake.
            ev.extend([done, wake]);
        }
        ev.push(w(t(1), X, 0x20));
        assert_eq!(verdicts(Variant::Lard, &ev), [false, true], "{wake_first}");
        if !wake_first {
            // A ThreadJoin reported with the wait-done (before the wake) must
            // not trigger the deferred acquire early.
            let mut joined = ev.clone();
            let at = joined.len() - 2;
            joined.insert(at, sync(t(1), LowLevelSync::ThreadJoin { child: 9 }));
            assert_eq!(verdicts(Variant::AllSync, &joined), [false, false]);
        }
        assert_eq!(
            verdicts(Variant::AllSync, &ev),
            [false, false],
            "{wake_first}"
        );
        assert_eq!(
            verdicts(Variant::Naive, &ev),
            [false, false],
            "{wake_first}"
        );
        // Without the barrier, AllSync reports it.
        let no_barrier: Vec<Event> = ev
            .iter()
            .copied()
            .filter(|e| !matches!(e.kind, EventKind::Sync(_)))
            .collect();
        assert_eq!(verdicts(Variant::AllSync, &no_barrier), [false, true]);
    }
}

/// An access after the release is not covered: the futex edge orders only
/// what came before the wake.
#[test]
fn allsync_does_not_order_after_the_release() {
    const X: u64 = 0x1000;
    const B: u64 = 0x2000;
    let ev = [
        thread(t(0)),
        thread(t(1)),
        sync(t(0), LowLevelSync::FutexWake { addr: B }),
        w(t(0), X, 0x10),
        sync(t(1), LowLevelSync::FutexWaitDone { addr: B }),
        w(t(1), X, 0x20),
    ];
    assert_eq!(verdicts(Variant::AllSync, &ev), [false, true]);
}

/// Program edge (WriteVC lock) then low-level edge (atomic on one word):
/// t0 → t1 by the program, t1 → t2 by the atomic. LARD: t0's write races
/// with t2's (no program path); AllSync: ordered.
#[test]
fn allsync_program_then_low_level_is_transitive() {
    const X: u64 = 0x1000;
    const WORD: u64 = 0x3000;
    let mut m = SyncModel::new();
    let mut ev = vec![thread(t(0)), thread(t(1)), thread(t(2))];
    ev.push(w(t(0), X, 0x10));
    ev.extend(m.acquire(t(0), 1, 0x50));
    ev.extend(m.release(t(0), 1, 0x51));
    ev.extend(m.acquire(t(1), 1, 0x52));
    ev.push(sync(
        t(1),
        LowLevelSync::AtomicRmw {
            addr: WORD,
            size: 4,
        },
    ));
    ev.push(sync(
        t(2),
        LowLevelSync::AtomicRmw {
            addr: WORD,
            size: 4,
        },
    ));
    ev.push(w(t(2), X, 0x20));
    assert_eq!(verdicts(Variant::Lard, &ev), [false, true]);
    assert_eq!(verdicts(Variant::AllSync, &ev), [false, false]);
}

/// Low-level edge then program edge: t0 → t1 by an atomic, t1 → t2 by a
/// WriteVC lock. Needs the program-value snapshots.
#[test]
fn allsync_low_level_then_program_is_transitive() {
    const X: u64 = 0x1000;
    const WORD: u64 = 0x3000;
    let mut m = SyncModel::new();
    let mut ev = vec![thread(t(0)), thread(t(1)), thread(t(2))];
    ev.push(w(t(0), X, 0x10));
    ev.push(sync(
        t(0),
        LowLevelSync::AtomicRmw {
            addr: WORD,
            size: 4,
        },
    ));
    ev.push(sync(
        t(1),
        LowLevelSync::AtomicRmw {
            addr: WORD,
            size: 4,
        },
    ));
    ev.push(r(t(1), 0x5000, 0x11)); // flushes the deferred atomic release
    ev.extend(m.acquire(t(1), 1, 0x50));
    ev.extend(m.release(t(1), 1, 0x51));
    ev.extend(m.acquire(t(2), 1, 0x52));
    ev.push(w(t(2), X, 0x20));
    assert_eq!(verdicts(Variant::Lard, &ev), [false, false, true]);
    assert_eq!(verdicts(Variant::AllSync, &ev), [false, false, false]);
    // The edge does not extend to what t1 did after its program release.
    let mut after = ev.clone();
    after.insert(after.len() - 1, w(t(1), 0x1100, 0x12));
    after.push(w(t(2), 0x1100, 0x21));
    assert_eq!(
        verdicts(Variant::AllSync, &after),
        [false, false, false, false, true]
    );
}

/// Consecutive atomics on one word never race with each other under
/// Naïve (their accesses are untracked, non-stack), because the release of
/// an atomic is deferred past the instruction's own accesses.
#[test]
fn naive_atomic_instructions_do_not_race() {
    const WORD: u64 = 0x3000;
    let mut ev = Vec::new();
    for i in 0..6u32 {
        let k = i % 3;
        let pc = 0x100 + u64::from(k);
        ev.push(Event {
            pc,
            origin: kt(k),
            kind: EventKind::Sync(LowLevelSync::AtomicRmw {
                addr: WORD,
                size: 4,
            }),
        });
        ev.push(acc(kt(k), AccessKind::Read, WORD, pc, false, false));
        ev.push(acc(kt(k), AccessKind::Write, WORD, pc, false, false));
    }
    assert!(verdicts(Variant::Naive, &ev).iter().all(|v| !v));
    // AllMem sees the same accesses without the synchronization.
    assert!(verdicts(Variant::AllMem, &ev).iter().any(|v| *v));
}

/// Thread create and join are edges for the kernel threads of a plain
/// pthreads program (no Thread op at all).
#[test]
fn naive_and_allsync_order_create_and_join() {
    const X: u64 = 0x1000;
    let ev = [
        w(kt(0), X, 0x10),
        sync(kt(0), LowLevelSync::ThreadCreate { child: 1 }),
        w(kt(1), X, 0x20),
        sync(kt(1), LowLevelSync::ThreadExit),
        sync(kt(0), LowLevelSync::FutexWaitDone { addr: 0x4000 }),
        sync(kt(0), LowLevelSync::ThreadJoin { child: 1 }),
        sync(kt(1), LowLevelSync::FutexWake { addr: 0x4000 }),
        r(kt(0), X, 0x30),
    ];
    assert_eq!(verdicts(Variant::Lard, &ev), [false, true, true]);
    assert_eq!(verdicts(Variant::AllSync, &ev), [false, false, false]);
    assert_eq!(verdicts(Variant::Naive, &ev), [false, false, false]);
}

// ---------------------------------------------------------------------------
// AllMem, NoClear, NoCopy, NoThread, Naïve

#[test]
fn allmem_false_race_on_untracked_and_stack_excluded() {
    const X: u64 = 0x1000;
    let ev = [
        thread(t(0)),
        thread(t(1)),
        uw(t(0), X, 0x10),
        uw(t(1), X, 0x20),
        acc(t(0), AccessKind::Write, 0x9000, 0x30, false, true),
        acc(t(1), AccessKind::Write, 0x9000, 0x31, true, true),
    ];
    assert_eq!(verdicts(Variant::Lard, &ev), [false; 4]);
    assert_eq!(verdicts(Variant::AllMem, &ev), [false, true, false, false]);
}

/// An untracked write between two racing tracked writes replaces the last
/// write under AllMem: AllMem misses LARD's race (§3.1's "a false data race
/// can overwrite history").
#[test]
fn allmem_can_miss_a_race() {
    const X: u64 = 0x1000;
    let ev = [
        thread(t(0)),
        thread(t(1)),
        w(t(0), X, 0x10),
        uw(t(1), X, 0x20),
        w(t(1), X, 0x30),
    ];
    assert_eq!(verdicts(Variant::Lard, &ev), [false, false, true]);
    assert_eq!(verdicts(Variant::AllMem, &ev), [false, true, false]);
}

/// LARD §3.3 (memory reuse): memory reused for a new object without any
/// synchronization between its users.
#[test]
fn noclear_reports_races_across_reuse() {
    const X: u64 = 0x1000;
    let ev = [
        thread(t(0)),
        thread(t(1)),
        w(t(0), X, 0x10),
        lard(t(2), LardOp::ClearHistory { addr: X, len: 64 }),
        w(t(1), X, 0x20),
    ];
    assert_eq!(verdicts(Variant::Lard, &ev), [false, false]);
    assert_eq!(verdicts(Variant::NoClear, &ev), [false, true]);
    assert_eq!(verdicts(Variant::Naive, &ev), [false, true]);
}

/// LARD §3.4 (memory movement): NoCopy misses a race across a move, and (because
/// the destination keeps stale history LARD would have replaced) can also
/// report a false one.
#[test]
fn nocopy_misses_and_invents() {
    const OLD: u64 = 0x1000;
    const NEW: u64 = 0x2000;
    let moved = [
        thread(t(0)),
        thread(t(1)),
        w(t(0), OLD, 0x10),
        lard(
            t(2),
            LardOp::CopyHistory {
                src: OLD,
                dst: NEW,
                len: 8,
            },
        ),
        lard(t(2), LardOp::ClearHistory { addr: OLD, len: 8 }),
        w(t(1), NEW, 0x20),
    ];
    assert_eq!(verdicts(Variant::Lard, &moved), [false, true]);
    assert_eq!(verdicts(Variant::NoCopy, &moved), [false, false]);
    let stale = [
        thread(t(0)),
        thread(t(1)),
        w(t(0), NEW, 0x10),
        lard(
            t(2),
            LardOp::CopyHistory {
                src: OLD,
                dst: NEW,
                len: 8,
            },
        ),
        w(t(1), NEW, 0x20),
    ];
    assert_eq!(verdicts(Variant::Lard, &stale), [false, false]);
    assert_eq!(verdicts(Variant::NoCopy, &stale), [false, true]);
}

/// LARD §3.5 (thread identity) under M:N: two green threads on one worker race
/// (NoThread misses it), one green thread migrating between workers does
/// not race with itself (NoThread invents a race).
#[test]
fn nothread_misses_and_invents_under_m_to_n() {
    const X: u64 = 0x1000;
    let shared_worker = [
        lard(o(0, Some(7)), LardOp::Thread { id: 7 }),
        w(o(0, Some(7)), X, 0x10),
        lard(o(0, Some(8)), LardOp::Thread { id: 8 }),
        w(o(0, Some(8)), X, 0x20),
    ];
    assert_eq!(verdicts(Variant::Lard, &shared_worker), [false, true]);
    assert_eq!(verdicts(Variant::NoThread, &shared_worker), [false, false]);
    assert_eq!(verdicts(Variant::Naive, &shared_worker), [false, false]);
    let migrating = [
        lard(o(0, Some(7)), LardOp::Thread { id: 7 }),
        w(o(0, Some(7)), X, 0x10),
        lard(o(1, Some(7)), LardOp::Thread { id: 7 }),
        w(o(1, Some(7)), X, 0x20),
    ];
    assert_eq!(verdicts(Variant::Lard, &migrating), [false, false]);
    assert_eq!(verdicts(Variant::NoThread, &migrating), [false, true]);
}

/// NoThread keeps the runtime's synchronization on 1:1 threads: WriteVC
/// entries are bound to the kernel thread each language thread runs on.
#[test]
fn nothread_keeps_writevc_sync_and_reports_kernel_identities() {
    const X: u64 = 0x1000;
    let mut m = SyncModel::new();
    let mut ev = vec![thread(t(0)), thread(t(1)), w(t(0), X, 0x10)];
    ev.extend(m.acquire(t(0), 1, 0x50));
    ev.extend(m.release(t(0), 1, 0x51));
    ev.extend(m.acquire(t(1), 1, 0x52));
    ev.push(w(t(1), X, 0x20));
    ev.push(w(t(2), X, 0x30));
    assert_eq!(verdicts(Variant::NoThread, &ev), [false, false, true]);
    // Naïve ignores WriteVC: the program lock is invisible to it.
    assert_eq!(verdicts(Variant::Naive, &ev), [false, true, true]);
    let mut d = VariantDetector::fasttrack(Variant::NoThread);
    let mut last = None;
    for e in &ev {
        last = d.event(e).or(last);
    }
    let race = last.expect("race");
    assert_eq!(race.thread, ThreadKey::Kernel(2));
    assert_eq!(race.priors[0].thread, ThreadKey::Kernel(1));
    assert_eq!(race.access.origin, t(2));
}

/// AllSync's reports name real identities, not the adapter's virtual ones.
#[test]
fn allsync_reports_real_identities() {
    const X: u64 = 0x1000;
    let ev = [
        thread(t(0)),
        w(kt(3), X, 0x5),
        w(t(0), X, 0x10),
        r(t(1), X, 0x20),
    ];
    let mut d = VariantDetector::fasttrack(Variant::AllSync);
    let races: Vec<_> = ev.iter().filter_map(|e| d.event(e)).collect();
    assert_eq!(races.len(), 2);
    assert_eq!(races[0].thread, ThreadKey::Lang(100));
    assert_eq!(races[0].priors[0].thread, ThreadKey::Kernel(3));
    assert_eq!(races[1].thread, ThreadKey::Lang(101));
    assert_eq!(races[1].priors[0].thread, ThreadKey::Lang(100));
    assert!(races[1].access.tracked && races[1].access.origin == t(1));
}

// ---------------------------------------------------------------------------
// Randomized differential tests

/// Addresses of the generated low-level synchronization objects.
const SYNC_WORDS: [u64; 3] = [0x7f00_0000, 0x7f00_0040, 0x7f00_0080];

/// Knobs of [`with_low_level`].
#[derive(Clone, Copy)]
struct Extra {
    /// Percentage of steps that insert low-level synchronization.
    sync_percent: u32,
    /// Percentage of steps that insert a WriteVC with an arbitrary value.
    bogus_writevc_percent: u32,
}

/// `random_trace` with low-level synchronization (and optionally arbitrary
/// WriteVC values) inserted between its events. Each inserted event comes
/// from the current origin of a random kernel thread (its last language
/// thread). Atomics are followed by the instruction's untracked accesses;
/// futex wake/wait-done pairs come in either order; kernel threads "exit"
/// and are "joined" at random (and keep running: any stream is allowed).
fn with_low_level(seed: u64, p: &TraceParams, x: Extra) -> Vec<Event> {
    let base = random_trace(seed, p);
    let mut rng = SplitMix64::new(seed ^ 0xa5a5_5a5a);
    let kernels = p.kernel_threads.max(1);
    let mut current: Vec<Origin> = (0..kernels).map(kt).collect();
    let mut out = Vec::with_capacity(base.len() * 2);
    // Kernel thread 0 creates the others before they run.
    for k in 1..kernels {
        out.push(sync(kt(0), LowLevelSync::ThreadCreate { child: k }));
    }
    for e in base {
        if rng.percent(x.sync_percent) {
            let k = rng.below(u64::from(kernels)) as usize;
            let j = ((k as u64 + 1 + rng.below(u64::from(kernels.max(2) - 1))) % u64::from(kernels))
                as usize;
            let (ok, oj) = (current[k], current[j]);
            let addr = rng.pick(&SYNC_WORDS).unwrap_or(0);
            match rng.below(6) {
                0..=2 => {
                    let pc = 0x50_0000 + 4 * rng.below(4);
                    out.push(Event {
                        pc,
                        origin: ok,
                        kind: EventKind::Sync(LowLevelSync::AtomicRmw { addr, size: 4 }),
                    });
                    if rng.percent(50) {
                        for kind in [AccessKind::Read, AccessKind::Write] {
                            let mut a = acc(ok, kind, addr, pc, false, false);
                            if let EventKind::Access(ref mut inner) = a.kind {
                                inner.size = 4;
                            }
                            out.push(a);
                        }
                    }
                }
                3 | 4 => {
                    let wake = sync(ok, LowLevelSync::FutexWake { addr });
                    let done = sync(oj, LowLevelSync::FutexWaitDone { addr });
                    if rng.percent(50) {
                        out.extend([wake, done]);
                    } else {
                        out.extend([done, wake]);
                    }
                }
                _ => {
                    out.push(sync(ok, LowLevelSync::ThreadExit));
                    out.push(sync(oj, LowLevelSync::ThreadJoin { child: ok.kthread }));
                }
            }
        }
        if rng.percent(x.bogus_writevc_percent) {
            let k = rng.below(u64::from(kernels)) as usize;
            let tid = 100 + rng.below(u64::from(p.lang_threads.max(1)));
            let value = rng.below(12);
            out.push(lard(current[k], LardOp::WriteVc { tid, value }));
        }
        if let Some(slot) = current.get_mut(e.origin.kthread as usize) {
            *slot = e.origin;
        }
        out.push(e);
    }
    out
}

fn shapes() -> Vec<TraceParams> {
    let small = TraceParams {
        events: 4000,
        ..TraceParams::default()
    };
    vec![
        small.clone(),
        TraceParams {
            kernel_threads: 4,
            lang_threads: 8,
            span: 128,
            lock_percent: 20,
            clear_percent: 3,
            copy_percent: 3,
            ..small.clone()
        },
        TraceParams {
            kernel_threads: 2,
            lang_threads: 2,
            switch_percent: 0,
            kernel_identity_percent: 0,
            write_percent: 60,
            ..small.clone()
        },
        TraceParams {
            tracked_percent: 60,
            kernel_identity_percent: 60,
            span: 256,
            ..small
        },
    ]
}

const SEEDS: u64 = 12;

/// Per-access relation between two variants' verdicts over many traces;
/// returns (accesses, racy under a, racy under b, a && !b, b && !a).
fn compare(events: &[Event], a: VariantDetector, b: VariantDetector) -> (u64, u64, u64, u64, u64) {
    let va = verdicts_with(a, events);
    let vb = verdicts_with(b, events);
    let mut c = (va.len() as u64, 0, 0, 0, 0);
    for (x, y) in va.iter().zip(&vb) {
        c.1 += u64::from(*x);
        c.2 += u64::from(*y);
        c.3 += u64::from(*x && !*y);
        c.4 += u64::from(*y && !*x);
    }
    c
}

/// Theorem: for every access, racy under AllSync ⇒ racy under LARD.
/// Canonical inside: on any stream, including arbitrary WriteVC values.
#[test]
fn allsync_subset_of_lard_canonical_any_stream() {
    let mut missed = 0;
    let mut lard_racy = 0;
    for (s, p) in shapes().iter().enumerate() {
        for seed in 0..SEEDS {
            for bogus in [0, 2] {
                let x = Extra {
                    sync_percent: 8,
                    bogus_writevc_percent: bogus,
                };
                let ev = with_low_level(seed * 31 + s as u64, p, x);
                let (n, allsync, lard, extra, miss) =
                    compare(&ev, canonical(Variant::AllSync), canonical(Variant::Lard));
                assert_eq!(
                    extra, 0,
                    "shape {s} seed {seed} bogus {bogus}: {extra} of {n} accesses racy under \
                     AllSync only (allsync {allsync}, lard {lard})"
                );
                missed += miss;
                lard_racy += lard;
            }
        }
    }
    // Not vacuous: LARD finds races and AllSync misses a good share.
    assert!(lard_racy > 1000 && missed > 100, "{lard_racy} {missed}");
}

/// The same theorem with FastTrack inside, on streams whose program clocks
/// describe happens-before (SyncModel), where FastTrack equals Canonical.
#[test]
fn allsync_subset_of_lard_fasttrack() {
    let mut missed = 0;
    for (s, p) in shapes().iter().enumerate() {
        for seed in 0..SEEDS {
            let x = Extra {
                sync_percent: 8,
                bogus_writevc_percent: 0,
            };
            let ev = with_low_level(seed * 17 + s as u64, p, x);
            let (n, _, _, extra, miss) = compare(
                &ev,
                VariantDetector::fasttrack(Variant::AllSync),
                VariantDetector::fasttrack(Variant::Lard),
            );
            assert_eq!(extra, 0, "shape {s} seed {seed}: {extra} of {n}");
            missed += miss;
        }
    }
    assert!(missed > 100, "{missed}");
}

/// Without low-level synchronization, AllSync is LARD (on SyncModel
/// streams; the program-value snapshots add nothing a full-clock acquire
/// does not already give).
#[test]
fn allsync_without_low_level_sync_equals_lard() {
    for (s, p) in shapes().iter().enumerate() {
        let p = TraceParams {
            noise_percent: 0,
            ..p.clone()
        };
        for seed in 0..SEEDS {
            let ev = random_trace(seed + 1000 * s as u64, &p);
            let a = verdicts(Variant::AllSync, &ev);
            let l = verdicts(Variant::Lard, &ev);
            assert_eq!(a, l, "shape {s} seed {seed}");
        }
    }
}

/// The LARD variant is its inner detector, report for report.
#[test]
fn lard_variant_is_the_inner_detector() {
    for (s, p) in shapes().iter().enumerate() {
        for seed in 0..4 {
            let ev = with_low_level(
                seed + 7 * s as u64,
                p,
                Extra {
                    sync_percent: 5,
                    bogus_writevc_percent: 0,
                },
            );
            let mut v = VariantDetector::fasttrack(Variant::Lard);
            let mut f = FastTrack::new();
            for e in &ev {
                assert_eq!(v.event(e), f.event(e), "shape {s} seed {seed} {e:?}");
            }
        }
    }
}

/// Theorem: NoClear's racy accesses ⊇ LARD's (ClearHistory only removes
/// records). Canonical: any stream; FastTrack: SyncModel streams.
#[test]
fn noclear_superset_of_lard() {
    let mut invented = 0;
    for (s, p) in shapes().iter().enumerate() {
        let p = TraceParams {
            clear_percent: p.clear_percent.max(3),
            ..p.clone()
        };
        for seed in 0..SEEDS {
            let ev = with_low_level(
                seed + 100 * s as u64,
                &p,
                Extra {
                    sync_percent: 0,
                    bogus_writevc_percent: 2,
                },
            );
            let (_, _, _, extra, _) =
                compare(&ev, canonical(Variant::Lard), canonical(Variant::NoClear));
            assert_eq!(extra, 0, "canonical shape {s} seed {seed}");
            let ev = random_trace(seed + 100 * s as u64, &p);
            let (_, _, _, extra, more) = compare(
                &ev,
                VariantDetector::fasttrack(Variant::Lard),
                VariantDetector::fasttrack(Variant::NoClear),
            );
            assert_eq!(extra, 0, "fasttrack shape {s} seed {seed}");
            invented += more;
        }
    }
    assert!(invented > 0);
}

/// Inserts, before every CopyHistory, a ClearHistory of its destination
/// (what a copying collector does with to-space).
fn clear_destinations(events: Vec<Event>) -> Vec<Event> {
    let mut out = Vec::with_capacity(events.len() + 64);
    for e in events {
        if let EventKind::Lard(LardOp::CopyHistory { dst, len, .. }) = e.kind {
            out.push(lard(e.origin, LardOp::ClearHistory { addr: dst, len }));
        }
        out.push(e);
    }
    out
}

/// NoCopy is not comparable with LARD in general (see
/// `nocopy_misses_and_invents`); theorem: when every CopyHistory's
/// destination has empty history, NoCopy's racy accesses ⊆ LARD's.
#[test]
fn nocopy_subset_of_lard_when_destinations_are_empty() {
    let mut missed = 0;
    let mut general_extra = 0;
    for (s, p) in shapes().iter().enumerate() {
        let p = TraceParams {
            copy_percent: p.copy_percent.max(4),
            ..p.clone()
        };
        for seed in 0..SEEDS {
            let raw = random_trace(seed + 300 * s as u64, &p);
            let (_, _, _, extra, _) = compare(
                &raw,
                VariantDetector::fasttrack(Variant::NoCopy),
                VariantDetector::fasttrack(Variant::Lard),
            );
            general_extra += extra;
            let ev = clear_destinations(raw);
            for (a, b) in [
                (canonical(Variant::NoCopy), canonical(Variant::Lard)),
                (
                    VariantDetector::fasttrack(Variant::NoCopy),
                    VariantDetector::fasttrack(Variant::Lard),
                ),
            ] {
                let (_, _, _, extra, miss) = compare(&ev, a, b);
                assert_eq!(extra, 0, "shape {s} seed {seed}");
                missed += miss;
            }
        }
    }
    assert!(
        missed > 0,
        "NoCopy never missed a race: the test is vacuous"
    );
    assert!(
        general_extra > 0,
        "NoCopy never invented a race on raw traces: the non-theorem is not exercised"
    );
}

/// Theorem: on 1:1 executions (each kernel thread declares one language
/// thread as its first event, none migrates) NoThread's verdicts equal
/// LARD's. On M:N traces they differ.
#[test]
fn nothread_equals_lard_on_one_to_one() {
    let one_to_one = TraceParams {
        events: 4000,
        kernel_threads: 4,
        lang_threads: 4,
        switch_percent: 0,
        kernel_identity_percent: 0,
        ..TraceParams::default()
    };
    for seed in 0..SEEDS {
        let ev = random_trace(seed, &one_to_one);
        assert_eq!(
            verdicts(Variant::NoThread, &ev),
            verdicts(Variant::Lard, &ev),
            "seed {seed}"
        );
    }
    let mut differ = 0;
    for seed in 0..SEEDS {
        let ev = random_trace(
            seed,
            &TraceParams {
                events: 4000,
                switch_percent: 5,
                ..TraceParams::default()
            },
        );
        let (_, _, _, a, b) = compare(
            &ev,
            VariantDetector::fasttrack(Variant::NoThread),
            VariantDetector::fasttrack(Variant::Lard),
        );
        differ += a + b;
    }
    assert!(differ > 0);
}

// ---------------------------------------------------------------------------
// Accuracy

#[test]
fn accuracy_counts_table3_columns() {
    let vs = [Variant::Lard, Variant::AllMem, Variant::AllSync];
    let mut acc = Accuracy::new(&vs).unwrap();
    // (pc, [lard, allmem, allsync])
    let obs: [(u64, [bool; 3]); 6] = [
        (0x10, [true, true, false]),  // allsync misses
        (0x10, [true, true, true]),   // agree
        (0x20, [false, true, false]), // allmem false (PC never racy under LARD)
        (0x20, [false, true, false]), // again
        (0x30, [true, false, false]), // both miss; LARD-only PC
        (0x40, [false, false, false]),
    ];
    for (i, (pc, v)) in obs.iter().enumerate() {
        acc.observe(i as u64 * 10, *pc, v);
    }
    assert_eq!(acc.accesses(), 6);
    let lard = acc.row("lard").unwrap();
    assert_eq!((lard.dre, lard.pcs), (3, 2));
    assert_eq!((lard.false_dre, lard.missed_dre), (0, 0));
    let allmem = acc.row("allmem").unwrap();
    assert_eq!((allmem.dre, allmem.pcs), (4, 2));
    assert_eq!(
        (allmem.false_dre, allmem.false_pcs, allmem.false_dre_pcs),
        (2, 1, 1)
    );
    assert_eq!(
        (allmem.missed_dre, allmem.missed_pcs, allmem.missed_dre_pcs),
        (1, 1, 1)
    );
    assert_eq!(allmem.first_false_event, Some(20));
    assert_eq!(allmem.first_missed_event, Some(40));
    let allsync = acc.row("allsync").unwrap();
    assert_eq!((allsync.dre, allsync.pcs), (1, 1));
    assert_eq!((allsync.false_dre, allsync.false_pcs), (0, 0));
    // PC 0x10 is racy under AllSync once, so only 0x30 is a missed PC;
    // but both PCs have missed DREs.
    assert_eq!(
        (
            allsync.missed_dre,
            allsync.missed_pcs,
            allsync.missed_dre_pcs
        ),
        (2, 1, 2)
    );
    let json = acc.to_json();
    for needle in [
        "\"ground_truth\": \"lard\"",
        "\"accesses\": 6",
        "\"allmem\": {\"dre\": 4, \"pcs\": 2, \"false_dre\": 2, \"false_pcs\": 1, \"missed_dre\": 1, \"missed_pcs\": 1,",
        "\"lard\": {\"dre\": 3, \"pcs\": 2, \"false_dre\": 0,",
        "\"first_false_event\": null",
    ] {
        assert!(json.contains(needle), "{needle} not in {json}");
    }
    let table = acc.to_table();
    assert!(
        table.lines().count() == 5 && table.contains("allsync"),
        "{table}"
    );
    assert!(Accuracy::new(&[Variant::AllMem]).is_err());
    assert!(Accuracy::new(&[Variant::Lard, Variant::Lard]).is_err());
}

/// End to end: all variants over one stream with low-level sync; the
/// theorems show up in the table.
#[test]
fn variant_set_over_a_trace() {
    let p = TraceParams {
        events: 6000,
        ..TraceParams::default()
    };
    let ev = with_low_level(
        5,
        &p,
        Extra {
            sync_percent: 6,
            bogus_writevc_percent: 0,
        },
    );
    let mut set = VariantSet::all_fasttrack();
    let mut accesses = 0;
    for e in &ev {
        if let Some(races) = set.event(e) {
            accesses += 1;
            assert_eq!(races.len(), Variant::ALL.len());
        }
    }
    let acc = set.accuracy();
    assert_eq!(acc.accesses(), accesses);
    let row = |v: Variant| acc.row(v.name()).unwrap();
    assert!(row(Variant::Lard).dre > 0);
    assert_eq!(row(Variant::AllSync).false_dre, 0);
    assert!(row(Variant::AllSync).missed_dre > 0);
    assert_eq!(row(Variant::NoClear).missed_dre, 0);
    assert!(row(Variant::AllMem).false_dre > 0);
    assert!(row(Variant::Naive).false_dre > 0);
}

// ---------------------------------------------------------------------------
// Same-epoch filtering of repeated accesses (variants::same_epoch)

/// FastTrack that does not declare repeats no-ops, so the clock-owning
/// adapter hands it every access: the unfiltered reference.
struct Unfiltered(FastTrack);

impl Detector for Unfiltered {
    fn name(&self) -> &'static str {
        "fasttrack-unfiltered"
    }

    fn access(&mut self, a: &Access) -> Option<lard_detector_hw::Race> {
        self.0.access(a)
    }

    fn lard(&mut self, origin: &Origin, op: &LardOp) {
        self.0.lard(origin, op)
    }
}

/// `events` with repeats injected: after an access, often one of the last
/// few accesses of the same origin again (the access itself most often),
/// so that exact repeats, repeats after an intervening write or read of
/// the same bytes at another PC, and repeats across other threads' events
/// and synchronization all occur. Accesses are non-stack (the variants
/// check them) and every third is 1-4 bytes, so granules split.
fn with_repeats(events: Vec<Event>, seed: u64) -> Vec<Event> {
    let mut rng = SplitMix64::new(seed ^ 0x5eed_e90c);
    let mut recent: std::collections::HashMap<Origin, Vec<Event>> = Default::default();
    let mut out = Vec::with_capacity(events.len() * 2);
    for mut e in events {
        if let EventKind::Access(a) = &mut e.kind {
            a.stack = false;
            if rng.percent(33) {
                a.size = 1 << rng.below(3);
            }
            let ring = recent.entry(e.origin).or_default();
            ring.push(e);
            if ring.len() > 6 {
                ring.remove(0);
            }
            out.push(e);
            let mut n = 0;
            while n < 3 && rng.percent(45) {
                let pick = if rng.percent(50) {
                    ring.len() - 1
                } else {
                    rng.below(ring.len() as u64) as usize
                };
                out.push(ring[pick]);
                n += 1;
            }
        } else {
            out.push(e);
        }
    }
    out
}

/// A write of every byte of `base .. base + span` by a kernel thread no one
/// synchronizes with: each reports every access its byte's history holds
/// (thread, PC, kind), so two detectors agreeing on these agree on the
/// final access histories.
fn probe(base: u64, span: u64) -> Vec<Event> {
    let origin = kt(999);
    (base..base + span)
        .map(|addr| {
            let mut e = uw(origin, addr, 0xdead_0000 + addr);
            if let EventKind::Access(a) = &mut e.kind {
                a.size = 1;
                a.tracked = true;
            }
            e
        })
        .collect()
}

/// Skipping exact repeats within an epoch (the clock-owning variants on
/// byte-granular FastTrack) changes no report: every access's report,
/// race kinds, earlier accesses and PCs, and the final access histories,
/// are those of the same variant checking every access.
#[test]
fn same_epoch_filter_changes_no_report() {
    let mut skipped = 0;
    let mut racy = 0;
    for variant in [Variant::Naive, Variant::AllSync] {
        for (s, p) in shapes().iter().enumerate() {
            for seed in 0..SEEDS {
                let x = Extra {
                    sync_percent: 8,
                    bogus_writevc_percent: 0,
                };
                let mut ev = with_repeats(with_low_level(seed * 13 + s as u64, p, x), seed);
                ev.extend(probe(p.base, p.span + 8));
                let mut filtered = VariantDetector::fasttrack(variant);
                let mut reference =
                    VariantDetector::new(variant, Box::new(Unfiltered(FastTrack::new())));
                for (i, e) in ev.iter().enumerate() {
                    let (a, b) = (filtered.event(e), reference.event(e));
                    assert_eq!(a, b, "{variant} shape {s} seed {seed} event {i}: {e:?}");
                    racy += u64::from(b.is_some());
                }
                let c = filtered.combined().expect("a clock-owning variant");
                skipped += c.repeats_skipped();
                let r = reference.combined().expect("a clock-owning variant");
                assert_eq!(r.repeats_skipped(), 0);
            }
        }
    }
    // Not vacuous: many repeats were skipped, and races were reported.
    assert!(skipped > 20_000 && racy > 20_000, "{skipped} {racy}");
}

/// The direct path (FastTrack called without `dyn Detector`, the
/// clock-owning adapter keeping FastTrack's index of each virtual
/// identity) gives every variant, on every trace shape, the same report on
/// every access, and the same final access histories, as FastTrack behind
/// `dyn Detector`; and a `VariantSet` built either way the same reports and
/// accuracy table.
#[test]
fn direct_fasttrack_path_changes_no_report() {
    let mut racy = 0;
    for variant in Variant::ALL {
        for (s, p) in shapes().iter().enumerate() {
            for seed in 0..SEEDS / 2 {
                let x = Extra {
                    sync_percent: 8,
                    bogus_writevc_percent: 3,
                };
                let mut ev = with_repeats(with_low_level(seed * 7 + s as u64, p, x), seed);
                ev.extend(probe(p.base, p.span + 8));
                let mut direct = VariantDetector::fasttrack(variant);
                let mut dynamic = VariantDetector::new(variant, Box::new(FastTrack::new()));
                for (i, e) in ev.iter().enumerate() {
                    let (a, b) = (direct.event(e), dynamic.event(e));
                    assert_eq!(a, b, "{variant} shape {s} seed {seed} event {i}: {e:?}");
                    racy += u64::from(b.is_some());
                }
            }
        }
    }
    assert!(racy > 10_000, "{racy}");
    let p = &shapes()[0];
    let x = Extra {
        sync_percent: 6,
        bogus_writevc_percent: 2,
    };
    let ev = with_low_level(3, p, x);
    let mut direct = VariantSet::with_fasttrack(&Variant::ALL, FastTrack::new).unwrap();
    let mut dynamic = VariantSet::new(&Variant::ALL, || Box::new(FastTrack::new())).unwrap();
    for e in &ev {
        assert_eq!(direct.event(e), dynamic.event(e), "{e:?}");
    }
    assert_eq!(direct.accuracy().rows(), dynamic.accuracy().rows());
    assert!(direct.accuracy().rows().iter().any(|r| r.dre > 0));
}
