// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: a thread adds under an `Arc<Mutex<()>>`; the other reads the
// shared word without taking the lock.
use std::cell::UnsafeCell;
use std::sync::{Arc, Mutex};
use std::thread;

struct Shared {
    lock: Mutex<()>,
    value: UnsafeCell<u64>,
}
unsafe impl Sync for Shared {}

fn main() {
    let s = Arc::new(Shared {
        lock: Mutex::new(()),
        value: UnsafeCell::new(0),
    });
    let w = {
        let s = Arc::clone(&s);
        thread::spawn(move || {
            for _ in 0..20 {
                let _g = s.lock.lock().unwrap();
                unsafe { *s.value.get() += 1 } // RACE
            }
        })
    };
    let r = {
        let s = Arc::clone(&s);
        thread::spawn(move || {
            let mut seen = 0;
            for _ in 0..20 {
                let now = unsafe { std::ptr::read_volatile(s.value.get()) }; // RACE
                seen = seen.max(now);
            }
            seen
        })
    };
    w.join().unwrap();
    let seen = r.join().unwrap();
    println!("total {} seen {}", unsafe { *s.value.get() }, seen <= 20);
}
