//! How a read picks among the visible values (JUMBLE §5.1), with fairness.

use super::buffer::WriteBuffer;
use crate::rng::SplitMix64;
use std::fmt;
use std::str::FromStr;

/// After this many consecutive reads of a location that returned a stale
/// value, the next read returns the latest one (fairness, JUMBLE §1.2: any
/// unbounded sequence of reads sometimes sees the most recent write, so
/// busy-wait loops terminate). Applies to every heuristic.
pub const FAIRNESS_PERIOD: u32 = 8;

/// A JUMBLE heuristic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Heuristic {
    /// Sequentially consistent: always the latest value (the baseline).
    Sc,
    /// The oldest visible value.
    Oldest,
    /// The oldest visible value different from the last value read from
    /// the location (alternates in check-then-use idioms).
    OldestDifferent,
    /// A uniformly random visible value.
    Random,
    /// A uniformly random visible value different from the last one read.
    RandomDifferent,
}

impl Heuristic {
    /// Every heuristic, in the paper's column order.
    pub const ALL: [Heuristic; 5] = [
        Heuristic::Sc,
        Heuristic::Oldest,
        Heuristic::OldestDifferent,
        Heuristic::Random,
        Heuristic::RandomDifferent,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Heuristic::Sc => "sc",
            Heuristic::Oldest => "oldest",
            Heuristic::OldestDifferent => "oldest-different",
            Heuristic::Random => "random",
            Heuristic::RandomDifferent => "random-different",
        }
    }
}

impl fmt::Display for Heuristic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Heuristic {
    type Err = String;

    fn from_str(s: &str) -> Result<Heuristic, String> {
        Heuristic::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown heuristic `{s}` (sc, oldest, oldest-different, random, random-different)"
                )
            })
    }
}

/// A heuristic with its random state.
#[derive(Clone, Debug)]
pub struct Chooser {
    heuristic: Heuristic,
    rng: SplitMix64,
}

impl Chooser {
    /// `heuristic`, seeded with `seed` (only the `random*` ones use it).
    pub fn new(heuristic: Heuristic, seed: u64) -> Chooser {
        Chooser {
            heuristic,
            rng: SplitMix64::new(seed ^ 0x4a55_4d42_4c45),
        }
    }

    /// The heuristic.
    pub fn heuristic(&self) -> Heuristic {
        self.heuristic
    }

    /// The index of the entry of `buffer` a read returns, given its visible
    /// set `visible` (oldest first, ending with the newest entry).
    pub fn choose(&mut self, buffer: &WriteBuffer, visible: &[usize]) -> usize {
        let latest = buffer.len() - 1;
        if visible.len() <= 1 || buffer.stale_streak() + 1 >= FAIRNESS_PERIOD {
            return latest;
        }
        let differs = |i: &usize| buffer.last_read() != Some(buffer.entry(*i).value);
        match self.heuristic {
            Heuristic::Sc => latest,
            Heuristic::Oldest => visible[0],
            Heuristic::OldestDifferent => visible.iter().copied().find(differs).unwrap_or(latest),
            Heuristic::Random => visible[self.rng.below(visible.len() as u64) as usize],
            Heuristic::RandomDifferent => {
                let n = visible.iter().filter(|i| differs(i)).count() as u64;
                if n == 0 {
                    return latest;
                }
                let k = self.rng.below(n) as usize;
                visible
                    .iter()
                    .copied()
                    .filter(differs)
                    .nth(k)
                    .unwrap_or(latest)
            }
        }
    }
}
