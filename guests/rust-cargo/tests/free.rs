// SPDX-License-Identifier: MIT OR Apache-2.0
// Race-free: the library's workers only add to an atomic.
#[test]
fn counts_the_even_numbers() {
    let v: Vec<u32> = (0..100).collect();
    assert_eq!(tally::tally(&v, |x| x % 2 == 0), 50);
}
