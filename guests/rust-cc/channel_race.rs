// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: as channel, but the producer writes the buffer's last word after
// the send, while the consumer reads it. The producer keeps its sender
// until it is joined: dropping it would be a release on the channel after
// the write, which a receive made after the drop acquires.
use std::cell::UnsafeCell;
use std::sync::{mpsc, Arc};
use std::thread;

struct Buffer(UnsafeCell<[u64; 8]>);
unsafe impl Sync for Buffer {}

fn main() {
    let buf = Arc::new(Buffer(UnsafeCell::new([0; 8])));
    let (tx, rx) = mpsc::channel();
    let producer = {
        let buf = Arc::clone(&buf);
        thread::spawn(move || {
            tx.send(8usize).unwrap();
            unsafe { std::ptr::write_volatile(&mut (*buf.0.get())[7], 21) }; // RACE
            tx
        })
    };
    let n = rx.recv().unwrap();
    let last = unsafe { std::ptr::read_volatile(&(*buf.0.get())[n - 1]) }; // RACE
    let _tx = producer.join().unwrap();
    println!("last {}", last == 0 || last == 21);
}
