// SPDX-License-Identifier: MIT OR Apache-2.0
// Racy: the predicate counts its calls in a plain shared word that every
// worker increments.
use std::cell::UnsafeCell;

struct Calls(UnsafeCell<usize>);
unsafe impl Sync for Calls {}

impl Calls {
    fn bump(&self) {
        unsafe { *self.0.get() += 1 } // RACE
    }
}

#[test]
fn counts_the_calls_carelessly() {
    let calls = Calls(UnsafeCell::new(0));
    let v: Vec<u32> = (0..100).collect();
    let n = tally::tally(&v, |x| {
        calls.bump();
        x % 3 == 0
    });
    assert_eq!(n, 34);
}
