// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy twin of once.rs: the thread that ran the initializer writes the
// data again after `call_once` returned, which the other threads' reads
// after their `call_once` are not ordered with.
use std::sync::Once;
use std::thread;

static ONCE: Once = Once::new();
static mut DATA: [u64; 8] = [0; 8];

fn sum_data() -> u64 {
    let mut ran = false;
    ONCE.call_once(|| unsafe {
        let d = &mut *std::ptr::addr_of_mut!(DATA);
        for (i, x) in d.iter_mut().enumerate() {
            *x = i as u64 + 1;
        }
        ran = true;
    });
    if ran {
        unsafe { (*std::ptr::addr_of_mut!(DATA))[0] = 1 }; // RACE
    }
    unsafe { (*std::ptr::addr_of!(DATA)).iter().sum() } // RACE
}

fn main() {
    let threads: Vec<_> = (0..4).map(|_| thread::spawn(sum_data)).collect();
    let total: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    println!("total {total}");
}
