//! Hand-written cases for the five LARD translation issues (LARD §3.1–§3.5),
//! lock synchronization through WriteVC, partial overlaps and defensive
//! inputs. Every case runs against every detector.

use lard_detector_hw::event::{
    Access, AccessKind, Event, EventKind, LardOp, LowLevelSync, Origin, ProgramEvent, ThreadKey,
};
use lard_detector_hw::trace::SyncModel;
use lard_detector_hw::{Detector, PriorAccess, Race, RaceKind};

/// Origin of kernel thread `k` running language thread `l`.
fn o(k: u32, l: Option<u64>) -> Origin {
    Origin {
        kthread: k,
        lthread: l,
        core: k as u16,
    }
}

/// Kernel thread `k` running language thread `100 + k` (the common case).
fn t(k: u32) -> Origin {
    o(k, Some(100 + u64::from(k)))
}

fn lang(id: u64) -> ThreadKey {
    ThreadKey::Lang(id)
}

fn prior(kind: RaceKind, thread: ThreadKey, pc: u64) -> PriorAccess {
    PriorAccess::new(kind, thread, pc, 0)
}

/// A detector plus the runtime's lock model.
struct H<D> {
    d: D,
    sync: SyncModel,
}

impl<D: Detector> H<D> {
    fn new(d: D) -> Self {
        H {
            d,
            sync: SyncModel::new(),
        }
    }

    fn access(
        &mut self,
        origin: Origin,
        kind: AccessKind,
        addr: u64,
        size: u32,
        pc: u64,
        tracked: bool,
    ) -> Option<Race> {
        let a = Access {
            pc,
            addr,
            size,
            kind,
            tracked,
            stack: false,
            origin,
        };
        let r = self.d.access(&a);
        if let Some(r) = &r {
            assert!(!r.priors.is_empty());
            assert_eq!(r.access, a);
        }
        r
    }

    fn w(&mut self, origin: Origin, addr: u64, size: u32, pc: u64) -> Option<Race> {
        self.access(origin, AccessKind::Write, addr, size, pc, true)
    }

    fn r(&mut self, origin: Origin, addr: u64, size: u32, pc: u64) -> Option<Race> {
        self.access(origin, AccessKind::Read, addr, size, pc, true)
    }

    fn op(&mut self, origin: Origin, op: LardOp) {
        self.d.lard(&origin, &op);
    }

    fn events(&mut self, events: Vec<Event>) {
        for e in events {
            assert_eq!(self.d.event(&e), None);
        }
    }

    fn acquire(&mut self, origin: Origin, lock: u64) {
        let ev = self.sync.acquire(origin, lock, 0x9000);
        self.events(ev);
    }

    fn release(&mut self, origin: Origin, lock: u64) {
        let ev = self.sync.release(origin, lock, 0x9004);
        self.events(ev);
    }
}

fn priors(r: &Option<Race>) -> Vec<PriorAccess> {
    r.as_ref().map(|r| r.priors.clone()).unwrap_or_default()
}

const X: u64 = 0x1000;
const Y: u64 = 0x2000;

// ---- §3.1 memory access: untracked accesses never race -------------------

fn untracked_accesses_never_race<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.access(t(1), AccessKind::Write, X, 8, 0x10, false), None);
    assert_eq!(h.access(t(2), AccessKind::Write, X, 8, 0x20, false), None);
    assert_eq!(h.access(t(2), AccessKind::Read, X, 8, 0x24, false), None);
    // A tracked access does not race with the earlier untracked ones...
    assert_eq!(h.w(t(3), X, 8, 0x30), None);
    // ...and untracked accesses neither race with nor overwrite tracked ones.
    assert_eq!(h.access(t(1), AccessKind::Write, X, 8, 0x14, false), None);
    assert_eq!(
        priors(&h.r(t(2), X, 1, 0x28)),
        vec![prior(RaceKind::WriteRead, lang(103), 0x30)]
    );
}

// ---- §3.2 synchronization: unreported runtime synchronization ------------

fn unreported_runtime_barrier_still_races<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(t(1), X, 4, 0x10), None);
    // A stop-the-world barrier in the runtime: futexes, atomics, joins.
    for (origin, s) in [
        (t(1), LowLevelSync::AtomicRmw { addr: Y, size: 4 }),
        (t(1), LowLevelSync::FutexWake { addr: Y }),
        (t(2), LowLevelSync::FutexWaitDone { addr: Y }),
        (t(2), LowLevelSync::ThreadJoin { child: 1 }),
    ] {
        h.d.sync(&origin, &s);
    }
    assert_eq!(
        priors(&h.w(t(2), X, 4, 0x20)),
        vec![prior(RaceKind::WriteWrite, lang(101), 0x10)]
    );
}

fn writevc_lock_orders_accesses<D: Detector>(d: D) {
    let mut h = H::new(d);
    h.acquire(t(1), 7);
    assert_eq!(h.w(t(1), X, 8, 0x10), None);
    assert_eq!(h.r(t(1), Y, 8, 0x14), None);
    h.release(t(1), 7);
    h.acquire(t(2), 7);
    assert_eq!(h.r(t(2), X, 8, 0x20), None);
    assert_eq!(h.w(t(2), X, 8, 0x24), None);
    assert_eq!(h.w(t(2), Y, 8, 0x28), None);
    h.release(t(2), 7);
    // Transitively ordered: thread 3 synchronises with thread 2 only.
    h.acquire(t(3), 7);
    assert_eq!(h.w(t(3), X, 8, 0x30), None);
    assert_eq!(h.w(t(3), Y, 8, 0x34), None);
    h.release(t(3), 7);
    // Thread 1 acquires nothing since its release: its write after the
    // release races with thread 3's.
    assert_eq!(
        priors(&h.w(t(1), X, 1, 0x18)),
        vec![prior(RaceKind::WriteWrite, lang(103), 0x30)]
    );
    // A different lock orders nothing.
    h.acquire(t(4), 8);
    assert_eq!(
        priors(&h.r(t(4), Y, 2, 0x40)),
        vec![prior(RaceKind::WriteRead, lang(103), 0x34)]
    );
}

fn access_after_release_is_concurrent<D: Detector>(d: D) {
    // The release increments the releaser's own entry, so its accesses after
    // the release are not ordered before the acquirer.
    let mut h = H::new(d);
    h.acquire(t(1), 1);
    h.release(t(1), 1);
    assert_eq!(h.w(t(1), X, 4, 0x10), None);
    h.acquire(t(2), 1);
    assert_eq!(
        priors(&h.r(t(2), X, 4, 0x20)),
        vec![prior(RaceKind::WriteRead, lang(101), 0x10)]
    );
}

// ---- §3.3 memory allocation: ClearHistory --------------------------------

fn clear_history_prevents_false_race_on_reuse<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(t(1), X, 8, 0x10), None);
    assert_eq!(h.r(t(3), X + 8, 8, 0x18), None);
    // The collector (an untracked kernel thread) frees and reuses X.
    h.op(o(9, None), LardOp::ClearHistory { addr: X, len: 16 });
    assert_eq!(h.w(t(2), X, 16, 0x20), None);
    // Control: without clearing, reuse looks like a race.
    assert_eq!(h.w(t(1), Y, 8, 0x10), None);
    assert_eq!(
        priors(&h.w(t(2), Y, 8, 0x20)),
        vec![prior(RaceKind::WriteWrite, lang(101), 0x10)]
    );
}

fn clear_history_is_exact_about_its_region<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(t(1), X, 8, 0x10), None);
    h.op(
        t(1),
        LardOp::ClearHistory {
            addr: X + 2,
            len: 4,
        },
    );
    // Bytes 0, 1, 6, 7 keep their history.
    assert!(h.r(t(2), X + 1, 1, 0x20).is_some());
    assert_eq!(h.r(t(2), X + 2, 4, 0x24), None);
    assert!(h.r(t(2), X + 6, 1, 0x28).is_some());
    // Length 0 is ignored.
    assert_eq!(h.w(t(1), Y, 1, 0x30), None);
    h.op(t(1), LardOp::ClearHistory { addr: Y, len: 0 });
    assert!(h.w(t(2), Y, 1, 0x34).is_some());
}

// ---- §3.4 memory movement: CopyHistory -----------------------------------

fn copy_history_preserves_race_across_movement<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(t(1), X, 8, 0x10), None);
    // The collector moves the object from X to Y, then frees X.
    h.op(
        o(9, None),
        LardOp::CopyHistory {
            src: X,
            dst: Y,
            len: 8,
        },
    );
    h.op(o(9, None), LardOp::ClearHistory { addr: X, len: 8 });
    assert_eq!(
        priors(&h.r(t(2), Y + 4, 4, 0x20)),
        vec![prior(RaceKind::WriteRead, lang(101), 0x10)]
    );
    assert_eq!(h.r(t(2), X, 8, 0x24), None);
}

fn copy_history_replaces_destination<D: Detector>(d: D) {
    let mut h = H::new(d);
    // Y has history; X (the source) has none for bytes 4..8.
    assert_eq!(h.w(t(1), Y, 8, 0x10), None);
    assert_eq!(h.r(t(3), X, 4, 0x30), None);
    h.op(
        t(1),
        LardOp::CopyHistory {
            src: X,
            dst: Y,
            len: 8,
        },
    );
    // Bytes Y+4..Y+8 became empty; Y..Y+4 now carry thread 3's read.
    assert_eq!(h.w(t(2), Y + 4, 4, 0x20), None);
    assert_eq!(
        priors(&h.w(t(2), Y, 4, 0x24)),
        vec![prior(RaceKind::ReadWrite, lang(103), 0x30)]
    );
}

fn copy_history_overlapping_is_memmove<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(t(1), X, 1, 0x10), None);
    assert_eq!(h.w(t(3), X + 1, 1, 0x30), None);
    // Shift [X, X+2) up by one byte: X+1 gets X's history, X+2 gets X+1's.
    h.op(
        t(1),
        LardOp::CopyHistory {
            src: X,
            dst: X + 1,
            len: 2,
        },
    );
    assert_eq!(
        priors(&h.r(t(2), X + 1, 1, 0x20)),
        vec![prior(RaceKind::WriteRead, lang(101), 0x10)]
    );
    assert_eq!(
        priors(&h.r(t(2), X + 2, 1, 0x24)),
        vec![prior(RaceKind::WriteRead, lang(103), 0x30)]
    );
}

// ---- §3.5 thread identity -------------------------------------------------

fn two_lang_threads_on_one_kernel_thread_race<D: Detector>(d: D) {
    let mut h = H::new(d);
    h.op(o(1, Some(100)), LardOp::Thread { id: 100 });
    assert_eq!(h.w(o(1, Some(100)), X, 4, 0x10), None);
    h.op(o(1, Some(200)), LardOp::Thread { id: 200 });
    assert_eq!(
        priors(&h.r(o(1, Some(200)), X, 4, 0x20)),
        vec![prior(RaceKind::WriteRead, lang(100), 0x10)]
    );
}

fn migrating_lang_thread_does_not_race_with_itself<D: Detector>(d: D) {
    let mut h = H::new(d);
    h.op(o(1, Some(100)), LardOp::Thread { id: 100 });
    assert_eq!(h.w(o(1, Some(100)), X, 4, 0x10), None);
    assert_eq!(h.r(o(1, Some(100)), Y, 4, 0x14), None);
    // Language thread 100 migrates to kernel thread 2.
    h.op(o(2, Some(100)), LardOp::Thread { id: 100 });
    assert_eq!(h.w(o(2, Some(100)), X, 4, 0x20), None);
    assert_eq!(h.w(o(2, Some(100)), Y, 4, 0x24), None);
    // Its clock migrated too: a lock released on kernel thread 1 ...
    h.acquire(o(1, Some(100)), 5);
    h.release(o(2, Some(100)), 5);
    h.acquire(o(3, Some(300)), 5);
    assert_eq!(h.w(o(3, Some(300)), X, 4, 0x30), None);
}

fn kernel_and_lang_ids_do_not_alias<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(o(7, None), X, 4, 0x10), None);
    assert_eq!(
        priors(&h.w(o(3, Some(7)), X, 4, 0x20)),
        vec![prior(RaceKind::WriteWrite, ThreadKey::Kernel(7), 0x10)]
    );
}

fn lowered_own_clock_does_not_self_race<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(t(1), X, 4, 0x10), None);
    h.release(t(1), 1);
    h.op(t(1), LardOp::WriteVc { tid: 101, value: 0 });
    h.op(t(1), LardOp::ReadVc { tid: 101, value: 0 });
    assert_eq!(h.w(t(1), X, 4, 0x14), None);
    assert_eq!(h.r(t(1), X, 4, 0x18), None);
}

// ---- sizes and alignments --------------------------------------------------

fn partial_overlaps<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(t(1), X, 8, 0x10), None);
    // 1-byte read at offset 5 of the 8-byte write.
    assert_eq!(
        priors(&h.r(t(2), X + 5, 1, 0x20)),
        vec![prior(RaceKind::WriteRead, lang(101), 0x10)]
    );
    // Adjacent, not overlapping.
    assert_eq!(h.r(t(2), X + 8, 1, 0x24), None);
    assert_eq!(h.w(t(3), X - 4, 4, 0x30), None);
    // Straddles the write and thread 2's read at X+8.
    assert_eq!(h.r(t(2), X + 6, 4, 0x28).map(|r| r.priors.len()), Some(1));
    // A 16-byte write over everything: one entry per distinct earlier access.
    let r = h.w(t(4), X - 4, 16, 0x40);
    assert_eq!(
        priors(&r),
        vec![
            prior(RaceKind::WriteWrite, lang(101), 0x10),
            prior(RaceKind::WriteWrite, lang(103), 0x30),
            prior(RaceKind::ReadWrite, lang(102), 0x20),
            // Thread 2's read at 0x24 of X+8 was replaced by its later
            // read at 0x28 (one last read per thread and byte).
            prior(RaceKind::ReadWrite, lang(102), 0x28),
        ]
    );
}

fn accesses_crossing_a_page<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(t(1), 0x1ffc, 8, 0x10), None);
    assert!(h.r(t(2), 0x2002, 1, 0x20).is_some());
    assert!(h.r(t(2), 0x1ffd, 1, 0x24).is_some());
    assert_eq!(h.r(t(2), 0x2004, 1, 0x28), None);
}

// ---- recording racy accesses, read sharing --------------------------------

fn racy_access_is_recorded<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.w(t(1), X, 4, 0x10), None);
    assert!(h.w(t(2), X, 4, 0x20).is_some());
    h.release(t(2), 1);
    h.acquire(t(3), 1);
    // Ordered after thread 2's (racy, recorded) write, which replaced
    // thread 1's as the last write.
    assert_eq!(h.w(t(3), X, 4, 0x30), None);
}

fn concurrent_reads_all_race_with_write<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.r(t(1), X, 4, 0x10), None);
    assert_eq!(h.r(t(2), X, 4, 0x20), None);
    assert_eq!(h.r(t(3), X, 4, 0x30), None);
    assert_eq!(
        priors(&h.w(t(4), X, 4, 0x40)),
        vec![
            prior(RaceKind::ReadWrite, lang(101), 0x10),
            prior(RaceKind::ReadWrite, lang(102), 0x20),
            prior(RaceKind::ReadWrite, lang(103), 0x30),
        ]
    );
    // The write cleared the reads and is ordered after none of them: the
    // next racing write sees only the write.
    assert_eq!(
        priors(&h.w(t(1), X, 4, 0x14)),
        vec![prior(RaceKind::WriteWrite, lang(104), 0x40)]
    );
}

fn ordered_reads_then_racing_write<D: Detector>(d: D) {
    // Thread 2's read is ordered after thread 1's; a write racing with both
    // reports ReadWrite, naming at least thread 2 (FastTrack's read epoch
    // keeps only the latest of ordered reads; Canonical names both).
    let mut h = H::new(d);
    assert_eq!(h.r(t(1), X, 4, 0x10), None);
    h.release(t(1), 1);
    h.acquire(t(2), 1);
    assert_eq!(h.r(t(2), X, 4, 0x20), None);
    let r = h.w(t(3), X, 4, 0x30).expect("race");
    assert!(r.kinds().iter().eq([RaceKind::ReadWrite]));
    assert!(r
        .priors
        .contains(&prior(RaceKind::ReadWrite, lang(102), 0x20)));
}

fn write_ordered_after_latest_read_is_ordered_after_all<D: Detector>(d: D) {
    let mut h = H::new(d);
    assert_eq!(h.r(t(1), X, 4, 0x10), None);
    h.release(t(1), 1);
    h.acquire(t(2), 1);
    assert_eq!(h.r(t(2), X, 4, 0x20), None);
    h.release(t(2), 1);
    h.acquire(t(3), 1);
    assert_eq!(h.w(t(3), X, 4, 0x30), None);
}

fn ignored_events_and_defensive_inputs<D: Detector>(d: D) {
    let mut h = H::new(d);
    let e = Event {
        pc: 0,
        origin: t(1),
        kind: EventKind::ContextSwitch,
    };
    assert_eq!(h.d.event(&e), None);
    assert_eq!(h.w(t(1), u64::MAX - 3, 16, 0x10), None);
    assert!(h.r(t(2), 2, 1, 0x20).is_some(), "wrapped around");
    h.op(
        t(1),
        LardOp::ClearHistory {
            addr: u64::MAX - 10,
            len: u64::MAX,
        },
    );
    h.op(
        t(1),
        LardOp::CopyHistory {
            src: u64::MAX,
            dst: 0,
            len: u64::MAX,
        },
    );
    h.op(
        t(1),
        LardOp::CopyHistory {
            src: X,
            dst: Y,
            len: 0,
        },
    );
    assert_eq!(h.access(t(1), AccessKind::Read, X, 0, 0x30, true), None);
    assert_eq!(
        h.access(t(1), AccessKind::Read, X, u32::MAX, 0x30, true),
        None
    );
    assert!(!h.d.name().is_empty());
}

// ---- ended identities: their clocks go, no verdict changes ---------------

fn end(h: &mut H<impl Detector>, origin: Origin) {
    h.events(vec![Event {
        pc: 0x9008,
        origin,
        kind: EventKind::Program(ProgramEvent::ThreadExit),
    }]);
}

fn ended_identity_keeps_its_races<D: Detector>(d: D) {
    let mut h = H::new(d);
    let (a, b) = (o(1, Some(10)), o(1, Some(11)));
    assert_eq!(h.w(a, X, 8, 0x10), None);
    h.release(a, 1);
    end(&mut h, a);
    // Its runtime's bookkeeping after the end report still counts.
    assert_eq!(h.w(a, Y, 8, 0x14), None);
    h.op(b, LardOp::Thread { id: 11 });
    // A thread that never synchronised with it races with both writes...
    assert_eq!(
        priors(&h.r(t(2), X, 8, 0x20)),
        vec![prior(RaceKind::WriteRead, lang(10), 0x10)]
    );
    assert_eq!(
        priors(&h.r(t(2), Y, 8, 0x24)),
        vec![prior(RaceKind::WriteRead, lang(10), 0x14)]
    );
    // ...one that acquired its release is ordered after the first only.
    h.acquire(t(3), 1);
    assert_eq!(h.r(t(3), X, 8, 0x30), None);
    assert_eq!(
        priors(&h.r(t(3), Y, 8, 0x34)),
        vec![prior(RaceKind::WriteRead, lang(10), 0x14)]
    );
    // An identity that runs again does not race with its own accesses,
    // and races with the reads it never acquired.
    let again = o(4, Some(10));
    h.op(again, LardOp::Thread { id: 10 });
    assert_eq!(
        priors(&h.w(again, Y, 8, 0x44)),
        vec![
            prior(RaceKind::ReadWrite, lang(102), 0x24),
            prior(RaceKind::ReadWrite, lang(103), 0x34)
        ]
    );
}

macro_rules! cases {
    ($module:ident, $make:expr) => {
        mod $module {
            cases!(@each $make;
                untracked_accesses_never_race,
                unreported_runtime_barrier_still_races,
                writevc_lock_orders_accesses,
                access_after_release_is_concurrent,
                clear_history_prevents_false_race_on_reuse,
                clear_history_is_exact_about_its_region,
                copy_history_preserves_race_across_movement,
                copy_history_replaces_destination,
                copy_history_overlapping_is_memmove,
                two_lang_threads_on_one_kernel_thread_race,
                migrating_lang_thread_does_not_race_with_itself,
                kernel_and_lang_ids_do_not_alias,
                lowered_own_clock_does_not_self_race,
                partial_overlaps,
                accesses_crossing_a_page,
                racy_access_is_recorded,
                concurrent_reads_all_race_with_write,
                ordered_reads_then_racing_write,
                write_ordered_after_latest_read_is_ordered_after_all,
                ignored_events_and_defensive_inputs,
                ended_identity_keeps_its_races,
            );
        }
    };
    (@each $make:expr; $($case:ident),* $(,)?) => {
        $(
            #[test]
            fn $case() {
                super::$case($make);
            }
        )*
    };
}

cases!(canonical, lard_detector_hw::Canonical::new());
cases!(fasttrack, lard_detector_hw::FastTrack::new());

/// Canonical keeps every thread's last read, so it names both ordered reads.
#[test]
fn canonical_names_every_racing_read() {
    let mut h = H::new(lard_detector_hw::Canonical::new());
    assert_eq!(h.r(t(1), X, 4, 0x10), None);
    h.release(t(1), 1);
    h.acquire(t(2), 1);
    assert_eq!(h.r(t(2), X, 4, 0x20), None);
    assert_eq!(
        priors(&h.w(t(3), X, 4, 0x30)),
        vec![
            prior(RaceKind::ReadWrite, lang(101), 0x10),
            prior(RaceKind::ReadWrite, lang(102), 0x20),
        ]
    );
}

/// Clearing the reads on a race-free write keeps the racy verdict of a later
/// write and only drops ReadWrite entries that accompany a WriteWrite race.
#[test]
fn read_clearing_changes_report_details_only() {
    for clear in [true, false] {
        let mut h = H::new(lard_detector_hw::Canonical::new().with_read_clearing(clear));
        assert_eq!(h.r(t(1), X, 4, 0x10), None);
        h.release(t(1), 1);
        h.acquire(t(2), 1);
        assert_eq!(h.w(t(2), X, 4, 0x20), None);
        let r = h.w(t(3), X, 4, 0x30).expect("racy either way");
        let mut expected = vec![prior(RaceKind::WriteWrite, lang(102), 0x20)];
        if !clear {
            expected.push(prior(RaceKind::ReadWrite, lang(101), 0x10));
        }
        assert_eq!(r.priors, expected);
    }
}

/// The clock of an ended identity goes once its kernel thread runs another
/// identity; its own entry stays.
#[test]
fn ended_identity_clock_is_dropped() {
    let mut h = H::new(lard_detector_hw::Canonical::new());
    let (a, b) = (o(1, Some(10)), o(1, Some(11)));
    h.op(a, LardOp::WriteVc { tid: 7, value: 3 });
    h.op(a, LardOp::WriteVc { tid: 10, value: 5 });
    end(&mut h, a);
    assert_eq!(h.d.clock_entry(lang(10), lang(7)), 3);
    h.op(b, LardOp::Thread { id: 11 });
    assert_eq!(h.d.clock_entry(lang(10), lang(7)), 0);
    assert_eq!(h.d.clock_entry(lang(10), lang(10)), 5);
}

#[test]
fn clock_initialisation() {
    let mut d = lard_detector_hw::Canonical::new();
    assert_eq!(d.clock_entry(lang(5), lang(5)), 1);
    assert_eq!(d.clock_entry(lang(5), lang(6)), 0);
    d.lard(&o(1, Some(5)), &LardOp::WriteVc { tid: 6, value: 9 });
    assert_eq!(d.clock_entry(lang(5), lang(6)), 9);
    assert_eq!(d.clock_entry(lang(6), lang(6)), 1);
    assert_eq!(d.clock_entry(ThreadKey::Kernel(1), ThreadKey::Kernel(1)), 1);
}

/// FastTrack's exclusive read epoch forgets a read ordered before a later
/// read: it names only the later reader (same kind as Canonical).
#[test]
fn fasttrack_names_latest_of_ordered_reads() {
    let mut h = H::new(lard_detector_hw::FastTrack::new());
    assert_eq!(h.r(t(1), X, 4, 0x10), None);
    h.release(t(1), 1);
    h.acquire(t(2), 1);
    assert_eq!(h.r(t(2), X, 4, 0x20), None);
    assert_eq!(
        priors(&h.w(t(3), X, 4, 0x30)),
        vec![prior(RaceKind::ReadWrite, lang(102), 0x20)]
    );
}
