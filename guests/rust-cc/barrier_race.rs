// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy twin of barrier.rs: the first thread writes its slot again after
// the barrier, while the other reads it after the same barrier (a Relaxed
// flag, which orders nothing, makes the run write first).
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread;

struct Table(UnsafeCell<[u64; 2]>);
unsafe impl Sync for Table {}

fn main() {
    let barrier = Arc::new(Barrier::new(2));
    let table = Arc::new(Table(UnsafeCell::new([0; 2])));
    let late = Arc::new(AtomicBool::new(false));
    let writer = {
        let (barrier, table, late) = (Arc::clone(&barrier), Arc::clone(&table), Arc::clone(&late));
        thread::spawn(move || {
            let p = table.0.get().cast::<u64>();
            unsafe { p.write_volatile(1) };
            barrier.wait();
            unsafe { p.write_volatile(2) }; // RACE
            late.store(true, Relaxed);
        })
    };
    let p = table.0.get().cast::<u64>();
    unsafe { p.add(1).write_volatile(1) };
    barrier.wait();
    let before = unsafe { p.add(1).read_volatile() };
    while !late.load(Relaxed) {
        std::hint::spin_loop();
    }
    let first = unsafe { p.read_volatile() }; // RACE
    writer.join().unwrap();
    println!("first {first} before {before}");
}
