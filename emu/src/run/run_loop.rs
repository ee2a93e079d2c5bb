//! The scheduling loop: running the guest's threads on the CPU until the
//! process ends, deadlocks, faults or is stopped.

use super::Emulator;
use super::Outcome;
use super::StopReason;
use crate::cpu::uc::Reg;
use crate::cpu::uc::UcError;
use crate::linux::signals;
use crate::linux::signals::Delivery;
use crate::machine::GuestFault;
use crate::machine::Machine;
use crate::machine::Stop;
use crate::machine::ThreadState;
use crate::machine::Wait;
use lard_detector_hw::event::EventKind;
use std::fmt::Write as _;
use std::time::Duration;
use std::time::Instant;

impl Emulator {
    /// Runs the guest's threads, a quantum at a time, until the process
    /// ends, deadlocks, faults or is stopped.
    pub(super) fn run_loop(&mut self) -> Outcome {
        let start = self.started.unwrap_or_else(Instant::now);
        let uc = self.machine.cpu.uc;
        let mut live = self.live; // whose registers are in the CPU
        let mut rotate = self.rotate;
        let mut rounds = 0u32;
        loop {
            self.keep_watchdog(start);
            if let Some(why) = self.external_stop(start) {
                return Outcome::Stopped(why);
            }
            let m = &mut *self.machine;
            m.expire_timeouts();
            if let Delivery::Terminate(signal) = m.route_signals() {
                return Outcome::Signaled {
                    signal,
                    fault: None,
                };
            }
            // Host waits that ended while other threads ran.
            rounds = rounds.wrapping_add(1);
            if rounds.is_multiple_of(16) && m.has_host_waits() {
                m.poll_host(Some(Duration::ZERO));
            }
            let runnable: Vec<usize> = m.cpu.sets.runnable.iter().copied().collect();
            if runnable.is_empty() {
                if m.cpu.sets.live.is_empty() {
                    return Outcome::Exited(m.process.last_exit_status);
                }
                // Advance virtual time to the earliest timeout, if any.
                let next = m
                    .cpu
                    .sets
                    .timed
                    .first()
                    .map(|&(d, _)| d)
                    .into_iter()
                    .chain(m.next_timer_deadline())
                    .min();
                // Threads waiting on the host: wait for it (virtual time
                // advances by the real time waited).
                if m.has_host_waits() {
                    let left = next.map(|d| Duration::from_nanos(d.saturating_sub(m.cpu.vtime)));
                    m.poll_host(left);
                    if let Some(d) = next {
                        if left.is_some_and(|l| l.is_zero()) {
                            m.cpu.vtime = m.cpu.vtime.max(d);
                        }
                    }
                    continue;
                }
                match next {
                    // In a tree of processes, the others run in real time:
                    // a process waits for its deadline in real time, and a
                    // signal (a child's SIGCHLD, a parent's kill) may come
                    // first (`timeout 1 sleep 5`).
                    Some(d) if m.config.process.labelled => {
                        wait_for_host_signal(m, Some(d));
                        continue;
                    }
                    Some(d) => {
                        m.cpu.vtime = m.cpu.vtime.max(d);
                        continue;
                    }
                    // The guest handles a signal another process may send:
                    // wait for one (virtual time advances by the real time
                    // waited).
                    None if signals::host::handled() => {
                        wait_for_host_signal(m, None);
                        continue;
                    }
                    None => return Outcome::Deadlock(deadlock_report(m)),
                }
            }
            // A paused quantum continues in the thread that was running.
            let paused = self.paused_quantum.take();
            let next = if paused.is_some()
                || (!rotate && m.cpu.threads[m.cpu.cur].state == ThreadState::Runnable)
            {
                m.cpu.cur
            } else {
                m.cpu.sched.pick(&runnable, m.cpu.cur)
            };
            // A thread whose saved registers changed while it waited (a
            // wake's return value) is loaded even if the CPU holds it.
            if next != live || m.cpu.threads[next].ctx_changed {
                if let Err(e) = m.cpu.threads[next].ctx.restore(uc) {
                    return internal(m, &format!("cannot switch threads: {e}"));
                }
                if next != live {
                    m.obs.stats.switches += 1;
                }
                live = next;
            }
            m.cpu.threads[next].ctx_changed = false;
            // (Resuming a paused quantum is no new quantum: no event.)
            if paused.is_none() && (next != m.cpu.cur || m.obs.stats.switches == 0) {
                m.cpu.cur = next;
                let pc = uc.reg(Reg::RIP);
                m.emit(pc, EventKind::ContextSwitch);
            }
            m.cpu.cur = next;
            m.obs.repeats.quantum_ended();
            // The block hook this replaces stopped at the entry of the
            // quantum-th block, so quantum - 1 blocks ran: keep those
            // interleavings (but always make progress).
            // (A debugger's pause left the block it stopped in counted; the
            // block re-entered on resuming is given back: gdb/hook.rs.)
            let contended = runnable.len() >= 2;
            let blocks = match paused {
                Some(left) => u64::try_from(left + 1).unwrap_or(1).max(1),
                None => m.cpu.sched.next_quantum(contended).saturating_sub(1).max(1),
            };
            // Under a debugger, a signal the thread is about to take stops
            // first; the resumed quantum is this one, and delivers it.
            if self.signal_stops {
                if let Some(signal) = m.signal_to_take() {
                    if self.signal_reported != Some((next, signal)) {
                        self.signal_reported = Some((next, signal));
                        self.paused_quantum = Some(blocks as i64 - 1);
                        self.live = live;
                        self.rotate = false;
                        return Outcome::SignalStop { signal };
                    }
                }
            }
            // A signal the thread has to take runs its handler first.
            let delivery = m.deliver_pending();
            self.signal_reported = None;
            if let Delivery::Terminate(signal) = delivery {
                return Outcome::Signaled {
                    signal,
                    fault: None,
                };
            }
            // Blocks test the instruction limit only while one is in force.
            m.cpu.uc.clock_limit(m.cpu.insn_limit != u64::MAX);
            m.cpu.clock.set_budget(blocks, m.cpu.insn_limit);
            m.cpu.stop = None;
            m.cpu.bad_access = None;
            let rip = uc.reg(Reg::RIP);
            let mut result = uc.start(rip);
            if !m.finish_sigreturn() {
                result = Err(UcError(unicorn_engine_sys::uc_error::READ_UNMAPPED));
            }
            // Scheduling steps: the blocks this quantum ran, if it had
            // competition (emu/src/cpu/sched.rs).
            let ran = blocks.saturating_sub(u64::try_from(m.cpu.clock.blocks_left()).unwrap_or(0));
            m.cpu.sched.ran(ran, contended);
            if contended {
                m.obs.stats.steps += ran;
            }
            // Accesses still buffered come before anything that follows.
            m.flush_accesses();
            // The quantum may end right after a Tracked instruction whose
            // adversarial read or write is not settled yet.
            m.settle_adversarial();
            m.sync_clock();
            if m.cpu.stop.is_none() {
                m.cpu.stop = m.clock_stop();
            }
            if let Err(e) = m.cpu.threads[m.cpu.cur].ctx.save(uc) {
                return internal(m, &format!("cannot save thread state: {e}"));
            }
            m.name_fresh_locals();
            rotate = false;
            match (m.cpu.stop.take(), result) {
                (Some(Stop::ExitGroup(code)), _) => return Outcome::Exited(code),
                (Some(Stop::Killed(signal)), _) => {
                    return Outcome::Signaled {
                        signal,
                        fault: None,
                    }
                }
                (Some(Stop::Fault(f)), _) if deliver_stop_fault(m, &f) => {
                    if let Err(e) = m.cpu.threads[m.cpu.cur].ctx.save(uc) {
                        return internal(m, &format!("cannot save thread state: {e}"));
                    }
                }
                (Some(Stop::Fault(f)), _) => {
                    return Outcome::Signaled {
                        signal: f.signal,
                        fault: Some(f),
                    }
                }
                (Some(Stop::StrictSyscall(nr)), _) => {
                    return Outcome::UnsupportedSyscall {
                        nr,
                        pc: uc.reg(Reg::RIP),
                    }
                }
                (Some(Stop::ObserverStop(pc)), _) => {
                    // A debugger may resume here: the instruction runs
                    // again in the rest of this quantum, as after its pause.
                    self.paused_quantum = Some(m.cpu.clock.blocks_left());
                    self.live = live;
                    self.rotate = false;
                    return Outcome::ObserverStop { pc };
                }
                (Some(Stop::Exec(req)), _) => return Outcome::Exec(req),
                (Some(Stop::InsnLimit), _) => {
                    return Outcome::Stopped(StopReason::MaxInsns(m.obs.stats.insns))
                }
                (Some(Stop::Debug), _) => {
                    self.paused_quantum = Some(m.cpu.clock.blocks_left());
                    self.live = live;
                    self.rotate = false;
                    return Outcome::Paused;
                }
                (_, Err(e)) if deliver_fault(m, e) => {
                    if let Err(e) = m.cpu.threads[m.cpu.cur].ctx.save(uc) {
                        return internal(m, &format!("cannot save thread state: {e}"));
                    }
                }
                (_, Err(_)) if vsyscall(m) => {
                    if let Err(e) = m.cpu.threads[m.cpu.cur].ctx.save(uc) {
                        return internal(m, &format!("cannot save thread state: {e}"));
                    }
                }
                (_, Err(e)) => {
                    return Outcome::Signaled {
                        signal: signal_of(m, e),
                        fault: Some(cpu_fault(m, e)),
                    }
                }
                (Some(Stop::Preempt), Ok(())) => rotate = true,
                (Some(Stop::Contended | Stop::Blocked | Stop::ThreadExit), Ok(())) => {}
                (None, Ok(())) => {
                    let pc = uc.reg(Reg::RIP);
                    return internal(m, &format!("emulation stopped unexpectedly at {pc:#x}"));
                }
            }
        }
    }
}

fn internal(m: &Machine, why: &str) -> Outcome {
    Outcome::Signaled {
        signal: libc::SIGABRT,
        fault: Some(GuestFault {
            signal: libc::SIGABRT,
            pc: m.cpu.uc.reg(Reg::RIP),
            addr: None,
            what: format!("internal emulator error: {why}"),
        }),
    }
}

/// The legacy vsyscall page's entry points (`gettimeofday`, `time`,
/// `getcpu` at 0xffffffffff600000, +0x400, +0x800), by their address's low
/// 47 bits: the CPU reports a fetch there truncated.
const VSYSCALLS: [(u64, u64); 3] = [
    (0x7fff_ff60_0000, 96),
    (0x7fff_ff60_0400, 201),
    (0x7fff_ff60_0800, 309),
];

/// If the thread faulted fetching a vsyscall entry point (old binaries
/// and the JVM call `time` there), makes the call as the kernel's
/// vsyscall emulation does — the system call, then a return to the caller
/// — and returns true.
fn vsyscall(m: &mut Machine) -> bool {
    const LOW47: u64 = (1 << 47) - 1;
    let Some((addr, what)) = m.cpu.bad_access else {
        return false;
    };
    let Some(&(_, nr)) = VSYSCALLS.iter().find(|(a, _)| addr & LOW47 == *a) else {
        return false;
    };
    if what != "execution of unmapped memory" {
        return false;
    }
    let uc = m.cpu.uc;
    let rsp = uc.reg(Reg::RSP);
    let Some(ret) = m
        .cpu
        .mem
        .slice(rsp, 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    else {
        return false;
    };
    uc.set_reg(Reg::RAX, nr);
    m.syscall();
    uc.set_reg(Reg::RSP, rsp + 8);
    uc.set_reg(Reg::RIP, ret);
    m.cpu.bad_access = None;
    true
}

/// A CPU fault of the current thread to the guest's handler, if it
/// installed one (linux::signals): SIGSEGV for a memory fault, SIGTRAP for
/// a breakpoint, SIGILL for an invalid instruction or another exception.
fn deliver_fault(m: &mut Machine, e: UcError) -> bool {
    use crate::linux::signals::FaultInfo;
    let signal = signal_of(m, e);
    let (code, addr) = match m.cpu.bad_access {
        // SI_KERNEL with no address, as Linux reports int3.
        _ if signal == libc::SIGTRAP => (0x80, 0),
        _ if signal == libc::SIGFPE => (fpe_code(m), m.cpu.uc.reg(Reg::RIP)),
        Some((a, what)) => {
            // SEGV_MAPERR for an unmapped address, SEGV_ACCERR for a
            // protection fault.
            let code = if what.contains("unmapped") { 1 } else { 2 };
            (code, a)
        }
        // ILL_ILLOPN at the instruction.
        None => (2, m.cpu.uc.reg(Reg::RIP)),
    };
    if m.deliver_fault(FaultInfo { signal, code, addr }) {
        m.cpu.bad_access = None;
        true
    } else {
        false
    }
}

/// A fault lard found itself (an invalid instruction, a LARD fault) to the
/// guest's handler, at the faulting instruction, if it installed one.
fn deliver_stop_fault(m: &mut Machine, f: &GuestFault) -> bool {
    use crate::linux::signals::FaultInfo;
    let code = match (f.signal, &m.cpu.bad_access) {
        (libc::SIGSEGV, Some((_, what))) if what.contains("unmapped") => 1,
        _ => 2,
    };
    let rip = m.cpu.uc.reg(Reg::RIP);
    m.cpu.uc.set_reg(Reg::RIP, f.pc);
    let info = FaultInfo {
        signal: f.signal,
        code,
        addr: f.addr.unwrap_or(f.pc),
    };
    if m.deliver_fault(info) {
        true
    } else {
        m.cpu.uc.set_reg(Reg::RIP, rip);
        false
    }
}

/// The signal a kernel sends for the CPU error `e` of the current thread.
fn signal_of(m: &Machine, e: UcError) -> i32 {
    use unicorn_engine_sys::uc_error as E;
    match e.0 {
        E::EXCEPTION if after_breakpoint(m) => libc::SIGTRAP,
        // #DE, #MF and #XM (an unmasked SIMD floating-point exception,
        // patch 0023).
        E::EXCEPTION if matches!(m.cpu.uc.last_exception(), Some(0 | 16 | 19)) => libc::SIGFPE,
        E::INSN_INVALID | E::EXCEPTION => libc::SIGILL,
        // A locked access across a page boundary of shared memory (patch
        // 0012), as Linux's split-lock detection reports it.
        E::READ_UNALIGNED | E::WRITE_UNALIGNED | E::FETCH_UNALIGNED => libc::SIGBUS,
        _ => libc::SIGSEGV,
    }
}

/// `si_code` of a `SIGFPE`: `FPE_INTDIV` for a divide error, else the
/// code Linux derives from the unmasked flags of MXCSR (#XM) or of the x87
/// status word (#MF, patch 0030): invalid, divide by zero, overflow,
/// underflow or denormal, inexact, in that order.
fn fpe_code(m: &Machine) -> i32 {
    let raised = match m.cpu.uc.last_exception() {
        Some(19) => {
            let mxcsr = m.cpu.uc.reg(Reg::MXCSR);
            mxcsr & !(mxcsr >> 7) & 0x3f
        }
        Some(16) => m.cpu.uc.reg(Reg::FPSW) & !m.cpu.uc.reg(Reg::FPCW) & 0x3f,
        _ => return 1, // FPE_INTDIV
    };
    match raised {
        r if r & 0x01 != 0 => 7, // FPE_FLTINV
        r if r & 0x04 != 0 => 3, // FPE_FLTDIV
        r if r & 0x08 != 0 => 4, // FPE_FLTOVF
        r if r & 0x12 != 0 => 5, // FPE_FLTUND
        r if r & 0x20 != 0 => 6, // FPE_FLTRES
        _ => 0,
    }
}

/// Whether the current thread stopped just past `int3` (or `int $3`): a
/// trap leaves the program counter after the instruction.
fn after_breakpoint(m: &Machine) -> bool {
    let rip = m.cpu.uc.reg(Reg::RIP);
    let byte = |a: u64| m.cpu.mem.slice(a, 1).map(|b| b[0]);
    byte(rip.wrapping_sub(1)) == Some(0xcc)
        || (byte(rip.wrapping_sub(2)) == Some(0xcd) && byte(rip.wrapping_sub(1)) == Some(3))
}

fn cpu_fault(m: &Machine, e: UcError) -> GuestFault {
    let pc = m.cpu.uc.reg(Reg::RIP);
    let (addr, what) = match m.cpu.bad_access {
        Some((a, w)) => (Some(a), w.to_string()),
        None if e.0 == unicorn_engine_sys::uc_error::WRITE_UNALIGNED => (
            None,
            "locked access across a page boundary of shared memory (a split lock)".to_string(),
        ),
        None => (None, format!("CPU exception: {e}")),
    };
    GuestFault {
        signal: signal_of(m, e),
        pc,
        addr,
        what,
    }
}

/// Waits in the host for a signal (the host handler's, which interrupts
/// the wait), up to the virtual-time `deadline` (at most 10 ms without
/// one); virtual time advances by the real time waited, to the deadline
/// when it passed.
fn wait_for_host_signal(m: &mut Machine, deadline: Option<u64>) {
    let t = Instant::now();
    let ms = deadline.map_or(10, |d| d.saturating_sub(m.cpu.vtime).div_ceil(1_000_000));
    if !signals::host::any() && ms > 0 {
        let ms = i32::try_from(ms).unwrap_or(i32::MAX);
        // SAFETY: poll on no descriptors is a sleep a signal interrupts.
        unsafe { libc::poll(std::ptr::null_mut(), 0, ms) };
    }
    m.cpu.vtime += u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
    if let Some(d) = deadline {
        if !signals::host::any() {
            m.cpu.vtime = m.cpu.vtime.max(d);
        }
    }
}

fn deadlock_report(m: &Machine) -> String {
    let mut s = String::from("deadlock: every live thread is blocked");
    for t in &m.cpu.threads {
        let what = match t.state {
            ThreadState::Blocked(Wait::Futex { addr, .. }) => {
                let obj = m
                    .obs
                    .objects
                    .describe_data(addr)
                    .map_or(String::new(), |d| format!(" ({d})"));
                format!("futex wait on {addr:#x}{obj}")
            }
            ThreadState::Blocked(Wait::Sleep { .. }) => "sleep".into(),
            ThreadState::Blocked(Wait::Io { fd, .. }) => format!("waits on descriptor {fd}"),
            ThreadState::Blocked(Wait::Retry { .. }) => "waits on the host".into(),
            ThreadState::Blocked(Wait::Signal | Wait::SigWait { .. }) => {
                "waits for a signal".into()
            }
            ThreadState::Runnable => "runnable".into(),
            ThreadState::Exited => continue,
        };
        // A blocked thread's saved RIP is just past its `syscall`.
        let pc = t.ctx.reg(Reg::RIP).wrapping_sub(2);
        let lang = t
            .lthread
            .map_or(String::new(), |l| format!(" (language thread {l})"));
        let _ = write!(
            s,
            "\n  thread {}{lang}: {what} at {}",
            t.tid,
            m.describe_pc(pc)
        );
    }
    s
}
