// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: a thread updates a table it holds only a read lock on, while a
// second thread reads it under its own read lock: two readers are not
// ordered by the lock (the first keeps its read lock until the second has
// read; the flags are Relaxed and order nothing).
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, RwLock};
use std::thread;

fn main() {
    let table = Arc::new(RwLock::new(vec![1u64; 8]));
    let written = Arc::new(AtomicBool::new(false));
    let read = Arc::new(AtomicBool::new(false));
    let writer = {
        let (table, written, read) = (Arc::clone(&table), Arc::clone(&written), Arc::clone(&read));
        thread::spawn(move || {
            *table.write().unwrap() = vec![2; 8];
            let g = table.read().unwrap();
            unsafe { std::ptr::write_volatile(g.as_ptr() as *mut u64, 3) }; // RACE
            written.store(true, Relaxed);
            while !read.load(Relaxed) {
                std::hint::spin_loop();
            }
            drop(g);
        })
    };
    while !written.load(Relaxed) {
        std::hint::spin_loop();
    }
    let first = {
        let g = table.read().unwrap();
        unsafe { std::ptr::read_volatile(g.as_ptr()) } // RACE
    };
    read.store(true, Relaxed);
    writer.join().unwrap();
    println!("first {first}");
}
