// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: a writer updates an `Arc<RwLock<Vec<u64>>>` while a reader
// sums it under read locks.
// The lock is contended, so it is often taken in std's precompiled slow
// paths (docs/rust.md).
use std::sync::{Arc, RwLock};
use std::thread;

fn main() {
    let table = Arc::new(RwLock::new(vec![1u64; 8]));
    let writer = {
        let table = Arc::clone(&table);
        thread::spawn(move || {
            for i in 0..200 {
                table.write().unwrap()[i % 8] += 1;
            }
        })
    };
    let reader = {
        let table = Arc::clone(&table);
        thread::spawn(move || {
            (0..200)
                .map(|_| table.read().unwrap().iter().sum::<u64>())
                .max()
        })
    };
    writer.join().unwrap();
    let max = reader.join().unwrap().unwrap();
    println!(
        "sum {} max-ok {}",
        table.read().unwrap().iter().sum::<u64>(),
        max <= 208
    );
}
