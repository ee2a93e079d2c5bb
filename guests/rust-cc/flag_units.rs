// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: flag_acquire's handshake across modules: a thread writes a
// heap payload and publishes it with a Release store, the main thread
// reads it after an Acquire load. The store and the load are in module
// `mailbox`; built with `-C codegen-units=16` they are inlined into
// callers in other codegen units, whose DWARF names the atomic
// operations' abstract DIEs in another compilation unit.
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

        pub fn sum(&self) -> u64 {
            unsafe { (*self.payload.get()).iter().sum() }
        }
    }
}

mod worker {
    use super::mailbox::Mailbox;
    pub fn run(m: &Mailbox) {
        m.put([1, 2, 3, 4]);
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
