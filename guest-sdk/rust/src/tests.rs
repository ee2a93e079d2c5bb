// SPDX-License-Identifier: MIT OR Apache-2.0
//! Native tests of the runtime against the test-only shadow detector
//! (`shadow.rs`): clocks are mirrored exactly, and the edges make race-free
//! programs race-free and leave racy ones racy.
//!
//! Every test uses its own statics (or clears the histories of the heap and
//! stack objects it uses), so tests running in parallel do not interfere in
//! the shared shadow.

use crate::clock;
use crate::shadow::{self, Ident};
use crate::{mem, thread, Barrier, Mutex, Tracked, Volatile};
use std::sync::Arc;

/// The current language thread's software clock equals its detector clock
/// (every entry, both ways), and the detector attributes this kernel thread
/// to it.
fn assert_mirrored() -> (u32, clock::Clock) {
    let (id, sw) = clock::snapshot();
    let who = shadow::current();
    assert_eq!(who, Ident::Lang(id as u64), "detector identity");
    let hw = shadow::lang_clock(who);
    for (i, v) in sw.entries() {
        assert_eq!(
            hw.get(&(i as u64)).copied().unwrap_or(0),
            v,
            "entry {i} of thread {id}"
        );
    }
    for (&i, &v) in &hw {
        assert_eq!(sw.get(i as u32), v, "detector entry {i} of thread {id}");
    }
    (id, sw)
}

#[test]
fn main_thread_is_zero_and_claimed_before_main() {
    assert!(clock::main_claimed());
    // The constructor ran Thread 0 and WriteVC 0, 1 before main.
    assert!(shadow::clock_entry(Ident::Lang(0), 0) >= 1);
}

#[test]
fn native_read_vc_is_zero() {
    thread::current_id();
    assert_eq!(crate::read_vc(0), 0);
    assert_eq!(crate::read_vc(u64::MAX), 0);
}

#[test]
fn ids_are_fresh_increasing_and_never_reused() {
    let me = thread::current_id();
    let mut last = me;
    for _ in 0..10 {
        let h = thread::spawn(thread::current_id);
        let hid = h.id();
        let got = h.join().unwrap();
        assert_eq!(got, hid);
        assert!(got > last && got != me);
        assert!(got < clock::ids_handed_out());
        last = got;
    }
}

#[test]
fn fork_and_join_edges_are_mirrored() {
    static X: Tracked<u64> = Tracked::new(0);
    let (parent, before) = assert_mirrored();
    X.store(1);
    let parent_at_fork = before.get(parent);
    let h = thread::spawn(move || {
        let (child, c) = assert_mirrored();
        assert_ne!(child, parent);
        assert_eq!(c.get(child), 1, "fresh id: own entry 1");
        assert_eq!(
            c.get(parent),
            parent_at_fork,
            "child knows the parent up to the fork"
        );
        X.store(X.load() + 1);
        assert_mirrored().1
    });
    let (_, after_fork) = assert_mirrored();
    assert_eq!(
        after_fork.get(parent),
        before.get(parent) + 1,
        "parent ticks at fork"
    );
    let child = h.id();
    let child_final = h.join().unwrap();
    let (_, after_join) = assert_mirrored();
    assert!(after_join.get(child) >= child_final.get(child));
    assert_eq!(X.load(), 2);
    X.store(3);
    assert!(
        shadow::races_on(&X).is_empty(),
        "{:?}",
        shadow::races_on(&X)
    );
}

#[test]
fn unsynchronized_threads_race() {
    static Y: Tracked<u64> = Tracked::new(0);
    let hs: Vec<_> = (0..2)
        .map(|_| thread::spawn(|| Y.store(Y.load() + 1)))
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    assert!(
        !shadow::races_on(&Y).is_empty(),
        "two unordered increments must race"
    );
}

#[test]
fn access_after_spawn_without_join_races() {
    static Z: Tracked<u32> = Tracked::new(0);
    let h = thread::spawn(|| Z.store(1));
    Z.store(2);
    h.join().unwrap();
    assert!(!shadow::races_on(&Z).is_empty());
}

#[test]
fn mutex_orders_increments() {
    static COUNTER: Mutex<Tracked<u64>> = Mutex::new(Tracked::new(0));
    let hs: Vec<_> = (0..4)
        .map(|_| {
            thread::spawn(|| {
                for _ in 0..200 {
                    let c = COUNTER.lock();
                    c.store(c.load() + 1);
                    drop(c);
                    assert_mirrored();
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    let g = COUNTER.lock();
    assert_eq!(g.load(), 800);
    assert!(
        shadow::races_on(&*g).is_empty(),
        "{:?}",
        shadow::races_on(&*g)
    );
    drop(g);
    assert_mirrored();
}

#[test]
fn mutex_guard_gives_the_value_and_try_lock() {
    let m = Mutex::new(vec![1, 2]);
    m.lock().push(3);
    assert_eq!(*m.lock(), [1, 2, 3]);
    let g = m.lock();
    let r = thread::spawn({
        let m: &'static Mutex<u8> = Box::leak(Box::new(Mutex::new(5)));
        move || *m.try_lock().unwrap()
    });
    assert_eq!(r.join().unwrap(), 5);
    drop(g);
    assert!(m.try_lock().is_some());
    assert_eq!(m.into_inner(), [1, 2, 3]);
}

#[test]
fn barrier_phases_are_all_to_all() {
    const N: usize = 4;
    static A: [Tracked<u64>; N] = [const { Tracked::new(0) }; N];
    static B: [Tracked<u64>; N] = [const { Tracked::new(0) }; N];
    static TOTAL: Tracked<u64> = Tracked::new(0);
    static LEADERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let barrier = Arc::new(Barrier::new(N));
    let hs: Vec<_> = (0..N)
        .map(|i| {
            let b = barrier.clone();
            thread::spawn(move || {
                for round in 0..3u64 {
                    A[i].store(i as u64 + 1 + round);
                    b.wait();
                    B[i].store(A[i].load() + A[(i + 1) % N].load());
                    b.wait();
                    A[i].store(2 * B[(i + N - 1) % N].load());
                    if b.wait().is_leader() {
                        LEADERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let s: u64 = A.iter().map(Tracked::load).sum();
                        TOTAL.store(TOTAL.load() + s);
                    }
                    b.wait();
                    assert_mirrored();
                }
            })
        })
        .collect();
    hs.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(TOTAL.load(), 168);
    assert_eq!(LEADERS.load(std::sync::atomic::Ordering::Relaxed), 3);
    for r in [
        shadow::races_on(&A),
        shadow::races_on(&B),
        shadow::races_on(&TOTAL),
    ] {
        assert!(r.is_empty(), "{r:?}");
    }
}

#[test]
fn barrier_of_one_always_leads() {
    let b = Barrier::new(1);
    assert!(b.wait().is_leader() && b.wait().is_leader());
    assert!(Barrier::new(0).wait().is_leader());
}

#[test]
fn volatile_publishes_data() {
    static DATA: Tracked<u64> = Tracked::new(0);
    static READY: Volatile<u64> = Volatile::new(0);
    let c = thread::spawn(|| {
        while READY.load() == 0 {
            std::thread::yield_now();
        }
        assert_mirrored();
        DATA.load()
    });
    let p = thread::spawn(|| {
        DATA.store(42);
        READY.store(1);
    });
    p.join().unwrap();
    assert_eq!(c.join().unwrap(), 42);
    assert!(shadow::races_on(&DATA).is_empty());
}

#[test]
fn tracked_flag_instead_of_volatile_races() {
    static DATA: Tracked<u64> = Tracked::new(0);
    static READY: Tracked<u64> = Tracked::new(0);
    let c = thread::spawn(|| {
        while READY.load() == 0 {
            std::thread::yield_now();
        }
        DATA.load()
    });
    let p = thread::spawn(|| {
        DATA.store(42);
        READY.store(1);
    });
    p.join().unwrap();
    assert_eq!(c.join().unwrap(), 42);
    assert!(!shadow::races_on(&DATA).is_empty());
}

#[test]
fn volatile_swap_and_into_inner() {
    let v = Volatile::new(3u32);
    assert_eq!(v.swap(4), 3);
    assert_eq!(v.load(), 4);
    v.store(5);
    assert_eq!(v.into_inner(), 5);
    assert_mirrored();
}

#[test]
fn join_edge_survives_a_panic() {
    static W: Tracked<u64> = Tracked::new(0);
    let h = thread::spawn(|| {
        W.store(1);
        panic!("expected panic in a test thread");
    });
    assert!(h.join().is_err());
    W.store(2);
    assert!(shadow::races_on(&W).is_empty());
    assert_mirrored();
}

#[test]
fn adopted_kernel_thread_has_no_edge() {
    static V: Tracked<u64> = Tracked::new(0);
    let parent = thread::current_id();
    V.store(1);
    let id = std::thread::spawn(move || {
        let (id, c) = assert_mirrored();
        assert!(id > parent);
        assert_eq!(c.get(id), 1);
        assert_eq!(c.get(parent), 0, "adoption is no edge");
        V.store(2);
        id
    })
    .join()
    .unwrap();
    assert!(id > 0);
    assert!(!shadow::races_on(&V).is_empty());
}

#[repr(C)]
struct Obj {
    n: Tracked<u64>,
    pad: [u64; 3],
}

/// The C guest issue4: two unordered increments, the object moved in
/// between. The histories move with it, so the second increment races.
#[test]
fn movement_carries_histories() {
    let from = Box::new(Obj {
        n: Tracked::new(0),
        pad: [0; 3],
    });
    let to = Box::new(Obj {
        n: Tracked::new(0),
        pad: [0; 3],
    });
    mem::clear_history_of(&*from);
    mem::clear_history_of(&*to);
    let (fp, tp) = (&*from as *const Obj as usize, &*to as *const Obj as usize);
    thread::spawn(move || {
        let o = unsafe { &*(fp as *const Obj) };
        o.n.store(o.n.load() + 1);
    })
    .join()
    .unwrap();
    // A runtime move, not program synchronization: to the detector, the
    // second thread below is ordered after the first only by the joins, so
    // use a fresh unordered thread: adopt one with a raw std thread.
    unsafe { mem::move_bytes(fp as *const u8, tp as *mut u8, std::mem::size_of::<Obj>()) };
    std::thread::spawn(move || {
        let o = unsafe { &*(tp as *const Obj) };
        o.n.store(o.n.load() + 1);
    })
    .join()
    .unwrap();
    assert_eq!(to.n.load(), 2);
    assert!(
        !shadow::races_on(&to.n).is_empty(),
        "histories must move along"
    );
    assert!(shadow::races_on(&from.n).is_empty());
    assert_eq!(from.pad[0] + to.pad[2], 0);
}

#[test]
fn clearing_forgets_accesses() {
    let cell = Box::new(Tracked::new(0u64));
    mem::clear_history_of(&*cell);
    let p = &*cell as *const Tracked<u64> as usize;
    std::thread::spawn(move || unsafe { &*(p as *const Tracked<u64>) }.store(1))
        .join()
        .unwrap();
    mem::clear_history_of(&*cell); // as a free + reuse would (Rule 3)
    std::thread::spawn(move || unsafe { &*(p as *const Tracked<u64>) }.store(2))
        .join()
        .unwrap();
    assert!(shadow::races_on(&*cell).is_empty());
    std::thread::spawn(move || unsafe { &*(p as *const Tracked<u64>) }.store(3))
        .join()
        .unwrap();
    assert!(
        !shadow::races_on(&*cell).is_empty(),
        "without the clear it races"
    );
}
