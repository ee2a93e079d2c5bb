// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: two threads increment a `static mut` counter with no
// synchronization; spawn and join order everything else.
use std::thread;

static mut COUNTER: u64 = 0;

fn main() {
    let threads: Vec<_> = (0..2)
        .map(|_| {
            thread::spawn(|| {
                for _ in 0..50 {
                    unsafe { COUNTER += 1 } // RACE
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    println!("counted {}", unsafe { COUNTER } > 0);
}
