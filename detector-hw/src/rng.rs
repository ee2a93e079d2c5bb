//! The SplitMix64 pseudo-random generator (Steele, Lea & Flood, "Fast
//! Splittable Pseudorandom Number Generators", OOPSLA 2014).
//!
//! One definition for every seeded choice: the random traces
//! ([`crate::trace`]), the adversarial memory's heuristics and the
//! emulator's scheduler. Everything that is replayed by seed depends on its
//! exact sequence, so the constants and the reduction in [`below`] are part
//! of the contract.
//!
//! [`below`]: SplitMix64::below

/// The SplitMix64 generator; the field is its 64-bit state (the seed before
/// the first draw).
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..n`: the next draw modulo `n` (0, without drawing, if
    /// `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u32) -> bool {
        self.below(100) < u64::from(percent)
    }

    /// A uniformly chosen element of `items` (`None` if empty).
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        if items.is_empty() {
            None
        } else {
            Some(items[self.below(items.len() as u64) as usize])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    /// The first outputs for seed 0, as published with the algorithm.
    #[test]
    fn reference_sequence() {
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn below_zero_does_not_draw() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        assert_eq!(a.below(0), 0);
        assert_eq!(a.next_u64(), b.next_u64());
    }
}
