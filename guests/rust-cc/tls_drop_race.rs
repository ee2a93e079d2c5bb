// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy twin of tls_drop.rs: the main thread reads the total before it
// joins the worker whose thread-local destructor adds to it.
use std::cell::Cell;
use std::thread;

static mut TOTAL: u64 = 0;

struct Tally(Cell<u64>);

impl Drop for Tally {
    fn drop(&mut self) {
        unsafe { TOTAL += self.0.get() }; // RACE
    }
}

thread_local! {
    static TALLY: Tally = const { Tally(Cell::new(0)) };
}

fn main() {
    let worker = thread::spawn(|| {
        for i in 0..10 {
            TALLY.with(|t| t.0.set(t.0.get() + i));
        }
    });
    let early = unsafe { TOTAL }; // RACE
    worker.join().unwrap();
    println!("early {} total {}", early <= 45, unsafe { TOTAL });
}
