// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: two scoped threads fill the two halves of a vector; the main
// thread reads it after the scope.
// A scoped thread that ends after the main thread dropped its handle is
// counted down by std's precompiled code (docs/rust.md).
use std::thread;

fn main() {
    let mut v = vec![0u64; 16];
    let (a, b) = v.split_at_mut(8);
    thread::scope(|s| {
        s.spawn(|| a.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64));
        s.spawn(|| b.iter_mut().enumerate().for_each(|(i, x)| *x = i as u64));
    });
    println!("sum {}", v.iter().sum::<u64>());
}
