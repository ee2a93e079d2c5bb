// SPDX-License-Identifier: MIT OR Apache-2.0
//! Counts the items of a slice that satisfy a predicate with worker
//! threads, each adding its count to a shared atomic total.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// Worker threads (from the build script).
pub const WORKERS: &str = env!("TALLY_WORKERS");

/// How many items of `items` satisfy `pred`, counted by worker threads.
///
/// ```
/// assert_eq!(tally::tally(&[1, 2, 3, 4], |x| x % 2 == 0), 2);
/// ```
pub fn tally<T: Sync>(items: &[T], pred: impl Fn(&T) -> bool + Sync) -> usize {
    let total = AtomicUsize::new(0);
    let workers: usize = WORKERS.parse().unwrap();
    let per = items.len().div_ceil(workers).max(tally_macros::chunk!());
    thread::scope(|s| {
        for part in items.chunks(per) {
            let (total, pred) = (&total, &pred);
            s.spawn(move || {
                let n = part.iter().filter(|x| pred(x)).count();
                total.fetch_add(n, Ordering::Relaxed);
            });
        }
    });
    total.into_inner()
}
