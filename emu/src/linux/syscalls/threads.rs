//! Threads: `clone` of a thread (a `clone` without `CLONE_THREAD` is a
//! fork, [`super::processes`]), `exit`, `exit_group`, thread ids and names
//! (`prctl`), `arch_prctl`, scheduling on the simulated cores, and
//! `unshare`, refused.

use super::{host, Call, Fault, Made, NoReturn, Ret, Val, EFAULT, EINVAL, ENOMEM, ENOSYS, EPERM};
use crate::cpu::uc::{Context, Reg};
use crate::linux::kernel::{Kernel, Notice};
use crate::machine::{Stop, Thread, ThreadState};
use log::warn;
use syscalls::Sysno;

const CLONE_VM: u64 = 0x100;
const CLONE_SETTLS: u64 = 0x80000;
const CLONE_PARENT_SETTID: u64 = 0x100000;
const CLONE_CHILD_CLEARTID: u64 = 0x200000;
const CLONE_CHILD_SETTID: u64 = 0x01000000;
const CLONE_THREAD: u64 = 0x10000;

impl Kernel<'_> {
    /// The thread calls.
    pub(super) fn threads_call(&mut self, c: &mut Call) -> Made {
        let (a, pc) = (c.a, c.pc);
        Ok(match c.sys {
            Sysno::sched_yield => {
                self.cpu.sched.yielded(self.cpu.cur);
                self.cpu.stop = Some(Stop::Preempt);
                self.cpu.uc.stop();
                Val(0)
            }
            Sysno::clone if a[0] & CLONE_THREAD == 0 => self.sys_fork(a, pc),
            Sysno::clone => self.sys_clone(a, pc),
            Sysno::exit => self.sys_exit(a[0] as i32, pc),
            Sysno::exit_group => {
                self.cpu.stop = Some(Stop::ExitGroup(a[0] as i32));
                self.cpu.uc.stop();
                NoReturn
            }
            Sysno::arch_prctl => self.sys_arch_prctl(a),
            // The guest's threads and processes share the emulator's one
            // host process: a thread's working directory, namespaces or
            // file table cannot be its own.  Refused as a seccomp sandbox
            // (Docker's default profile) refuses it, which programs handle.
            Sysno::unshare => Val(-EPERM),
            Sysno::gettid => Val(i64::from(self.cpu.threads[self.cpu.cur].tid)),
            Sysno::sched_setaffinity => Val(0),
            Sysno::sched_getaffinity => {
                let n = (a[1] as usize).min(8);
                let cores = u64::from(self.config.cores.clamp(1, 64));
                let mask = if cores == 64 {
                    u64::MAX
                } else {
                    (1u64 << cores) - 1
                };
                if n < 8 {
                    return Ok(Val(-EINVAL));
                }
                if self.cpu.mem.write(a[2], &mask.to_le_bytes()).is_none() {
                    return Err(Fault);
                }
                Val(8)
            }
            Sysno::set_tid_address => {
                self.cpu.threads[self.cpu.cur].clear_child_tid = a[0];
                Val(i64::from(self.cpu.threads[self.cpu.cur].tid))
            }
            Sysno::prctl => self.sys_prctl(a),
            // getcpu: the thread's simulated core, node 0
            Sysno::getcpu => {
                let core = u32::from(self.cpu.threads[self.cpu.cur].core);
                if a[0] != 0 && self.cpu.mem.write(a[0], &core.to_le_bytes()).is_none() {
                    return Err(Fault);
                }
                if a[1] != 0 && self.cpu.mem.write(a[1], &0u32.to_le_bytes()).is_none() {
                    return Err(Fault);
                }
                Val(0)
            }
            Sysno::set_robust_list => Val(0),
            Sysno::rseq | Sysno::clone3 | Sysno::membarrier | Sysno::get_robust_list => {
                Val(-ENOSYS)
            }
            _ => return self.unsupported(c),
        })
    }

    /// `prctl(option, ...)`: the thread's name is the emulated thread's;
    /// process attributes that are the host process's (dumpable, parent
    /// death signal, no_new_privs, timer slack, the capability bounding set)
    /// are the host's; anonymous-mapping names are not kept (`EINVAL`, as a
    /// kernel without `CONFIG_ANON_VMA_NAME`).
    fn sys_prctl(&mut self, a: [u64; 6]) -> Ret {
        const PR_SET_NAME: u64 = 15;
        const PR_GET_NAME: u64 = 16;
        match a[0] {
            PR_SET_NAME => {
                // The kernel copies at most 15 bytes, terminated or not.
                let name = self
                    .cpu
                    .mem
                    .read_cstr(a[1], 16)
                    .or_else(|| self.cpu.mem.slice(a[1], 15).map(<[u8]>::to_vec));
                let Some(name) = name else {
                    return Val(-EFAULT);
                };
                self.cpu.threads[self.cpu.cur].name = crate::machine::thread_name(&name);
                Val(0)
            }
            PR_GET_NAME => {
                let name = self.cpu.threads[self.cpu.cur].name;
                if self.cpu.mem.write(a[1], &name).is_none() {
                    return Val(-EFAULT);
                }
                Val(0)
            }
            // PR_SET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE,
            // PR_CAPBSET_READ, PR_SET_TIMERSLACK, PR_GET_TIMERSLACK,
            // PR_SET_NO_NEW_PRIVS, PR_GET_NO_NEW_PRIVS, PR_SET_THP_DISABLE,
            // PR_GET_THP_DISABLE: integer arguments, the host process's
            1 | 3 | 4 | 23 | 29 | 30 | 38 | 39 | 41 | 42 => {
                Val(host(Sysno::prctl, [a[0], a[1], a[2], a[3], a[4], 0]))
            }
            // PR_GET_PDEATHSIG: an int out
            2 => {
                let mut v = 0i32;
                let r = host(Sysno::prctl, [a[0], &mut v as *mut i32 as u64, 0, 0, 0, 0]);
                if r == 0 && self.cpu.mem.write(a[1], &v.to_le_bytes()).is_none() {
                    return Val(-EFAULT);
                }
                Val(r)
            }
            _ => Val(-EINVAL),
        }
    }

    fn sys_arch_prctl(&mut self, a: [u64; 6]) -> Ret {
        match a[0] {
            0x1001 => self.cpu.uc.set_reg(Reg::GS_BASE, a[1]),
            0x1002 => self.cpu.uc.set_reg(Reg::FS_BASE, a[1]),
            0x1003 | 0x1004 => {
                let r = if a[0] == 0x1003 {
                    Reg::FS_BASE
                } else {
                    Reg::GS_BASE
                };
                let v = self.cpu.uc.reg(r);
                if self.cpu.mem.write(a[1], &v.to_le_bytes()).is_none() {
                    return Val(-EFAULT);
                }
            }
            _ => return Val(-EINVAL),
        }
        Val(0)
    }

    fn sys_clone(&mut self, a: [u64; 6], pc: u64) -> Ret {
        let [flags, stack, ptid, ctid, tls, _] = a;
        if flags & CLONE_VM == 0 {
            if self.process.warned.insert(Sysno::clone as u64) {
                warn!("clone with CLONE_THREAD but without CLONE_VM is not supported: returning -EINVAL");
            }
            return Val(-EINVAL);
        }
        let tid = self.process.next_tid;
        self.process.next_tid += 1;
        let Ok(mut ctx) = Context::new(self.cpu.uc) else {
            return Val(-ENOMEM);
        };
        if ctx.save(self.cpu.uc).is_err() {
            return Val(-ENOMEM);
        }
        // Inside the hook RIP still addresses the `syscall` (0f 05).
        let next = if self.cpu.mem.slice(pc, 2) == Some(&[0x0f, 0x05][..]) {
            pc + 2
        } else {
            pc
        };
        ctx.set_reg(Reg::RIP, next);
        ctx.set_reg(Reg::RAX, 0);
        if stack != 0 {
            ctx.set_reg(Reg::RSP, stack);
        }
        if flags & CLONE_SETTLS != 0 {
            ctx.set_reg(Reg::FS_BASE, tls);
        }
        if flags & CLONE_PARENT_SETTID != 0
            && self.cpu.mem.write(ptid, &tid.to_le_bytes()).is_none()
        {
            return Val(-EFAULT);
        }
        if flags & CLONE_CHILD_SETTID != 0 && self.cpu.mem.write(ctid, &tid.to_le_bytes()).is_none()
        {
            return Val(-EFAULT);
        }
        let core = (self.cpu.threads.len() % usize::from(self.config.cores.max(1))) as u16;
        let parent = self.cpu.threads[self.cpu.cur].tid;
        let child = self.cpu.push_thread(Thread {
            tid,
            ctx,
            state: ThreadState::Runnable,
            clear_child_tid: if flags & CLONE_CHILD_CLEARTID != 0 {
                ctid
            } else {
                0
            },
            lthread: None,
            core,
            insns: 0,
            parent: Some(parent),
            restart_deadline: None,
            partial_write: None,
            ctx_changed: false,
            name: self.cpu.threads[self.cpu.cur].name,
            sig: self.cpu.threads[self.cpu.cur].sig.inherited(),
        });
        self.notify(Notice::ThreadCreated { child, stack, pc });
        Val(i64::from(tid))
    }

    fn sys_exit(&mut self, status: i32, pc: u64) -> Ret {
        self.notify(Notice::ThreadExiting { pc });
        let ctid = self.cpu.threads[self.cpu.cur].clear_child_tid;
        self.cpu.set_state(self.cpu.cur, ThreadState::Exited);
        self.process.last_exit_status = status;
        if ctid != 0 && self.cpu.mem.write(ctid, &0u32.to_le_bytes()).is_some() {
            self.futex_wake(ctid, 1, u32::MAX, pc);
        }
        self.cpu.stop = Some(Stop::ThreadExit);
        self.cpu.uc.stop();
        NoReturn
    }
}
