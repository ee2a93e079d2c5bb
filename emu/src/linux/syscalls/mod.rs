//! Linux x86-64 system calls for static glibc, musl and Rust std programs.
//!
//! File and terminal I/O pass through to the host: guest memory *is* host
//! memory (see [`crate::cpu::memory`]), so a pointer argument is translated and
//! handed to the host kernel, and struct layouts are the host's own.
//! Memory, threads, futexes, time and randomness are emulated, the last two
//! deterministically: clocks run on virtual time (1 ns per retired
//! instruction plus virtual sleeps) and getrandom/AT_RANDOM come from the
//! seed. An unknown call returns -ENOSYS with a one-time warning, or stops the
//! guest under `--strict-syscalls`.

use crate::binary::objects::{LoadedObject, ObjectKind};
use crate::cpu::memory::{page_ceil, page_floor, MemError, PAGE};
use crate::cpu::sched::SplitMix64;
use crate::cpu::uc::{prot, Context, Reg};
use crate::linux::sysroot;
use crate::machine::{Machine, Stop, Thread, ThreadState, Wait};
use lard_detector_hw::event::{EventKind, LowLevelSync, ProgramEvent};
use log::warn;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use syscalls::Sysno;

/// The top of a process's address space (x86-64, 4-level paging): an
/// `mmap` hint reaching above it is ignored, as natively.
const TASK_SIZE: u64 = 0x7fff_ffff_f000;

const ENOENT: i64 = 2;
const EBADF: i64 = 9;
const EINTR: i64 = 4;
const EAGAIN: i64 = 11;
const ENOMEM: i64 = 12;
const EFAULT: i64 = 14;
const EINVAL: i64 = 22;
const ENOTTY: i64 = 25;
const ENOSYS: i64 = 38;
const ETIMEDOUT: i64 = 110;

const CLONE_VM: u64 = 0x100;
const CLONE_SETTLS: u64 = 0x80000;
const CLONE_PARENT_SETTID: u64 = 0x100000;
const CLONE_CHILD_CLEARTID: u64 = 0x200000;
const CLONE_CHILD_SETTID: u64 = 0x01000000;
const CLONE_THREAD: u64 = 0x10000;

const MAP_SHARED: u64 = 0x01;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const MAP_FIXED_NOREPLACE: u64 = 0x100000;

pub(in crate::linux) mod facts;

pub use super::sysnames::name;

/// Result of a system call: a value for RAX, or no return (blocked, exited).
pub(super) enum Ret {
    Val(i64),
    NoReturn,
}

pub(super) use Ret::{NoReturn, Val};

fn host_ret(r: i64) -> i64 {
    if r < 0 {
        -i64::from(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(EINVAL as i32),
        )
    } else {
        r
    }
}

/// Calls the host kernel with already-translated arguments.
fn host(call: Sysno, a: [u64; 6]) -> i64 {
    // SAFETY: the caller translated every pointer argument to a valid host
    // pointer into guest memory of the size the call uses.
    host_ret(unsafe { libc::syscall(call.id().into(), a[0], a[1], a[2], a[3], a[4], a[5]) })
}

impl Machine {
    /// Whether `fd` is a host descriptor lard owns ([`crate::linux::hostfd`]).
    fn is_host_fd(&self, fd: u64) -> bool {
        i32::try_from(fd).is_ok_and(|fd| self.config.host_fds.contains(&fd))
    }

    /// A host pointer for `len` guest bytes with permission `need`, or None.
    fn ptr(&self, addr: u64, len: u64, need: u32) -> Option<u64> {
        if len == 0 {
            return Some(addr);
        }
        self.cpu.mem.host_ptr(addr, len, need).map(|p| p as u64)
    }

    /// A host pointer to a NUL-terminated guest string.
    fn cstr(&self, addr: u64) -> Option<u64> {
        let s = self.cpu.mem.read_cstr(addr, 4096)?;
        self.ptr(addr, s.len() as u64 + 1, prot::READ)
    }

    fn warn_unknown(&mut self, nr: u64, pc: u64) -> Ret {
        if self.config.strict_syscalls {
            self.cpu.stop = Some(Stop::StrictSyscall(nr));
            self.cpu.uc.stop();
            return NoReturn;
        }
        if self.process.warned.insert(nr) {
            let at = self.obs.objects.describe_pc(pc).unwrap_or_default();
            warn!(
                "unsupported system call {nr} ({}) at {pc:#x} {at}: returning -ENOSYS",
                name(nr)
            );
        }
        Val(-ENOSYS)
    }

    /// Virtual monotonic time in ns.
    pub fn monotonic_ns(&self) -> u64 {
        self.cpu.vtime
    }

    fn write_timespec(&self, addr: u64, ns: u64) -> bool {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
        b[8..].copy_from_slice(&(ns % 1_000_000_000).to_le_bytes());
        self.cpu.mem.write(addr, &b).is_some()
    }

    pub(in crate::linux) fn read_timespec(&self, addr: u64) -> Option<u64> {
        let s = self.cpu.mem.read_u64(addr)?;
        let ns = self.cpu.mem.read_u64(addr + 8)?;
        Some(s.saturating_mul(1_000_000_000).saturating_add(ns))
    }

    pub(crate) fn clock_ns(&self, clock: u64) -> Option<u64> {
        match clock {
            0 | 5 | 8 => Some(self.process.realtime_base + self.cpu.vtime),
            1 | 4 | 6 | 7 | 9 => Some(self.cpu.vtime),
            2 => Some(self.obs.stats.insns),
            3 => Some(self.cpu.threads[self.cpu.cur].insns),
            _ => None,
        }
    }

    /// Blocks the current thread; the run loop picks another.
    pub(in crate::linux) fn block(&mut self, w: Wait) -> Ret {
        if self.obs.report_objects {
            let pc = self.cpu.uc.reg(Reg::RIP);
            self.obs.stats.program_events += 1;
            self.emit(pc, EventKind::Program(ProgramEvent::Block));
        }
        self.cpu.threads[self.cpu.cur].state = ThreadState::Blocked(w);
        self.cpu.stop = Some(Stop::Blocked);
        self.cpu.uc.stop();
        NoReturn
    }

    /// Wakes up to `n` futex waiters on `addr` whose mask intersects `bitset`.
    pub fn futex_wake(&mut self, addr: u64, n: u64, bitset: u32, pc: u64) -> u64 {
        let mut waiters: Vec<(u64, usize)> = self
            .cpu
            .threads
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t.state {
                ThreadState::Blocked(Wait::Futex {
                    addr: a,
                    bitset: b,
                    seq,
                    ..
                }) if a == addr && b & bitset != 0 => Some((seq, i)),
                _ => None,
            })
            .collect();
        waiters.sort_unstable();
        waiters.truncate(n.min(usize::MAX as u64) as usize);
        // The waker's release comes before the woken threads' acquires.
        if !waiters.is_empty() {
            self.emit_sync(pc, LowLevelSync::FutexWake { addr });
        }
        for &(_, i) in &waiters {
            self.wake(i, 0, pc);
        }
        waiters.len() as u64
    }

    /// Makes thread `i` runnable with system-call result `ret`.
    /// Wakes waiting thread `i` with `ret` as its call's result (a
    /// signal's `EINTR`).
    pub(crate) fn wake_thread(&mut self, i: usize, ret: i64) {
        self.wake(i, ret, 0);
    }

    fn wake(&mut self, i: usize, ret: i64, pc: u64) {
        let addr = match self.cpu.threads[i].state {
            ThreadState::Blocked(Wait::Futex { addr, .. }) => Some(addr),
            _ => None,
        };
        self.cpu.threads[i].state = ThreadState::Runnable;
        self.cpu.threads[i].ctx.set_reg(Reg::RAX, ret as u64);
        self.cpu.threads[i].ctx_changed = true;
        let origin = self.cpu.threads[i].origin();
        if self.obs.report_objects {
            self.obs.stats.program_events += 1;
            self.emit_from(origin, pc, EventKind::Program(ProgramEvent::Wake));
        }
        if let (Some(addr), 0) = (addr, ret) {
            let joined = self
                .cpu
                .threads
                .iter()
                .find(|c| c.state == ThreadState::Exited && c.clear_child_tid == addr)
                .map(|c| c.tid);
            let mut events = vec![LowLevelSync::FutexWaitDone { addr }];
            if let Some(child) = joined {
                events.push(LowLevelSync::ThreadJoin { child });
            }
            for s in events {
                self.obs.stats.sync_events += 1;
                if self.obs.report_sync {
                    self.emit_from(origin, pc, EventKind::Sync(s));
                }
            }
        }
    }

    /// Wakes threads whose timed wait expired at the current virtual time.
    pub fn expire_timeouts(&mut self) {
        let now = self.cpu.vtime;
        for i in 0..self.cpu.threads.len() {
            let deadline = match self.cpu.threads[i].state {
                ThreadState::Blocked(Wait::Futex {
                    deadline: Some(d), ..
                }) => Some((d, -ETIMEDOUT)),
                ThreadState::Blocked(Wait::Sleep { deadline }) => Some((deadline, 0)),
                ThreadState::Blocked(Wait::SigWait {
                    deadline: Some(d),
                    mask,
                    ..
                }) => {
                    if d <= now {
                        self.cpu.threads[i].sig.mask = mask;
                    }
                    Some((d, -EAGAIN))
                }
                // A host wait whose timeout passed returns 0 (nothing
                // ready), a futex wait in shared memory -ETIMEDOUT.
                ThreadState::Blocked(Wait::Io {
                    deadline: Some(d), ..
                }) => Some((d, 0)),
                ThreadState::Blocked(Wait::Retry {
                    deadline: Some(d),
                    expired,
                }) => Some((d, expired)),
                _ => None,
            };
            if let Some((d, ret)) = deadline {
                if d <= now {
                    self.wake(i, ret, 0);
                }
            }
        }
    }

    /// Emulates the system call the current thread is executing.
    pub fn syscall(&mut self) {
        self.obs.stats.syscalls += 1;
        let uc = self.cpu.uc;
        let nr = uc.reg(Reg::RAX);
        let a = [
            uc.reg(Reg::RDI),
            uc.reg(Reg::RSI),
            uc.reg(Reg::RDX),
            uc.reg(Reg::R10),
            uc.reg(Reg::R8),
            uc.reg(Reg::R9),
        ];
        let pc = uc.reg(Reg::RIP);
        let cur = self.cpu.cur;
        if let Val(v) = self.dispatch(nr, a, pc) {
            uc.set_reg(Reg::RAX, v as u64);
            self.note_host_eintr(cur, nr, v);
        }
        self.stop_for_signals(cur);
        // A restarted call's deadline is for that call only.
        if let Some(t) = self.cpu.threads.get_mut(cur) {
            t.restart_deadline = None;
        }
    }

    /// Runs one system call. A buffer that spans several host mappings
    /// (adjacent guest mappings are separate host mappings) is passed to the
    /// host through a bounce copy, written back after the call.
    fn dispatch(&mut self, nr: u64, a: [u64; 6], pc: u64) -> Ret {
        let facts = facts::facts_of(nr);
        let mut once = |m: &mut Machine, a: [u64; 6]| m.dispatch_once(nr, a, pc);
        let waited = match facts.host_wait {
            Some(wait) => self.host_wait(wait, a, &mut once),
            None => None,
        };
        let r = match waited {
            Some(r) => r,
            None => self.dispatch_once(nr, a, pc),
        };
        // lard ignores SIGPIPE; the guest gets it as the kernel would send
        // it: a write to a pipe with no reader kills a guest that left
        // SIGPIPE at its default action (`yes | head` ends quietly).
        if matches!(r, Val(e) if e == -i64::from(libc::EPIPE))
            && facts.writes_fd
            && self.default_action(libc::SIGPIPE)
        {
            return self.kill_self(libc::SIGPIPE);
        }
        r
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

    /// `close_range(first, last, flags)` on the guest's descriptors: the
    /// range less lard's own, in pieces.
    fn sys_close_range(&mut self, first: u64, last: u64, flags: u64) -> Ret {
        if first > last || first > u64::from(u32::MAX) {
            return Val(-EINVAL);
        }
        let last = last.min(u64::from(u32::MAX));
        let mut own: Vec<u64> = self
            .config
            .host_fds
            .iter()
            .map(|&f| f as u64)
            .filter(|&f| f >= first && f <= last)
            .collect();
        own.sort_unstable();
        let mut from = first;
        for f in own.into_iter().chain(std::iter::once(last + 1)) {
            if from < f {
                let r = host(Sysno::close_range, [from, f - 1, flags, 0, 0, 0]);
                if r < 0 {
                    return Val(r);
                }
            }
            from = f + 1;
        }
        Val(0)
    }

    /// One call, with bounce copies written back.
    fn dispatch_once(&mut self, nr: u64, a: [u64; 6], pc: u64) -> Ret {
        let Some(sys) = usize::try_from(nr).ok().and_then(Sysno::new) else {
            return self.warn_unknown(nr, pc);
        };
        let mut bounces = Vec::new();
        let r = self.dispatch_inner(sys, nr, a, pc, &mut bounces);
        for (addr, buf, write) in bounces {
            if write {
                self.cpu.mem.scatter(addr, &buf);
            }
        }
        r
    }

    /// Whether the guest left `sig` at its default action.
    fn default_action(&self, sig: i32) -> bool {
        self.process
            .sigactions
            .get(sig as usize)
            .is_none_or(|act| act[..8] == [0u8; 8])
    }

    /// A host pointer for a guest buffer, through a bounce copy if needed.
    fn ptr_or_bounce(
        &self,
        addr: u64,
        len: u64,
        need: u32,
        bounces: &mut Vec<(u64, Vec<u8>, bool)>,
    ) -> Option<u64> {
        if let Some(p) = self.ptr(addr, len, need) {
            return Some(p);
        }
        if len > 1 << 30 {
            return None;
        }
        let buf = self.cpu.mem.gather(addr, len, need)?;
        let p = buf.as_ptr() as u64;
        bounces.push((addr, buf, need & prot::WRITE != 0));
        Some(p)
    }

    fn dispatch_inner(
        &mut self,
        sys: Sysno,
        nr: u64,
        a: [u64; 6],
        pc: u64,
        bounces: &mut Vec<(u64, Vec<u8>, bool)>,
    ) -> Ret {
        let efault = Val(-EFAULT);
        macro_rules! p {
            ($addr:expr, $len:expr, $need:expr) => {
                match self.ptr_or_bounce($addr, $len, $need, bounces) {
                    Some(p) => p,
                    None => return efault,
                }
            };
        }
        macro_rules! s {
            ($addr:expr) => {
                match self.cstr($addr) {
                    Some(p) => p,
                    None => return efault,
                }
            };
        }
        // Paths the guest looks up, under --sysroot first (the host strings
        // live in `keep` until the call returns).
        let mut keep: Vec<std::ffi::CString> = Vec::new();
        macro_rules! path {
            ($addr:expr) => {
                match self.path_arg($addr, &mut keep) {
                    Some(p) => p,
                    None => return efault,
                }
            };
        }
        const R: u32 = prot::READ;
        const W: u32 = prot::WRITE;
        match sys {
            // read, pread64
            Sysno::read | Sysno::pread64 => {
                Val(host(sys, [a[0], p!(a[1], a[2], W), a[2], a[3], 0, 0]))
            }
            // write, pwrite64 (a replay under --gdb drops stdout and stderr
            // output the guest already wrote: Machine::quiet_output)
            Sysno::write | Sysno::pwrite64 if self.quiet(a[0]) => {
                // (The buffer must be readable, as for the real write.)
                let _ = p!(a[1], a[2], R);
                Val(a[2] as i64)
            }
            Sysno::write | Sysno::pwrite64 => {
                Val(host(sys, [a[0], p!(a[1], a[2], R), a[2], a[3], 0, 0]))
            }
            Sysno::open => self.sys_openat(libc::AT_FDCWD as u64, a[0], a[1], a[2]),
            // close, dup, dup2, dup3 of a descriptor lard owns: not open, as
            // far as the guest knows (linux::hostfd).
            Sysno::close | Sysno::dup | Sysno::dup2 | Sysno::dup3 if self.is_host_fd(a[0]) => {
                Val(-EBADF)
            }
            Sysno::dup2 | Sysno::dup3 if self.is_host_fd(a[1]) => Val(-EBADF),
            Sysno::close
            | Sysno::lseek
            | Sysno::dup
            | Sysno::dup2
            | Sysno::dup3
            | Sysno::fsync
            | Sysno::fdatasync
            | Sysno::ftruncate
            | Sysno::umask
            | Sysno::fchdir
            | Sysno::fadvise64 => Val(host(sys, a)),
            // stat, lstat
            Sysno::stat | Sysno::lstat => {
                Val(host(sys, [path!(a[0]), p!(a[1], 144, W), 0, 0, 0, 0]))
            }
            Sysno::fstat => Val(host(sys, [a[0], p!(a[1], 144, W), 0, 0, 0, 0])),
            Sysno::poll => Val(host(sys, [p!(a[0], a[1] * 8, W), a[1], a[2], 0, 0, 0])),
            Sysno::mmap => self.sys_mmap(a),
            Sysno::mprotect => self.sys_mprotect(a),
            Sysno::munmap => {
                let len = page_ceil(a[1]);
                if !a[0].is_multiple_of(PAGE) || len == 0 {
                    return Val(-EINVAL);
                }
                self.unmapped(a[0], len);
                match self.cpu.mem.unmap(a[0], len) {
                    Ok(()) => Val(0),
                    Err(_) => Val(-EINVAL),
                }
            }
            Sysno::brk => Val(self.cpu.mem.brk(a[0]) as i64),
            Sysno::rt_sigaction => {
                let sig = a[0] as usize;
                if sig == 0 || sig > 64 {
                    return Val(-EINVAL);
                }
                if self.process.sigactions.len() <= sig {
                    self.process.sigactions.resize(65, [0; 32]);
                }
                let old = self.process.sigactions[sig];
                if a[2] != 0 && self.cpu.mem.write(a[2], &old).is_none() {
                    return efault;
                }
                if a[1] != 0 {
                    if sig == libc::SIGKILL as usize || sig == libc::SIGSTOP as usize {
                        return Val(-EINVAL);
                    }
                    let Some(new) = self.cpu.mem.slice(a[1], 32) else {
                        return efault;
                    };
                    self.process.sigactions[sig].copy_from_slice(new);
                    self.sigaction_changed(sig as i32);
                }
                Val(0)
            }
            Sysno::rt_sigprocmask => self.sys_rt_sigprocmask(a[0], a[1], a[2], a[3]),
            Sysno::rt_sigpending => self.sys_rt_sigpending(a[0], a[1]),
            Sysno::rt_sigtimedwait => self.sys_rt_sigtimedwait(a[0], a[1], a[2], a[3]),
            Sysno::rt_sigsuspend => self.sys_rt_sigsuspend(a[0], a[1]),
            Sysno::pause => self.sys_pause(),
            Sysno::alarm => self.sys_alarm(a[0]),
            Sysno::getitimer => self.sys_getitimer(a[0], a[1]),
            Sysno::setitimer => self.sys_setitimer(a[0], a[1], a[2]),
            Sysno::timer_create => self.sys_timer_create(a[0], a[1], a[2]),
            Sysno::timer_settime => self.sys_timer_settime(a[0], a[1], a[2], a[3]),
            Sysno::timer_gettime => self.sys_timer_gettime(a[0], a[1]),
            Sysno::timer_getoverrun => self.sys_timer_getoverrun(a[0]),
            Sysno::timer_delete => self.sys_timer_delete(a[0]),
            Sysno::ioctl => match a[1] {
                // TCGETS, TIOCGWINSZ: pass through with the buffer
                0x5401 => Val(host(sys, [a[0], a[1], p!(a[2], 60, W), 0, 0, 0])),
                0x5413 => Val(host(sys, [a[0], a[1], p!(a[2], 8, W), 0, 0, 0])),
                // TCSETS, TCSETSW, TCSETSF: a termios the guest wrote
                0x5402..=0x5404 => Val(host(sys, [a[0], a[1], p!(a[2], 60, R), 0, 0, 0])),
                // FIONBIO (libuv's way to O_NONBLOCK), FIOASYNC: an int in
                0x5421 | 0x5452 => Val(host(sys, [a[0], a[1], p!(a[2], 4, R), 0, 0, 0])),
                // FIONREAD: an int out
                0x541b => Val(host(sys, [a[0], a[1], p!(a[2], 4, W), 0, 0, 0])),
                // FIONCLEX, FIOCLEX: no argument
                0x5450 | 0x5451 => Val(host(sys, [a[0], a[1], 0, 0, 0, 0])),
                _ => Val(-ENOTTY),
            },
            // readv, writev
            Sysno::readv | Sysno::writev => self.sys_iov(sys, a),
            Sysno::access => Val(host(sys, [path!(a[0]), a[1], 0, 0, 0, 0])),
            Sysno::pipe => Val(host(sys, [p!(a[0], 8, W), 0, 0, 0, 0, 0])),
            Sysno::pipe2 => Val(host(sys, [p!(a[0], 8, W), a[1], 0, 0, 0, 0])),
            Sysno::sched_yield => {
                self.cpu.sched.yielded(self.cpu.cur);
                self.cpu.stop = Some(Stop::Preempt);
                self.cpu.uc.stop();
                Val(0)
            }
            Sysno::mremap => self.sys_mremap(a),
            Sysno::madvise => {
                // MADV_DONTNEED on private anonymous memory reads back zeros.
                if a[2] == 4 {
                    self.cpu.mem.discard(a[0], a[1]);
                }
                Val(0)
            }
            Sysno::nanosleep => {
                let Some(ns) = self.read_timespec(a[0]) else {
                    return efault;
                };
                self.block(Wait::Sleep {
                    deadline: self.cpu.vtime.saturating_add(ns),
                })
            }
            Sysno::getpid => Val(i64::from(self.config.process.pid)),
            Sysno::getppid => Val(i64::from(self.config.process.ppid)),
            Sysno::clone if a[0] & CLONE_THREAD == 0 => self.sys_fork(a, pc),
            Sysno::clone => self.sys_clone(a, pc),
            Sysno::fork | Sysno::vfork => self.sys_fork([libc::SIGCHLD as u64, 0, 0, 0, 0, 0], pc),
            Sysno::execve => self.sys_execve(i64::from(libc::AT_FDCWD), a[0], a[1], a[2]),
            Sysno::execveat => self.sys_execve(a[0] as i32 as i64, a[1], a[2], a[3]),
            Sysno::wait4 => {
                let status = if a[1] != 0 { p!(a[1], 4, W) } else { 0 };
                let rusage = if a[3] != 0 { p!(a[3], 144, W) } else { 0 };
                self.sys_wait4(a, status, rusage)
            }
            Sysno::waitid => {
                let info = if a[2] != 0 { p!(a[2], 128, W) } else { 0 };
                let rusage = if a[4] != 0 { p!(a[4], 144, W) } else { 0 };
                self.sys_waitid(a, info, a[2], rusage)
            }
            Sysno::setpgid | Sysno::getpgrp | Sysno::setsid | Sysno::getpgid | Sysno::getsid => {
                self.sys_pgrp(sys, a)
            }
            Sysno::exit => self.sys_exit(a[0] as i32, pc),
            Sysno::exit_group => {
                self.cpu.stop = Some(Stop::ExitGroup(a[0] as i32));
                self.cpu.uc.stop();
                NoReturn
            }
            Sysno::kill => self.sys_kill(a[0] as i32 as i64, a[1] as i32),
            Sysno::tkill => self.sys_tgkill(a[0] as u32, a[1] as i32),
            Sysno::tgkill if a[0] as u32 == self.config.process.pid => {
                self.sys_tgkill(a[1] as u32, a[2] as i32)
            }
            Sysno::tgkill => Val(host(
                sys,
                [
                    self.config.process.to_host(a[0] as i32 as i64) as u64,
                    a[1],
                    a[2],
                    0,
                    0,
                    0,
                ],
            )),
            Sysno::uname => Val(host(sys, [p!(a[0], 390, W), 0, 0, 0, 0, 0])),
            Sysno::fcntl => Val(host(sys, [a[0], a[1], a[2], 0, 0, 0])),
            Sysno::getcwd => Val(host(sys, [p!(a[0], a[1], W), a[1], 0, 0, 0, 0])),
            Sysno::chdir | Sysno::rmdir | Sysno::unlink => {
                Val(host(sys, [s!(a[0]), 0, 0, 0, 0, 0]))
            }
            Sysno::mkdir => Val(host(sys, [s!(a[0]), a[1], 0, 0, 0, 0])),
            Sysno::rename => Val(host(sys, [s!(a[0]), s!(a[1]), 0, 0, 0, 0])),
            // creat, chmod, truncate
            Sysno::creat | Sysno::chmod | Sysno::truncate => {
                Val(host(sys, [s!(a[0]), a[1], 0, 0, 0, 0]))
            }
            // chown, lchown
            Sysno::chown | Sysno::lchown => Val(host(sys, [s!(a[0]), a[1], a[2], 0, 0, 0])),
            // link, symlink
            Sysno::link | Sysno::symlink => Val(host(sys, [s!(a[0]), s!(a[1]), 0, 0, 0, 0])),
            // fchmod, fchown, flock
            Sysno::fchmod | Sysno::fchown | Sysno::flock => {
                Val(host(sys, [a[0], a[1], a[2], 0, 0, 0]))
            }
            Sysno::fchmodat => Val(host(sys, [a[0], s!(a[1]), a[2], 0, 0, 0])),
            Sysno::fchownat => Val(host(sys, [a[0], s!(a[1]), a[2], a[3], a[4], 0])),
            // renameat, renameat2, linkat
            Sysno::renameat | Sysno::renameat2 | Sysno::linkat => {
                Val(host(sys, [a[0], s!(a[1]), a[2], s!(a[3]), a[4], 0]))
            }
            Sysno::symlinkat => Val(host(sys, [s!(a[0]), a[1], s!(a[2]), 0, 0, 0])),
            Sysno::utimensat => {
                let path = if a[1] != 0 { s!(a[1]) } else { 0 };
                let times = if a[2] != 0 { p!(a[2], 32, R) } else { 0 };
                Val(host(sys, [a[0], path, times, a[3], 0, 0]))
            }
            // getsockname, getpeername: the address buffer is *addrlen long
            Sysno::getsockname | Sysno::getpeername => {
                let Some(len) = self.cpu.mem.read_u32(a[2]) else {
                    return efault;
                };
                let len = u64::from(len);
                Val(host(sys, [a[0], p!(a[1], len, W), p!(a[2], 4, W), 0, 0, 0]))
            }
            Sysno::socketpair => Val(host(sys, [a[0], a[1], a[2], p!(a[3], 8, W), 0, 0])),
            Sysno::times => {
                let buf = if a[0] != 0 { p!(a[0], 32, W) } else { 0 };
                Val(host(sys, [buf, 0, 0, 0, 0, 0]))
            }
            Sysno::sendfile => {
                let off = if a[2] != 0 { p!(a[2], 8, W) } else { 0 };
                Val(host(sys, [a[0], a[1], off, a[3], 0, 0]))
            }
            // select: three fd_sets of nfds bits and a timeval
            Sysno::select => {
                let set = a[0].min(1024).div_ceil(8);
                let mut ptrs = [0u64; 3];
                for (i, &addr) in a[1..4].iter().enumerate() {
                    if addr != 0 {
                        ptrs[i] = p!(addr, set, W);
                    }
                }
                let tv = if a[4] != 0 { p!(a[4], 16, W) } else { 0 };
                Val(host(sys, [a[0], ptrs[0], ptrs[1], ptrs[2], tv, 0]))
            }
            // ppoll: the signal mask is applied as the guest asks
            Sysno::ppoll => {
                let fds = p!(a[0], a[1] * 8, W);
                let tmo = if a[2] != 0 { p!(a[2], 16, W) } else { 0 };
                let mask = if a[3] != 0 { p!(a[3], 8, R) } else { 0 };
                Val(host(sys, [fds, a[1], tmo, mask, a[4], 0]))
            }
            Sysno::readlink => self.sys_readlink(libc::AT_FDCWD as u64, a[0], a[1], a[2]),
            Sysno::readlinkat => self.sys_readlink(a[0], a[1], a[2], a[3]),
            Sysno::gettimeofday => {
                if a[0] != 0 {
                    let ns = self.process.realtime_base + self.cpu.vtime;
                    let mut b = [0u8; 16];
                    b[..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
                    b[8..].copy_from_slice(&((ns % 1_000_000_000) / 1000).to_le_bytes());
                    if self.cpu.mem.write(a[0], &b).is_none() {
                        return efault;
                    }
                }
                Val(0)
            }
            Sysno::getrlimit => Val(host(sys, [a[0], p!(a[1], 16, W), 0, 0, 0, 0])),
            Sysno::getrusage => Val(host(sys, [a[0], p!(a[1], 144, W), 0, 0, 0, 0])),
            Sysno::sysinfo => Val(host(sys, [p!(a[0], 112, W), 0, 0, 0, 0, 0])),
            Sysno::getuid | Sysno::getgid | Sysno::geteuid | Sysno::getegid => {
                Val(host(sys, [0; 6]))
            }
            Sysno::getgroups => {
                let n = a[0].min(65536);
                Val(host(sys, [n, p!(a[1], n * 4, W), 0, 0, 0, 0]))
            }
            Sysno::sigaltstack => self.sys_sigaltstack(a[0], a[1]),
            Sysno::rt_sigreturn => self.sys_rt_sigreturn(),
            Sysno::arch_prctl => self.sys_arch_prctl(a),
            Sysno::gettid => Val(i64::from(self.cpu.threads[self.cpu.cur].tid)),
            Sysno::time => {
                let secs = (self.process.realtime_base + self.cpu.vtime) / 1_000_000_000;
                if a[0] != 0 && self.cpu.mem.write(a[0], &secs.to_le_bytes()).is_none() {
                    return efault;
                }
                Val(secs as i64)
            }
            Sysno::futex => self.sys_futex(a, pc),
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
                    return Val(-EINVAL);
                }
                if self.cpu.mem.write(a[2], &mask.to_le_bytes()).is_none() {
                    return efault;
                }
                Val(8)
            }
            Sysno::getdents64 => Val(host(sys, [a[0], p!(a[1], a[2], W), a[2], 0, 0, 0])),
            Sysno::set_tid_address => {
                self.cpu.threads[self.cpu.cur].clear_child_tid = a[0];
                Val(i64::from(self.cpu.threads[self.cpu.cur].tid))
            }
            Sysno::clock_gettime => {
                let Some(ns) = self.clock_ns(a[0]) else {
                    return Val(-EINVAL);
                };
                if !self.write_timespec(a[1], ns) {
                    return efault;
                }
                Val(0)
            }
            Sysno::clock_getres => {
                if a[1] != 0 && !self.write_timespec(a[1], 1) {
                    return efault;
                }
                Val(0)
            }
            Sysno::clock_nanosleep => {
                let Some(req) = self.read_timespec(a[2]) else {
                    return efault;
                };
                let Some(now) = self.clock_ns(a[0]) else {
                    return Val(-EINVAL);
                };
                let ns = if a[1] & 1 != 0 {
                    req.saturating_sub(now)
                } else {
                    req
                };
                self.block(Wait::Sleep {
                    deadline: self.cpu.vtime.saturating_add(ns),
                })
            }
            Sysno::openat => self.sys_openat(a[0], a[1], a[2], a[3]),
            // socket; connect (a UNIX socket to a daemon such as nscd)
            Sysno::socket => Val(host(sys, [a[0], a[1], a[2], 0, 0, 0])),
            Sysno::connect => Val(host(sys, [a[0], p!(a[1], a[2], R), a[2], 0, 0, 0])),
            Sysno::statfs => Val(host(sys, [path!(a[0]), p!(a[1], 120, W), 0, 0, 0, 0])),
            Sysno::fstatfs => Val(host(sys, [a[0], p!(a[1], 120, W), 0, 0, 0, 0])),
            // getxattr, lgetxattr (ls -l asks for ACLs and SELinux labels)
            Sysno::getxattr | Sysno::lgetxattr => Val(host(
                sys,
                [path!(a[0]), s!(a[1]), p!(a[2], a[3], W), a[3], 0, 0],
            )),
            Sysno::fgetxattr => Val(host(sys, [a[0], s!(a[1]), p!(a[2], a[3], W), a[3], 0, 0])),
            Sysno::listxattr | Sysno::llistxattr => {
                Val(host(sys, [path!(a[0]), p!(a[1], a[2], W), a[2], 0, 0, 0]))
            }
            Sysno::flistxattr => Val(host(sys, [a[0], p!(a[1], a[2], W), a[2], 0, 0, 0])),
            Sysno::mkdirat => Val(host(sys, [a[0], s!(a[1]), a[2], 0, 0, 0])),
            Sysno::newfstatat => Val(host(sys, [a[0], path!(a[1]), p!(a[2], 144, W), a[3], 0, 0])),
            Sysno::unlinkat => Val(host(sys, [a[0], s!(a[1]), a[2], 0, 0, 0])),
            Sysno::faccessat | Sysno::faccessat2 => {
                Val(host(sys, [a[0], path!(a[1]), a[2], a[3], 0, 0]))
            }
            // pselect6: fd_sets, a timespec, and {sigset pointer, size}
            Sysno::pselect6 => {
                let set = a[0].min(1024).div_ceil(8);
                let mut ptrs = [0u64; 3];
                for (i, &addr) in a[1..4].iter().enumerate() {
                    if addr != 0 {
                        ptrs[i] = p!(addr, set, W);
                    }
                }
                let ts = if a[4] != 0 { p!(a[4], 16, W) } else { 0 };
                let mut sig = [0u64; 2];
                if a[5] != 0 {
                    let (Some(mask), Some(size)) =
                        (self.cpu.mem.read_u64(a[5]), self.cpu.mem.read_u64(a[5] + 8))
                    else {
                        return efault;
                    };
                    sig = [if mask != 0 { p!(mask, 8, R) } else { 0 }, size];
                }
                let sigp = if a[5] != 0 { sig.as_ptr() as u64 } else { 0 };
                Val(host(sys, [a[0], ptrs[0], ptrs[1], ptrs[2], ts, sigp]))
            }
            // epoll_create, epoll_create1, eventfd, eventfd2, timerfd_create
            Sysno::epoll_create
            | Sysno::epoll_create1
            | Sysno::eventfd
            | Sysno::eventfd2
            | Sysno::timerfd_create => Val(host(sys, [a[0], a[1], 0, 0, 0, 0])),
            Sysno::epoll_ctl => {
                let ev = if a[3] != 0 { p!(a[3], 12, R) } else { 0 };
                Val(host(sys, [a[0], a[1], a[2], ev, 0, 0]))
            }
            Sysno::epoll_wait => Val(host(sys, [a[0], p!(a[1], a[2] * 12, W), a[2], a[3], 0, 0])),
            Sysno::epoll_pwait => {
                let mask = if a[4] != 0 { p!(a[4], 8, R) } else { 0 };
                Val(host(
                    sys,
                    [a[0], p!(a[1], a[2] * 12, W), a[2], a[3], mask, a[5]],
                ))
            }
            Sysno::timerfd_settime => {
                let old = if a[3] != 0 { p!(a[3], 32, W) } else { 0 };
                Val(host(sys, [a[0], a[1], p!(a[2], 32, R), old, 0, 0]))
            }
            Sysno::timerfd_gettime => Val(host(sys, [a[0], p!(a[1], 32, W), 0, 0, 0, 0])),
            // capget: the host's capabilities
            Sysno::capget => {
                let data = if a[1] != 0 { p!(a[1], 24, W) } else { 0 };
                Val(host(sys, [p!(a[0], 8, W), data, 0, 0, 0, 0]))
            }
            // close_range: never lard's own descriptors (linux::hostfd)
            Sysno::close_range => self.sys_close_range(a[0], a[1], a[2]),
            Sysno::prctl => self.sys_prctl(a),
            // pkey_alloc: no protection keys (as on a CPU without PKU)
            Sysno::pkey_alloc => Val(-libc::ENOSPC as i64),
            // getcpu: the thread's simulated core, node 0
            Sysno::getcpu => {
                let core = u32::from(self.cpu.threads[self.cpu.cur].core);
                if a[0] != 0 && self.cpu.mem.write(a[0], &core.to_le_bytes()).is_none() {
                    return efault;
                }
                if a[1] != 0 && self.cpu.mem.write(a[1], &0u32.to_le_bytes()).is_none() {
                    return efault;
                }
                Val(0)
            }
            // setresuid, setresgid: the host's (they fail unless permitted)
            Sysno::setresuid | Sysno::setresgid => Val(host(sys, [a[0], a[1], a[2], 0, 0, 0])),
            Sysno::getresuid | Sysno::getresgid => Val(host(
                sys,
                [p!(a[0], 4, W), p!(a[1], 4, W), p!(a[2], 4, W), 0, 0, 0],
            )),
            Sysno::set_robust_list => Val(0),
            Sysno::prlimit64 => {
                let new = if a[2] != 0 { p!(a[2], 16, R) } else { 0 };
                let old = if a[3] != 0 { p!(a[3], 16, W) } else { 0 };
                let _ = new;
                Val(host(sys, [0, a[1], 0, old, 0, 0]))
            }
            Sysno::getrandom => {
                let Some(buf) = self.cpu.mem.slice_mut(a[0], a[1]) else {
                    return efault;
                };
                let mut rng =
                    SplitMix64(self.config.seed ^ self.obs.stats.syscalls.wrapping_mul(0x9e37));
                for chunk in buf.chunks_mut(8) {
                    let v = rng.next_u64().to_le_bytes();
                    chunk.copy_from_slice(&v[..chunk.len()]);
                }
                Val(a[1] as i64)
            }
            Sysno::statx => Val(host(
                sys,
                [a[0], path!(a[1]), a[2], a[3], p!(a[4], 256, W), 0],
            )),
            Sysno::rseq | Sysno::clone3 | Sysno::membarrier | Sysno::get_robust_list => {
                Val(-ENOSYS)
            }
            _ => self.warn_unknown(nr, pc),
        }
    }

    /// True if a write to `fd` is dropped ([`Machine::quiet_output`]).
    fn quiet(&self, fd: u64) -> bool {
        self.process.quiet_output && (fd == 1 || fd == 2)
    }

    fn sys_iov(&mut self, sys: Sysno, a: [u64; 6]) -> Ret {
        let n = a[2];
        if n > 1024 {
            return Val(-EINVAL);
        }
        let mut iov: Vec<u64> = Vec::with_capacity(2 * n as usize);
        let need = if sys == Sysno::readv {
            prot::WRITE
        } else {
            prot::READ
        };
        for i in 0..n {
            let (Some(base), Some(len)) = (
                self.cpu.mem.read_u64(a[1] + 16 * i),
                self.cpu.mem.read_u64(a[1] + 16 * i + 8),
            ) else {
                return Val(-EFAULT);
            };
            let Some(p) = self.ptr(base, len, need) else {
                return Val(-EFAULT);
            };
            iov.push(p);
            iov.push(len);
        }
        if sys == Sysno::writev && self.quiet(a[0]) {
            return Val(iov.chunks(2).map(|c| c[1] as i64).sum());
        }
        Val(host(sys, [a[0], iov.as_ptr() as u64, n, 0, 0, 0]))
    }

    fn sys_readlink(&mut self, dirfd: u64, path: u64, buf: u64, len: u64) -> Ret {
        let Some(p) = self.cpu.mem.read_cstr(path, 4096) else {
            return Val(-EFAULT);
        };
        if p == b"/proc/self/exe" {
            let exe = self.process.exe_path.clone();
            let n = exe.len().min(len as usize);
            return match self.cpu.mem.write(buf, &exe[..n]) {
                Some(()) => Val(n as i64),
                None => Val(-EFAULT),
            };
        }
        let Some(pp) = self.cstr(path) else {
            return Val(-EFAULT);
        };
        let Some(bp) = self.ptr(buf, len, prot::WRITE) else {
            return Val(-EFAULT);
        };
        Val(host(Sysno::readlinkat, [dirfd, pp, bp, len, 0, 0]))
    }

    /// A host pointer to the path at guest `addr`, redirected under
    /// `--sysroot` when the path exists there (see [`sysroot`]).
    fn path_arg(&self, addr: u64, keep: &mut Vec<std::ffi::CString>) -> Option<u64> {
        let Some(root) = self.config.sysroot.as_deref() else {
            return self.cstr(addr);
        };
        let guest = self.cpu.mem.read_cstr(addr, 4096)?;
        let host = sysroot::host_path(Some(root), &guest);
        if host.as_os_str().as_bytes() == guest.as_slice() {
            return self.cstr(addr);
        }
        let c = std::ffi::CString::new(host.into_os_string().into_vec()).ok()?;
        let p = c.as_ptr() as u64;
        keep.push(c);
        Some(p)
    }

    /// open/openat: the guest's own `/proc/self/maps` is synthesized (the
    /// host's would describe lard); other paths go to the host, under
    /// `--sysroot` first.
    fn sys_openat(&mut self, dirfd: u64, path: u64, flags: u64, mode: u64) -> Ret {
        let Some(name) = self.cpu.mem.read_cstr(path, 4096) else {
            return Val(-EFAULT);
        };
        let own = format!("/proc/{}/maps", self.config.process.pid);
        if name == b"/proc/self/maps" || name == own.as_bytes() {
            return Val(self.proc_maps_fd());
        }
        let mut keep = Vec::new();
        let Some(p) = self.path_arg(path, &mut keep) else {
            return Val(-EFAULT);
        };
        Val(host(Sysno::openat, [dirfd, p, flags, mode, 0, 0]))
    }

    /// A memfd holding the guest's memory map in /proc/PID/maps format.
    fn proc_maps_fd(&self) -> i64 {
        let mut text = String::new();
        for (start, len, perms, name) in self.cpu.mem.regions() {
            let object = self.obs.objects.at(start).map(|o| o.name.clone());
            let name = object.as_deref().unwrap_or(match name {
                "[heap]" | "[stack]" => name,
                _ => "",
            });
            let flag = |bit: u32, c: char| if perms & bit != 0 { c } else { '-' };
            text += &format!(
                "{start:012x}-{:012x} {}{}{}p 00000000 00:00 0 {name}\n",
                start + len,
                flag(prot::READ, 'r'),
                flag(prot::WRITE, 'w'),
                flag(prot::EXEC, 'x'),
            );
        }
        // SAFETY: memfd_create with a static name; write from a live buffer.
        unsafe {
            let fd = libc::memfd_create(c"lard-maps".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return host_ret(-1);
            }
            libc::write(fd, text.as_ptr().cast(), text.len());
            libc::lseek(fd, 0, libc::SEEK_SET);
            i64::from(fd)
        }
    }

    /// A file mapping at offset 0 that starts with an x86-64 ELF header is
    /// a shared object being loaded (by ld.so or `dlopen`): register it with
    /// the file's path (the guest's file descriptors are host descriptors,
    /// so `/proc/self/fd/N` names the file) and its load bias (the mapping
    /// minus its first PT_LOAD's page).
    fn register_object(&mut self, at: u64, len: u64, fd: u64) {
        let Some(hdr) = self.cpu.mem.peek(at, 64.min(len)) else {
            return;
        };
        if hdr.len() < 64 || hdr[..4] != *b"\x7fELF" || hdr[4] != 2 {
            return;
        }
        let u16_at = |o: usize| u16::from_le_bytes([hdr[o], hdr[o + 1]]);
        let (etype, machine) = (u16_at(0x10), u16_at(0x12));
        if !(etype == 2 || etype == 3) || machine != 62 {
            return;
        }
        let phoff = u64::from_le_bytes(hdr[0x20..0x28].try_into().expect("8 bytes"));
        let (phent, phnum) = (u64::from(u16_at(0x36)), u64::from(u16_at(0x38)));
        let first_load = (0..phnum).find_map(|i| {
            let ph = phoff.checked_add(i * phent)?;
            if ph + 56 > len {
                return None;
            }
            let b = self.cpu.mem.peek(at + ph, 56)?;
            let ptype = u32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
            (ptype == 1).then(|| u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")))
        });
        let Some(vaddr) = first_load else {
            return;
        };
        let host_path = match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            Ok(p) => p,
            Err(_) => return,
        };
        let root = self.config.sysroot.clone();
        let name = sysroot::guest_path(root.as_deref(), &host_path);
        self.obs.objects.add(LoadedObject::new(
            host_path,
            name.to_string_lossy().into_owned(),
            ObjectKind::Library,
            at.wrapping_sub(page_floor(vaddr)),
            (at, at + len),
            root,
        ));
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

    fn map_err(e: MemError) -> Ret {
        match e {
            MemError::NoMemory => Val(-ENOMEM),
            _ => Val(-EINVAL),
        }
    }

    fn sys_mmap(&mut self, a: [u64; 6]) -> Ret {
        let [addr, len, prot_, flags, fd, off] = a;
        if len == 0 || off % PAGE != 0 {
            return Val(-EINVAL);
        }
        let len = page_ceil(len);
        let perms = (prot_ & 7) as u32;
        let fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0;
        let at = if fixed {
            if addr % PAGE != 0 {
                return Val(-EINVAL);
            }
            if flags & MAP_FIXED != 0 {
                self.unmapped(addr, len);
                if let Err(e) = self.cpu.mem.unmap(addr, len) {
                    return Self::map_err(e);
                }
            }
            addr
        } else if addr != 0
            && addr % PAGE == 0
            && addr.saturating_add(len) <= TASK_SIZE
            && self.cpu.mem.is_free(addr, len)
        {
            addr
        } else {
            match self.cpu.mem.find_free(len) {
                Some(a) => a,
                None => return Val(-ENOMEM),
            }
        };
        // File contents are copied in (private mappings), through host
        // memory made writable for the copy.
        let file = flags & MAP_ANONYMOUS == 0;
        let name = if file { "[file]" } else { "[mmap]" };
        // MAP_SHARED memory is the host's shared memory, so that processes
        // (a forked child, another process mapping the file) share it. A
        // read-only shared file mapping is a copy, as before: no process can
        // write through it.
        if flags & MAP_SHARED != 0 && (!file || perms & prot::WRITE != 0) {
            let backing = if file { Some((fd, off)) } else { None };
            return match self.map_shared(at, len, perms, backing) {
                Ok(()) => {
                    if file && off == 0 {
                        self.register_object(at, len, fd);
                    }
                    Val(at as i64)
                }
                Err(e) => Val(e),
            };
        }
        if let Err(e) = self.cpu.mem.map(at, len, perms, name) {
            return Self::map_err(e);
        }
        if file {
            let r = self
                .cpu
                .mem
                .fill(at, len, |p| {
                    host(Sysno::pread64, [fd, p as u64, len, off, 0, 0])
                })
                .expect("just mapped");
            if r < 0 {
                let _ = self.cpu.mem.unmap(at, len);
                return Val(r);
            }
        }
        if file && off == 0 {
            self.register_object(at, len, fd);
        }
        if perms & prot::EXEC != 0 && self.code_mapped(at, len).is_err() {
            warn!("could not hook LARDx86 sites in new code at {at:#x}");
        }
        Val(at as i64)
    }

    /// A `MAP_SHARED` mapping of `len` bytes at `at`: of the file `fd` at
    /// `off`, or shared anonymous memory (`/dev/zero`, as the kernel makes
    /// it). Returns an errno on failure.
    fn map_shared(
        &mut self,
        at: u64,
        len: u64,
        perms: u32,
        file: Option<(u64, u64)>,
    ) -> Result<(), i64> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let zero;
        let (fd, off) = match file {
            Some((fd, off)) => (fd as i32, off),
            None => {
                zero = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/zero")
                    .map_err(|_| -ENOMEM)?;
                (zero.as_raw_fd(), 0)
            }
        };
        // SAFETY: a descriptor borrowed for the call: ManuallyDrop keeps it
        // open.
        let f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        // SAFETY: a shared mapping of a file the guest opened; the guest
        // may change it underneath, as natively.
        let host = unsafe {
            memmap2::MmapOptions::new()
                .offset(off)
                .len(len as usize)
                .map_mut(&*f)
        }
        .map_err(|e| -i64::from(e.raw_os_error().unwrap_or(libc::EACCES)))?;
        self.cpu
            .mem
            .map_host(at, len, perms, "[shared]", host, true)
            .map_err(|_| -ENOMEM)
    }

    fn sys_mprotect(&mut self, a: [u64; 6]) -> Ret {
        if !a[0].is_multiple_of(PAGE) {
            return Val(-EINVAL);
        }
        let perms = (a[2] & 7) as u32;
        match self.cpu.mem.protect(a[0], a[1], perms) {
            Ok(()) => {
                if perms & prot::EXEC != 0 && self.code_mapped(a[0], page_ceil(a[1])).is_err() {
                    warn!("could not hook LARDx86 sites after mprotect at {:#x}", a[0]);
                }
                Val(0)
            }
            Err(e) => Self::map_err(e),
        }
    }

    fn sys_mremap(&mut self, a: [u64; 6]) -> Ret {
        let [old, old_len, new_len, flags, _, _] = a;
        let (old_len, new_len) = (page_ceil(old_len), page_ceil(new_len));
        if old % PAGE != 0 || new_len == 0 {
            return Val(-EINVAL);
        }
        if new_len <= old_len {
            if new_len < old_len {
                let _ = self.cpu.mem.unmap(old + new_len, old_len - new_len);
            }
            return Val(old as i64);
        }
        if flags & 1 == 0 {
            return Val(-ENOMEM);
        }
        let Some(data) = self.cpu.mem.slice(old, old_len).map(|s| s.to_vec()) else {
            return Val(-EFAULT);
        };
        let Some(at) = self.cpu.mem.find_free(new_len) else {
            return Val(-ENOMEM);
        };
        if let Err(e) = self
            .cpu
            .mem
            .map(at, new_len, prot::READ | prot::WRITE, "[mmap]")
        {
            return Self::map_err(e);
        }
        self.cpu.mem.poke(at, &data);
        let _ = self.cpu.mem.unmap(old, old_len);
        Val(at as i64)
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
        self.cpu.threads.push(Thread {
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
            ctx_changed: false,
            name: self.cpu.threads[self.cpu.cur].name,
            sig: self.cpu.threads[self.cpu.cur].sig.inherited(),
        });
        if stack != 0 {
            self.add_stack(stack);
        }
        self.emit_sync(pc, LowLevelSync::ThreadCreate { child: tid });
        if self.obs.binary.is_some() {
            self.binary_clone(self.cpu.threads.len() - 1, pc);
        }
        Val(i64::from(tid))
    }

    fn sys_exit(&mut self, status: i32, pc: u64) -> Ret {
        self.emit_sync(pc, LowLevelSync::ThreadExit);
        if self.obs.binary.is_some() {
            self.binary_exit(pc);
        }
        let ctid = self.cpu.threads[self.cpu.cur].clear_child_tid;
        self.cpu.threads[self.cpu.cur].state = ThreadState::Exited;
        self.process.last_exit_status = status;
        if ctid != 0 && self.cpu.mem.write(ctid, &0u32.to_le_bytes()).is_some() {
            self.futex_wake(ctid, 1, u32::MAX, pc);
        }
        self.cpu.stop = Some(Stop::ThreadExit);
        self.cpu.uc.stop();
        NoReturn
    }

    fn sys_futex(&mut self, a: [u64; 6], pc: u64) -> Ret {
        let [uaddr, op, val, timeout, uaddr2, val3] = a;
        let cmd = op & 0x7f;
        let realtime = op & 256 != 0;
        match cmd {
            // WAIT, WAIT_BITSET
            0 | 9 => {
                let Some(cur) = self.cpu.mem.read_u32(uaddr) else {
                    return Val(-EFAULT);
                };
                if cur != val as u32 {
                    return Val(-EAGAIN);
                }
                let bitset = if cmd == 9 { val3 as u32 } else { u32::MAX };
                if bitset == 0 {
                    return Val(-EINVAL);
                }
                let deadline = if timeout == 0 {
                    None
                } else {
                    let Some(t) = self.read_timespec(timeout) else {
                        return Val(-EFAULT);
                    };
                    Some(if cmd == 0 {
                        self.cpu.vtime.saturating_add(t)
                    } else if realtime {
                        t.saturating_sub(self.process.realtime_base)
                    } else {
                        t
                    })
                };
                // A futex word in shared memory may be woken by another
                // process: the wait is made again every few milliseconds
                // (a wait may end early: callers check the word again).
                if self.cpu.mem.is_shared(uaddr) {
                    let deadline = match self.cpu.threads[self.cpu.cur].restart_deadline.take() {
                        Some(d) => Some(d),
                        None => deadline,
                    };
                    return self.block(Wait::Retry {
                        deadline,
                        expired: -ETIMEDOUT,
                    });
                }
                self.process.futex_seq += 1;
                self.block(Wait::Futex {
                    addr: uaddr,
                    bitset,
                    deadline,
                    seq: self.process.futex_seq,
                })
            }
            // WAKE, WAKE_BITSET
            1 | 10 => {
                let bitset = if cmd == 10 { val3 as u32 } else { u32::MAX };
                Val(self.futex_wake(uaddr, val, bitset, pc) as i64)
            }
            // REQUEUE, CMP_REQUEUE
            3 | 4 => {
                if cmd == 4 {
                    let Some(cur) = self.cpu.mem.read_u32(uaddr) else {
                        return Val(-EFAULT);
                    };
                    if cur != val3 as u32 {
                        return Val(-EAGAIN);
                    }
                }
                let woken = self.futex_wake(uaddr, val, u32::MAX, pc);
                let mut moved = 0;
                for t in &mut self.cpu.threads {
                    if moved >= timeout {
                        break;
                    }
                    if let ThreadState::Blocked(Wait::Futex { addr, .. }) = &mut t.state {
                        if *addr == uaddr {
                            *addr = uaddr2;
                            moved += 1;
                        }
                    }
                }
                Val((woken + if cmd == 4 { moved } else { 0 }) as i64)
            }
            // WAKE_OP
            5 => {
                let Some(old) = self.cpu.mem.read_u32(uaddr2) else {
                    return Val(-EFAULT);
                };
                let (opk, cmp) = ((val3 >> 28) & 0xf, (val3 >> 24) & 0xf);
                let mut oparg = ((val3 >> 12) & 0xfff) as u32;
                let cmparg = (val3 & 0xfff) as u32;
                if opk & 8 != 0 {
                    oparg = 1u32.checked_shl(oparg).unwrap_or(0);
                }
                let new = match opk & 7 {
                    0 => oparg,
                    1 => old.wrapping_add(oparg),
                    2 => old | oparg,
                    3 => old & !oparg,
                    4 => old ^ oparg,
                    _ => return Val(-ENOSYS),
                };
                if self.cpu.mem.write(uaddr2, &new.to_le_bytes()).is_none() {
                    return Val(-EFAULT);
                }
                let mut n = self.futex_wake(uaddr, val, u32::MAX, pc);
                let hit = match cmp {
                    0 => old == cmparg,
                    1 => old != cmparg,
                    2 => (old as i32) < cmparg as i32,
                    3 => (old as i32) <= cmparg as i32,
                    4 => (old as i32) > cmparg as i32,
                    5 => (old as i32) >= cmparg as i32,
                    _ => false,
                };
                if hit {
                    n += self.futex_wake(uaddr2, timeout, u32::MAX, pc);
                }
                Val(n as i64)
            }
            _ => {
                let _ = (EINTR, ENOENT);
                self.warn_unknown(Sysno::futex as u64, pc)
            }
        }
    }
}
