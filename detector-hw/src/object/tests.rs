//! Figure 4, transition by transition: every row drives one object into a
//! state through real events, applies one access and checks the next
//! state, the incident counted and whether an object race is reported.

use super::*;
use crate::event::{Event, EventKind, LockMode};

const OBJ: u64 = 0x1000;
const LOCK: LockId = 0x9000;

fn origin(t: u64) -> Origin {
    Origin {
        kthread: 100 + t as u32,
        lthread: Some(t),
        core: 0,
    }
}

fn ev(d: &mut ObjectDetector, t: u64, kind: EventKind) -> Option<Race> {
    d.event(&Event {
        pc: 0x40_0000 + t,
        origin: origin(t),
        kind,
    })
}

fn access(d: &mut ObjectDetector, t: u64, write: bool, pc: u64) -> Option<Race> {
    let a = Access {
        pc,
        addr: OBJ + 8,
        size: 8,
        kind: if write {
            AccessKind::Write
        } else {
            AccessKind::Read
        },
        tracked: true,
        stack: false,
        origin: origin(t),
    };
    d.access(&a)
}

fn prog(d: &mut ObjectDetector, t: u64, p: ProgramEvent) {
    ev(d, t, EventKind::Program(p));
}

fn lock(d: &mut ObjectDetector, t: u64) {
    prog(
        d,
        t,
        ProgramEvent::Acquire {
            lock: LOCK,
            mode: LockMode::Exclusive,
        },
    );
}

fn unlock(d: &mut ObjectDetector, t: u64) {
    prog(d, t, ProgramEvent::Release { lock: LOCK });
}

/// A detector whose object at OBJ is in `state`: owner T1 (exclusive),
/// second owner T2 (exclusive2), lockset {LOCK} (shared states).
fn in_state(state: OwnershipState) -> ObjectDetector {
    use OwnershipState::*;
    let mut d = ObjectDetector::new();
    prog(
        &mut d,
        0,
        ProgramEvent::Alloc {
            addr: OBJ,
            size: 16,
            site: 0x40_1000,
            kind: ObjectKind::Heap,
        },
    );
    if state >= Exclusive {
        access(&mut d, 1, true, 0x11);
    }
    if state >= Exclusive2 {
        access(&mut d, 2, true, 0x21);
    }
    match state {
        SharedRead | SharedModified => {
            lock(&mut d, 3);
            access(&mut d, 3, state == SharedModified, 0x31);
            unlock(&mut d, 3);
        }
        Conflict => {
            assert!(access(&mut d, 3, true, 0x31).is_some());
        }
        _ => {}
    }
    assert_eq!(d.state(0), Some(state), "setup");
    d
}

#[derive(Clone, Copy, Debug)]
enum Who {
    /// The owner (T1 in exclusive, T2 in exclusive2; T1 otherwise).
    Owner,
    /// T3 (T1 in exclusive2: the first owner), the owner in this status.
    Foreign(OwnerStatus),
}

#[test]
fn figure4_transitions() {
    use OwnerStatus::*;
    use OwnershipState::*;
    type Row = (
        OwnershipState,
        Who,
        bool,
        bool,
        OwnershipState,
        Incident,
        bool,
    );
    // (from, who, write, holds LOCK, to, incident, object race)
    let rows: &[Row] = &[
        (
            Virgin,
            Who::Owner,
            false,
            false,
            Exclusive,
            Incident::FirstOwner,
            false,
        ),
        (
            Virgin,
            Who::Owner,
            true,
            false,
            Exclusive,
            Incident::FirstOwner,
            false,
        ),
        (
            Exclusive,
            Who::Owner,
            true,
            false,
            Exclusive,
            Incident::Own,
            false,
        ),
        (
            Exclusive,
            Who::Owner,
            false,
            false,
            Exclusive,
            Incident::Own,
            false,
        ),
        (
            Exclusive,
            Who::Foreign(Active),
            true,
            false,
            Exclusive2,
            Incident::Transfer,
            false,
        ),
        (
            Exclusive,
            Who::Foreign(Active),
            false,
            false,
            Exclusive2,
            Incident::Transfer,
            false,
        ),
        (
            Exclusive,
            Who::Foreign(Blocked),
            true,
            false,
            Exclusive2,
            Incident::Steal,
            false,
        ),
        (
            Exclusive,
            Who::Foreign(Terminated),
            true,
            false,
            Exclusive,
            Incident::Inherit,
            false,
        ),
        (
            Exclusive2,
            Who::Owner,
            true,
            false,
            Exclusive2,
            Incident::Own,
            false,
        ),
        (
            Exclusive2,
            Who::Foreign(Terminated),
            true,
            false,
            Exclusive2,
            Incident::Inherit,
            false,
        ),
        (
            Exclusive2,
            Who::Foreign(Active),
            false,
            false,
            SharedRead,
            Incident::Revoke,
            false,
        ),
        (
            Exclusive2,
            Who::Foreign(Blocked),
            false,
            true,
            SharedRead,
            Incident::Revoke,
            false,
        ),
        (
            Exclusive2,
            Who::Foreign(Active),
            true,
            true,
            SharedModified,
            Incident::Revoke,
            false,
        ),
        // Revoked by an unprotected write: shared-modified with an empty lockset.
        (
            Exclusive2,
            Who::Foreign(Active),
            true,
            false,
            Conflict,
            Incident::Revoke,
            true,
        ),
        (
            Exclusive2,
            Who::Foreign(Blocked),
            true,
            false,
            Conflict,
            Incident::Revoke,
            true,
        ),
        // Shared read: the lockset may become empty without a race.
        (
            SharedRead,
            Who::Owner,
            false,
            true,
            SharedRead,
            Incident::Lockset,
            false,
        ),
        (
            SharedRead,
            Who::Owner,
            false,
            false,
            SharedRead,
            Incident::Lockset,
            false,
        ),
        (
            SharedRead,
            Who::Owner,
            true,
            true,
            SharedModified,
            Incident::Lockset,
            false,
        ),
        (
            SharedRead,
            Who::Owner,
            true,
            false,
            Conflict,
            Incident::Lockset,
            true,
        ),
        (
            SharedModified,
            Who::Owner,
            true,
            true,
            SharedModified,
            Incident::Lockset,
            false,
        ),
        (
            SharedModified,
            Who::Owner,
            false,
            true,
            SharedModified,
            Incident::Lockset,
            false,
        ),
        (
            SharedModified,
            Who::Owner,
            false,
            false,
            Conflict,
            Incident::Lockset,
            true,
        ),
        (
            SharedModified,
            Who::Owner,
            true,
            false,
            Conflict,
            Incident::Lockset,
            true,
        ),
        // Conflict: unchecked, never reported again.
        (
            Conflict,
            Who::Owner,
            true,
            false,
            Conflict,
            Incident::Unchecked,
            false,
        ),
        (
            Conflict,
            Who::Owner,
            false,
            true,
            Conflict,
            Incident::Unchecked,
            false,
        ),
    ];
    for &(from, who, write, holds, to, incident, race) in rows {
        let mut d = in_state(from);
        let owner = if from == Exclusive2 { 2 } else { 1 };
        let t = match who {
            Who::Owner => owner,
            Who::Foreign(status) => {
                match status {
                    Active => {}
                    Blocked => prog(&mut d, owner, ProgramEvent::Block),
                    Terminated => prog(&mut d, owner, ProgramEvent::ThreadExit),
                }
                if from == Exclusive2 {
                    1
                } else {
                    3
                }
            }
        };
        if holds {
            lock(&mut d, t);
        }
        let before = d.stats().clone();
        let r = access(&mut d, t, write, 0x99);
        let row = format!("{from:?} {who:?} write={write} holds={holds}");
        assert_eq!(d.state(0), Some(to), "{row}");
        assert_eq!(r.is_some(), race, "{row}");
        assert_eq!(
            d.races().len(),
            usize::from(race) + usize::from(from == Conflict),
            "{row}"
        );
        let s = d.stats();
        let counted = match incident {
            Incident::Own => s.own - before.own,
            Incident::FirstOwner => s.first_owner - before.first_owner,
            Incident::Transfer => s.transfers - before.transfers,
            Incident::Steal => s.steals - before.steals,
            Incident::Inherit => s.inherits - before.inherits,
            Incident::Revoke => s.revokes - before.revokes,
            Incident::Lockset => s.lockset_ops - before.lockset_ops,
            Incident::Unchecked => s.accesses[Conflict.index()] - before.accesses[Conflict.index()],
        };
        assert_eq!(counted, 1, "{row}: incident {incident:?} not counted");
        assert_eq!(
            s.accesses[from.index()] - before.accesses[from.index()],
            1,
            "{row}: access by state"
        );
        if let Some(r) = r {
            let o = d.races().last().expect("reported");
            assert_eq!(o.access.pc, 0x99, "{row}");
            assert_eq!(o.state_before, from, "{row}");
            assert!(o.held.is_empty(), "{row}");
            let p = o.prior.expect("an earlier access by another thread");
            assert_ne!(p.thread, r.thread, "{row}");
            assert_eq!(r.priors.len(), 1);
        }
        // An inheriting or transferring accessor is the owner afterwards.
        if matches!(
            incident,
            Incident::Transfer | Incident::Steal | Incident::Inherit
        ) {
            let before = d.stats().own;
            access(&mut d, t, true, 0x9a);
            assert_eq!(d.stats().own, before + 1, "{row}: new owner's access");
        }
    }
}

#[test]
fn race_report_names_the_conflicting_write_and_both_locksets() {
    // Two fields under two locks: T1 writes under A, T2 under B.
    let mut d = in_state(OwnershipState::Exclusive2); // T1 then T2 wrote
    let (a, b) = (0xa000, 0xb000);
    prog(
        &mut d,
        3,
        ProgramEvent::Acquire {
            lock: b,
            mode: LockMode::Exclusive,
        },
    );
    assert!(access(&mut d, 3, true, 0x31).is_none()); // revoke: {B}
    prog(&mut d, 3, ProgramEvent::Release { lock: b });
    prog(
        &mut d,
        1,
        ProgramEvent::Acquire {
            lock: a,
            mode: LockMode::Exclusive,
        },
    );
    let r = access(&mut d, 1, false, 0x12).expect("lockset {B} ∩ {A} = {}");
    let o = &d.races()[0];
    assert_eq!(o.lockset_before, vec![b]);
    assert_eq!(o.held, vec![a]);
    assert_eq!(o.thread, ThreadKey::Lang(1));
    // A read's earlier access is the last write by another thread.
    assert_eq!(
        o.prior,
        Some(ObjectAccess {
            thread: ThreadKey::Lang(3),
            pc: 0x31,
            write: true
        })
    );
    assert_eq!(r.priors[0].kind, RaceKind::WriteRead);
    assert_eq!(d.final_states()[OwnershipState::Conflict.index()], 1);
}

#[test]
fn objects_come_and_go() {
    let mut d = ObjectDetector::new();
    let heap = |addr, size| ProgramEvent::Alloc {
        addr,
        size,
        site: 7,
        kind: ObjectKind::Heap,
    };
    let stat = |addr, size| ProgramEvent::Alloc {
        addr,
        size,
        site: 0,
        kind: ObjectKind::Static,
    };
    prog(&mut d, 0, stat(0x100, 8));
    prog(&mut d, 0, stat(0x100, 8)); // an alias: ignored
    prog(&mut d, 0, heap(0x1000, 32));
    assert_eq!(d.object_at(0x1000 + 31), Some(1));
    assert_eq!(d.object_at(0x1000 + 32), None);
    assert_eq!(d.object_at(0x104), Some(0));
    // Accesses outside objects are counted only.
    access(&mut d, 1, true, 1); // OBJ+8 = 0x1008: the heap block
    assert_eq!(d.state(1), Some(OwnershipState::Exclusive));
    prog(&mut d, 0, ProgramEvent::Free { addr: 0x1000 });
    assert_eq!(d.object_at(0x1008), None);
    access(&mut d, 1, true, 1);
    assert_eq!(d.stats().outside, 1);
    assert!(d.objects()[1].freed);
    // A new block over freed memory is a new, virgin object; one over a
    // live block replaces it.
    prog(&mut d, 0, heap(0x1000, 16));
    prog(&mut d, 0, heap(0x1008, 16));
    assert_eq!(d.object_at(0x1000), None);
    assert_eq!(d.object_at(0x1010), Some(3));
    assert_eq!(d.stats().freed, 2);
    // A miss remembers the gap around it; a new object in the gap is seen.
    let at = |d: &mut ObjectDetector, addr: u64| {
        let a = Access {
            pc: 1,
            addr,
            size: 8,
            kind: AccessKind::Write,
            tracked: true,
            stack: false,
            origin: origin(1),
        };
        d.access(&a);
    };
    let outside = d.stats().outside;
    at(&mut d, 0x3000);
    at(&mut d, 0x3800);
    assert_eq!(d.stats().outside, outside + 2);
    prog(&mut d, 0, heap(0x3800, 8));
    at(&mut d, 0x3800);
    assert_eq!(d.stats().outside, outside + 2);
    assert_eq!(d.state(4), Some(OwnershipState::Exclusive));
    // CopyHistory from an object's first byte moves it, state and all.
    access(&mut d, 2, true, 1); // 0x1008: object 3, owner T2
    ev(
        &mut d,
        0,
        EventKind::Lard(LardOp::CopyHistory {
            src: 0x1008,
            dst: 0x5000,
            len: 16,
        }),
    );
    assert_eq!(d.object_at(0x1008), None);
    assert_eq!(d.object_at(0x500f), Some(3));
    assert_eq!(d.state(3), Some(OwnershipState::Exclusive));
    assert_eq!(d.objects()[3].addr, 0x5000);
}

#[test]
fn kernel_thread_exit_terminates_the_language_thread_it_ran() {
    let mut d = in_state(OwnershipState::Exclusive); // owner T1
    ev(&mut d, 1, EventKind::Sync(LowLevelSync::ThreadExit));
    access(&mut d, 3, true, 0x31);
    assert_eq!(d.stats().inherits, 1);
    assert_eq!(d.state(0), Some(OwnershipState::Exclusive));
    // Untracked accesses are not checked.
    let mut a = Access {
        pc: 1,
        addr: OBJ,
        size: 8,
        kind: AccessKind::Write,
        tracked: false,
        stack: false,
        origin: origin(2),
    };
    assert!(d.access(&a).is_none());
    assert_eq!(d.state(0), Some(OwnershipState::Exclusive));
    a.tracked = true;
    d.access(&a);
    assert_eq!(d.state(0), Some(OwnershipState::Exclusive2));
}
