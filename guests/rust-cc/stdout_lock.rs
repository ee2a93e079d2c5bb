// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: four threads update shared counters only while they hold a
// standard stream's lock (`io::stdout().lock()`, the lock `println!`
// takes, and stderr's and stdin's). Each lock is taken inside std's
// precompiled `Stdout::lock` (`Stderr::lock`, `Stdin::lock`); the guard's
// drop is compiled into the program (docs/rust.md, "std's precompiled
// synchronization").
use std::io::{self, Write};
use std::thread;

static mut OUT: u64 = 0;
static mut ERR: u64 = 0;
static mut IN: u64 = 0;

fn bump(rounds: u64) {
    for _ in 0..rounds {
        let mut out = io::stdout().lock();
        unsafe { OUT += 1 };
        out.flush().unwrap();
        drop(out);
        let err = io::stderr().lock();
        unsafe { ERR += 1 };
        drop(err);
        let inp = io::stdin().lock();
        unsafe { IN += 1 };
        drop(inp);
    }
}

fn main() {
    let threads: Vec<_> = (0..4).map(|_| thread::spawn(|| bump(50))).collect();
    for t in threads {
        t.join().unwrap();
    }
    println!("counts {} {} {}", unsafe { OUT }, unsafe { ERR }, unsafe { IN });
}
