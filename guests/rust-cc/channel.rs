// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: a producer fills a shared buffer, then sends its length on an
// `mpsc` channel; the consumer reads the buffer after receiving it.
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
            for (i, x) in unsafe { &mut *buf.0.get() }.iter_mut().enumerate() {
                *x = i as u64 * 3;
            }
            tx.send(8usize).unwrap();
        })
    };
    let n = rx.recv().unwrap();
    let sum: u64 = unsafe { &*buf.0.get() }[..n].iter().sum();
    producer.join().unwrap();
    println!("sum {sum}");
}
