//! POSIX threads: creation and join, mutexes, read-write locks, condition
//! variables, barriers, semaphores, `pthread_once`. Each call's action at
//! entry and at return, side by side.

use super::{Entry, Pending, Return};
use crate::intercept::hb::SyncKey;
use crate::intercept::libs::LibCall;
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
            LibCall::CondSignal | LibCall::SemPost | LibCall::BarrierWait => {
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
            LibCall::BarrierWait => self.acquire(SyncKey::Object(a[0]), pc),
            LibCall::SemWait if ok => self.acquire(SyncKey::Object(a[0]), pc),
            LibCall::Once if ok => {
                self.acquire(SyncKey::Object(a[0]), pc);
                self.release(SyncKey::Object(a[0]), pc);
            }
            _ => {}
        }
    }
}
