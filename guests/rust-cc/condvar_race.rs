// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: as condvar.rs, but the producer writes the buffer's first element
// after it set the flag and notified: the consumer's read of it races.
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

struct Shared {
    ready: Mutex<bool>,
    cond: Condvar,
    buf: std::cell::UnsafeCell<Vec<u64>>,
}
unsafe impl Sync for Shared {}

fn main() {
    let s = Arc::new(Shared {
        ready: Mutex::new(false),
        cond: Condvar::new(),
        buf: std::cell::UnsafeCell::new(vec![1; 64]),
    });
    let consumer = {
        let s = Arc::clone(&s);
        thread::spawn(move || {
            let mut ready = s.ready.lock().unwrap();
            while !*ready {
                ready = s.cond.wait(ready).unwrap();
            }
            drop(ready);
            thread::sleep(std::time::Duration::from_millis(20));
            unsafe { std::ptr::read_volatile((*s.buf.get()).as_ptr()) } // RACE
        })
    };
    thread::sleep(std::time::Duration::from_millis(20));
    *s.ready.lock().unwrap() = true;
    s.cond.notify_one();
    unsafe { std::ptr::write_volatile((*s.buf.get()).as_mut_ptr(), 2) }; // RACE
    println!("first {}", consumer.join().unwrap());
}
