// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: two scoped threads add to one counter through a shared cell that
// claims to be `Sync`.
use std::cell::UnsafeCell;
use std::thread;

struct Counter(UnsafeCell<u64>);
unsafe impl Sync for Counter {}

impl Counter {
    fn add(&self) {
        unsafe { *self.0.get() += 1 } // RACE
    }
}

fn main() {
    let c = Counter(UnsafeCell::new(0));
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..50 {
                    c.add();
                }
            });
        }
    });
    println!("counted {}", c.0.into_inner() > 0);
}
