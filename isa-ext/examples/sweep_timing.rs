//! Times a sweep over a file's bytes (default: the C library) that decodes
//! every instruction (`Sweep::step`) against one that steps over known
//! kinds (`Sweep::skip_known` and `Sweep::step_known`, a fresh table each
//! round, as a process's first scan has): the best of 20 rounds of each.
//!
//! `cargo run --release -p lard-isa-ext --example sweep_timing [FILE]`

use lard_isa_ext::{KnownLengths, Step, Sweep};
use std::time::{Duration, Instant};

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/lib/x86_64-linux-gnu/libc.so.6".into());
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("sweep_timing: {path}: {e}");
            std::process::exit(2);
        }
    };
    let (mut every, mut known) = (Duration::MAX, Duration::MAX);
    let (mut steps, mut decoded) = (0usize, 0usize);
    for _ in 0..20 {
        let t = Instant::now();
        let mut sweep = Sweep::new(&bytes, 0);
        steps = 0;
        while sweep.step().is_some() {
            steps += 1;
        }
        every = every.min(t.elapsed());

        let t = Instant::now();
        let mut table = KnownLengths::default();
        let mut sweep = Sweep::new(&bytes, 0);
        decoded = 0;
        loop {
            sweep.skip_known(&table, u64::MAX);
            match sweep.step_known(&mut table) {
                None => break,
                Some(Step::Ordinary { .. }) => {}
                Some(_) => decoded += 1,
            }
        }
        known = known.min(t.elapsed());
    }
    println!("{path}: {} bytes, {steps} steps", bytes.len());
    println!("decoding every step:      {every:?}");
    println!("stepping over known kinds: {known:?} ({decoded} steps decoded)");
}
