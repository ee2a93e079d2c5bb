//! Unit tests of the adversarial memory against the paper's examples.

use super::*;
use crate::event::{LardOp, Origin};

const X: u64 = 0x1000;
const PC_W: u64 = 0x40_0000;
const PC_R: u64 = 0x40_0010;

fn thread(l: u64) -> Origin {
    Origin {
        kthread: 100 + l as u32,
        lthread: Some(l),
        core: 0,
    }
}

fn memory(h: Heuristic) -> AdversarialMemory {
    let mut c = AdversarialConfig::new(h);
    c.triggers = Triggers::new(vec![PC_W, PC_R], vec![]);
    AdversarialMemory::new(c)
}

/// A Tracked write of `v` to X by `t` (before/after as the emulator does).
fn write(m: &mut AdversarialMemory, t: &Origin, current: &mut u64, v: u64) {
    assert!(m.before_write(PC_W, X, 8, *current));
    *current = v;
    m.after_write(t, X, 8, |_, _| Some(v));
}

/// `t` synchronizes with `u` the way the SDK's runtime does: join `u`'s
/// clock entries (WriteVC) into `t`'s.
fn acquire_from(m: &mut AdversarialMemory, t: &Origin, u: &Origin) {
    let theirs = m.clock_of(u).to_owned();
    // Entries are indexed densely in order of appearance; the identities
    // here are created in order 1, 2, ..., so Lang(l) has index l-1.
    for l in 1..=4u64 {
        let v = theirs
            .get((l - 1) as u32)
            .max(m.clock_of(t).get((l - 1) as u32));
        m.lard(t, &LardOp::WriteVc { tid: l, value: v }, |_, _| None);
    }
}

/// Bump `t`'s own entry (a release).
fn release(m: &mut AdversarialMemory, t: &Origin, l: u64) {
    let own = m.clock_of(t).get((l - 1) as u32);
    m.lard(
        t,
        &LardOp::WriteVc {
            tid: l,
            value: own + 1,
        },
        |_, _| None,
    );
}

fn visible_values(m: &mut AdversarialMemory, t: &Origin) -> Vec<u64> {
    let now = m.clock_of(t).to_owned();
    let b = m.buffer(X).expect("monitored");
    let mut out = Vec::new();
    b.visible(now.as_ref(), &mut out);
    out.into_iter().map(|i| b.entry(i).value).collect()
}

#[test]
fn figure7_racy_read_sees_everything_synchronized_read_only_the_latest() {
    let (t0, t1) = (thread(1), thread(2));
    let mut m = memory(Heuristic::Oldest);
    m.clock_of(&t0);
    m.clock_of(&t1);
    let mut cur = 0;
    write(&mut m, &t0, &mut cur, 13);
    write(&mut m, &t0, &mut cur, 42);
    // rd(1, x): both writes are concurrent with thread 1: 0, 13, 42 visible.
    assert_eq!(visible_values(&mut m, &t1), vec![0, 13, 42]);
    assert_eq!(m.read(&t1, PC_R, X, 8, cur), Some(0));
    // rel(0, m); acq(1, m): now only 42.
    release(&mut m, &t0, 1);
    acquire_from(&mut m, &t1, &t0);
    assert_eq!(visible_values(&mut m, &t1), vec![42]);
    assert_eq!(m.read(&t1, PC_R, X, 8, cur), Some(42));
    // The writer itself never sees its overwritten values (program order).
    assert_eq!(visible_values(&mut m, &t0), vec![42]);
}

#[test]
fn initial_value_is_at_bottom_and_hidden_once_a_write_happens_before() {
    let (t0, t1) = (thread(1), thread(2));
    let mut m = memory(Heuristic::Oldest);
    m.clock_of(&t0);
    m.clock_of(&t1);
    let mut cur = 7; // memory held 7 when monitoring began
    write(&mut m, &t0, &mut cur, 9);
    assert_eq!(m.buffer(X).unwrap().entry(0).clock, None);
    assert_eq!(visible_values(&mut m, &t1), vec![7, 9]);
    release(&mut m, &t0, 1);
    acquire_from(&mut m, &t1, &t0);
    assert_eq!(visible_values(&mut m, &t1), vec![9]);
}

#[test]
fn sc_always_returns_the_latest_value() {
    let (t0, t1) = (thread(1), thread(2));
    let mut m = memory(Heuristic::Sc);
    let mut cur = 0;
    for v in 1..20 {
        write(&mut m, &t0, &mut cur, v);
        assert_eq!(m.read(&t1, PC_R, X, 8, cur), Some(v));
    }
    assert_eq!(m.stats().stale, 0);
    assert!(m.stats().choices > 0);
}

#[test]
fn oldest_different_alternates_in_check_then_use() {
    let (t0, t1) = (thread(1), thread(2));
    let mut m = memory(Heuristic::OldestDifferent);
    let mut cur = 0;
    write(&mut m, &t0, &mut cur, 0xbeef);
    let got: Vec<u64> = (0..4)
        .map(|_| m.read(&t1, PC_R, X, 8, cur).unwrap())
        .collect();
    assert_eq!(got, vec![0, 0xbeef, 0, 0xbeef]);
}

#[test]
fn oldest_is_fair_the_latest_value_comes_within_the_period() {
    let (t0, t1) = (thread(1), thread(2));
    let mut m = memory(Heuristic::Oldest);
    let mut cur = 0;
    write(&mut m, &t0, &mut cur, 1);
    let got: Vec<u64> = (0..2 * FAIRNESS_PERIOD)
        .map(|_| m.read(&t1, PC_R, X, 8, cur).unwrap())
        .collect();
    let first_latest = got.iter().position(|&v| v == 1).expect("fair");
    assert_eq!(first_latest as u32, FAIRNESS_PERIOD - 1);
    assert!(got[..first_latest].iter().all(|&v| v == 0));
}

#[test]
fn random_heuristics_only_return_visible_values_and_depend_on_the_seed() {
    let (t0, t1) = (thread(1), thread(2));
    let run = |h: Heuristic, seed: u64| {
        let mut c = AdversarialConfig::new(h);
        c.seed = seed;
        c.triggers = Triggers::new(vec![PC_W, PC_R], vec![]);
        let mut m = AdversarialMemory::new(c);
        let mut cur = 0;
        for v in [5, 6, 7] {
            write(&mut m, &t0, &mut cur, v);
        }
        (0..64)
            .map(|_| m.read(&t1, PC_R, X, 8, cur).unwrap())
            .collect::<Vec<u64>>()
    };
    for h in [Heuristic::Random, Heuristic::RandomDifferent] {
        let a = run(h, 1);
        assert!(a.iter().all(|v| [0, 5, 6, 7].contains(v)), "{a:?}");
        assert!([0, 5, 6, 7].iter().all(|v| a.contains(v)), "{h}: {a:?}");
        assert_eq!(a, run(h, 1));
        assert_ne!(a, run(h, 2));
        if h == Heuristic::RandomDifferent {
            assert!(a.windows(2).all(|w| w[0] != w[1]), "{a:?}");
        }
    }
}

#[test]
fn buffers_are_bounded_and_identical_writes_collapse() {
    let (t0, t1) = (thread(1), thread(2));
    let mut c = AdversarialConfig::new(Heuristic::Oldest);
    c.capacity = 4;
    c.triggers = Triggers::new(vec![PC_W], vec![]);
    let mut m = AdversarialMemory::new(c);
    let mut cur = 0;
    for v in 1..=10 {
        write(&mut m, &t0, &mut cur, v);
    }
    assert_eq!(m.buffer(X).unwrap().len(), 4);
    assert_eq!(m.stats().evicted, 7);
    assert_eq!(visible_values(&mut m, &t1), vec![7, 8, 9, 10]);
    // [GC2]: writing 10 again at the same clock replaces the earlier 10.
    write(&mut m, &t0, &mut cur, 10);
    assert_eq!(visible_values(&mut m, &t1), vec![7, 8, 9, 10]);
}

#[test]
fn clear_history_restarts_at_bottom_copy_history_moves_buffers() {
    let (t0, t1) = (thread(1), thread(2));
    let mut m = memory(Heuristic::Oldest);
    let mut cur = 0;
    write(&mut m, &t0, &mut cur, 3);
    m.lard(
        &t0,
        &LardOp::CopyHistory {
            src: X,
            dst: 0x2000,
            len: 16,
        },
        |_, _| None,
    );
    assert_eq!(m.buffer(0x2000).unwrap().len(), 2);
    m.lard(&t0, &LardOp::ClearHistory { addr: X, len: 8 }, |a, _| {
        (a == X).then_some(3)
    });
    let b = m.buffer(X).unwrap();
    assert_eq!(
        (b.len(), b.entry(0).value, b.entry(0).clock.clone()),
        (1, 3, None)
    );
    assert_eq!(m.read(&t1, PC_R, X, 8, 3), Some(3));
    // A destination without a source buffer stops being monitored.
    m.lard(
        &t0,
        &LardOp::CopyHistory {
            src: 0x9000,
            dst: 0x2000,
            len: 8,
        },
        |_, _| None,
    );
    assert!(m.buffer(0x2000).is_none());
}

#[test]
fn triggers_start_monitoring_and_partial_accesses_see_memory() {
    let t0 = thread(1);
    let mut c = AdversarialConfig::new(Heuristic::Oldest);
    c.triggers = Triggers::new(vec![], vec![(X, X + 8)]);
    let mut m = AdversarialMemory::new(c);
    assert!(!m.involves(PC_R, 0x5000, 8));
    assert!(m.involves(PC_R, X + 4, 4));
    // A read at an unrelated address or before monitoring reads memory.
    assert_eq!(m.read(&t0, PC_R, 0x5000, 8, 1), None);
    assert!(m.before_write(PC_W, X, 8, 0));
    m.after_write(&t0, X, 8, |_, _| Some(0x1111_2222));
    // A 4-byte read of half the location sees memory as it is ...
    assert_eq!(m.read(&t0, PC_R, X, 4, 0x2222), None);
    // ... and a partial write appends the location's new contents.
    assert!(m.before_write(PC_R, X + 4, 4, 0));
    m.after_write(&t0, X + 4, 4, |a, s| {
        (a == X && s == 8).then_some(0x5_1111_2222)
    });
    let b = m.buffer(X).unwrap();
    assert_eq!(b.entry(b.len() - 1).value, 0x5_1111_2222);
    assert_eq!(m.stats().locations, 1);
}

#[test]
fn heuristics_parse_by_name() {
    for h in Heuristic::ALL {
        assert_eq!(h.name().parse::<Heuristic>(), Ok(h));
    }
    assert!("newest".parse::<Heuristic>().is_err());
}
