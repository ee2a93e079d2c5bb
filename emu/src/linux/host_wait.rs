//! System calls that wait on the host: reads and writes of pipes and
//! sockets, `poll`, `select`, `epoll_wait`, and `wait4`/`waitid`.
//!
//! lard runs a process's guest threads on one host thread, so a guest
//! thread that blocked in the host kernel would stop every other guest
//! thread — and deadlock a program whose other threads must run for the
//! wait to end (a worker pool reading a pipe while the main thread writes
//! it, an event loop's helper threads). While a process has more than one
//! live thread, such a call is first made without blocking; if it would
//! block, the guest thread waits in lard ([`Wait::Io`], [`Wait::Retry`])
//! and the call is made again, from the start, when it can go on — as the
//! kernel restarts an interrupted call. So does a single-threaded process
//! with an armed timer (its signal must interrupt the wait); otherwise a
//! single-threaded process blocks in the host (nothing else could run, and
//! a signal from another process interrupts the host call).
//!
//! When every thread waits and some wait on the host, lard waits in the
//! host's `poll` for the descriptors (and, for calls it cannot poll, a
//! few milliseconds at a time) up to the earliest virtual-time deadline,
//! and virtual time advances by the real time waited. Runs whose threads
//! wait on other processes are as deterministic as those processes are.

use super::syscalls::facts::HostWait;
use super::syscalls::Ret::{self, Val};
use crate::cpu::uc::Reg;
use crate::linux::kernel::Kernel;
use crate::machine::{Thread, ThreadState, Wait};
use ::syscalls::Sysno;
use std::time::{Duration, Instant};

/// `poll` events.
const POLLIN: i16 = libc::POLLIN;
/// `send` flag: do not block.
const MSG_DONTWAIT: u64 = libc::MSG_DONTWAIT as u64;

/// How a host-waiting call is made without blocking.
enum Probe {
    /// Wait for one descriptor to become ready for `events`, then retry.
    Fd { fd: i32, events: i16 },
    /// Make the call with this argument replaced (a zero timeout, or
    /// `WNOHANG` added); a result of 0 means it would have blocked. The
    /// `Option` is the guest's timeout in nanoseconds (`None`: forever).
    Nonblocking {
        arg: usize,
        value: u64,
        timeout: Option<u64>,
    },
    /// As `Nonblocking`, with the timeout a pointer to a `timespec`
    /// (`timeval` when `micro`) in guest memory (0: forever).
    TimeoutPtr { arg: usize, micro: bool },
}

impl Kernel<'_> {
    /// Whether a thread other than the current one can still run.
    fn others_alive(&self) -> bool {
        self.cpu
            .threads
            .iter()
            .enumerate()
            .any(|(i, t)| i != self.cpu.cur && t.state != ThreadState::Exited)
    }

    /// Makes a call that may `wait` on the host without blocking the other
    /// guest threads, or returns `None` to make it as usual. `call` makes
    /// a call.
    pub(super) fn host_wait(
        &mut self,
        wait: HostWait,
        a: [u64; 6],
        call: &mut dyn FnMut(&mut Kernel, [u64; 6]) -> Ret,
    ) -> Option<Ret> {
        // A guest with a SIGCHLD handler may rely on the signal to end a
        // wait (GNU make's jobserver pselect): without signal delivery,
        // such waits end with EINTR when a child has ended.
        let interruptible = self.sigchld_handled() && wait.is_readiness();
        // An armed timer must be able to interrupt the wait (in virtual
        // time, which only the run loop advances).
        let timer = self.process.next_timer_deadline().is_some();
        if !self.others_alive() && !interruptible && !timer {
            return None;
        }
        match probe(wait, a)? {
            Probe::Fd { fd, events } => {
                if blocking_fd(fd) && !ready(fd, events) {
                    return Some(self.wait_host(Wait::Io {
                        fd,
                        events,
                        deadline: None,
                    }));
                }
                let nr = self.cpu.uc.reg(Reg::RAX);
                if events != libc::POLLOUT || !blocking_fd(fd) {
                    return None;
                }
                if nr == libc::SYS_write as u64 {
                    if let Some(r) = self.pipe_write(fd, a, call) {
                        return Some(r);
                    }
                }
                let send = nr == libc::SYS_sendto as u64;
                if (send || nr == libc::SYS_write as u64) && stream_socket(fd) {
                    return Some(self.stream_send(fd, a, send, call));
                }
                if nr == libc::SYS_sendmsg as u64 && stream_socket(fd) {
                    return self.stream_sendmsg(fd, a, call);
                }
                None
            }
            Probe::Nonblocking {
                arg,
                value,
                timeout,
            } => {
                let mut b = a;
                b[arg] = value;
                // waitid returns 0 whether or not a child was waitable:
                // si_pid (byte 16 of the siginfo), zeroed first, tells.
                let waitid_info = matches!(wait, HostWait::Child { arg: 3 }).then_some(a[2]);
                if let Some(info) = waitid_info.filter(|&i| i != 0) {
                    self.cpu.mem.write(info + 16, &[0u8; 4])?;
                }
                let r = call(self, b);
                if let (Val(0), Some(info)) = (&r, waitid_info.filter(|&i| i != 0)) {
                    if self.cpu.mem.read_u32(info + 16).is_some_and(|pid| pid != 0) {
                        return Some(r);
                    }
                }
                Some(self.retry_unless_done(r, timeout, wait))
            }
            Probe::TimeoutPtr { arg, micro } => {
                let ptr = a[arg];
                let timeout = if ptr == 0 {
                    None
                } else {
                    let s = self.cpu.mem.read_u64(ptr)?;
                    let frac = self.cpu.mem.read_u64(ptr + 8)?;
                    let ns = s.saturating_mul(1_000_000_000).saturating_add(if micro {
                        frac * 1000
                    } else {
                        frac
                    });
                    if ns == 0 {
                        return None;
                    }
                    Some(ns)
                };
                // A zero timeout in scratch memory below the red zone.
                let scratch = (self.cpu.uc.reg(Reg::RSP) - 512) & !15;
                let saved = self.cpu.mem.slice(scratch, 16)?.to_vec();
                self.cpu.mem.write(scratch, &[0u8; 16])?;
                let mut b = a;
                b[arg] = scratch;
                let r = call(self, b);
                let _ = self.cpu.mem.write(scratch, &saved);
                Some(self.retry_unless_done(r, timeout, wait))
            }
        }
    }

    /// A blocking `write` to a pipe (`a`: fd, buffer, length), made a part
    /// at a time when the pipe cannot take the rest at once: natively the
    /// call blocks until its reader has taken what did not fit, and that
    /// reader may be another thread of this process. What fits is
    /// written, the thread waits for room and makes the call again, which
    /// goes on past what it wrote (the thread's `partial_write`); the
    /// result is the whole length, or what was written when an error or a
    /// signal (linux::signals) ends the call, as natively. `None`: not a
    /// pipe, everything fits, or a write of at most `PIPE_BUF` bytes (which
    /// the kernel makes at once): the call as usual.
    fn pipe_write(
        &mut self,
        fd: i32,
        a: [u64; 6],
        call: &mut dyn FnMut(&mut Kernel, [u64; 6]) -> Ret,
    ) -> Option<Ret> {
        let space = pipe_space(fd)?;
        let done = self.partial_done(a[1], a[2]);
        let rest = a[2] - done;
        // A write of at most PIPE_BUF bytes is atomic: never split.
        if done == 0 && (rest <= space || rest <= libc::PIPE_BUF as u64) {
            return None;
        }
        let r = if space > 0 {
            call(self, [a[0], a[1] + done, rest.min(space), a[3], a[4], a[5]])
        } else {
            Val(0)
        };
        Some(self.sent_part(fd, (a[1], a[2]), done, r))
    }

    /// A blocking `write` or `sendto` (`send`) to a stream socket (`a`: fd,
    /// buffer, length, flags), made a part at a time: natively the call
    /// blocks until the peer has taken what does not fit, and that peer may
    /// be another thread of this process. The call is made without waiting
    /// (`sendto` with `MSG_DONTWAIT`, for a `write` too: the same on a
    /// socket); if it took less than the rest, the thread waits for room
    /// and makes the call again, going on past what was sent (its
    /// `partial_write`), as [`Kernel::pipe_write`] does for pipes.
    fn stream_send(
        &mut self,
        fd: i32,
        a: [u64; 6],
        send: bool,
        call: &mut dyn FnMut(&mut Kernel, [u64; 6]) -> Ret,
    ) -> Ret {
        let done = self.partial_done(a[1], a[2]);
        let (buf, rest) = (a[1] + done, a[2] - done);
        let r = if send {
            call(self, [a[0], buf, rest, a[3] | MSG_DONTWAIT, a[4], a[5]])
        } else {
            self.send_dontwait(fd, buf, rest, 0)
        };
        self.sent_part(fd, (a[1], a[2]), done, r)
    }

    /// A blocking `sendmsg` to a stream socket (`a`: fd, `msghdr`, flags),
    /// made a part at a time as [`Kernel::stream_send`]: the whole message
    /// (with its control data) first, without waiting; after a part, the
    /// rest of the iovec it stopped in, and so on. `None` when the message
    /// cannot be read (the call as usual then reports it).
    fn stream_sendmsg(
        &mut self,
        fd: i32,
        a: [u64; 6],
        call: &mut dyn FnMut(&mut Kernel, [u64; 6]) -> Ret,
    ) -> Option<Ret> {
        let mem = &self.cpu.mem;
        let (iov, count) = (mem.read_u64(a[1] + 16)?, mem.read_u64(a[1] + 24)?);
        if count > 1024 {
            return None;
        }
        let mut parts = Vec::with_capacity(count as usize);
        for i in 0..count {
            parts.push((mem.read_u64(iov + 16 * i)?, mem.read_u64(iov + 16 * i + 8)?));
        }
        let total = parts.iter().try_fold(0u64, |t, p| t.checked_add(p.1))?;
        let done = self.partial_done(a[1], total);
        let r = if done == 0 {
            call(self, [a[0], a[1], a[2] | MSG_DONTWAIT, a[3], a[4], a[5]])
        } else {
            // The control data went with the first part.
            let mut skip = done;
            let &(base, len) = parts.iter().find(|p| {
                let here = skip < p.1;
                if !here {
                    skip -= p.1;
                }
                here
            })?;
            self.send_dontwait(fd, base + skip, len - skip, a[2])
        };
        Some(self.sent_part(fd, (a[1], total), done, r))
    }

    /// The bytes a blocking write or send of `len` bytes from `buf` (a
    /// message, for `sendmsg`) already wrote, when this thread is making it
    /// again.
    fn partial_done(&mut self, buf: u64, len: u64) -> u64 {
        let cur = self.cpu.cur;
        match self.cpu.threads[cur].partial_write.take() {
            Some((b, l, done)) if b == buf && l == len => done,
            _ => 0,
        }
    }

    /// `sendto(fd, buf, len, flags | MSG_DONTWAIT)`.
    fn send_dontwait(&mut self, fd: i32, buf: u64, len: u64, flags: u64) -> Ret {
        let pc = self.cpu.uc.reg(Reg::RIP);
        let b = [fd as u64, buf, len, flags | MSG_DONTWAIT, 0, 0];
        self.dispatch_once(Some(Sysno::sendto), libc::SYS_sendto as u64, b, pc)
    }

    /// After a part of a blocking write or send (`key`: its buffer and
    /// whole length; `done` written before this part, `r` this part's
    /// result): the call's result, or a wait for room before the next part.
    fn sent_part(&mut self, fd: i32, key: (u64, u64), done: u64, r: Ret) -> Ret {
        let wrote = match r {
            Val(n) if n >= 0 => n as u64,
            Val(e) if e == -i64::from(libc::EAGAIN) => 0,
            Val(e) => return Val(if done > 0 { done as i64 } else { e }),
            other => return other,
        };
        let done = done + wrote;
        if done >= key.1 {
            return Val(done as i64);
        }
        let cur = self.cpu.cur;
        self.cpu.threads[cur].partial_write = Some((key.0, key.1, done));
        self.wait_host(Wait::Io {
            fd,
            events: libc::POLLOUT,
            deadline: None,
        })
    }

    /// After a call made without blocking: its result, or (if it returned
    /// 0, "nothing yet") a wait for the call to be made again.
    fn retry_unless_done(&mut self, r: Ret, timeout: Option<u64>, wait: HostWait) -> Ret {
        match r {
            Val(0) if wait.is_readiness() && self.sigchld_handled() && child_waitable() => {
                Val(-i64::from(libc::EINTR))
            }
            Val(0) => {
                let deadline = self.wait_deadline(timeout);
                // epoll's descriptor is itself pollable; the others are
                // retried every round.
                let wait = match wait {
                    HostWait::TimeoutMs { on_fd: true, .. } => Wait::Io {
                        fd: self.cpu.uc.reg(Reg::RDI) as i32,
                        events: POLLIN,
                        deadline,
                    },
                    _ => Wait::Retry {
                        deadline,
                        expired: 0,
                    },
                };
                self.wait_host(wait)
            }
            r => r,
        }
    }

    /// Blocks the current thread on the host; its call is made again when
    /// it runs next.
    fn wait_host(&mut self, w: Wait) -> Ret {
        self.block(w)
    }

    /// Whether the guest installed a SIGCHLD handler (not the default
    /// action, not ignored).
    fn sigchld_handled(&self) -> bool {
        self.process
            .sigactions
            .get(libc::SIGCHLD as usize)
            .is_some_and(|act| u64::from_le_bytes(act[..8].try_into().expect("8 bytes")) > 1)
    }

    /// Lets threads whose host waits are over run: they make their call
    /// again. Waits in the host's `poll` up to `timeout` (`None`: as long
    /// as it takes) when no thread is runnable, and advances virtual time
    /// by the real time it waited.
    pub fn poll_host(&mut self, timeout: Option<Duration>) {
        let mut fds: Vec<libc::pollfd> = Vec::new();
        let mut who: Vec<usize> = Vec::new();
        let mut retry = false;
        for (i, t) in self.cpu.threads.iter().enumerate() {
            match t.state {
                ThreadState::Blocked(Wait::Io { fd, events, .. }) => {
                    fds.push(libc::pollfd {
                        fd,
                        events,
                        revents: 0,
                    });
                    who.push(i);
                }
                ThreadState::Blocked(Wait::Retry { .. }) => retry = true,
                _ => {}
            }
        }
        // Calls that cannot be polled are retried every few milliseconds.
        let step = Duration::from_millis(if self.process.host_retry_rounds > 8 {
            10
        } else {
            1
        });
        let timeout = match (timeout, retry) {
            (Some(t), true) => Some(t.min(step)),
            (None, true) => Some(step),
            (t, false) => t,
        };
        let ms = timeout.map_or(-1, |t| t.as_millis().min(i32::MAX as u128) as i32);
        let started = Instant::now();
        // SAFETY: fds is a valid array of fds.len() pollfd structures.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if timeout != Some(Duration::ZERO) {
            self.cpu.vtime = self
                .cpu
                .vtime
                .saturating_add(started.elapsed().as_nanos() as u64);
        }
        for (k, f) in fds.iter().enumerate() {
            if n > 0 && f.revents != 0 {
                self.restart(who[k]);
            }
        }
        if retry {
            self.process.host_retry_rounds = self.process.host_retry_rounds.saturating_add(1);
            for i in 0..self.cpu.threads.len() {
                if matches!(
                    self.cpu.threads[i].state,
                    ThreadState::Blocked(Wait::Retry { .. })
                ) {
                    self.restart(i);
                }
            }
        }
    }

    /// The virtual-time deadline of a wait of `timeout` ns that starts now,
    /// or of the wait this call makes again.
    pub(super) fn wait_deadline(&mut self, timeout: Option<u64>) -> Option<u64> {
        let again = self.cpu.threads[self.cpu.cur].restart_deadline.take();
        again.or_else(|| timeout.map(|t| self.cpu.vtime.saturating_add(t)))
    }

    /// Thread `i` runs again from its system call, which it makes again
    /// (its saved RIP is just past the `syscall`, RAX still the number)
    /// with the same deadline.
    fn restart(&mut self, i: usize) {
        self.cpu.threads[i].restart_deadline = match self.cpu.threads[i].state {
            ThreadState::Blocked(Wait::Io { deadline, .. } | Wait::Retry { deadline, .. }) => {
                deadline
            }
            _ => None,
        };
        self.cpu.set_state(i, ThreadState::Runnable);
        let t = &mut self.cpu.threads[i];
        let rip = t.ctx.reg(Reg::RIP);
        t.ctx.set_reg(Reg::RIP, rip.wrapping_sub(2));
        t.ctx_changed = true;
    }
}

/// How a call that may `wait` on the host is made without blocking, for
/// arguments `a`; `None` when these arguments do not wait.
fn probe(wait: HostWait, a: [u64; 6]) -> Option<Probe> {
    const MSG_DONTWAIT: u64 = 0x40;
    const WNOHANG: u64 = 1;
    Some(match wait {
        HostWait::Fd { events, flags } => {
            if flags.is_some_and(|i| a[i] & MSG_DONTWAIT != 0) {
                return None;
            }
            Probe::Fd {
                fd: a[0] as i32,
                events,
            }
        }
        // Negative: forever; zero: the call does not wait.
        HostWait::TimeoutMs { arg, .. } => {
            let ms = a[arg] as i32;
            if ms == 0 {
                return None;
            }
            Probe::Nonblocking {
                arg,
                value: 0,
                timeout: (ms > 0).then(|| a[arg] * 1_000_000),
            }
        }
        HostWait::TimeoutPtr { arg, micro } => Probe::TimeoutPtr { arg, micro },
        HostWait::Child { arg } => {
            if a[arg] & WNOHANG != 0 {
                return None;
            }
            Probe::Nonblocking {
                arg,
                value: a[arg] | WNOHANG,
                timeout: None,
            }
        }
    })
}

/// Whether a child of this process has ended and not been waited for.
fn child_waitable() -> bool {
    // SAFETY: waitid with a valid siginfo; WNOWAIT leaves the child
    // waitable.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        r == 0 && info.si_pid() != 0
    }
}

/// Whether `fd` blocks (it has no `O_NONBLOCK`; a call on a non-blocking
/// descriptor returns at once anyway).
fn blocking_fd(fd: i32) -> bool {
    // SAFETY: fcntl F_GETFL takes no pointer.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl >= 0 && fl & libc::O_NONBLOCK == 0
}

/// The bytes pipe `fd` can take now without blocking (its capacity less
/// what is unread), or `None` when `fd` is not a pipe.
fn pipe_space(fd: i32) -> Option<u64> {
    // SAFETY: fstat writes one stat; fcntl F_GETPIPE_SZ takes no pointer;
    // ioctl FIONREAD writes one int.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFIFO {
            return None;
        }
        let size = libc::fcntl(fd, libc::F_GETPIPE_SZ);
        let mut unread: libc::c_int = 0;
        if size < 0 || libc::ioctl(fd, libc::FIONREAD, &mut unread) != 0 {
            return None;
        }
        Some(u64::try_from(size - unread).unwrap_or(0))
    }
}

/// Whether `fd` is a stream socket (`SOCK_STREAM`: a send may be split;
/// datagrams never are).
fn stream_socket(fd: i32) -> bool {
    let mut ty: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes one int and its length.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut ty as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    r == 0 && ty == libc::SOCK_STREAM
}

/// Whether `fd` is ready for `events` now (or in error: the call then
/// returns the error).
fn ready(fd: i32, events: i16) -> bool {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, 0) != 0 }
}

/// Whether some thread waits on the host.
pub fn has_host_waits(threads: &[Thread]) -> bool {
    threads.iter().any(|t| {
        matches!(
            t.state,
            ThreadState::Blocked(Wait::Io { .. } | Wait::Retry { .. })
        )
    })
}
