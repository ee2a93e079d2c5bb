// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: a producer fills a heap buffer, then sets a flag under a
// `Mutex` and notifies a `Condvar`; the consumer waits for the flag and
// reads the buffer. The wait unlocks and relocks the mutex inside std's
// precompiled code.
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
        buf: std::cell::UnsafeCell::new(vec![0; 64]),
    });
    let consumer = {
        let s = Arc::clone(&s);
        thread::spawn(move || {
            let mut ready = s.ready.lock().unwrap();
            while !*ready {
                ready = s.cond.wait(ready).unwrap();
            }
            drop(ready);
            unsafe { (*s.buf.get()).iter().sum::<u64>() }
        })
    };
    // Give the consumer time to wait first.
    thread::sleep(std::time::Duration::from_millis(20));
    unsafe { (*s.buf.get()).iter_mut().enumerate().for_each(|(i, x)| *x = i as u64) };
    *s.ready.lock().unwrap() = true;
    s.cond.notify_one();
    println!("sum {}", consumer.join().unwrap());
}
