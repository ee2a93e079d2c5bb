//! Deterministic scheduling of guest threads on the one emulated CPU.
//!
//! Threads switch only at basic-block boundaries when their quantum (counted
//! in blocks) expires, or when they block in a system call. With
//! `rr` every quantum has the same length and the next runnable thread in
//! creation order runs; with `random` a seeded PRNG picks both the quantum
//! length (1 to 2×quantum blocks) and the next thread; with `pct` the
//! runnable thread of highest priority runs (Burckhardt et al., "A
//! Randomized Scheduler with Probabilistic Guarantees of Finding Bugs",
//! ASPLOS 2010; [`Pct`]). Nothing depends on host timing, so the same
//! binary, input and seed give the same interleaving.
//!
//! A *scheduling step* is one basic block executed while at least two
//! threads were runnable when its quantum began (blocks of a thread that
//! runs alone cannot be reordered with anything). Every policy counts
//! steps ([`Scheduler::steps`], `lard run --stats`); PCT places its
//! priority change points on them.
//!
//! A quantum that began with one runnable thread ends when that thread
//! creates another ([`Scheduler::created_in_quantum`]), and a new one
//! begins: otherwise the rest of that quantum, and so every quantum
//! boundary after it, would depend on how many blocks the program ran
//! alone before -- the dynamic loader's and libc's start-up, which vary
//! with the environment and the arguments' lengths. So a run's replay
//! command gives the same interleaving in another shell. (Only creation
//! resets the phase: a wake-up that did would give a loop that hands a
//! lock back and forth the same phase every time, and a lock-step
//! livelock.)

pub use lard_detector_hw::rng::SplitMix64;

/// How the next thread and quantum are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchedPolicy {
    /// Round-robin with a fixed quantum.
    RoundRobin,
    /// Seeded random choice of thread and quantum length.
    Random,
    /// Probabilistic concurrency testing: seeded random thread priorities
    /// and `depth - 1` priority change points among the first `steps`
    /// scheduling steps.
    Pct {
        /// The bug depth `d` the schedule targets (1 or more).
        depth: u32,
        /// `k`: the number of scheduling steps the change points are drawn
        /// from (an estimate of the run's steps).
        steps: u64,
    },
}

/// The state of a PCT schedule.
///
/// Every thread gets a random priority at least `depth` when the scheduler
/// first sees it (a random 63-bit key above `depth`, so the order of the
/// threads is a uniformly random permutation); the runnable thread with the
/// highest priority runs. At the `i`-th of the `depth - 1` change points
/// (`i` = 1 … `depth - 1`, each a step number drawn uniformly from
/// `1..=steps`) the thread that was running gets priority `i`, below every
/// thread that has not passed a change point. A quantum that would run past
/// the next change point is cut short so that the change happens exactly
/// after that step.
///
/// A thread that calls `sched_yield` goes below every other thread (a
/// waiting loop that yields lets the others run, the thread it waits for
/// among them). And a runnable thread that has not run for
/// [`STARVATION_STEPS`] scheduling steps runs one quantum, whatever its
/// priority: a loop that spins without yielding -- a language runtime's
/// wait for another kernel thread (Go's `runtime.GC` waits for the
/// sweeper that way) -- would otherwise keep the thread it waits for from
/// ever running, and the run would end only at a limit.
#[derive(Clone, Debug)]
pub struct Pct {
    depth: u32,
    /// By thread index: the scheduling step at which it last ran (or was
    /// first seen).
    last_ran: Vec<u64>,
    /// Priority by thread index (creation order).
    prio: Vec<i64>,
    /// `(step, priority)` of each change point, by step.
    changes: Vec<(u64, i64)>,
    /// The next change point not yet applied.
    next: usize,
}

impl Pct {
    fn new(depth: u32, steps: u64, rng: &mut SplitMix64) -> Pct {
        let depth = depth.max(1);
        let mut changes: Vec<(u64, i64)> = Vec::new();
        if steps > 0 {
            for i in 1..i64::from(depth) {
                // Distinct steps while there are enough of them.
                let mut s = 1 + rng.below(steps);
                while changes.len() < steps as usize && changes.iter().any(|&(c, _)| c == s) {
                    s = 1 + rng.below(steps);
                }
                changes.push((s, i));
            }
        }
        changes.sort_unstable();
        Pct {
            depth,
            last_ran: Vec::new(),
            prio: Vec::new(),
            changes,
            next: 0,
        }
    }

    /// Gives the threads up to index `n` (exclusive) their initial priority.
    fn see(&mut self, n: usize, rng: &mut SplitMix64) {
        while self.prio.len() < n {
            // A random 62-bit key above `depth`: room below for yields.
            self.prio
                .push(i64::from(self.depth) + 1 + (rng.next_u64() >> 2) as i64);
        }
    }

    /// The step of the next change point, if one is left.
    fn next_change(&self) -> Option<u64> {
        self.changes.get(self.next).map(|&(s, _)| s)
    }

    /// The change point steps, in order (for tests and reports).
    pub fn change_points(&self) -> Vec<u64> {
        self.changes.iter().map(|&(s, _)| s).collect()
    }
}

/// Scheduling steps a runnable thread waits at most under PCT before it
/// runs a quantum ([`Pct`]): far more than the change-point window `lard
/// explore` draws from its programs' steps, so that only a thread that
/// spinning threads starve reaches it.
pub const STARVATION_STEPS: u64 = 1 << 16;

/// The scheduler's decisions.
#[derive(Clone, Debug)]
pub struct Scheduler {
    policy: SchedPolicy,
    rng: SplitMix64,
    quantum: u64,
    steps: u64,
    pct: Option<Pct>,
    /// The current quantum began with one runnable thread.
    alone: bool,
    /// The current quantum's length in blocks.
    current: u64,
    /// Draws the round-robin and PCT contended quanta's lengths.
    lengths: SplitMix64,
    /// Draws the lengths of quanta begun with one runnable thread.
    alone_lengths: SplitMix64,
}

impl Scheduler {
    /// A scheduler with the given policy, seed and quantum (in blocks).
    pub fn new(policy: SchedPolicy, seed: u64, quantum: u64) -> Self {
        let mut rng = SplitMix64(seed ^ 0x5eed_1a2d);
        let pct = match policy {
            SchedPolicy::Pct { depth, steps } => Some(Pct::new(depth, steps, &mut rng)),
            _ => None,
        };
        Scheduler {
            policy,
            rng,
            quantum: quantum.max(1),
            steps: 0,
            pct,
            alone: false,
            current: quantum.max(1),
            lengths: SplitMix64(seed ^ 0x1a7e_5160),
            alone_lengths: SplitMix64(seed ^ 0xa1_07e5),
        }
    }

    /// The PCT state, under `--sched pct`.
    pub fn pct(&self) -> Option<&Pct> {
        self.pct.as_ref()
    }

    /// Scheduling steps so far: blocks run while at least two threads
    /// were runnable when their quantum began.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// A thread woke others with `blocks_left` blocks of its quantum left:
    /// true when its quantum ends here, so that a woken thread runs while
    /// what it was woken for still holds, as a uniprocessor kernel's wakeup
    /// preemption lets it.  Only past the quantum's first half (a kernel's
    /// wakeup granularity): a lock handed from thread to thread at every
    /// release would cost a switch per critical section.  Round-robin
    /// only; the random and PCT schedules choose their own switch points.
    pub fn preempt_on_wake(&self, blocks_left: i64) -> bool {
        matches!(self.policy, SchedPolicy::RoundRobin)
            && blocks_left <= i64::try_from(self.current / 2).unwrap_or(i64::MAX)
    }

    /// Length of the next quantum in blocks; `contended`: at least two
    /// threads are runnable (its blocks are steps).
    pub fn next_quantum(&mut self, contended: bool) -> u64 {
        self.alone = !contended;
        self.current = match self.policy {
            SchedPolicy::RoundRobin => self.varied_quantum(contended),
            SchedPolicy::Random => 1 + self.rng.below(2 * self.quantum),
            SchedPolicy::Pct { .. } => {
                let next = self.pct.as_ref().and_then(Pct::next_change);
                match next {
                    // The run loop runs `quantum - 1` blocks: end right
                    // after the change point's step.
                    Some(s) if contended && s > self.steps => {
                        self.varied_quantum(contended).min(s - self.steps + 1)
                    }
                    _ => self.varied_quantum(contended),
                }
            }
        };
        self.current
    }

    /// A quantum's length under the round-robin and PCT schedules: drawn
    /// from the seed in ½…1½ × the quantum, as the program's phase at a
    /// timer interrupt varies. With one length, a loop whose length
    /// divides into it is preempted at the same instruction every time,
    /// and a runtime that acts only at safe points of its own code (Go's
    /// preemption by signal, a stop of the world its monitor thread must
    /// see end) could wait there for ever. Streams of their own: the PCT
    /// priorities and change points a seed gives do not depend on them,
    /// and the contended quanta's lengths (the scheduling steps) do not
    /// depend on how many quanta one thread ran alone before (a longer
    /// environment, a slower start-up).
    fn varied_quantum(&mut self, contended: bool) -> u64 {
        let rng = if contended {
            &mut self.lengths
        } else {
            &mut self.alone_lengths
        };
        self.quantum / 2 + rng.below(self.quantum + 1)
    }

    /// Accounts for a quantum that ran `blocks` blocks.
    pub fn ran(&mut self, blocks: u64, contended: bool) {
        if contended {
            self.steps += blocks;
        }
    }

    /// The running thread created a thread. True if the current quantum
    /// began with one runnable thread: that quantum ends here (the caller
    /// stops the CPU) and the next one is contended.
    pub fn created_in_quantum(&mut self) -> bool {
        std::mem::take(&mut self.alone)
    }

    /// The thread at index `cur` called `sched_yield`.
    pub fn yielded(&mut self, cur: usize) {
        let Some(p) = &mut self.pct else { return };
        p.see(cur + 1, &mut self.rng);
        let lowest_other = p
            .prio
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != cur)
            .map(|(_, &q)| q)
            .min();
        if let Some(low) = lowest_other {
            p.prio[cur] = p.prio[cur].min(low - 1);
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
            SchedPolicy::Pct { .. } => {
                let Some(p) = &mut self.pct else {
                    return runnable[0];
                };
                let seen = runnable.iter().copied().max().unwrap_or(0).max(last) + 1;
                p.see(seen, &mut self.rng);
                while let Some(&(s, prio)) = p.changes.get(p.next) {
                    if s > self.steps {
                        break;
                    }
                    p.prio[last] = prio;
                    p.next += 1;
                }
                let steps = self.steps;
                while p.last_ran.len() < p.prio.len() {
                    p.last_ran.push(steps);
                }
                // The runnable thread that waited longest, if too long;
                // else the highest priority. (Equal priorities are all but
                // impossible: the older thread wins.)
                let starved = runnable
                    .iter()
                    .copied()
                    .filter(|&i| steps - p.last_ran[i] >= STARVATION_STEPS)
                    .min_by_key(|&i| (p.last_ran[i], i));
                let next = starved.unwrap_or_else(|| {
                    *runnable
                        .iter()
                        .max_by_key(|&&i| (p.prio[i], std::cmp::Reverse(i)))
                        .unwrap_or(&runnable[0])
                });
                p.last_ran[next] = steps;
                next
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pct(depth: u32, steps: u64, seed: u64) -> Scheduler {
        Scheduler::new(SchedPolicy::Pct { depth, steps }, seed, 10)
    }

    #[test]
    fn the_highest_priority_thread_runs_until_a_change_point() {
        for seed in 0..50 {
            let mut s = pct(2, 100, seed);
            let first = s.pick(&[0, 1, 2], 0);
            // Without steps, no change: the same thread again and again.
            for _ in 0..5 {
                assert_eq!(s.pick(&[0, 1, 2], first), first);
            }
            let cp = s.pct().unwrap().change_points()[0];
            assert!((1..=100).contains(&cp));
            // Quanta end exactly at the change point.
            let mut steps = 0;
            while steps < cp {
                let q = s.next_quantum(true) - 1;
                assert!(q >= 1 && steps + q <= cp, "seed {seed}: {steps}+{q} > {cp}");
                s.ran(q, true);
                steps += q;
                if steps < cp {
                    assert_eq!(s.pick(&[0, 1, 2], first), first);
                }
            }
            // Then the running thread drops below the others for good.
            let second = s.pick(&[0, 1, 2], first);
            assert_ne!(second, first, "seed {seed}");
            assert_ne!(s.pick(&[0, 1, 2], second), first);
            assert_eq!(s.pick(&[first], second), first);
        }
    }

    #[test]
    fn change_points_are_distinct_steps_in_range() {
        for seed in 0..50 {
            let s = pct(5, 6, seed);
            let cps = s.pct().unwrap().change_points();
            assert_eq!(cps.len(), 4);
            assert!(cps.windows(2).all(|w| w[0] < w[1]), "{cps:?}");
            assert!(cps.iter().all(|c| (1..=6).contains(c)), "{cps:?}");
        }
        // Depth 1: priorities only.
        assert!(pct(1, 100, 3).pct().unwrap().change_points().is_empty());
    }

    #[test]
    fn every_order_of_two_threads_comes_up() {
        let firsts: std::collections::BTreeSet<usize> = (0..40)
            .map(|seed| pct(1, 10, seed).pick(&[0, 1], 0))
            .collect();
        assert_eq!(firsts.len(), 2);
    }

    #[test]
    fn a_yielding_thread_lets_the_others_run() {
        for seed in 0..20 {
            let mut s = pct(1, 10, seed);
            let first = s.pick(&[0, 1, 2], 0);
            s.yielded(first);
            let second = s.pick(&[0, 1, 2], first);
            assert_ne!(second, first, "seed {seed}");
            s.yielded(second);
            let third = s.pick(&[0, 1, 2], second);
            assert!(third != first && third != second, "seed {seed}");
        }
    }

    #[test]
    fn only_a_quantum_begun_alone_ends_when_a_thread_is_created() {
        let mut s = Scheduler::new(SchedPolicy::RoundRobin, 0, 100);
        assert!((50..=150).contains(&s.next_quantum(false)));
        assert!(s.created_in_quantum());
        // Once: the quantum has ended.
        assert!(!s.created_in_quantum());
        assert!((50..=150).contains(&s.next_quantum(true)));
        assert!(!s.created_in_quantum());
    }

    #[test]
    fn round_robin_quanta_vary_around_the_quantum_by_seed() {
        let lengths = |seed| {
            let mut s = Scheduler::new(SchedPolicy::RoundRobin, seed, 100);
            (0..64).map(|_| s.next_quantum(true)).collect::<Vec<_>>()
        };
        let a = lengths(0);
        assert!(a.iter().all(|q| (50..=150).contains(q)), "{a:?}");
        // Not one length: a loop is not preempted at one phase for ever.
        assert!(a.iter().any(|&q| q != a[0]), "{a:?}");
        // The same seed, the same schedule.
        assert_eq!(a, lengths(0));
        assert_ne!(a, lengths(1));
    }

    #[test]
    fn a_thread_that_waited_too_long_runs_a_quantum() {
        for seed in 0..10 {
            let mut s = pct(1, 10, seed);
            let first = s.pick(&[0, 1], 0);
            let other = 1 - first;
            // Below the limit the highest priority runs on.
            s.ran(STARVATION_STEPS - 1, true);
            assert_eq!(s.pick(&[0, 1], first), first, "seed {seed}");
            // At it, the other runs one quantum, then the first again.
            s.ran(1, true);
            assert_eq!(s.pick(&[0, 1], first), other, "seed {seed}");
            s.ran(10, true);
            assert_eq!(s.pick(&[0, 1], other), first, "seed {seed}");
        }
    }

    #[test]
    fn steps_count_contended_blocks_only() {
        let mut s = Scheduler::new(SchedPolicy::RoundRobin, 0, 100);
        s.ran(40, true);
        s.ran(1000, false);
        s.ran(2, true);
        assert_eq!(s.steps(), 42);
    }
}
