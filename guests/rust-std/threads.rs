// SPDX-License-Identifier: MIT OR Apache-2.0
//! Rust std threads sharing an Arc<Mutex<u64>>: the total is exact.
use std::sync::{Arc, Mutex};
use std::thread;

fn main() {
    let total = Arc::new(Mutex::new(0u64));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let total = Arc::clone(&total);
            thread::spawn(move || {
                for _ in 0..1000 {
                    *total.lock().unwrap() += i + 1;
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    println!("total={} args={:?}", *total.lock().unwrap(), args);
}
