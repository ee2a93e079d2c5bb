// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: threads one after another allocate a buffer, write it and
// free it; the allocator hands the same memory to the next thread, and
// only the join orders them.
use std::thread;

fn main() {
    let mut total = 0u64;
    for round in 0..4u64 {
        let t = thread::spawn(move || {
            let mut b = vec![0u64; 64];
            for (i, x) in b.iter_mut().enumerate() {
                *x = i as u64 + round;
            }
            let sum = b.iter().sum::<u64>();
            drop(b);
            sum
        });
        total += t.join().unwrap();
    }
    let keep: Vec<Box<[u64; 8]>> = (0..4)
        .map(|i| thread::spawn(move || Box::new([i; 8])).join().unwrap())
        .collect();
    println!(
        "total {} kept {}",
        total,
        keep.iter().map(|b| b[0]).sum::<u64>()
    );
}
