// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: a worker fills a buffer and unparks the main thread, which
// parks, then reads the buffer. Rust orders `unpark` before the `park`
// that consumes its token, and only the worker gives the main thread a
// token; the `done` flag is Relaxed, so the park is the only edge.
// `thread::park` is precompiled in std (docs/rust.md).
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

static mut BUF: [u64; 16] = [0; 16];

fn main() {
    let done = Arc::new(AtomicBool::new(false));
    let main_thread = thread::current();
    let d = done.clone();
    let worker = thread::spawn(move || {
        unsafe {
            let b = &mut *std::ptr::addr_of_mut!(BUF);
            for (i, x) in b.iter_mut().enumerate() {
                *x = i as u64 * 3;
            }
        }
        d.store(true, Ordering::Relaxed);
        main_thread.unpark();
    });
    loop {
        thread::park();
        if done.load(Ordering::Relaxed) {
            break;
        }
    }
    let sum: u64 = unsafe { (*std::ptr::addr_of!(BUF))[15] };
    println!("last {sum}");
    worker.join().unwrap();
}
