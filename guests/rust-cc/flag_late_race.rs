// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy twin of flag_acquire.rs: the thread writes the payload's first
// element again after its Release store; the main thread reads it after
// the Acquire load and a Relaxed flag set after that write (the run
// orders the write first, happens-before does not).
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

struct Mailbox {
    ready: AtomicBool,
    late: AtomicBool,
    payload: UnsafeCell<[u64; 4]>,
}
unsafe impl Sync for Mailbox {}

fn main() {
    let m = Arc::new(Mailbox {
        ready: AtomicBool::new(false),
        late: AtomicBool::new(false),
        payload: UnsafeCell::new([0; 4]),
    });
    let t = {
        let m = Arc::clone(&m);
        thread::spawn(move || {
            unsafe { *m.payload.get() = [1, 2, 3, 4] };
            m.ready.store(true, Ordering::Release);
            unsafe { std::ptr::write_volatile(m.payload.get().cast::<u64>(), 5) }; // RACE
            m.late.store(true, Ordering::Relaxed);
        })
    };
    while !m.ready.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    let p = m.payload.get().cast::<u64>();
    let rest: u64 = (1..4).map(|i| unsafe { std::ptr::read_volatile(p.add(i)) }).sum();
    while !m.late.load(Ordering::Relaxed) {
        std::hint::spin_loop();
    }
    let first = unsafe { std::ptr::read_volatile(p) }; // RACE
    t.join().unwrap();
    println!("first {first} rest {rest}");
}
