// SPDX-License-Identifier: MIT OR Apache-2.0
// A producer publishes data through a lard::Volatile flag; the consumer spins
// on the flag and then reads the data.  Volatile accesses never race and the
// store->load edge orders the data accesses.  Expected: race-free.
use lard::{thread, Tracked, Volatile};

static DATA: Tracked<u64> = Tracked::new(0); // program data (Tracked)
static READY: Volatile<u64> = Volatile::new(0);

fn producer() {
    DATA.store(42);
    READY.store(1);
}

fn consumer() -> u64 {
    while READY.load() == 0 {
        std::thread::yield_now();
    }
    DATA.load()
}

fn main() {
    let c = thread::spawn(consumer);
    let p = thread::spawn(producer);
    p.join().unwrap();
    let got = c.join().unwrap();
    println!("data = {got}");
}
