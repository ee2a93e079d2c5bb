// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: as flag_acquire, but the flag is stored and loaded Relaxed, so
// seeing it set does not order the payload's write before its read.
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

struct Mailbox {
    ready: AtomicBool,
    payload: UnsafeCell<[u64; 4]>,
}
unsafe impl Sync for Mailbox {}

fn main() {
    let m = Arc::new(Mailbox {
        ready: AtomicBool::new(false),
        payload: UnsafeCell::new([0; 4]),
    });
    let t = {
        let m = Arc::clone(&m);
        thread::spawn(move || {
            unsafe { *m.payload.get() = [1, 2, 3, 4] }; // RACE
            m.ready.store(true, Ordering::Relaxed);
        })
    };
    while !m.ready.load(Ordering::Relaxed) {
        std::hint::spin_loop();
    }
    let first = unsafe { std::ptr::read_volatile(&(*m.payload.get())[0]) }; // RACE
    t.join().unwrap();
    println!(
        "sum {}",
        unsafe { (*m.payload.get()).iter().sum::<u64>() } + first - first
    );
}
