// SPDX-License-Identifier: MIT OR Apache-2.0
// LARD §3.4 -- memory movement (Rule 4).  Expected: racy.
//
// Two program threads increment o.n with no program synchronization: a data
// race.  Between the two increments a "copying collector" (a raw std thread:
// runtime code) moves the object with lard::mem::move_bytes and redirects the
// shared reference, coordinated by runtime-internal, unreported flags.  The
// two increments hit different addresses (LARD Figure 1, G/H); move_bytes
// copies the access histories to the new location, so under LARD the second
// increment (read and write, on one line) races with the first.  The old
// block is freed through lard::mem::ClearOnFree, which clears its histories.
use lard::{mem, thread, Tracked};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering::Acquire, Ordering::Release};

#[global_allocator]
static ALLOC: mem::ClearOnFree = mem::ClearOnFree::new(std::alloc::System);

#[repr(C)]
struct Obj {
    n: Tracked<u64>,
    pad: [u64; 3],
}

static SHARED: AtomicPtr<Obj> = AtomicPtr::new(null_mut()); // the reference (untracked)
static PHASE: AtomicU32 = AtomicU32::new(0); // system flag (untracked)

fn wait_phase(p: u32) {
    while PHASE.load(Acquire) < p {
        std::thread::yield_now();
    }
}

fn first() {
    let o = unsafe { &*SHARED.load(Acquire) };
    o.n.store(o.n.load() + 1);
    PHASE.store(1, Release);
}

fn collector() {
    wait_phase(1);
    let from = SHARED.load(Acquire);
    let to = Box::into_raw(Box::<Obj>::new_uninit()).cast::<Obj>();
    unsafe { mem::move_bytes(from.cast(), to.cast(), std::mem::size_of::<Obj>()) };
    SHARED.store(to, Release);
    drop(unsafe { Box::from_raw(from) });
    PHASE.store(2, Release);
}

fn second() {
    wait_phase(2);
    let o = unsafe { &*SHARED.load(Acquire) };
    o.n.store(o.n.load() + 1); // RACE
}

fn main() {
    let o = Box::into_raw(Box::new(Obj {
        n: Tracked::new(0),
        pad: [0; 3],
    }));
    unsafe { (*o).n.store(0) };
    SHARED.store(o, Release);
    let a = thread::spawn(first);
    let b = thread::spawn(second);
    let gc = std::thread::spawn(collector);
    a.join().unwrap();
    b.join().unwrap();
    gc.join().unwrap();
    let now = SHARED.load(Acquire);
    let moved = if now != o { "yes" } else { "no" };
    let obj = unsafe { Box::from_raw(now) };
    println!("moved = {moved}\nn = {}", obj.n.load());
    assert_eq!(obj.pad, [0; 3]);
}
