//! The worker pool of the many-run commands (`lard explore`,
//! `lard campaign run` and the commands that make campaigns: `lard jumble`,
//! `lard accuracy`, `lard cc-accuracy`): `jobs` threads take job numbers
//! 0, 1, 2, … in order, each running one job at a time.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// What a worker does after a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Take the next job.
    Next,
    /// Take no more jobs (the other workers finish theirs and go on).
    Stop,
}

/// Whether the user interrupted (the flag of [`crate::cmd::interrupt_flag`]
/// holds a signal number).
pub fn interrupted(flag: &Option<Arc<AtomicUsize>>) -> bool {
    flag.as_ref()
        .is_some_and(|f| f.load(Ordering::Relaxed) != 0)
}

/// Runs `work(i)` for the job numbers `i` = 0, 1, 2, … while `more(i)`,
/// on `jobs` threads (at least one); a thread takes no more jobs once the
/// user interrupted or its job returned [`Flow::Stop`]. Returns when every
/// thread has ended.
pub fn run(
    jobs: usize,
    interrupt: &Option<Arc<AtomicUsize>>,
    more: impl Fn(u64) -> bool + Sync,
    work: impl Fn(u64) -> Flow + Sync,
) {
    let next = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                if interrupted(interrupt) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if !more(i) || work(i) == Flow::Stop {
                    break;
                }
            });
        }
    });
}
