// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: threads add to an `Arc<Mutex<u64>>`; the total is exact.
// Known false race: std's Mutex is precompiled without instrumentation
// (docs/rust.md); the accesses it orders are marked STD-SYNC.
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let total = Arc::new(Mutex::new(0u64));
    let threads: Vec<_> = (0..2)
        .map(|i| {
            let total = Arc::clone(&total);
            thread::spawn(move || {
                for _ in 0..50 {
                    *total.lock().unwrap() += i + 1; // STD-SYNC
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    println!("total {}", *total.lock().unwrap());
}
