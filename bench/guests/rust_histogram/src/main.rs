// SPDX-License-Identifier: MIT OR Apache-2.0
//! A byte histogram of a pseudo-random sequence by four worker threads:
//! each counts its share into a heap table of its own, reporting progress
//! through a relaxed atomic, and returns it; the main thread adds the
//! tables after the joins and prints a checksum. Race-free.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let workers = 4u64;
    let progress = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let progress = Arc::clone(&progress);
            thread::spawn(move || {
                let mut local = vec![0u64; 256];
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ w;
                for i in 0..n / workers {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    local[(x & 0xff) as usize] += 1;
                    if i % 4096 == 0 {
                        progress.fetch_add(4096, Ordering::Relaxed);
                    }
                }
                local
            })
        })
        .collect();
    let mut t = vec![0u64; 256];
    for h in handles {
        for (a, b) in t.iter_mut().zip(h.join().unwrap()) {
            *a += b;
        }
    }
    let sum: u64 = t.iter().sum();
    let check = t.iter().enumerate().fold(0u64, |c, (i, v)| {
        c.wrapping_mul(31).wrapping_add(v ^ i as u64)
    });
    println!("{sum} {check:x} {}", progress.load(Ordering::Relaxed) > 0);
}
