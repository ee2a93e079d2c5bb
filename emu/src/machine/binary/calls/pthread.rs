//! POSIX threads: creation and join, mutexes, read-write locks, condition
//! variables, barriers, semaphores, `pthread_once`. Each call's action at
//! entry and at return, side by side.

use super::{Entry, Pending, Return};
use crate::intercept::hb::SyncKey;
use crate::intercept::libs::LibCall;
use crate::intercept::runtime::Barrier;
use crate::machine::Machine;
use lard_detector_hw::event::LockMode;
use lard_detector_hw::event::ProgramEvent;

impl Machine {
    /// A pthread call's entry ([`Machine::binary_entry`]).
    pub(super) fn pthread_entry(&mut self, call: LibCall, e: &mut Entry) {
        let Entry {
            ret, ref mut args, ..
        } = *e;
        match call {
            LibCall::Unlock => {
                self.program(ret, ProgramEvent::Release { lock: args[0] });
                self.release(SyncKey::Object(args[0]), ret);
            }
            LibCall::RwUnlock => {
                let me = self.lang();
                let shared = self.rt().read_held.remove(&(me, args[0]));
                self.program(ret, ProgramEvent::Release { lock: args[0] });
                let key = if shared {
                    SyncKey::Readers(args[0])
                } else {
                    SyncKey::Object(args[0])
                };
                self.release(key, ret);
            }
            LibCall::CondWait => {
                self.program(ret, ProgramEvent::Release { lock: args[1] });
                self.release(SyncKey::Object(args[1]), ret);
            }
            LibCall::BarrierWait => {
                // The phase this waiter is in, kept for its return (1 +
                // parity; 0: the count is unknown, the barrier is one
                // object).
                let Some(b) = self.rt().barriers.get_mut(&args[0]) else {
                    self.release(SyncKey::Object(args[0]), ret);
                    return;
                };
                let (parity, done) = b.arrive();
                args[1] = 1 + u64::from(parity);
                self.release(SyncKey::BarrierPhase(args[0], parity), ret);
                if done {
                    // Every waiter of the phase before has returned: its
                    // parity starts again for the next phase.
                    let next = SyncKey::BarrierPhase(args[0], parity ^ 1);
                    self.rt().sync.forget(next);
                }
            }
            LibCall::CondSignal | LibCall::SemPost => {
                self.release(SyncKey::Object(args[0]), ret);
            }
            _ => {}
        }
    }

    /// A pthread call's return ([`Machine::binary_return`]).
    pub(super) fn pthread_return(&mut self, p: &Pending, r: &Return) {
        let Return { pc, cur, ok, .. } = *r;
        let a = p.args;
        match p.call {
            LibCall::ThreadCreate => {
                let child = self.rt().thread(cur).last_child.take();
                if let (true, Some(id), Some(handle)) = (ok, child, self.cpu.mem.read_u64(a[0])) {
                    self.rt().pthreads.insert(handle, id);
                }
            }
            LibCall::ThreadJoin if ok => {
                if let Some(id) = self.rt().pthreads.remove(&a[0]) {
                    self.acquire(SyncKey::ThreadEnd(id), pc);
                    self.joined(id, pc);
                }
            }
            LibCall::Lock if ok => {
                self.acquire(SyncKey::Object(a[0]), pc);
                self.program(
                    pc,
                    ProgramEvent::Acquire {
                        lock: a[0],
                        mode: LockMode::Exclusive,
                    },
                );
            }
            LibCall::RdLock if ok => {
                let me = self.lang();
                self.rt().read_held.insert((me, a[0]));
                self.acquire(SyncKey::Object(a[0]), pc);
                self.program(
                    pc,
                    ProgramEvent::Acquire {
                        lock: a[0],
                        mode: LockMode::Shared,
                    },
                );
            }
            LibCall::WrLock if ok => {
                self.acquire(SyncKey::Object(a[0]), pc);
                self.acquire(SyncKey::Readers(a[0]), pc);
                self.program(
                    pc,
                    ProgramEvent::Acquire {
                        lock: a[0],
                        mode: LockMode::Exclusive,
                    },
                );
            }
            LibCall::CondWait => {
                // Whatever the result, the mutex is held again.
                self.acquire(SyncKey::Object(a[0]), pc);
                self.acquire(SyncKey::Object(a[1]), pc);
                self.program(
                    pc,
                    ProgramEvent::Acquire {
                        lock: a[1],
                        mode: LockMode::Exclusive,
                    },
                );
            }
            LibCall::BarrierInit if ok => {
                let n = a[2] & 0xffff_ffff;
                let b = Barrier {
                    n,
                    ..Barrier::default()
                };
                self.rt().barriers.insert(a[0], b);
                self.rt().sync.forget(SyncKey::BarrierPhase(a[0], 0));
                self.rt().sync.forget(SyncKey::BarrierPhase(a[0], 1));
            }
            LibCall::SyncInit if ok => {
                self.rt().sync.forget(SyncKey::Object(a[0]));
                self.rt().sync.forget(SyncKey::Readers(a[0]));
            }
            LibCall::BarrierWait => match a[1] {
                0 => self.acquire(SyncKey::Object(a[0]), pc),
                p => self.acquire(SyncKey::BarrierPhase(a[0], (p - 1) as u8), pc),
            },
            LibCall::SemWait if ok => self.acquire(SyncKey::Object(a[0]), pc),
            LibCall::Once if ok => {
                self.acquire(SyncKey::Object(a[0]), pc);
                self.release(SyncKey::Object(a[0]), pc);
            }
            _ => {}
        }
    }
}
