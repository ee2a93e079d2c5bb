// SPDX-License-Identifier: MIT OR Apache-2.0
//! Language threads: [`spawn`] (fork edge) and [`JoinHandle::join`] (join
//! edge), on top of `std::thread`.
//!
//! Ids: the main thread is **0** (claimed before `main`), every [`spawn`]
//! gets the next id (1, 2, ...), and a kernel thread that was not created by
//! [`spawn`] but uses the runtime is adopted under a fresh id with no edge.
//! Ids are dense and never reused.
//!
//! ```
//! use lard::{thread, Tracked};
//! static X: Tracked<u64> = Tracked::new(0);
//!
//! X.store(1);                               // before the spawn ...
//! let h = thread::spawn(|| {
//!     X.store(X.load() + 1);                // ... happens before the child,
//!     thread::current_id()
//! });
//! let child = h.join().unwrap();            // and the child happens before
//! assert_eq!(X.load(), 2);                  // everything after the join.
//! assert_ne!(child, thread::current_id());
//! ```

use crate::clock::{self, Clock};
use std::any::Any;
use std::panic::{self, AssertUnwindSafe};

/// The language thread id of the calling kernel thread (adopting it under a
/// fresh id if it runs none yet). The main thread's is 0.
pub fn current_id() -> u32 {
    clock::with_me(|me| me.id)
}

/// An owned permission to join a language thread (see [`spawn`]).
#[must_use = "a language thread that is never joined creates no join edge"]
pub struct JoinHandle<T> {
    id: u32,
    inner: std::thread::JoinHandle<(std::thread::Result<T>, Clock)>,
}

/// Spawns a new language thread running `f` on a new kernel thread
/// (`std::thread::spawn`) and returns a handle to join it.
///
/// **Fork edge:** everything the caller did before `spawn` happens before
/// everything `f` does; nothing the caller does after `spawn` is ordered with
/// `f`. Clocks: child := caller's clock with child's own entry 1 (the caller
/// knew 0 of a new id); then the caller's own entry += 1 (WriteVC). The child
/// issues `Thread child` first, then WriteVC for its own entry and every
/// nonzero entry.
///
/// Panics if the kernel thread cannot be created (like `std::thread::spawn`).
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let (id, child) = clock::with_me(|me| me.fork());
    let inner = std::thread::spawn(move || {
        clock::enter(id, child);
        let result = panic::catch_unwind(AssertUnwindSafe(f));
        (result, clock::leave())
    });
    JoinHandle { id, inner }
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to finish and returns what `f` returned, or the
    /// panic payload (like `std::thread::JoinHandle::join`).
    ///
    /// **Join edge:** everything the thread did (also when it panicked)
    /// happens before everything the caller does after `join`. Clocks:
    /// caller := caller ⊔ the thread's final clock (WriteVC for each entry
    /// that grows).
    pub fn join(self) -> std::thread::Result<T> {
        let (result, final_clock) = match self.inner.join() {
            Ok(r) => r,
            // Only a panic of the runtime itself gets here.
            Err(e) => return Err(e as Box<dyn Any + Send>),
        };
        clock::with_me(|me| me.acquire(&final_clock));
        result
    }

    /// The language thread id of the spawned thread.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Whether the thread has finished running `f` (no edge).
    pub fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

impl<T> std::fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinHandle")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}
