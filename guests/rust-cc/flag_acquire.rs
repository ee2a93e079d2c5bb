// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: a thread writes a heap payload, then sets a heap `AtomicBool`
// with Release; the main thread reads the payload after an Acquire load
// saw the flag set.
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
            unsafe { *m.payload.get() = [1, 2, 3, 4] };
            m.ready.store(true, Ordering::Release);
        })
    };
    while !m.ready.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    let sum: u64 = unsafe { (*m.payload.get()).iter().sum() };
    t.join().unwrap();
    println!("sum {sum}");
}
