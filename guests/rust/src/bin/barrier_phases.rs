// SPDX-License-Identifier: MIT OR Apache-2.0
// Four threads compute in phases separated by a lard::Barrier: each phase
// reads slots other threads wrote in the previous phase and overwrites slots
// other threads read in the previous phase.  Expected: race-free.
use lard::{thread, Barrier, Tracked};

const N: usize = 4;

static A: [Tracked<u64>; N] = [const { Tracked::new(0) }; N]; // program data
static B: [Tracked<u64>; N] = [const { Tracked::new(0) }; N];
static TOTAL: Tracked<u64> = Tracked::new(0);
static BARRIER: Barrier = Barrier::new(N);

fn worker(i: usize) {
    for round in 0..3u64 {
        A[i].store(i as u64 + 1 + round);
        BARRIER.wait();
        B[i].store(A[i].load() + A[(i + 1) % N].load());
        BARRIER.wait();
        A[i].store(2 * B[(i + N - 1) % N].load());
        if BARRIER.wait().is_leader() {
            // exactly one thread sums
            let mut s = 0;
            for a in &A {
                s += a.load();
            }
            TOTAL.store(TOTAL.load() + s);
        }
        BARRIER.wait();
    }
}

fn main() {
    let t: Vec<_> = (0..N).map(|i| thread::spawn(move || worker(i))).collect();
    for h in t {
        h.join().unwrap();
    }
    println!("total = {}", TOTAL.load());
}
