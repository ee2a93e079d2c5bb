// SPDX-License-Identifier: MIT OR Apache-2.0
// Two threads increment a shared counter with no lock.  Expected: racy
// (every increment after the other thread's first one races; the read and
// the write of an increment are on the same line).
use lard::{thread, Tracked};

static COUNTER: Tracked<u64> = Tracked::new(0); // program data (Tracked)

fn worker() {
    for _ in 0..1000 {
        COUNTER.store(COUNTER.load() + 1); // RACE
    }
}

fn main() {
    let t: Vec<_> = (0..2).map(|_| thread::spawn(worker)).collect();
    for h in t {
        h.join().unwrap();
    }
    // The final value depends on the interleaving: print only "done".
    println!("done");
}
