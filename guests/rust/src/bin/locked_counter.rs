// SPDX-License-Identifier: MIT OR Apache-2.0
// Four threads increment a shared counter under a lard::Mutex.  Expected:
// race-free.
use lard::{thread, Mutex, Tracked};

static COUNTER: Mutex<Tracked<u64>> = Mutex::new(Tracked::new(0)); // Tracked data

fn worker() {
    for _ in 0..500 {
        let c = COUNTER.lock();
        c.store(c.load() + 1);
    }
}

fn main() {
    COUNTER.lock().store(0);
    let t: Vec<_> = (0..4).map(|_| thread::spawn(worker)).collect();
    for h in t {
        h.join().unwrap();
    }
    println!("counter = {}", COUNTER.lock().load());
}
