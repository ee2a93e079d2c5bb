//! OpenMP mutual exclusion: `critical` (unnamed and named), `ordered`,
//! `single`'s copy, OpenMP locks. Each call's action at entry and at return,
//! side by side.

use super::{Entry, Pending, Return};
use crate::intercept::hb::SyncKey;
use crate::intercept::libs::{LibCall, OMP_CRITICAL};
use crate::machine::Machine;
use lard_detector_hw::event::LockMode;
use lard_detector_hw::event::ProgramEvent;

impl Machine {
    /// A mutual-exclusion call's entry ([`Machine::binary_entry`]).
    pub(super) fn omp_sync_entry(&mut self, call: LibCall, e: &mut Entry) {
        let Entry {
            ret, ref mut args, ..
        } = *e;
        match call {
            LibCall::OmpUnlock => {
                self.program(ret, ProgramEvent::Release { lock: args[0] });
                let key = self.in_group(args[0], SyncKey::Object(args[0]));
                self.release(key, ret);
            }
            LibCall::OmpExit(OMP_CRITICAL) => {
                let key = self.in_group(u64::from(OMP_CRITICAL), SyncKey::Construct(OMP_CRITICAL));
                self.release(key, ret);
            }
            LibCall::OmpExit(c) => self.release(SyncKey::Construct(c), ret),
            // The name's variable itself is the lock (libgomp keeps a
            // pointer-sized mutex in place), so its address identifies it.
            LibCall::OmpNamedExit => {
                let key = self.in_group(args[0], SyncKey::Object(args[0]));
                self.release(key, ret);
            }
            LibCall::OmpCopyEnd => self.release(SyncKey::Copy, ret),
            _ => {}
        }
    }

    /// A mutual-exclusion call's return ([`Machine::binary_return`]).
    pub(super) fn omp_sync_return(&mut self, p: &Pending, r: &Return) {
        let Return { pc, rax, .. } = *r;
        let a = p.args;
        match p.call {
            LibCall::OmpLock => {
                let key = self.in_group(a[0], SyncKey::Object(a[0]));
                self.acquire(key, pc);
                self.program(
                    pc,
                    ProgramEvent::Acquire {
                        lock: a[0],
                        mode: LockMode::Exclusive,
                    },
                );
            }
            LibCall::OmpEnter(OMP_CRITICAL) => {
                let key = self.in_group(u64::from(OMP_CRITICAL), SyncKey::Construct(OMP_CRITICAL));
                self.acquire(key, pc);
            }
            LibCall::OmpEnter(c) => self.acquire(SyncKey::Construct(c), pc),
            LibCall::OmpNamedEnter => {
                let key = self.in_group(a[0], SyncKey::Object(a[0]));
                self.acquire(key, pc);
            }
            LibCall::OmpCopyStart => self.acquire(SyncKey::Copy, pc),
            LibCall::OmpTestLock if rax as u32 != 0 => {
                let key = self.in_group(a[0], SyncKey::Object(a[0]));
                self.acquire(key, pc);
            }
            _ => {}
        }
    }
}
