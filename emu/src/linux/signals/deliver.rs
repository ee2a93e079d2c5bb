//! Signals sent to the process or to a thread, routed and delivered as the
//! kernel does: a process-directed signal goes to a thread that does not
//! block it (the running one first, then the first in creation order); a
//! signal is delivered when its thread next runs; a thread waiting in a
//! system call is interrupted first.

use super::{bit, host, SigInfo, UNBLOCKABLE};
use crate::cpu::uc::Reg;
use crate::linux::kernel::Kernel;
use crate::linux::syscalls::facts::facts_of;
use crate::linux::syscalls::Ret::{self, Val};
use crate::machine::{Stop, ThreadState, Wait};

/// `si_code` of `kill`.
pub(super) const SI_USER: i32 = 0;
/// `si_code` of `tkill`/`tgkill`.
const SI_TKILL: i32 = -6;
/// `sa_flags`: make an interrupted system call again after the handler.
const SA_RESTART: u64 = 0x1000_0000;
const EINTR: i64 = libc::EINTR as i64;
const EINVAL: i64 = libc::EINVAL as i64;
const EFAULT: i64 = libc::EFAULT as i64;
const EAGAIN: i64 = libc::EAGAIN as i64;

/// What the run loop does after routing or delivering signals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Go on.
    Continue,
    /// The process dies of this signal (its default action).
    Terminate(i32),
}

/// What a signal does when it is delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Disposition {
    Handler,
    Ignore,
    Terminate,
}

impl Kernel<'_> {
    fn disposition(&self, sig: i32) -> Disposition {
        if sig == libc::SIGKILL {
            return Disposition::Terminate;
        }
        match self.sigaction(sig).0 {
            0 => match sig {
                // Ignored by default; the stop signals stop nothing here.
                libc::SIGCHLD
                | libc::SIGURG
                | libc::SIGWINCH
                | libc::SIGCONT
                | libc::SIGSTOP
                | libc::SIGTSTP
                | libc::SIGTTIN
                | libc::SIGTTOU => Disposition::Ignore,
                _ => Disposition::Terminate,
            },
            1 => Disposition::Ignore,
            _ => Disposition::Handler,
        }
    }

    /// Sends `info.signal` to the process. An ignored signal is discarded,
    /// as the kernel discards it when it is generated.
    pub fn send_process_signal(&mut self, info: SigInfo) {
        if self.disposition(info.signal) == Disposition::Ignore {
            return;
        }
        self.process.signals.pending |= bit(info.signal);
        self.keep_info(info);
    }

    /// Sends `info.signal` to thread `i`.
    pub(super) fn send_thread_signal(&mut self, i: usize, info: SigInfo) {
        if self.disposition(info.signal) == Disposition::Ignore {
            return;
        }
        self.cpu.threads[i].sig.pending |= bit(info.signal);
        self.cpu.sets.maybe_signalled = true;
        self.keep_info(info);
    }

    /// The `siginfo` kept for `sig`, taken (a `kill`'s when none was kept).
    fn take_info(&mut self, sig: i32) -> SigInfo {
        let pos = self
            .process
            .signals
            .info
            .iter()
            .position(|x| x.signal == sig);
        pos.map_or(
            SigInfo {
                signal: sig,
                code: SI_USER,
                word16: 0,
                word24: 0,
            },
            |p| self.process.signals.info.remove(p),
        )
    }

    fn keep_info(&mut self, info: SigInfo) {
        // Standard signals do not queue: the latest sender is kept.
        self.process
            .signals
            .info
            .retain(|i| i.signal != info.signal);
        self.process.signals.info.push(info);
    }

    /// Whether thread `i` has a signal to take now (the run loop should
    /// get control: [`Kernel::route_signals`], [`Kernel::deliver_pending`]).
    pub fn signal_due(&self, i: usize) -> bool {
        let t = &self.cpu.threads[i].sig;
        (self.process.signals.pending | t.pending) & !t.mask != 0
            || host::any()
            || self
                .process
                .next_timer_deadline()
                .is_some_and(|d| d <= self.cpu.vtime)
    }

    /// Whether a live thread has a signal pending (looked for only after
    /// one was made pending since none was found).
    fn thread_signal_pending(&mut self) -> bool {
        if !self.cpu.sets.maybe_signalled {
            return false;
        }
        let threads = &self.cpu.threads;
        let any = self
            .cpu
            .sets
            .live
            .iter()
            .any(|&i| threads[i].sig.pending != 0);
        self.cpu.sets.maybe_signalled = any;
        any
    }

    /// Between quanta: takes the signals other processes sent and the
    /// timers that expired, routes process-directed signals to threads and
    /// interrupts threads waiting in a system call that have a signal to
    /// take. Returns [`Delivery::Terminate`] when a signal's default action
    /// ends the process.
    pub fn route_signals(&mut self) -> Delivery {
        let from_host = host::take();
        let timer_due = self
            .process
            .next_timer_deadline()
            .is_some_and(|d| d <= self.cpu.vtime);
        if from_host == 0
            && !timer_due
            && self.process.signals.pending == 0
            && !self.thread_signal_pending()
        {
            return Delivery::Continue;
        }
        for sig in 1..=64 {
            if from_host & bit(sig) != 0 {
                self.send_process_signal(SigInfo {
                    signal: sig,
                    code: SI_USER,
                    word16: 0,
                    word24: 0,
                });
            }
        }
        self.expire_signal_timers();
        let live: Vec<usize> = self.cpu.sets.live.iter().copied().collect();
        let mut pending = self.process.signals.pending;
        while pending != 0 {
            let sig = pending.trailing_zeros() as i32 + 1;
            pending &= pending - 1;
            let wants = |m: &Kernel, i: usize| m.cpu.threads[i].sig.mask & bit(sig) == 0;
            let target = if live.contains(&self.cpu.cur) && wants(self, self.cpu.cur) {
                Some(self.cpu.cur)
            } else {
                live.iter().copied().find(|&i| wants(self, i))
            };
            let Some(t) = target else { continue };
            self.process.signals.pending &= !bit(sig);
            self.cpu.threads[t].sig.pending |= bit(sig);
            self.cpu.sets.maybe_signalled = true;
        }
        // A thread in rt_sigtimedwait takes a signal it waits for before
        // any disposition applies, as the kernel dequeues it.
        for &i in &live {
            if let ThreadState::Blocked(Wait::SigWait {
                set, info, mask, ..
            }) = self.cpu.threads[i].state
            {
                if let Some(r) = self.take_waited(i, set, info) {
                    self.cpu.threads[i].sig.mask = mask;
                    self.wake_thread(i, r);
                }
            }
        }
        for &i in &live {
            let ready = self.cpu.threads[i].sig.pending & !self.cpu.threads[i].sig.mask;
            let mut rest = ready;
            while rest != 0 {
                let sig = rest.trailing_zeros() as i32 + 1;
                rest &= rest - 1;
                match self.disposition(sig) {
                    Disposition::Terminate => return Delivery::Terminate(sig),
                    Disposition::Ignore => self.cpu.threads[i].sig.pending &= !bit(sig),
                    Disposition::Handler => {}
                }
            }
            let ready = self.cpu.threads[i].sig.pending & !self.cpu.threads[i].sig.mask;
            if ready != 0 {
                if let ThreadState::Blocked(w) = self.cpu.threads[i].state {
                    if let Wait::SigWait { mask, .. } = w {
                        self.cpu.threads[i].sig.mask = mask;
                    }
                    // A pipe write that wrote a part returns that part
                    // (linux::host_wait), as natively: it is not restarted.
                    if let Some((_, _, done)) = self.cpu.threads[i].partial_write.take() {
                        self.wake_thread(i, done as i64);
                        continue;
                    }
                    let nr = self.cpu.threads[i].ctx.reg(Reg::RAX);
                    self.cpu.threads[i].sig.interrupted = Some(nr);
                    self.wake_thread(i, -EINTR);
                }
            }
        }
        Delivery::Continue
    }

    /// The signal [`Kernel::deliver_pending`] would deliver now, if it
    /// runs a handler or ends the process (an ignored one is dropped
    /// unseen, as the kernel drops it before ptrace would show it).
    pub fn signal_to_take(&self) -> Option<i32> {
        let t = &self.cpu.threads[self.cpu.cur].sig;
        let ready = t.pending & !t.mask;
        if ready == 0 {
            return None;
        }
        let sig = ready.trailing_zeros() as i32 + 1;
        match self.disposition(sig) {
            Disposition::Ignore => None,
            Disposition::Terminate | Disposition::Handler => Some(sig),
        }
    }

    /// Drops `sig`, pending for thread `i` (a debugger resumed without it).
    pub fn discard_signal(&mut self, i: usize, sig: i32) {
        if let Some(t) = self.cpu.threads.get_mut(i) {
            t.sig.pending &= !bit(sig);
        }
    }

    /// Delivers one signal the current thread (whose registers are in the
    /// CPU) has to take: runs its handler, or ends the process.
    pub fn deliver_pending(&mut self) -> Delivery {
        let i = self.cpu.cur;
        let t = &self.cpu.threads[i].sig;
        let ready = t.pending & !t.mask;
        if ready == 0 {
            return Delivery::Continue;
        }
        let sig = ready.trailing_zeros() as i32 + 1;
        self.cpu.threads[i].sig.pending &= !bit(sig);
        let interrupted = self.cpu.threads[i].sig.interrupted.take();
        match self.disposition(sig) {
            Disposition::Terminate => return Delivery::Terminate(sig),
            Disposition::Ignore => {
                if let Some(m) = self.cpu.threads[i].sig.saved_mask.take() {
                    self.cpu.threads[i].sig.mask = m;
                }
                return Delivery::Continue;
            }
            Disposition::Handler => {}
        }
        let flags = self.sigaction(sig).1;
        if let Some(nr) = interrupted {
            if flags & SA_RESTART != 0 && facts_of(nr).restartable {
                let rip = self.cpu.uc.reg(Reg::RIP);
                self.cpu.uc.set_reg(Reg::RIP, rip - 2);
                self.cpu.uc.set_reg(Reg::RAX, nr);
            }
        }
        let info = self.take_info(sig);
        if self.push_frame(info) {
            Delivery::Continue
        } else {
            Delivery::Terminate(libc::SIGSEGV)
        }
    }

    /// Makes the CPU stop after the current system call if a signal is
    /// due, so that the run loop routes and delivers it.
    pub fn stop_for_signals(&mut self, cur: usize) {
        if self.cpu.stop.is_none() && self.cpu.threads.get(cur).is_some() && self.signal_due(cur) {
            self.cpu.stop = Some(Stop::Preempt);
            self.cpu.uc.stop();
        }
    }

    /// Notes that the current call returned `EINTR` because a host signal
    /// arrived (a call the host blocked in), so that the handler's
    /// `SA_RESTART` can make it again.
    pub fn note_host_eintr(&mut self, cur: usize, nr: u64, ret: i64) {
        if ret == -EINTR && host::any() {
            if let Some(t) = self.cpu.threads.get_mut(cur) {
                t.sig.interrupted = Some(nr);
            }
        }
    }

    /// SIGKILL: the process ends now.
    fn killed_now(&mut self) -> Ret {
        self.cpu.stop = Some(Stop::Killed(libc::SIGKILL));
        self.cpu.uc.stop();
        Ret::NoReturn
    }

    /// The `siginfo` of a signal this process sends itself: its pid and
    /// uid.
    fn sent_by_self(&self, sig: i32, code: i32) -> SigInfo {
        let pid = u64::from(self.config.process.pid);
        // SAFETY: getuid has no arguments and cannot fail.
        let uid = u64::from(unsafe { libc::getuid() });
        SigInfo {
            signal: sig,
            code,
            word16: pid | uid << 32,
            word24: 0,
        }
    }

    /// `kill` of this process by itself: `SIGKILL` ends it now; other
    /// signals are pending for the run loop.
    pub(in crate::linux) fn kill_self(&mut self, sig: i32) -> Ret {
        if !(0..=64).contains(&sig) {
            return Val(-EINVAL);
        }
        if sig == 0 {
            return Val(0);
        }
        if sig == libc::SIGKILL {
            return self.killed_now();
        }
        let info = self.sent_by_self(sig, SI_USER);
        self.send_process_signal(info);
        Val(0)
    }

    /// `tkill`/`tgkill` of a thread of this process.
    pub(in crate::linux) fn sys_tgkill(&mut self, tid: u32, sig: i32) -> Ret {
        if !(0..=64).contains(&sig) {
            return Val(-EINVAL);
        }
        let Some(i) = self
            .cpu
            .threads
            .iter()
            .position(|t| t.tid == tid && t.state != ThreadState::Exited)
        else {
            return Val(-i64::from(libc::ESRCH));
        };
        if sig == 0 {
            return Val(0);
        }
        if sig == libc::SIGKILL {
            return self.killed_now();
        }
        let info = self.sent_by_self(sig, SI_TKILL);
        self.send_thread_signal(i, info);
        Val(0)
    }

    /// `rt_sigaction`'s side effects once the new action is stored:
    /// pending signals now ignored are discarded, and the host mirrors the
    /// disposition so that other processes' signals reach the guest.
    pub(crate) fn sigaction_changed(&mut self, sig: i32) {
        if self.disposition(sig) == Disposition::Ignore {
            self.process.signals.pending &= !bit(sig);
            for t in &mut self.cpu.threads {
                t.sig.pending &= !bit(sig);
            }
        }
        host::mirror(sig, self.sigaction(sig).0);
    }

    /// `rt_sigprocmask(how, set, oldset, sigsetsize)` of the current thread.
    pub(in crate::linux) fn sys_rt_sigprocmask(
        &mut self,
        how: u64,
        set: u64,
        old: u64,
        size: u64,
    ) -> Ret {
        if size != 8 {
            return Val(-EINVAL);
        }
        let cur = self.cpu.threads[self.cpu.cur].sig.mask;
        let new = if set != 0 {
            let Some(s) = self.cpu.mem.read_u64(set) else {
                return Val(-EFAULT);
            };
            match how {
                0 => Some(cur | s),
                1 => Some(cur & !s),
                2 => Some(s),
                _ => return Val(-EINVAL),
            }
        } else {
            None
        };
        if old != 0 && self.cpu.mem.write(old, &cur.to_le_bytes()).is_none() {
            return Val(-EFAULT);
        }
        if let Some(m) = new {
            self.cpu.threads[self.cpu.cur].sig.mask = m & !UNBLOCKABLE;
        }
        Val(0)
    }

    /// `rt_sigpending(set, sigsetsize)`: the blocked signals pending.
    pub(in crate::linux) fn sys_rt_sigpending(&mut self, set: u64, size: u64) -> Ret {
        if size != 8 {
            return Val(-EINVAL);
        }
        let t = &self.cpu.threads[self.cpu.cur].sig;
        let p = (self.process.signals.pending | t.pending) & t.mask;
        if self.cpu.mem.write(set, &p.to_le_bytes()).is_none() {
            return Val(-EFAULT);
        }
        Val(0)
    }

    /// `rt_sigsuspend(mask, sigsetsize)`: waits with `mask` until a handler
    /// runs; the handler's return restores the thread's mask.
    pub(in crate::linux) fn sys_rt_sigsuspend(&mut self, mask: u64, size: u64) -> Ret {
        if size != 8 {
            return Val(-EINVAL);
        }
        let Some(m) = self.cpu.mem.read_u64(mask) else {
            return Val(-EFAULT);
        };
        let t = &mut self.cpu.threads[self.cpu.cur].sig;
        t.saved_mask = Some(t.mask);
        t.mask = m & !UNBLOCKABLE;
        if self.signal_due(self.cpu.cur) {
            return Val(-EINTR);
        }
        self.block(Wait::Signal)
    }

    /// `rt_sigtimedwait(set, info, timeout, sigsetsize)`: takes a pending
    /// signal of `set` (the thread's own first, the lowest number first)
    /// instead of delivering it, and returns its number; otherwise waits,
    /// with `set` unblocked as the kernel does, until one is sent, a
    /// handler runs (`EINTR`) or `timeout` passes (`EAGAIN`; a zero
    /// timeout only polls).
    pub(in crate::linux) fn sys_rt_sigtimedwait(
        &mut self,
        set: u64,
        info: u64,
        timeout: u64,
        size: u64,
    ) -> Ret {
        if size != 8 {
            return Val(-EINVAL);
        }
        let Some(want) = self.cpu.mem.read_u64(set) else {
            return Val(-EFAULT);
        };
        let want = want & !UNBLOCKABLE;
        let deadline = if timeout == 0 {
            None
        } else {
            let Some(ns) = self.read_timespec(timeout) else {
                return Val(-EFAULT);
            };
            Some(self.cpu.vtime.saturating_add(ns))
        };
        if let Some(r) = self.take_waited(self.cpu.cur, want, info) {
            return Val(r);
        }
        if deadline == Some(self.cpu.vtime) {
            return Val(-EAGAIN);
        }
        let t = &mut self.cpu.threads[self.cpu.cur].sig;
        let mask = t.mask;
        t.mask &= !want;
        self.block(Wait::SigWait {
            set: want,
            info,
            mask,
            deadline,
        })
    }

    /// Takes the lowest pending signal of `want` for thread `i` (its own,
    /// else the process's) and writes its `siginfo` to `info` (unless 0):
    /// the signal's number, or `-EFAULT`; None if none is pending.
    fn take_waited(&mut self, i: usize, want: u64, info: u64) -> Option<i64> {
        let own = self.cpu.threads[i].sig.pending & want;
        let bits = if own != 0 {
            own
        } else {
            self.process.signals.pending & want
        };
        if bits == 0 {
            return None;
        }
        let sig = bits.trailing_zeros() as i32 + 1;
        if own != 0 {
            self.cpu.threads[i].sig.pending &= !bit(sig);
        } else {
            self.process.signals.pending &= !bit(sig);
        }
        let si = self.take_info(sig);
        if info != 0 {
            // signo, errno, code, then the fields of the code.
            let mut b = [0u8; 128];
            b[..4].copy_from_slice(&(si.signal as u32).to_le_bytes());
            b[8..12].copy_from_slice(&(si.code as u32).to_le_bytes());
            b[16..24].copy_from_slice(&si.word16.to_le_bytes());
            b[24..32].copy_from_slice(&si.word24.to_le_bytes());
            if self.cpu.mem.write(info, &b).is_none() {
                return Some(-EFAULT);
            }
        }
        Some(i64::from(sig))
    }

    /// `pause()`: waits until a handler runs.
    pub(in crate::linux) fn sys_pause(&mut self) -> Ret {
        if self.signal_due(self.cpu.cur) {
            return Val(-EINTR);
        }
        self.block(Wait::Signal)
    }

    /// After `fork`, in the child: no signal pending, no timer.
    pub fn signals_forked_child(&mut self) {
        self.process.signals.pending = 0;
        self.process.signals.info.clear();
        self.process.signals.timers = Default::default();
        let cur = self.cpu.cur;
        self.cpu.threads[cur].sig.pending = 0;
    }
}
