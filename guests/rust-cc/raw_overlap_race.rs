// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: two threads fill ranges of one array through raw pointers, and the
// ranges overlap in one element.
use std::thread;

#[derive(Clone, Copy)]
struct Ptr(*mut u32);
unsafe impl Send for Ptr {}

fn fill(p: Ptr, from: usize, to: usize, v: u32) {
    for i in from..to {
        unsafe { p.0.add(i).write_volatile(v) } // RACE
    }
}

fn main() {
    let mut data = vec![0u32; 16];
    let p = Ptr(data.as_mut_ptr());
    let a = thread::spawn(move || fill(p, 0, 9, 1));
    let b = thread::spawn(move || fill(p, 8, 16, 2));
    a.join().unwrap();
    b.join().unwrap();
    println!("sum {}", data.iter().filter(|&&x| x == 0).count());
}
