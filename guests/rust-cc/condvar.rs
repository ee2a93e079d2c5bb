// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: a producer fills a heap buffer, then sets a flag under a
// `Mutex` and notifies a `Condvar`; the consumer waits for the flag and
// reads the buffer. Then the same again with `wait_timeout` the other way
// round. The waits unlock and relock the mutex inside std's precompiled
// code.
use std::sync::{Arc, Condvar, Mutex};
use std::thread;

struct Shared {
    ready: Mutex<bool>,
    cond: Condvar,
    buf: std::cell::UnsafeCell<Vec<u64>>,
    back: std::cell::UnsafeCell<Vec<u64>>,
}
unsafe impl Sync for Shared {}

fn main() {
    let s = Arc::new(Shared {
        ready: Mutex::new(false),
        cond: Condvar::new(),
        buf: std::cell::UnsafeCell::new(vec![0; 64]),
        back: std::cell::UnsafeCell::new(vec![0; 64]),
    });
    let consumer = {
        let s = Arc::clone(&s);
        thread::spawn(move || {
            let mut ready = s.ready.lock().unwrap();
            while !*ready {
                ready = s.cond.wait(ready).unwrap();
            }
            let sum = unsafe { (*s.buf.get()).iter().sum::<u64>() };
            unsafe { (*s.back.get()).iter_mut().for_each(|x| *x = sum) };
            *ready = false;
            drop(ready);
            s.cond.notify_one();
            sum
        })
    };
    // Give the consumer time to wait first.
    thread::sleep(std::time::Duration::from_millis(20));
    unsafe { (*s.buf.get()).iter_mut().enumerate().for_each(|(i, x)| *x = i as u64) };
    *s.ready.lock().unwrap() = true;
    s.cond.notify_one();
    let mut ready = s.ready.lock().unwrap();
    while *ready {
        ready = s.cond.wait_timeout(ready, std::time::Duration::from_secs(60)).unwrap().0;
    }
    drop(ready);
    let back = unsafe { (*s.back.get()).iter().sum::<u64>() };
    println!("sum {} back {}", consumer.join().unwrap(), back);
}
