// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy twin of park.rs: the worker writes the buffer's last element again
// after it unparked the main thread, which reads it after its park.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

static mut BUF: [u64; 16] = [0; 16];

fn main() {
    let done = Arc::new(AtomicBool::new(false));
    let main_thread = thread::current();
    let d = done.clone();
    let worker = thread::spawn(move || {
        unsafe { (*std::ptr::addr_of_mut!(BUF))[15] = 45 };
        d.store(true, Ordering::Relaxed);
        main_thread.unpark();
        unsafe { (*std::ptr::addr_of_mut!(BUF))[15] = 45 }; // RACE
    });
    loop {
        thread::park();
        if done.load(Ordering::Relaxed) {
            break;
        }
    }
    let last = unsafe { (*std::ptr::addr_of!(BUF))[15] }; // RACE
    println!("last {last}");
    worker.join().unwrap();
}
