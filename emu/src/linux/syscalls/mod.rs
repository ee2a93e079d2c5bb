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
//!
//! Calls are known by name ([`Sysno`]). `facts` says, per call, which
//! module makes it and what else lard must know about it; each module makes
//! the calls of one area:
//!
//! | module | calls |
//! |---|---|
//! | `memory` | `mmap`, `mprotect`, `munmap`, `brk`, `mremap`, `madvise`, `mincore` |
//! | `files` | paths and descriptors: `open`, `stat`, `close`, `dup`, `readlink`, … |
//! | `io` | reading, writing and waiting on descriptors: `read`, `write`, `ioctl`, `poll`, `epoll`, pipes, sockets |
//! | `futex` | `futex` |
//! | `time` | clocks and sleeps in virtual time |
//! | `threads` | `clone` of a thread, `exit`, `prctl`, `arch_prctl`, scheduling, `unshare` (refused) |
//! | `processes` | `fork`, `execve`, `wait4`, `kill`, process groups |
//! | `signals` | handlers, masks, `alarm`, timers, `tgkill` (made by [`crate::linux::signals`]) |
//! | `system` | identity, limits, `uname`, `getrandom` |
//!
//! `waits` blocks and wakes guest threads for all of them.

pub(in crate::linux) mod facts;
mod files;
mod futex;
mod io;
mod memory;
mod processes;
mod signals;
mod system;
mod threads;
mod time;
mod waits;

use crate::cpu::uc::{prot, Reg};
use crate::linux::kernel::Kernel;
use crate::linux::sysroot;
use crate::machine::Stop;
use facts::Area;
use log::warn;
use std::ffi::CString;
use std::os::unix::ffi::OsStringExt;
use syscalls::Sysno;

const EPERM: i64 = 1;
const EBADF: i64 = 9;
const EAGAIN: i64 = 11;
const ENOMEM: i64 = 12;
const EFAULT: i64 = 14;
const EINVAL: i64 = 22;
const ENOSYS: i64 = 38;
const ETIMEDOUT: i64 = 110;

/// Access a call needs to a guest buffer: reads it, writes it.
const R: u32 = prot::READ;
const W: u32 = prot::WRITE;

pub use facts::name;

/// Result of a system call: a value for RAX, or no return (blocked, exited).
pub(super) enum Ret {
    Val(i64),
    NoReturn,
}

pub(super) use Ret::{NoReturn, Val};

/// A guest pointer argument that does not address the memory the call
/// needs: the call returns `-EFAULT`.
struct Fault;

/// What an area's call makes: its result, or a [`Fault`].
type Made = Result<Ret, Fault>;

/// One call being made: its arguments, and the host memory it uses until
/// it returns.
struct Call {
    /// The call.
    sys: Sysno,
    /// Its number (RAX).
    nr: u64,
    /// Its arguments (RDI, RSI, RDX, R10, R8, R9).
    a: [u64; 6],
    /// The address of its `syscall` instruction.
    pc: u64,
    /// Bounce copies of guest buffers that span host mappings: guest
    /// address, copy, whether the call writes it (it is copied back).
    bounces: Vec<(u64, Vec<u8>, bool)>,
    /// Host paths of guest paths redirected under `--sysroot`.
    keep: Vec<CString>,
}

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

impl Kernel<'_> {
    /// Emulates the system call the current thread is executing.
    pub fn syscall(&mut self) {
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
        // lard was asked to stop (SIGINT, SIGTERM): no call is made, which
        // might wait in the host for what never comes.
        if self.interrupted() {
            self.again_after_run_loop(pc);
            return;
        }
        if let Val(v) = self.dispatch(nr, a, pc) {
            if v == -i64::from(libc::EINTR) && self.interrupted() {
                // A host call interrupted by lard's own SIGINT/SIGTERM
                // (cmd::interrupt_flag) or timeout watchdog (run::watchdog),
                // which set a flag before the call returned; any other
                // EINTR is the guest's.
                self.again_after_run_loop(pc);
                return;
            }
            uc.set_reg(Reg::RAX, v as u64);
            self.note_host_eintr(cur, nr, v);
        }
        self.stop_for_signals(cur);
        // A restarted call's deadline is for that call only.
        if let Some(t) = self.cpu.threads.get_mut(cur) {
            t.restart_deadline = None;
        }
    }

    /// Whether lard was asked to stop ([`crate::machine::Cpu::interrupt`])
    /// or the run's wall-clock limit passed ([`crate::machine::Cpu::timed_out`]).
    fn interrupted(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.cpu.timed_out.load(Relaxed)
            || self
                .cpu
                .interrupt
                .as_ref()
                .is_some_and(|f| f.load(Relaxed) != 0)
    }

    /// Ends the quantum before the system call just executed (its `syscall`
    /// instruction at `pc - 2`, RAX still the number): the run loop looks
    /// at why first, and unless the run stops, the thread makes the call
    /// again, as `SA_RESTART` would.
    fn again_after_run_loop(&mut self, pc: u64) {
        self.cpu.uc.set_reg(Reg::RIP, pc.wrapping_sub(2));
        self.cpu.stop = Some(Stop::Preempt);
        self.cpu.uc.stop();
    }

    /// Runs one system call. A buffer that spans several host mappings
    /// (adjacent guest mappings are separate host mappings) is passed to the
    /// host through a bounce copy, written back after the call.
    fn dispatch(&mut self, nr: u64, a: [u64; 6], pc: u64) -> Ret {
        let sys = usize::try_from(nr).ok().and_then(Sysno::new);
        let facts = facts::facts_of(nr);
        let mut once = |m: &mut Kernel, a: [u64; 6]| m.dispatch_once(sys, nr, a, pc);
        let waited = match facts.host_wait {
            Some(wait) => self.host_wait(wait, a, &mut once),
            None => None,
        };
        let r = match waited {
            Some(r) => r,
            None => self.dispatch_once(sys, nr, a, pc),
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

    /// One call, made by the module of its area, with bounce copies
    /// written back.
    pub(in crate::linux) fn dispatch_once(
        &mut self,
        sys: Option<Sysno>,
        nr: u64,
        a: [u64; 6],
        pc: u64,
    ) -> Ret {
        let Some((sys, area)) = sys.and_then(|s| Some((s, facts::facts(s).area?))) else {
            return self.warn_unknown(nr, pc);
        };
        let mut c = Call {
            sys,
            nr,
            a,
            pc,
            bounces: Vec::new(),
            keep: Vec::new(),
        };
        let made = match area {
            Area::Memory => self.memory_call(&mut c),
            Area::Files => self.files_call(&mut c),
            Area::Io => self.io_call(&mut c),
            Area::Futex => self.futex_call(&mut c),
            Area::Time => self.time_call(&mut c),
            Area::Threads => self.threads_call(&mut c),
            Area::Processes => self.processes_call(&mut c),
            Area::Signals => self.signals_call(&mut c),
            Area::System => self.system_call(&mut c),
        };
        for (addr, buf, write) in std::mem::take(&mut c.bounces) {
            if write {
                self.cpu.mem.scatter(addr, &buf);
            }
        }
        made.unwrap_or(Val(-EFAULT))
    }

    /// An unsupported call: `-ENOSYS` with a one-time warning, or the end
    /// of the run under `--strict-syscalls`.
    fn warn_unknown(&mut self, nr: u64, pc: u64) -> Ret {
        if self.config.strict_syscalls {
            self.cpu.stop = Some(Stop::StrictSyscall(nr));
            self.cpu.uc.stop();
            return NoReturn;
        }
        if self.process.warned.insert(nr) {
            let at = self.objects.describe_pc(pc).unwrap_or_default();
            warn!(
                "unsupported system call {nr} ({}) at {pc:#x} {at}: returning -ENOSYS",
                name(nr)
            );
        }
        Val(-ENOSYS)
    }

    /// A call its area's module does not make: unsupported.
    fn unsupported(&mut self, c: &Call) -> Made {
        Ok(self.warn_unknown(c.nr, c.pc))
    }

    /// Whether the guest left `sig` at its default action.
    fn default_action(&self, sig: i32) -> bool {
        self.process
            .sigactions
            .get(sig as usize)
            .is_none_or(|act| act[..8] == [0u8; 8])
    }

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

    /// A host pointer for a guest buffer of call `c`, through a bounce copy
    /// if needed.
    fn buf(&self, c: &mut Call, addr: u64, len: u64, need: u32) -> Result<u64, Fault> {
        if let Some(p) = self.ptr(addr, len, need) {
            return Ok(p);
        }
        if len > 1 << 30 {
            return Err(Fault);
        }
        let buf = self.cpu.mem.gather(addr, len, need).ok_or(Fault)?;
        let p = buf.as_ptr() as u64;
        c.bounces.push((addr, buf, need & prot::WRITE != 0));
        Ok(p)
    }

    /// As [`Kernel::buf`], for an optional buffer: 0 for a null pointer.
    fn opt_buf(&self, c: &mut Call, addr: u64, len: u64, need: u32) -> Result<u64, Fault> {
        if addr == 0 {
            return Ok(0);
        }
        self.buf(c, addr, len, need)
    }

    /// A host pointer to a NUL-terminated guest string argument.
    fn str_arg(&self, addr: u64) -> Result<u64, Fault> {
        self.cstr(addr).ok_or(Fault)
    }

    /// A host pointer to a path the guest looks up, under `--sysroot`
    /// first (the host string lives in `c` until the call returns).
    fn path(&self, c: &mut Call, addr: u64) -> Result<u64, Fault> {
        self.path_arg(addr, &mut c.keep).ok_or(Fault)
    }

    /// A host pointer to the path at guest `addr`, redirected under
    /// `--sysroot` when the path exists there (see [`sysroot`]).
    fn path_arg(&self, addr: u64, keep: &mut Vec<CString>) -> Option<u64> {
        let guest = self.cpu.mem.read_cstr(addr, 4096)?;
        let host = match self.config.sysroot.as_deref() {
            Some(root) => sysroot::host_path(Some(root), &guest)
                .into_os_string()
                .into_vec(),
            None => guest.clone(),
        };
        if host == guest {
            // In place, unless the string spans two host mappings: then
            // a copy, as a buffer gets a bounce copy.
            if let Some(p) = self.cstr(addr) {
                return Some(p);
            }
        }
        let c = CString::new(host).ok()?;
        let p = c.as_ptr() as u64;
        keep.push(c);
        Some(p)
    }
}
