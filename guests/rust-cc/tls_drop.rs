// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: each worker's thread-local value, when the thread exits,
// adds what the worker counted into a shared total; the main thread reads
// the total after joining every worker. The destructors run in std's
// precompiled code, after the worker's closure returned (docs/rust.md).
use std::cell::Cell;
use std::thread;

static mut TOTAL: u64 = 0;

struct Tally(Cell<u64>);

impl Drop for Tally {
    fn drop(&mut self) {
        unsafe { TOTAL += self.0.get() };
    }
}

thread_local! {
    static TALLY: Tally = const { Tally(Cell::new(0)) };
}

fn main() {
    for round in 0..3u64 {
        let worker = thread::spawn(move || {
            for i in 0..10 {
                TALLY.with(|t| t.0.set(t.0.get() + i + round));
            }
        });
        worker.join().unwrap();
    }
    println!("total {}", unsafe { TOTAL });
}
