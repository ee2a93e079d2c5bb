// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: three threads each write their own slot of a shared table,
// wait at a `std::sync::Barrier`, read the other slots, wait again, and
// write their slot for the next round. `Barrier::wait` is precompiled in
// std as a whole (docs/rust.md).
use std::cell::UnsafeCell;
use std::sync::{Arc, Barrier};
use std::thread;

struct Table(UnsafeCell<[u64; 3]>);
unsafe impl Sync for Table {}

fn main() {
    let barrier = Arc::new(Barrier::new(3));
    let table = Arc::new(Table(UnsafeCell::new([0; 3])));
    let threads: Vec<_> = (0..3)
        .map(|me| {
            let (barrier, table) = (Arc::clone(&barrier), Arc::clone(&table));
            thread::spawn(move || {
                let p = table.0.get().cast::<u64>();
                let mut seen = 0;
                for round in 1..=3u64 {
                    unsafe { p.add(me).write_volatile(round * 10 + me as u64) };
                    barrier.wait();
                    seen += (0..3).map(|i| unsafe { p.add(i).read_volatile() }).sum::<u64>();
                    barrier.wait();
                }
                seen
            })
        })
        .collect();
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    println!("total {total}");
}
