// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy twin of flag_units.rs: the thread writes the payload again after
// its Release store, which the main thread's Acquire load does not order
// before its read of the payload.
use std::sync::Arc;
use std::thread;

mod mailbox {
    use std::cell::UnsafeCell;
    use std::sync::atomic::{AtomicBool, Ordering};

    pub struct Mailbox {
        ready: AtomicBool,
        payload: UnsafeCell<[u64; 4]>,
    }
    unsafe impl Sync for Mailbox {}

    impl Mailbox {
        pub fn new() -> Mailbox {
            Mailbox {
                ready: AtomicBool::new(false),
                payload: UnsafeCell::new([0; 4]),
            }
        }

        pub fn put(&self, v: [u64; 4]) {
            unsafe { *self.payload.get() = v };
            self.ready.store(true, Ordering::Release);
        }

        pub fn ready(&self) -> bool {
            self.ready.load(Ordering::Acquire)
        }

        pub fn again(&self, v: u64) {
            unsafe { (*self.payload.get())[0] = v }; // RACE
        }

        pub fn sum(&self) -> u64 {
            unsafe { (*self.payload.get()).iter().sum() } // RACE
        }
    }
}

mod worker {
    use super::mailbox::Mailbox;
    pub fn run(m: &Mailbox) {
        m.put([1, 2, 3, 4]);
        m.again(1);
    }
}

fn main() {
    let m = Arc::new(mailbox::Mailbox::new());
    let t = {
        let m = Arc::clone(&m);
        thread::spawn(move || worker::run(&m))
    };
    while !m.ready() {
        std::hint::spin_loop();
    }
    let sum = m.sum();
    t.join().unwrap();
    println!("sum {sum}");
}
