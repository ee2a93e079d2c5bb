// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: a thread writes DATA, then sets READY with Release; the main
// thread reads DATA after an Acquire load of READY saw it set, and again
// after the join.
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

static mut DATA: u64 = 0;
static READY: AtomicBool = AtomicBool::new(false);

fn main() {
    let t = thread::spawn(|| {
        unsafe { DATA = 42 };
        READY.store(true, Ordering::Release);
    });
    while !READY.load(Ordering::Acquire) {
        std::hint::spin_loop();
    }
    let first = unsafe { DATA };
    t.join().unwrap();
    unsafe { DATA += 1 };
    println!("data {} {}", first, unsafe { DATA });
}
