//! Two models whose results are only summed, run later and in batches on
//! whichever host thread is free: the [`Pool`] of [`Lardish`]'s baseline
//! cost models (docs/lardish.md, "Cost models").
//!
//! Each model has a *lane*: the model behind a lock and a queue of batches
//! of its operations. A batch leaves the queue only while its model is
//! locked, and is run before the lock is released, so a model runs its
//! operations in the order they were pushed, whichever thread runs them,
//! and computes exactly what one thread running them as they came would.
//!
//! The pool's worker thread runs the first lane's batches (`a`) and, when
//! it has none, the second's (`b`). The caller's thread (the model's)
//! fills batches; it runs a `b` batch itself when `b` has fallen behind
//! or when it would otherwise wait for the worker to catch up on `a`. So
//! `b`'s work goes to whichever thread has time: with two host cores and
//! the two threads' own work about even, neither waits long for the
//! other.
//!
//! [`Lardish`]: super::Lardish

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, TryLockError};
use std::thread::JoinHandle;

/// Operations per batch.
pub(super) const BATCH: usize = 1024;
/// Batches of `a` queued before the caller's thread runs `b` batches or
/// waits for the worker.
const A_QUEUED: usize = 8;
/// Batches of `b` queued before the caller's thread runs one itself.
const B_QUEUED: usize = 4;

/// A model a lane runs: its operations in order, one batch at a time.
pub(super) trait Model: Send + 'static {
    /// One operation.
    type Op: Copy + Send + 'static;
    /// The value of batch slots not yet written (never run).
    const FILLER: Self::Op;
    /// Runs `ops` in order.
    fn run_batch(&mut self, ops: &[Self::Op]);
}

/// A batch's slots (only the first `n` of a queued batch are run).
type Batch<T> = Box<[T; BATCH]>;

fn new_batch<T: Copy>(filler: T) -> Batch<T> {
    vec![filler; BATCH]
        .into_boxed_slice()
        .try_into()
        .unwrap_or_else(|_| unreachable!("the vector has BATCH operations"))
}

/// The worker stopped (it panicked): what it was running is lost.
#[derive(Debug)]
struct Dead;

/// A model and its batches not yet run.
struct Lane<M: Model> {
    model: Mutex<M>,
    /// Batches and their lengths, oldest first.
    queue: Mutex<VecDeque<(Batch<M::Op>, usize)>>,
    /// `queue`'s length (changed under its lock; read without).
    queued: AtomicUsize,
    /// Run batches, for the caller's thread to fill again.
    spent: Mutex<Vec<Batch<M::Op>>>,
}

/// Locks a mutex that no thread holds while running a model (a panic
/// cannot leave its data half changed).
fn plain<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<M: Model> Lane<M> {
    fn new(model: M) -> Lane<M> {
        Lane {
            model: Mutex::new(model),
            queue: Mutex::new(VecDeque::new()),
            queued: AtomicUsize::new(0),
            spent: Mutex::new(Vec::new()),
        }
    }

    fn queued(&self) -> usize {
        self.queued.load(SeqCst)
    }

    fn push(&self, batch: Batch<M::Op>, n: usize) {
        let mut q = plain(&self.queue);
        q.push_back((batch, n));
        self.queued.store(q.len(), SeqCst);
    }

    fn pop(&self) -> Option<(Batch<M::Op>, usize)> {
        let mut q = plain(&self.queue);
        let b = q.pop_front();
        self.queued.store(q.len(), SeqCst);
        b
    }

    /// A batch to fill: a spent one, or a new one.
    fn empty_batch(&self) -> Batch<M::Op> {
        plain(&self.spent)
            .pop()
            .unwrap_or_else(|| new_batch(M::FILLER))
    }

    /// Queues the operations of `fill` (if it has any) and gives it an
    /// empty batch; returns whether it queued one.
    fn take_batch(&self, fill: &mut Filling<M::Op>) -> bool {
        if fill.len == 0 {
            return false;
        }
        let batch = std::mem::replace(&mut fill.batch, self.empty_batch());
        self.push(batch, std::mem::take(&mut fill.len));
        true
    }

    /// Runs `batch`'s first `n` operations on `model` and keeps the batch
    /// for reuse.
    fn run(&self, model: &mut M, batch: Batch<M::Op>, n: usize) {
        model.run_batch(&batch[..n]);
        plain(&self.spent).push(batch);
    }

    /// Runs the oldest batch, unless none is queued or another thread is
    /// running this model; returns whether it ran one.
    fn try_run_one(&self) -> Result<bool, Dead> {
        let mut model = match self.model.try_lock() {
            Ok(m) => m,
            Err(TryLockError::WouldBlock) => return Ok(false),
            Err(TryLockError::Poisoned(_)) => return Err(Dead),
        };
        match self.pop() {
            Some((batch, n)) => {
                self.run(&mut model, batch, n);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Runs every queued batch and returns the model (no other thread
    /// holds the lane).
    fn into_model(self) -> M {
        let queue = self
            .queue
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let mut model = self
            .model
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        for (batch, n) in queue {
            model.run_batch(&batch[..n]);
        }
        model
    }

    /// Runs every queued batch (after the one another thread may be
    /// running) and returns the model, locked.
    fn drain(&self) -> Result<MutexGuard<'_, M>, Dead> {
        let mut model = self.model.lock().map_err(|_| Dead)?;
        while let Some((batch, n)) = self.pop() {
            self.run(&mut model, batch, n);
        }
        Ok(model)
    }
}

/// What the two threads share.
struct Shared<A: Model, B: Model> {
    a: Lane<A>,
    b: Lane<B>,
    /// The worker sleeps (wake it after queueing a batch).
    parked: AtomicBool,
    /// The caller's thread waits for `a`'s queue to shrink.
    waiting: AtomicBool,
    /// The worker must stop.
    stop: AtomicBool,
    /// The worker has stopped.
    dead: AtomicBool,
    sleep: Mutex<()>,
    /// Wakes the worker.
    wake: Condvar,
    /// Wakes the caller's thread.
    progress: Condvar,
}

impl<A: Model, B: Model> Shared<A, B> {
    /// Wakes the other thread's `cond` if its `flag` says it sleeps on it.
    /// (The sleeper sets its flag, then checks its condition, under
    /// `sleep`; the waker changes the condition, then reads the flag: one
    /// of the two sees the other.)
    fn notify(&self, flag: &AtomicBool, cond: &Condvar) {
        if flag.load(SeqCst) {
            let _g = plain(&self.sleep);
            cond.notify_one();
        }
    }

    /// The worker's loop.
    fn work(&self) -> Result<(), Dead> {
        loop {
            if self.stop.load(SeqCst) {
                return Ok(());
            }
            if self.a.try_run_one()? {
                self.notify(&self.waiting, &self.progress);
                continue;
            }
            if self.b.try_run_one()? {
                continue;
            }
            // Nothing to run, or only batches the caller's thread is
            // running (it is then about to finish them).
            let mut g = plain(&self.sleep);
            self.parked.store(true, SeqCst);
            while !self.stop.load(SeqCst) && self.a.queued() == 0 && self.b.queued() == 0 {
                g = self.wake.wait(g).unwrap_or_else(PoisonError::into_inner);
            }
            self.parked.store(false, SeqCst);
        }
    }
}

/// Marks the worker stopped and wakes the caller's thread when the worker
/// ends, however it ends.
struct Stopped<'a, A: Model, B: Model>(&'a Shared<A, B>);

impl<A: Model, B: Model> Drop for Stopped<'_, A, B> {
    fn drop(&mut self) {
        self.0.dead.store(true, SeqCst);
        let _g = plain(&self.0.sleep);
        self.0.progress.notify_all();
    }
}

/// The caller's end of a lane: the batch being filled.
struct Filling<T> {
    batch: Batch<T>,
    len: usize,
}

impl<T> Filling<T> {
    /// The next slot (the batch has room).
    #[inline(always)]
    fn next(&mut self) -> &mut T {
        self.len += 1;
        &mut self.batch[self.len - 1]
    }
}

/// Two lanes and the worker thread that runs them; see the module docs.
pub(super) struct Pool<A: Model, B: Model> {
    shared: Arc<Shared<A, B>>,
    fill_a: Filling<A::Op>,
    fill_b: Filling<B::Op>,
    handle: Option<JoinHandle<()>>,
}

impl<A: Model, B: Model> Pool<A, B> {
    /// Starts a worker thread named `name` for the models `a` and `b`.
    #[cfg(test)]
    pub fn spawn(name: &str, a: A, b: B) -> std::io::Result<Pool<A, B>> {
        Self::try_spawn(name, a, b).map_err(|_| std::io::Error::other("cannot start a thread"))
    }

    /// Starts a worker thread named `name` for the models `a` and `b`, or
    /// gives them back if no thread can be started.
    pub fn try_spawn(name: &str, a: A, b: B) -> Result<Pool<A, B>, (A, B)> {
        let shared = Arc::new(Shared {
            a: Lane::new(a),
            b: Lane::new(b),
            parked: AtomicBool::new(false),
            waiting: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            dead: AtomicBool::new(false),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
            progress: Condvar::new(),
        });
        let theirs = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _stopped = Stopped(&theirs);
                // A panic poisons the model it ran: the caller's thread
                // then joins this thread and raises its panic.
                let _ = theirs.work();
            });
        let handle = match spawned {
            Ok(h) => h,
            Err(_) => {
                // The closure, and its reference, are gone.
                let Ok(shared) = Arc::try_unwrap(shared) else {
                    unreachable!("no thread holds the lanes");
                };
                return Err((shared.a.into_model(), shared.b.into_model()));
            }
        };
        Ok(Pool {
            fill_a: Filling {
                batch: shared.a.empty_batch(),
                len: 0,
            },
            fill_b: Filling {
                batch: shared.b.empty_batch(),
                len: 0,
            },
            shared,
            handle: Some(handle),
        })
    }

    /// The next slot of `a`'s batch (queueing the batch first if full):
    /// the operation written there runs after every earlier one of `a`.
    #[inline(always)]
    pub fn slot_a(&mut self) -> &mut A::Op {
        if self.fill_a.len == BATCH {
            self.flush_a();
        }
        self.fill_a.next()
    }

    /// [`Pool::slot_a`] for `b`.
    #[inline(always)]
    pub fn slot_b(&mut self) -> &mut B::Op {
        if self.fill_b.len == BATCH {
            self.flush_b();
        }
        self.fill_b.next()
    }

    /// Queues `a`'s batch; then, while the worker is more than
    /// [`A_QUEUED`] batches behind, runs `b`'s batches or waits.
    fn flush_a(&mut self) {
        let s = &*self.shared;
        if !s.a.take_batch(&mut self.fill_a) {
            return;
        }
        s.notify(&s.parked, &s.wake);
        while s.a.queued() > A_QUEUED {
            match s.b.try_run_one() {
                Ok(true) => continue,
                Ok(false) => {}
                Err(Dead) => self.died(),
            }
            let mut g = plain(&s.sleep);
            s.waiting.store(true, SeqCst);
            while !s.dead.load(SeqCst) && s.a.queued() > A_QUEUED {
                g = s.progress.wait(g).unwrap_or_else(PoisonError::into_inner);
            }
            s.waiting.store(false, SeqCst);
            drop(g);
            if s.dead.load(SeqCst) {
                self.died();
            }
        }
    }

    /// Queues `b`'s batch, and runs `b`'s oldest batch if the worker has
    /// left more than [`B_QUEUED`] of them.
    fn flush_b(&mut self) {
        let s = &*self.shared;
        if !s.b.take_batch(&mut self.fill_b) {
            return;
        }
        s.notify(&s.parked, &s.wake);
        if s.b.queued() > B_QUEUED && s.b.try_run_one().is_err() {
            self.died();
        }
    }

    /// `f` of model `a` after every operation pushed to it so far.
    pub fn with_a<R>(&mut self, f: impl FnOnce(&mut A) -> R) -> R {
        self.flush_a();
        self.drained(|s| &s.a, f)
    }

    /// `f` of model `b` after every operation pushed to it so far.
    pub fn with_b<R>(&mut self, f: impl FnOnce(&mut B) -> R) -> R {
        self.flush_b();
        self.drained(|s| &s.b, f)
    }

    /// `f` of the model of lane `lane` once every queued batch of it ran.
    fn drained<M: Model, R>(
        &mut self,
        lane: impl FnOnce(&Shared<A, B>) -> &Lane<M>,
        f: impl FnOnce(&mut M) -> R,
    ) -> R {
        let shared = Arc::clone(&self.shared);
        let drained = lane(&shared).drain();
        match drained {
            Ok(mut m) => f(&mut m),
            Err(Dead) => self.died(),
        }
    }

    /// Stops the worker once every operation pushed so far ran, and gives
    /// the models back (a process that forks must: the child has no
    /// worker thread). A panic of the worker is raised here.
    pub fn into_models(mut self) -> (A, B) {
        self.flush_a();
        self.flush_b();
        let shared = Arc::clone(&self.shared);
        {
            let _g = plain(&shared.sleep);
            shared.stop.store(true, SeqCst);
            shared.wake.notify_one();
        }
        if let Some(h) = self.handle.take() {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
        drop(self);
        let Ok(shared) = Arc::try_unwrap(shared) else {
            unreachable!("the worker was joined and the pool dropped");
        };
        (shared.a.into_model(), shared.b.into_model())
    }

    /// The worker stopped early: it panicked; so does the caller.
    fn died(&mut self) -> ! {
        if let Some(h) = self.handle.take() {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
        panic!("the LARDISH baseline worker stopped");
    }

    /// Operations pushed and not yet queued, per lane (for `Debug`).
    pub fn filling(&self) -> (usize, usize) {
        (self.fill_a.len, self.fill_b.len)
    }
}

impl<A: Model, B: Model> Drop for Pool<A, B> {
    fn drop(&mut self) {
        let s = &*self.shared;
        s.stop.store(true, SeqCst);
        {
            let _g = plain(&s.sleep);
            s.wake.notify_one();
        }
        if let Some(h) = self.handle.take() {
            // A panic of the worker is raised by the next query; a model
            // dropped without one ignores it.
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records the order it runs its operations in.
    struct Log(Vec<u64>);

    impl Model for Log {
        type Op = u64;
        const FILLER: u64 = u64::MAX;
        fn run_batch(&mut self, ops: &[u64]) {
            self.0.extend_from_slice(ops);
        }
    }

    /// Both lanes run every operation once, in push order, whichever
    /// thread runs which batch.
    #[test]
    fn every_operation_runs_once_in_order() {
        let mut pool = Pool::spawn("lanes-test", Log(Vec::new()), Log(Vec::new())).unwrap();
        let n = (BATCH * (A_QUEUED + B_QUEUED) * 3 + 17) as u64;
        for i in 0..n {
            *pool.slot_a() = i;
            *pool.slot_b() = 2 * i;
            if i % 5000 == 0 {
                let seen = pool.with_b(|b| b.0.len() as u64);
                assert_eq!(seen, i + 1, "a query sees every operation pushed");
            }
        }
        let a = pool.with_a(|a| std::mem::take(&mut a.0));
        let b = pool.with_b(|b| std::mem::take(&mut b.0));
        assert_eq!(a, (0..n).collect::<Vec<_>>());
        assert_eq!(b, (0..n).map(|i| 2 * i).collect::<Vec<_>>());
    }

    /// Taking the models back runs every pushed operation first, and a
    /// pool spawned from them goes on where they were.
    #[test]
    fn models_taken_back_have_run_every_operation() {
        let mut pool = Pool::spawn("lanes-back", Log(Vec::new()), Log(Vec::new())).unwrap();
        let n = (BATCH * 3 + 5) as u64;
        for i in 0..n {
            *pool.slot_a() = i;
            *pool.slot_b() = i + 1;
        }
        let (a, b) = pool.into_models();
        assert_eq!(a.0, (0..n).collect::<Vec<_>>());
        assert_eq!(b.0, (1..=n).collect::<Vec<_>>());
        let mut again = Pool::spawn("lanes-again", a, b).unwrap();
        *again.slot_a() = n;
        assert_eq!(again.with_a(|a| a.0.len() as u64), n + 1);
    }

    /// Panics in the worker's model reach the caller's thread.
    struct Boom;

    impl Model for Boom {
        type Op = u8;
        const FILLER: u8 = 0;
        fn run_batch(&mut self, ops: &[u8]) {
            assert!(ops.iter().all(|&o| o == 0), "boom");
        }
    }

    #[test]
    fn a_panic_of_the_worker_reaches_the_caller() {
        let caught = std::panic::catch_unwind(|| {
            let mut pool = Pool::spawn("lanes-boom", Boom, Log(Vec::new())).unwrap();
            *pool.slot_a() = 1;
            pool.with_a(|_| ());
        });
        assert!(caught.is_err());
    }
}
