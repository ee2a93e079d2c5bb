// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: as raw_overlap_race, with ranges that do not overlap.
use std::thread;

#[derive(Clone, Copy)]
struct Ptr(*mut u32);
unsafe impl Send for Ptr {}

fn fill(p: Ptr, from: usize, to: usize, v: u32) {
    for i in from..to {
        unsafe { p.0.add(i).write_volatile(v) }
    }
}

fn main() {
    let mut data = vec![0u32; 16];
    let p = Ptr(data.as_mut_ptr());
    let a = thread::spawn(move || fill(p, 0, 8, 1));
    let b = thread::spawn(move || fill(p, 8, 16, 2));
    a.join().unwrap();
    b.join().unwrap();
    println!("sum {}", data.iter().map(|&x| x as u64).sum::<u64>());
}
