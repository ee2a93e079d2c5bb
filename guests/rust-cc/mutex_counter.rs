// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: four threads hammer one `Arc<Mutex<u64>>`; the total is
// exact. The lock is contended, so it is often taken in std's precompiled
// slow path (docs/rust.md).
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let total = Arc::new(Mutex::new(0u64));
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let total = Arc::clone(&total);
            thread::spawn(move || {
                for _ in 0..200 {
                    *total.lock().unwrap() += i + 1;
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    println!("total {}", *total.lock().unwrap());
}
