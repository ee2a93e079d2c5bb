// SPDX-License-Identifier: MIT OR Apache-2.0
//! The runtime core: language thread ids and vector clocks, mirrored into the
//! detector with WriteVC. Everything here is "system" code in LARD's sense:
//! untracked accesses, unreported synchronization.

use core::cell::RefCell;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// A vector clock indexed by language thread id; missing entries are 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Clock(Vec<u64>);

impl Clock {
    pub(crate) const fn new() -> Self {
        Clock(Vec::new())
    }

    pub(crate) fn get(&self, i: u32) -> u64 {
        self.0.get(i as usize).copied().unwrap_or(0)
    }

    pub(crate) fn set(&mut self, i: u32, v: u64) {
        let i = i as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, 0);
        }
        self.0[i] = v;
    }

    /// self := self ⊔ other.
    pub(crate) fn join(&mut self, other: &Clock) {
        for (i, &v) in other.0.iter().enumerate() {
            if v > self.get(i as u32) {
                self.set(i as u32, v);
            }
        }
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.0.iter().enumerate().map(|(i, &v)| (i as u32, v))
    }
}

/// The language thread the current kernel thread runs.
pub(crate) struct Current {
    pub(crate) id: u32,
    pub(crate) clock: Clock,
}

static NEXT_ID: AtomicU32 = AtomicU32::new(1); // 0 is the main thread's
static MAIN_CLAIMED: AtomicBool = AtomicBool::new(false);

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// A fresh id, never handed out before.
pub(crate) fn new_id() -> u32 {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    if id == u32::MAX {
        // Do not wrap around into reused ids.
        NEXT_ID.store(u32::MAX, Ordering::Relaxed);
        panic!("lard: too many language threads");
    }
    id
}

/// The number of ids handed out so far.
#[cfg(test)]
pub(crate) fn ids_handed_out() -> u32 {
    NEXT_ID.load(Ordering::Relaxed)
}

#[cfg(test)]
pub(crate) fn main_claimed() -> bool {
    MAIN_CLAIMED.load(Ordering::Relaxed)
}

/// A kernel thread that runs no language thread yet becomes a fresh one: the
/// first one (the main thread, from the constructor) gets id 0, any other a
/// new id. Its clock is the detector's fresh clock (own entry 1, others 0);
/// the own entry is written anyway so that nothing depends on that
/// convention. No edge.
fn adopt() -> Current {
    let id = if MAIN_CLAIMED
        .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
    {
        0
    } else {
        new_id()
    };
    let mut clock = Clock::new();
    clock.set(id, 1);
    crate::set_thread(id as u64);
    crate::write_vc(id as u64, 1);
    Current { id, clock }
}

/// Runs `f` on the current language thread (adopting this kernel thread if
/// it runs none).
pub(crate) fn with_me<R>(f: impl FnOnce(&mut Current) -> R) -> R {
    CURRENT.with(|c| {
        let mut c = c.borrow_mut();
        let me = c.get_or_insert_with(adopt);
        f(me)
    })
}

/// Makes this kernel thread run language thread `id` with software clock
/// `clock`: Thread `id`, then WriteVC for the own entry and every nonzero
/// entry (a fresh identity's others are 0). No edge of its own.
pub(crate) fn enter(id: u32, clock: Clock) {
    crate::set_thread(id as u64);
    install(id, &clock);
    CURRENT.with(|c| *c.borrow_mut() = Some(Current { id, clock }));
}

fn install(id: u32, clock: &Clock) {
    for (i, v) in clock.entries() {
        if v != 0 && i != id {
            crate::write_vc(i as u64, v);
        }
    }
    crate::write_vc(id as u64, clock.get(id));
}

/// Removes the current language thread from this kernel thread (at the end
/// of a spawned thread) and returns its final clock.
pub(crate) fn leave() -> Clock {
    CURRENT
        .with(|c| c.borrow_mut().take())
        .map(|c| c.clock)
        .unwrap_or_default()
}

impl Current {
    /// me := me ⊔ from, with WriteVC for each entry that grows (acquire).
    pub(crate) fn acquire(&mut self, from: &Clock) {
        for (i, v) in from.entries() {
            if v > self.clock.get(i) {
                self.clock.set(i, v);
                crate::write_vc(i as u64, v);
            }
        }
    }

    /// me[me] += 1, with WriteVC (the second half of a release).
    pub(crate) fn tick(&mut self) {
        let v = self.clock.get(self.id) + 1;
        self.clock.set(self.id, v);
        crate::write_vc(self.id as u64, v);
    }

    /// to := to ⊔ me, then tick (release into an accumulating clock).
    pub(crate) fn release_join(&mut self, to: &mut Clock) {
        to.join(&self.clock);
        self.tick();
    }

    /// to := me, then tick (release where `to` was acquired before, e.g. a
    /// mutex: the holder's clock already includes it).
    pub(crate) fn release_copy(&mut self, to: &mut Clock) {
        to.clone_from(&self.clock);
        self.tick();
    }

    /// Fork edge: a new language thread whose clock starts from the
    /// creator's, with its own entry 1 (the creator knew 0 of a new id);
    /// then the creator ticks. Returns the child's id and clock.
    pub(crate) fn fork(&mut self) -> (u32, Clock) {
        let id = new_id();
        let mut child = self.clock.clone();
        child.set(id, child.get(id) + 1);
        self.tick();
        (id, child)
    }
}

/// Claims id 0 for the main thread before `main` runs (like the C SDK's
/// constructor), so that the main thread is 0 even if another thread uses
/// the runtime first.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static INIT_MAIN_THREAD: extern "C" fn() = init_main_thread;

#[cfg(target_os = "linux")]
extern "C" fn init_main_thread() {
    let _ = CURRENT.try_with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            if c.is_none() {
                *c = Some(adopt());
            }
        }
    });
}

/// The current language thread's id and software clock (for tests).
#[cfg(test)]
pub(crate) fn snapshot() -> (u32, Clock) {
    with_me(|me| (me.id, me.clock.clone()))
}
