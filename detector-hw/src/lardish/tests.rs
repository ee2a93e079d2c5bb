//! Replay of RADISH Table 1 (§4.7) and unit tests of the model.
//!
//! Our reading of Table 1 (columns: software read/write VC; per core:
//! coherence state, permission, read clock, write clock, core VC; status):
//!
//! | event      | sw R / W          | p0 perm, rd, wr, VC | p1 perm, rd, wr, VC | status     |
//! |------------|-------------------|---------------------|---------------------|------------|
//! | initial    | 7,0,0 / 2,0,0     | –, –, –, (9,4)      | –, –, –, (6,5)      | InSoftware |
//! | p0 read    |                   | W, 9, 2             |                     | Everything |
//! | p1 read    |                   | W (see below)       | R, 5, 0             |            |
//! | p0 release |                   | VC (10,4)           |                     |            |
//! | p1 acquire |                   |                     | VC (9,5)            |            |
//! | p1 write   |                   | N, 0, 0             | W, 0, 5             |            |
//! | p0 evict   | unchanged         |                     |                     |            |
//! | p1 evict   | 0,0,0 / 0,5,0     |                     |                     | InSoftware |
//!
//! The OCR of the table loses empty cells; p0's write clock 2 after its read
//! comes from the text ("brings information about p0's previous write at
//! time 2 into hardware"), the "1" before p1's write row is p0's coherence
//! state I, and p1's write clears p0's read and write clocks ("clears all
//! other hardware read/write clocks").
//!
//! One deliberate difference: after p1's read the paper's p0 keeps WRITE
//! because its line is Shared and no coherence message reaches it; the
//! downgrade happens when p0 later upgrades the line to write. The model
//! applies that downgrade eagerly at p1's read (p0 shows READ), which gives
//! every access the same stage: a write from Shared always needs the
//! upgrade, which would downgrade it then.

use super::*;
use crate::event::{AccessKind, Event, EventKind};
use crate::race::RaceKind;

const X: u64 = 0x1000;

fn origin(core: u16) -> Origin {
    Origin {
        kthread: u32::from(core),
        lthread: Some(u64::from(core)),
        core,
    }
}

fn ev(core: u16, kind: EventKind) -> Event {
    Event {
        pc: 0x400000 + u64::from(core),
        origin: origin(core),
        kind,
    }
}

fn op(d: &mut Lardish, core: u16, o: LardOp) {
    d.event(&ev(core, EventKind::Lard(o)));
}

fn acc(d: &mut Lardish, core: u16, kind: AccessKind) -> Option<Race> {
    let o = origin(core);
    d.event(&ev(
        core,
        EventKind::Access(Access {
            pc: 0x500000 + u64::from(core),
            addr: X,
            size: 8,
            kind,
            tracked: true,
            stack: false,
            origin: o,
        }),
    ))
}

fn stages(d: &mut Lardish) -> (u64, u64, u64) {
    let s = d.stats();
    (s.permission_hits, s.hw_checks, s.sw_checks)
}

#[test]
fn radish_table_1() {
    let t0 = ThreadKey::Lang(0);
    let t1 = ThreadKey::Lang(1);
    let mut d = Lardish::default();
    // Build the initial software state: thread 0 wrote x at 2, read it at 7.
    op(&mut d, 0, LardOp::Thread { id: 0 });
    op(&mut d, 0, LardOp::WriteVc { tid: 0, value: 2 });
    assert!(acc(&mut d, 0, AccessKind::Write).is_none());
    op(&mut d, 0, LardOp::WriteVc { tid: 0, value: 7 });
    assert!(acc(&mut d, 0, AccessKind::Read).is_none());
    op(&mut d, 0, LardOp::WriteVc { tid: 0, value: 9 });
    op(&mut d, 0, LardOp::WriteVc { tid: 1, value: 4 });
    op(&mut d, 1, LardOp::Thread { id: 1 });
    op(&mut d, 1, LardOp::WriteVc { tid: 1, value: 5 });
    op(&mut d, 1, LardOp::WriteVc { tid: 0, value: 6 });
    d.flush_metadata();

    // (initial)
    assert_eq!(d.history(X), (vec![(t0, 7)], Some((t0, 2))));
    assert_eq!((d.core_clock(0, t0), d.core_clock(0, t1)), (9, 4));
    assert_eq!((d.core_clock(1, t0), d.core_clock(1, t1)), (6, 5));
    assert_eq!(d.status(X), HwStatus::InSoftware);
    assert_eq!(d.hw_clocks(0, X), (None, None));

    // p0 read: software check, imports p0's write at 2.
    let before = stages(&mut d);
    assert!(acc(&mut d, 0, AccessKind::Read).is_none());
    assert_eq!(stages(&mut d).2, before.2 + 1, "software check");
    assert_eq!(d.status(X), HwStatus::Everything);
    assert_eq!(d.permission(0, X), Perm::Write);
    assert_eq!(d.hw_clocks(0, X), (Some(9), Some(2)));

    // p1 read: hardware check (status Everything).
    let before = stages(&mut d);
    assert!(acc(&mut d, 1, AccessKind::Read).is_none());
    assert_eq!(stages(&mut d).1, before.1 + 1, "hardware check");
    assert_eq!(d.permission(1, X), Perm::Read);
    assert_eq!(d.hw_clocks(1, X), (Some(5), None));
    assert_eq!(d.permission(0, X), Perm::Read, "eager downgrade, see docs");
    assert_eq!(d.hw_clocks(0, X), (Some(9), Some(2)));
    assert_eq!(d.status(X), HwStatus::Everything);

    // p0 release, p1 acquire (lock clock = p0's clock before increment).
    op(&mut d, 0, LardOp::WriteVc { tid: 0, value: 10 });
    assert_eq!((d.core_clock(0, t0), d.core_clock(0, t1)), (10, 4));
    op(&mut d, 1, LardOp::WriteVc { tid: 0, value: 9 });
    assert_eq!((d.core_clock(1, t0), d.core_clock(1, t1)), (9, 5));

    // p1 write: permission READ fails, hardware check proves it race-free.
    let before = stages(&mut d);
    assert!(acc(&mut d, 1, AccessKind::Write).is_none());
    assert_eq!(stages(&mut d).1, before.1 + 1, "hardware check");
    assert_eq!(d.permission(1, X), Perm::Write);
    assert_eq!(d.hw_clocks(1, X), (None, Some(5)));
    assert_eq!(d.permission(0, X), Perm::None);
    assert_eq!(d.hw_clocks(0, X), (None, None));
    assert_eq!(d.status(X), HwStatus::Everything);

    // p0 evicts its metadata: nothing of x's history was there.
    d.evict_metadata(0, X);
    assert_eq!(d.status(X), HwStatus::Everything);
    // p1 evicts: software now holds everything.
    d.evict_metadata(1, X);
    assert_eq!(d.status(X), HwStatus::InSoftware);
    assert_eq!(d.history(X), (vec![], Some((t1, 5))));
    assert_eq!(d.stats().permission_violations, 0);

    // A racy write by p0 (its clock 4 for thread 1 < 5) goes to software
    // and is reported.
    let r = acc(&mut d, 0, AccessKind::Write).expect("race");
    assert_eq!(
        r.kinds().iter().collect::<Vec<_>>(),
        vec![RaceKind::WriteWrite]
    );
}

#[test]
fn permission_hits_on_repeated_access() {
    let mut d = Lardish::default();
    op(&mut d, 0, LardOp::Thread { id: 0 });
    acc(&mut d, 0, AccessKind::Write);
    let before = stages(&mut d);
    for _ in 0..10 {
        acc(&mut d, 0, AccessKind::Read);
        acc(&mut d, 0, AccessKind::Write);
    }
    assert_eq!(stages(&mut d).0, before.0 + 20);
}

#[test]
fn stats_render() {
    let mut d = Lardish::default();
    acc(&mut d, 0, AccessKind::Write);
    d.add_instructions(0, 100);
    let s = d.stats();
    assert_eq!(s.instructions, 101);
    let j = s.to_json();
    assert!(j.starts_with('{') && j.ends_with('}'), "{j}");
    assert!(j.contains("\"sw_checks\":1"), "{j}");
    let text = s.to_string();
    assert!(text.contains("sw race checks"), "{text}");
    // Figure 10 and Table 2 per program, and the price of a check.
    assert!(
        text.contains("accesses decided by (RADISH Figure 10)"),
        "{text}"
    );
    assert!(text.contains("  stack "), "{text}");
    assert!(text.contains("granularity conflicts"), "{text}");
    let per = s.cycles_by_mechanism[Mechanism::SwCheck as usize];
    assert!(
        text.contains(&format!("1 software checks, {per} LARDISH cycles each")),
        "{text}"
    );
    assert!(j.contains("\"stack_accesses\":0"), "{j}");
    assert!(j.contains("\"granularity_conflicts\":0"), "{j}");
    assert!(s.cycles_lardish > s.cycles_no_detection);
}
