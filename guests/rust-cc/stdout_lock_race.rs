// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: four threads count under the standard output's lock, but mark
// their progress in a shared flag after dropping it.
use std::io::{self, Write};
use std::thread;

static mut COUNT: u64 = 0;
static mut SEEN: u64 = 0;

fn bump(rounds: u64) {
    for _ in 0..rounds {
        let mut out = io::stdout().lock();
        unsafe { COUNT += 1 };
        out.flush().unwrap();
        drop(out);
        unsafe { SEEN = 1 }; // RACE
    }
}

fn main() {
    let threads: Vec<_> = (0..4).map(|_| thread::spawn(|| bump(50))).collect();
    for t in threads {
        t.join().unwrap();
    }
    println!("count {} seen {}", unsafe { COUNT }, unsafe { SEEN });
}
