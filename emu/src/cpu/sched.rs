//! Deterministic scheduling of guest threads on the one emulated CPU.
//!
//! Threads switch only at basic-block boundaries when their quantum (counted
//! in blocks) expires, or when they block in a system call. With
//! `rr` every quantum has the same length and the next runnable thread in
//! creation order runs; with `random` a seeded PRNG picks both the quantum
//! length (1 to 2×quantum blocks) and the next thread. Nothing depends on host
//! timing, so the same binary, input and seed give the same interleaving.

/// How the next thread and quantum are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedPolicy {
    /// Round-robin with a fixed quantum.
    RoundRobin,
    /// Seeded random choice of thread and quantum length.
    Random,
}

/// SplitMix64: a small, well-distributed PRNG.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// The scheduler's decisions.
#[derive(Clone, Debug)]
pub struct Scheduler {
    policy: SchedPolicy,
    rng: SplitMix64,
    quantum: u64,
}

impl Scheduler {
    /// A scheduler with the given policy, seed and quantum (in blocks).
    pub fn new(policy: SchedPolicy, seed: u64, quantum: u64) -> Self {
        Scheduler {
            policy,
            rng: SplitMix64(seed ^ 0x5eed_1a2d),
            quantum: quantum.max(1),
        }
    }

    /// Length of the next quantum in blocks.
    pub fn next_quantum(&mut self) -> u64 {
        match self.policy {
            SchedPolicy::RoundRobin => self.quantum,
            SchedPolicy::Random => 1 + self.rng.below(2 * self.quantum),
        }
    }

    /// Picks the next thread among `runnable` (indices in creation order),
    /// given the one that ran last.
    pub fn pick(&mut self, runnable: &[usize], last: usize) -> usize {
        match self.policy {
            SchedPolicy::RoundRobin => {
                *runnable.iter().find(|&&i| i > last).unwrap_or(&runnable[0])
            }
            SchedPolicy::Random => runnable[self.rng.below(runnable.len() as u64) as usize],
        }
    }
}
