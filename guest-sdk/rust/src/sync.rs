// SPDX-License-Identifier: MIT OR Apache-2.0
//! Program-level synchronization: [`Mutex`], [`Barrier`], [`Volatile`].
//!
//! Each one carries a vector clock and reports its happens-before edges to
//! the detector through the current thread's clock (WriteVC). The internal
//! `std::sync` lock that protects the clock is system synchronization and is
//! never reported. None of these poisons: a panic while a lock is held does
//! not make the lock unusable.

use crate::clock::{self, Clock};
use core::cell::UnsafeCell;
use core::fmt;
use core::ops::{Deref, DerefMut};
use std::sync::{Condvar, MutexGuard as StdGuard, PoisonError};

fn lock<T>(m: &std::sync::Mutex<T>) -> StdGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A mutual-exclusion lock whose acquire/release are happens-before edges.
///
/// **Edges:** everything before any earlier unlock (guard drop) of the
/// mutex happens before everything after a later [`lock`](Mutex::lock).
/// Clocks: lock: thread := thread ⊔ mutex (WriteVC each grown entry); unlock:
/// mutex := thread, then thread\[thread\] += 1 (WriteVC).
///
/// The protected value is reached through the guard with ordinary (untracked)
/// accesses; to have the detector check the protected data, make it (or its
/// fields) [`Tracked`](crate::Tracked):
///
/// ```
/// use lard::{thread, Mutex, Tracked};
/// static COUNTER: Mutex<Tracked<u64>> = Mutex::new(Tracked::new(0));
///
/// let hs: Vec<_> = (0..4).map(|_| thread::spawn(|| {
///     for _ in 0..100 {
///         let c = COUNTER.lock();
///         c.store(c.load() + 1);            // race-free: ordered by the lock
///     }
/// })).collect();
/// hs.into_iter().for_each(|h| h.join().unwrap());
/// assert_eq!(COUNTER.lock().load(), 400);
/// ```
pub struct Mutex<T: ?Sized> {
    /// The clock of the last release, under the internal lock.
    clock: std::sync::Mutex<Clock>,
    data: UnsafeCell<T>,
}

// SAFETY: like std::sync::Mutex: the data is reached only through a guard
// that holds the internal lock.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

/// The guard of a locked [`Mutex`]; dropping it unlocks (release).
#[must_use = "dropping the guard unlocks the mutex at once"]
pub struct MutexGuard<'a, T: ?Sized> {
    clock: StdGuard<'a, Clock>,
    data: &'a UnsafeCell<T>,
}

// SAFETY: like std::sync::MutexGuard.
unsafe impl<T: ?Sized + Sync> Sync for MutexGuard<'_, T> {}

impl<T> Mutex<T> {
    /// A new, unlocked mutex (usable in a `static`).
    pub const fn new(value: T) -> Self {
        Mutex {
            clock: std::sync::Mutex::new(Clock::new()),
            data: UnsafeCell::new(value),
        }
    }

    /// The value, consuming the mutex.
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Blocks until the lock is taken, then acquires its clock (acquire edge).
    pub fn lock(&self) -> MutexGuard<'_, T> {
        let clock = lock(&self.clock);
        clock::with_me(|me| me.acquire(&clock));
        MutexGuard {
            clock,
            data: &self.data,
        }
    }

    /// Takes the lock if it is free (with the acquire edge), else `None`
    /// (no edge).
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        let clock = match self.clock.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        clock::with_me(|me| me.acquire(&clock));
        Some(MutexGuard {
            clock,
            data: &self.data,
        })
    }

    /// The value through a unique reference (no locking, no edge).
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T: ?Sized> fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mutex").finish_non_exhaustive()
    }
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.data.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock.
        unsafe { &mut *self.data.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    /// Release: mutex := thread; thread\[thread\] += 1; then unlock.
    fn drop(&mut self) {
        let clock = &mut *self.clock;
        clock::with_me(|me| me.release_copy(clock));
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

struct BarrierState {
    count: usize,
    generation: u64,
    /// Join of the clocks of this generation's waiters so far.
    acc: Clock,
    /// Join of the last completed generation.
    out: Clock,
}

/// A barrier for `n` threads whose phases are all-to-all happens-before
/// edges.
///
/// **Edges:** every access by any of the `n` waiters before a phase's
/// [`wait`](Barrier::wait) happens before every access by any of them after
/// it. Clocks: each waiter joins its clock into the phase's accumulator and
/// ticks its own entry (release); the last one publishes the accumulator;
/// every waiter then joins it into its clock (acquire).
///
/// ```
/// use lard::{thread, Barrier, Tracked};
/// use std::sync::Arc;
/// static SLOTS: [Tracked<u64>; 2] = [const { Tracked::new(0) }; 2];
///
/// let b = Arc::new(Barrier::new(2));
/// let hs: Vec<_> = (0..2).map(|i| {
///     let b = b.clone();
///     thread::spawn(move || {
///         SLOTS[i].store(i as u64 + 1);
///         b.wait();                          // phase boundary
///         SLOTS[1 - i].load()                // race-free
///     })
/// }).collect();
/// let got: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
/// assert_eq!(got, [2, 1]);
/// ```
pub struct Barrier {
    n: usize,
    state: std::sync::Mutex<BarrierState>,
    cvar: Condvar,
}

/// What [`Barrier::wait`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// True in exactly one waiter of each phase (the one that completed it).
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier for `n` threads (`n == 0` behaves like 1, as in `std`).
    pub const fn new(n: usize) -> Self {
        Barrier {
            n,
            state: std::sync::Mutex::new(BarrierState {
                count: 0,
                generation: 0,
                acc: Clock::new(),
                out: Clock::new(),
            }),
            cvar: Condvar::new(),
        }
    }

    /// Blocks until `n` threads have called `wait` in this phase.
    pub fn wait(&self) -> BarrierWaitResult {
        let mut s = lock(&self.state);
        clock::with_me(|me| me.release_join(&mut s.acc));
        let generation = s.generation;
        s.count += 1;
        let leader = s.count >= self.n;
        if leader {
            // `out` of generation g is overwritten only when g+1 completes,
            // which needs every waiter of g to have acquired it first.
            let acc = std::mem::take(&mut s.acc);
            s.out = acc;
            s.count = 0;
            s.generation += 1;
            self.cvar.notify_all();
        } else {
            while s.generation == generation {
                s = self.cvar.wait(s).unwrap_or_else(PoisonError::into_inner);
            }
        }
        clock::with_me(|me| me.acquire(&s.out));
        BarrierWaitResult(leader)
    }
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

/// A Java-like volatile variable (LARD §4.3.2): its accesses never race, a
/// store is a release and a load an acquire.
///
/// **Edges:** everything before any store to the volatile happens before
/// everything after any later load of it (later in the order of the internal
/// lock). Clocks: store: vol := vol ⊔ thread, value := x, thread\[thread\] += 1;
/// load: thread := thread ⊔ vol. The value itself is accessed untracked.
///
/// ```
/// use lard::{thread, Tracked, Volatile};
/// static DATA: Tracked<u64> = Tracked::new(0);
/// static READY: Volatile<u64> = Volatile::new(0);
///
/// let consumer = thread::spawn(|| {
///     while READY.load() == 0 {
///         std::thread::yield_now();
///     }
///     DATA.load()                            // race-free: after the store
/// });
/// DATA.store(42);
/// READY.store(1);
/// assert_eq!(consumer.join().unwrap(), 42);
/// ```
pub struct Volatile<T: Copy> {
    inner: std::sync::Mutex<(T, Clock)>,
}

impl<T: Copy> Volatile<T> {
    /// A new volatile holding `value` (usable in a `static`; initialization
    /// is no access).
    pub const fn new(value: T) -> Self {
        Volatile {
            inner: std::sync::Mutex::new((value, Clock::new())),
        }
    }

    /// Volatile load (acquire).
    pub fn load(&self) -> T {
        let g = lock(&self.inner);
        clock::with_me(|me| me.acquire(&g.1));
        g.0
    }

    /// Volatile store (release).
    pub fn store(&self, value: T) {
        let mut g = lock(&self.inner);
        let (v, vc) = &mut *g;
        clock::with_me(|me| me.release_join(vc));
        *v = value;
    }

    /// Volatile swap: a load and a store in one step (acquire and release);
    /// returns the old value.
    pub fn swap(&self, value: T) -> T {
        let mut g = lock(&self.inner);
        let (v, vc) = &mut *g;
        clock::with_me(|me| {
            me.acquire(vc);
            me.release_join(vc)
        });
        std::mem::replace(v, value)
    }

    /// The value, consuming the volatile (no edge).
    pub fn into_inner(self) -> T {
        self.inner
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .0
    }
}

impl<T: Copy + Default> Default for Volatile<T> {
    fn default() -> Self {
        Volatile::new(T::default())
    }
}

impl<T: Copy + fmt::Debug> fmt::Debug for Volatile<T> {
    /// Formats the value without an edge.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Volatile")
            .field(&lock(&self.inner).0)
            .finish()
    }
}
