// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: four threads call `Once::call_once` and `OnceLock::get_or_init`
// on statics; the thread that runs each initializer writes the data it
// guards, and every thread reads it after the call returns. The
// initializers run inside std's precompiled `Once::call` (docs/rust.md).
use std::sync::{Once, OnceLock};
use std::thread;

static ONCE: Once = Once::new();
static mut DATA: [u64; 8] = [0; 8];
static TABLE: OnceLock<Vec<u64>> = OnceLock::new();

fn sum_data() -> u64 {
    ONCE.call_once(|| unsafe {
        let d = &mut *std::ptr::addr_of_mut!(DATA);
        for (i, x) in d.iter_mut().enumerate() {
            *x = i as u64 + 1;
        }
    });
    unsafe { (*std::ptr::addr_of!(DATA)).iter().sum() }
}

fn sum_table() -> u64 {
    TABLE.get_or_init(|| (1..=16).collect()).iter().sum()
}

fn main() {
    let threads: Vec<_> = (0..4)
        .map(|_| thread::spawn(|| sum_data() + sum_table()))
        .collect();
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    println!("total {total}");
}
