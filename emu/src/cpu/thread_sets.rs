//! The sets of guest threads the run loop and the kernel look up at every
//! scheduling step, futex wake or join: the runnable threads, the live
//! ones, the timed waits, the futex waiters and the exited threads by
//! their `clear_child_tid` word. Kept as states change (every change goes
//! through [`Cpu::set_state`](crate::machine::Cpu::set_state)), so that a
//! look-up costs what it finds rather than the number of threads the
//! program ever created.

use crate::machine::{Thread, ThreadState, Wait};
use std::collections::{BTreeSet, HashMap};

/// The threads (by index in `Cpu::threads`) in each state that is looked up.
#[derive(Default)]
pub struct ThreadSets {
    /// Runnable threads.
    pub runnable: BTreeSet<usize>,
    /// Threads that have not exited.
    pub live: BTreeSet<usize>,
    /// Blocked threads with a virtual-time deadline: `(deadline, index)`.
    pub timed: BTreeSet<(u64, usize)>,
    /// Threads blocked on a futex word: `(address, FIFO sequence, index)`.
    pub futex: BTreeSet<(u64, u64, usize)>,
    /// The highest index of an exited thread whose `clear_child_tid` word
    /// is the key: the last to exit with it (two threads with one word —
    /// a thread stack the C library reused — are never alive at once, so
    /// the later one was created after the earlier one exited).
    pub exited_ctid: HashMap<u64, usize>,
    /// False only while no live thread has a signal pending: set wherever
    /// one is made pending, cleared by the check that finds none
    /// (linux::signals), so that between signals the check looks at no
    /// thread.
    pub maybe_signalled: bool,
}

/// The virtual-time deadline of a wait, if it has one.
pub fn deadline(w: &Wait) -> Option<u64> {
    match *w {
        Wait::Futex { deadline, .. }
        | Wait::SigWait { deadline, .. }
        | Wait::Io { deadline, .. }
        | Wait::Retry { deadline, .. } => deadline,
        Wait::Sleep { deadline } => Some(deadline),
        Wait::Signal => None,
    }
}

impl ThreadSets {
    /// The sets of `threads`.
    pub fn of(threads: &[Thread]) -> ThreadSets {
        let mut s = ThreadSets {
            maybe_signalled: true,
            ..ThreadSets::default()
        };
        for (i, t) in threads.iter().enumerate() {
            s.enter(i, &t.state, t.clear_child_tid);
        }
        s
    }

    /// Thread `i` leaves `state`.
    pub fn leave(&mut self, i: usize, state: &ThreadState) {
        match state {
            ThreadState::Runnable => {
                self.runnable.remove(&i);
            }
            ThreadState::Blocked(w) => {
                if let Some(d) = deadline(w) {
                    self.timed.remove(&(d, i));
                }
                if let Wait::Futex { addr, seq, .. } = *w {
                    self.futex.remove(&(addr, seq, i));
                }
            }
            ThreadState::Exited => {}
        }
    }

    /// Thread `i`, whose `clear_child_tid` word is `ctid`, enters `state`.
    pub fn enter(&mut self, i: usize, state: &ThreadState, ctid: u64) {
        match state {
            ThreadState::Runnable => {
                self.runnable.insert(i);
                self.live.insert(i);
            }
            ThreadState::Blocked(w) => {
                self.live.insert(i);
                if let Some(d) = deadline(w) {
                    self.timed.insert((d, i));
                }
                if let Wait::Futex { addr, seq, .. } = *w {
                    self.futex.insert((addr, seq, i));
                }
            }
            ThreadState::Exited => {
                self.live.remove(&i);
                if ctid != 0 {
                    let last = self.exited_ctid.entry(ctid).or_insert(i);
                    *last = (*last).max(i);
                }
            }
        }
    }

    /// The threads waiting on the futex word at `addr`, oldest wait first:
    /// `(sequence, index)`.
    pub fn futex_waiters(&self, addr: u64) -> impl Iterator<Item = (u64, usize)> + '_ {
        self.futex
            .range((addr, 0, 0)..=(addr, u64::MAX, usize::MAX))
            .map(|&(_, seq, i)| (seq, i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn futex(addr: u64, seq: u64, deadline: Option<u64>) -> ThreadState {
        ThreadState::Blocked(Wait::Futex {
            addr,
            bitset: u32::MAX,
            deadline,
            seq,
        })
    }

    /// A futex wake on a reused `clear_child_tid` word is the exit of the
    /// thread that used it last.
    #[test]
    fn a_reused_exit_word_names_the_last_thread_to_exit() {
        let mut sets = ThreadSets::default();
        for (i, ctid) in [(1, 0x100), (2, 0x200), (3, 0x100)] {
            sets.enter(i, &ThreadState::Runnable, ctid);
            sets.leave(i, &ThreadState::Runnable);
            sets.enter(i, &ThreadState::Exited, ctid);
        }
        assert_eq!(sets.exited_ctid.get(&0x100), Some(&3));
        assert_eq!(sets.exited_ctid.get(&0x200), Some(&2));
    }

    /// After any sequence of state changes, the sets equal those rebuilt
    /// from the states alone.
    #[test]
    fn the_sets_follow_every_change_of_state() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let n = 12;
        let mut states: Vec<ThreadState> = (0..n).map(|_| ThreadState::Runnable).collect();
        let ctids: Vec<u64> = (0..n).map(|i| [0, 0x100, 0x200][i % 3]).collect();
        let mut sets = ThreadSets::default();
        for (i, s) in states.iter().enumerate() {
            sets.enter(i, s, ctids[i]);
        }
        for step in 0..5000u64 {
            let i = next(n as u64) as usize;
            if states[i] == ThreadState::Exited {
                continue;
            }
            let new = match next(6) {
                0 => ThreadState::Runnable,
                1 => futex(0x10 * next(3), step, None),
                2 => futex(0x10 * next(3), step, Some(next(50))),
                3 => ThreadState::Blocked(Wait::Sleep { deadline: next(50) }),
                4 => ThreadState::Blocked(Wait::Signal),
                _ if next(10) == 0 => ThreadState::Exited,
                _ => ThreadState::Runnable,
            };
            let old = std::mem::replace(&mut states[i], new);
            sets.leave(i, &old);
            sets.enter(i, &states[i], ctids[i]);
            let mut want = ThreadSets::default();
            for (j, s) in states.iter().enumerate() {
                // Exits in index order give the highest index last, as the
                // sets keep it whatever the order.
                want.enter(j, s, ctids[j]);
            }
            assert_eq!(sets.runnable, want.runnable, "step {step}");
            assert_eq!(sets.live, want.live, "step {step}");
            assert_eq!(sets.timed, want.timed, "step {step}");
            assert_eq!(sets.futex, want.futex, "step {step}");
            assert_eq!(sets.exited_ctid, want.exited_ctid, "step {step}");
        }
    }
}
