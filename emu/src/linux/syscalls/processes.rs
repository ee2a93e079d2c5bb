//! The system calls of processes: `fork`/`vfork`/`clone` without
//! `CLONE_THREAD`, `execve`, `wait4`/`waitid`, `kill` and process groups
//! (docs/processes.md).
//!
//! `fork` forks lard: the child process is a copy of the emulator with the
//! guest's memory, threads and detector state, in which only the calling
//! guest thread goes on (POSIX). Its detector starts with a copy of the
//! parent's access history, as its memory is a copy: an access in the child
//! races with an access the parent made before the fork exactly when the
//! parent's threads had not synchronised with the forking thread. `vfork`
//! and `CLONE_VM` without `CLONE_THREAD` are forks too (the child gets a
//! copy, not a share, of the memory: a `vfork` child that writes memory
//! before `execve` writes its own copy).

use super::{Call, Made, NoReturn, Ret, Val, W};
use crate::cpu::uc::Reg;
use crate::linux::kernel::Kernel;
use crate::linux::process::{self, ExecRequest};
use crate::machine::{Stop, ThreadState};
use log::warn;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use syscalls::Sysno;

const CLONE_SETTLS: u64 = 0x80000;
const CLONE_PARENT_SETTID: u64 = 0x100000;
const CLONE_CHILD_CLEARTID: u64 = 0x200000;
const CLONE_CHILD_SETTID: u64 = 0x01000000;

/// Longest argument or environment vector `execve` accepts (entries).
const MAX_ARGS: usize = 1 << 20;

fn errno() -> i64 {
    -i64::from(
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL),
    )
}

impl Kernel<'_> {
    /// The process calls.
    pub(super) fn processes_call(&mut self, c: &mut Call) -> Made {
        let sys = c.sys;
        let (a, pc) = (c.a, c.pc);
        Ok(match sys {
            Sysno::getpid => Val(i64::from(self.config.process.pid)),
            Sysno::getppid => Val(i64::from(self.config.process.ppid)),
            Sysno::fork | Sysno::vfork => self.sys_fork([libc::SIGCHLD as u64, 0, 0, 0, 0, 0], pc),
            Sysno::execve => self.sys_execve(i64::from(libc::AT_FDCWD), a[0], a[1], a[2]),
            Sysno::execveat => self.sys_execve(a[0] as i32 as i64, a[1], a[2], a[3]),
            Sysno::wait4 => {
                let status = self.opt_buf(c, a[1], 4, W)?;
                let rusage = self.opt_buf(c, a[3], 144, W)?;
                self.sys_wait4(a, status, rusage)
            }
            Sysno::waitid => {
                let info = self.opt_buf(c, a[2], 128, W)?;
                let rusage = self.opt_buf(c, a[4], 144, W)?;
                self.sys_waitid(a, info, a[2], rusage)
            }
            Sysno::setpgid | Sysno::getpgrp | Sysno::setsid | Sysno::getpgid | Sysno::getsid => {
                self.sys_pgrp(sys, a)
            }
            Sysno::kill => self.sys_kill(a[0] as i32 as i64, a[1] as i32),
            _ => return self.unsupported(c),
        })
    }

    /// `fork`, `vfork`, and `clone` without `CLONE_THREAD` (`a` are
    /// clone's arguments: flags, stack, parent tid, child tid, tls).
    pub(super) fn sys_fork(&mut self, a: [u64; 6], pc: u64) -> Ret {
        let [flags, stack, ptid, ctid, tls, _] = a;
        if let Err(why) = self.fork.prepare_fork() {
            if self.process.warned.insert(Sysno::fork as u64) {
                warn!("fork at {pc:#x}: {why}: returning -EAGAIN");
            }
            return Val(-i64::from(libc::EAGAIN));
        }
        // SAFETY: lard's emulation thread is the process's only thread
        // that the child needs: observers with worker threads stopped
        // them in prepare_fork and restart them in forked().
        let host = unsafe { libc::fork() };
        if host < 0 {
            return Val(errno());
        }
        if host > 0 {
            self.fork.forked(false);
            self.config.process.labelled = true;
            let child = self.config.process.to_guest(i64::from(host));
            if flags & CLONE_PARENT_SETTID != 0 {
                let _ = self.cpu.mem.write(ptid, &(child as u32).to_le_bytes());
            }
            return Val(child);
        }
        // The child: one thread, the caller, whose tid is the new pid.
        self.config.process = self.config.process.forked_child();
        self.signals_forked_child();
        let pid = self.config.process.pid;
        let cur = self.cpu.cur;
        for i in 0..self.cpu.threads.len() {
            if i != cur {
                self.cpu.set_state(i, ThreadState::Exited);
            }
        }
        self.cpu.threads[cur].tid = pid;
        self.process.next_tid = pid + 1;
        if stack != 0 {
            self.cpu.uc.set_reg(Reg::RSP, stack);
        }
        if flags & CLONE_SETTLS != 0 {
            self.cpu.uc.set_reg(Reg::FS_BASE, tls);
        }
        if flags & (CLONE_CHILD_SETTID | CLONE_PARENT_SETTID) != 0 {
            let at = if flags & CLONE_CHILD_SETTID != 0 {
                ctid
            } else {
                ptid
            };
            let _ = self.cpu.mem.write(at, &pid.to_le_bytes());
        }
        self.cpu.threads[cur].clear_child_tid = if flags & CLONE_CHILD_CLEARTID != 0 {
            ctid
        } else {
            0
        };
        self.fork.forked(true);
        Val(0)
    }

    /// `execve` and `execveat` (with `AT_FDCWD` or an absolute path): a
    /// program that cannot run fails here with the kernel's errno; one
    /// that can stops this process's emulation with [`Stop::Exec`].
    pub(super) fn sys_execve(&mut self, dirfd: i64, path: u64, argv: u64, envp: u64) -> Ret {
        let Some(name) = self.cpu.mem.read_cstr(path, 4096) else {
            return Val(-i64::from(libc::EFAULT));
        };
        if name.is_empty() {
            return Val(-i64::from(libc::ENOENT));
        }
        let mut file = PathBuf::from(OsStr::from_bytes(&name));
        if file.is_relative() && dirfd != i64::from(libc::AT_FDCWD) {
            // Relative to a directory descriptor: its /proc path.
            file = PathBuf::from(format!("/proc/self/fd/{dirfd}")).join(file);
        }
        if let Some(root) = &self.config.sysroot {
            if let Some(p) = super::sysroot::resolve(root, &file) {
                file = p;
            }
        }
        let mem = &self.cpu.mem;
        let read_ptr = |a: u64| mem.read_u64(a);
        let read_str = |a: u64| mem.read_cstr(a, 1 << 17);
        let Some(argv) = process::read_string_array(argv, MAX_ARGS, read_ptr, read_str) else {
            return Val(-i64::from(libc::EFAULT));
        };
        let Some(envp) = process::read_string_array(envp, MAX_ARGS, read_ptr, read_str) else {
            return Val(-i64::from(libc::EFAULT));
        };
        // The kernel's checks, so that a failing execve returns to the
        // guest; the new lard follows `#!` itself.
        if let Err(e) = process::resolve(&file, &argv) {
            return Val(-i64::from(e));
        }
        self.cpu.stop = Some(Stop::Exec(Box::new(ExecRequest {
            path: file,
            argv,
            envp,
            sigmask: self.cpu.threads[self.cpu.cur].sig.mask,
        })));
        self.cpu.uc.stop();
        NoReturn
    }

    /// `wait4(pid, status, options, rusage)`: the host's, in guest pids.
    pub(super) fn sys_wait4(&mut self, a: [u64; 6], status: u64, rusage: u64) -> Ret {
        let id = self.config.process;
        let pid = id.to_host(a[0] as i32 as i64);
        // SAFETY: status and rusage are host pointers to guest memory of
        // the sizes wait4 writes, or null.
        let r = unsafe {
            libc::syscall(
                libc::SYS_wait4,
                pid,
                status as *mut i32,
                a[2] as i32,
                rusage as *mut libc::rusage,
            )
        };
        if r < 0 {
            return Val(errno());
        }
        Val(id.to_guest(r))
    }

    /// `waitid(idtype, id, infop, options, rusage)`: the host's, in guest
    /// pids (`si_pid` of the returned siginfo too).
    pub(super) fn sys_waitid(
        &mut self,
        a: [u64; 6],
        info: u64,
        info_addr: u64,
        rusage: u64,
    ) -> Ret {
        let id = self.config.process;
        const P_PID: u64 = 1;
        const P_PGID: u64 = 2;
        let which = if a[0] == P_PID || a[0] == P_PGID {
            id.to_host(a[1] as i64) as u64
        } else {
            a[1]
        };
        // SAFETY: info and rusage are host pointers to guest memory of the
        // sizes waitid writes (a siginfo, a rusage), or null.
        let r = unsafe {
            libc::syscall(
                libc::SYS_waitid,
                a[0] as i32,
                which as i32,
                info as *mut libc::siginfo_t,
                a[3] as i32,
                rusage as *mut libc::rusage,
            )
        };
        if r < 0 {
            return Val(errno());
        }
        // si_pid is at byte 16 of a siginfo.
        if info_addr != 0 {
            if let Some(host) = self.cpu.mem.read_u32(info_addr + 16) {
                let guest = id.to_guest(i64::from(host as i32)) as u32;
                let _ = self.cpu.mem.write(info_addr + 16, &guest.to_le_bytes());
            }
        }
        Val(r)
    }

    /// `kill(pid, sig)`: this process itself as before ([`Stop::Killed`]);
    /// others, groups and `-1` through the host.
    pub(super) fn sys_kill(&mut self, pid: i64, sig: i32) -> Ret {
        let id = self.config.process;
        if pid == i64::from(id.pid) {
            return self.kill_self(sig);
        }
        // SAFETY: kill has no memory arguments.
        let r = unsafe { libc::kill(id.to_host(pid) as i32, sig) };
        if r < 0 {
            return Val(errno());
        }
        Val(0)
    }

    /// Process-group and session calls, through the host in guest pids:
    /// `setpgid`, `getpgid`, `getpgrp`, `setsid`, `getsid`.
    pub(super) fn sys_pgrp(&mut self, call: Sysno, a: [u64; 6]) -> Ret {
        let id = self.config.process;
        let args = match call {
            Sysno::setpgid => [id.to_host(a[0] as i64), id.to_host(a[1] as i64)],
            Sysno::getpgid | Sysno::getsid => [id.to_host(a[0] as i64), 0],
            _ => [0, 0],
        };
        // SAFETY: none of these calls takes a pointer.
        let r = unsafe { libc::syscall(call.id().into(), args[0], args[1]) };
        if r < 0 {
            return Val(errno());
        }
        Val(if call == Sysno::setpgid {
            r
        } else {
            id.to_guest(r)
        })
    }
}
