//! The guest as gdb's target: threads, registers, memory, breakpoints,
//! watchpoints, resuming, and the end of the run.

use super::arch::{LardX86_64, Regs};
use super::hook::{Hook, HookStop, Watch};
use super::monitor;
use super::replay::{Forked, Replay, Report, Restore, NEAR};
use super::MonitorData;
use crate::machine::{Machine, ThreadState};
use crate::run::{Emulator, Outcome, StopReason};
use gdbstub::common::{Signal, Tid};
use gdbstub::stub::MultiThreadStopReason;
use gdbstub::target::ext::auxv::AuxvOps;
use gdbstub::target::ext::base::multithread::{
    MultiThreadBase, MultiThreadRangeStepping, MultiThreadRangeSteppingOps, MultiThreadResume,
    MultiThreadResumeOps, MultiThreadSchedulerLocking, MultiThreadSchedulerLockingOps,
    MultiThreadSingleStep, MultiThreadSingleStepOps,
};
use gdbstub::target::ext::base::reverse_exec::{
    ReplayLogPosition, ReverseCont, ReverseContOps, ReverseStep, ReverseStepOps,
};
use gdbstub::target::ext::base::BaseOps;
use gdbstub::target::ext::breakpoints::{
    Breakpoints, BreakpointsOps, HwWatchpoint, HwWatchpointOps, SwBreakpoint, SwBreakpointOps,
    WatchKind,
};
use gdbstub::target::ext::exec_file::ExecFileOps;
use gdbstub::target::ext::host_io::HostIoOps;
use gdbstub::target::ext::monitor_cmd::{ConsoleOutput, MonitorCmd, MonitorCmdOps};
use gdbstub::target::ext::thread_extra_info::{ThreadExtraInfo, ThreadExtraInfoOps};
use gdbstub::target::{Target, TargetError, TargetResult};
use std::collections::HashMap;

/// A fatal error of the target (ends the connection).
#[derive(Debug)]
pub enum TargetFail {
    /// Unicorn refused to add a hook.
    Hook(String),
}

impl std::fmt::Display for TargetFail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetFail::Hook(e) => write!(f, "cannot add a debugger hook: {e}"),
        }
    }
}

/// What one stretch of running gave.
pub enum RunEvent {
    /// The hook's periodic stop: look for gdb's interrupt, then go on.
    Poll,
    /// A stop to report.
    Stop(MultiThreadStopReason<u64>),
}

/// The debugged guest.
pub struct LardTarget<'a> {
    /// The emulator.
    pub emu: &'a mut Emulator,
    /// The hooks.
    pub hook: Box<Hook>,
    /// How the run ended, once it did (the state stays for inspection).
    pub ended: Option<Outcome>,
    /// True once gdb was told the run ended for good (W or X).
    pub reported_end: bool,
    /// True once gdb is gone (the run goes on without stops).
    pub gone: bool,
    /// The thread (index) to step on the next resume.
    step: Option<usize>,
    /// The PC range it steps through (range stepping).
    range: Option<(u64, u64)>,
    /// orig_rax values gdb wrote, per thread index (lard keeps none).
    orig_rax: HashMap<usize, u64>,
    /// What the monitor commands know beyond the emulator.
    pub facts: &'a MonitorData,
    /// Checkpoints and the muting of replayed output.
    pub replay: Replay,
    /// A stop to report without running.
    pending: Option<MultiThreadStopReason<u64>>,
    /// What a restored process reports at its target.
    report: Option<Report>,
    /// The position of the checkpoint a long replay takes near its target.
    near: Option<u64>,
    /// Where the stretch a reverse-continue's scan replays began.
    scan_from: Option<u64>,
    /// The auxiliary vector the loader gave the guest (`qXfer:auxv:read`:
    /// where gdb learns the load addresses of a PIE and of ld.so).
    pub(super) auxv: Vec<u8>,
    /// The files gdb opened (`vFile:open`), by descriptor.
    pub(super) files: HashMap<u32, std::fs::File>,
    /// The thread of the last signal stop, until gdb resumes: the signal
    /// is delivered if gdb resumes that thread with a signal, else dropped.
    signal_stop: Option<Tid>,
    /// gdb resumed the signal stop's thread with a signal.
    signal_passed: bool,
}

impl<'a> LardTarget<'a> {
    /// Wraps `emu`, whose code hook is `hook`.
    pub fn new(emu: &'a mut Emulator, hook: Box<Hook>, facts: &'a MonitorData) -> Self {
        let auxv = super::files::initial_auxv(emu.machine());
        LardTarget {
            emu,
            hook,
            ended: None,
            reported_end: false,
            gone: false,
            step: None,
            range: None,
            orig_rax: HashMap::new(),
            facts,
            replay: Replay::default(),
            pending: None,
            report: None,
            near: None,
            scan_from: None,
            auxv,
            files: HashMap::new(),
            signal_stop: None,
            signal_passed: false,
        }
    }

    pub(super) fn m(&self) -> &Machine {
        self.emu.machine()
    }

    /// The index of the live (not exited) thread with kernel id `tid`.
    fn index(&self, tid: Tid) -> Option<usize> {
        self.m()
            .cpu
            .threads
            .iter()
            .position(|t| t.tid as usize == tid.get() && t.state != ThreadState::Exited)
    }

    /// gdb's id of thread `i`.
    pub fn tid_of(&self, i: usize) -> Tid {
        Tid::new(self.m().cpu.threads[i].tid as usize).unwrap_or(Tid::MIN)
    }

    /// Runs until something gdb must hear about, or until the hook's poll.
    pub fn run(&mut self) -> RunEvent {
        if let Some(r) = self.pending.take() {
            return RunEvent::Stop(r);
        }
        if self.replay.last_pos().is_none() && self.ended.is_none() {
            // The first checkpoint, before the first instruction.
            self.checkpoint();
            if let Some(r) = self.pending.take() {
                return RunEvent::Stop(r);
            }
        }
        if let Some(out) = &self.ended {
            // Resuming after the run ended: it ends for gdb too.
            self.reported_end = true;
            return RunEvent::Stop(final_reason(out));
        }
        self.hook.prepare();
        self.emu.machine_mut().process.quiet_output = self.replay.is_muted();
        let out = self.emu.resume();
        // Past the furthest position reached, the guest's output is new.
        self.replay.unmute_at(self.hook.pos);
        let cur = self.m().cpu.cur;
        let tid = self.tid_of(cur);
        match out {
            Outcome::Paused => match self.hook.stopped {
                Some(HookStop::Poll) | None => {
                    self.after_poll();
                    match self.pending.take() {
                        Some(r) => RunEvent::Stop(r),
                        None => RunEvent::Poll,
                    }
                }
                Some(HookStop::Position) if self.report.is_some() => self.reached(tid),
                Some(HookStop::Breakpoint) => RunEvent::Stop(MultiThreadStopReason::SwBreak(tid)),
                // (A step's stop names its thread, as gdbserver's does.)
                Some(HookStop::Step) | Some(HookStop::Position) => {
                    RunEvent::Stop(MultiThreadStopReason::SignalWithThread {
                        tid,
                        signal: Signal::SIGTRAP,
                    })
                }
                Some(HookStop::Watch { addr, write }) => {
                    RunEvent::Stop(MultiThreadStopReason::Watch {
                        tid,
                        kind: if write {
                            WatchKind::Write
                        } else {
                            WatchKind::Read
                        },
                        addr,
                    })
                }
            },
            Outcome::ObserverStop { .. } => {
                // A data-race exception is a stop like a breakpoint's: the
                // racy instruction executes when gdb resumes. A replay
                // passes the ones on its way.
                self.hook.aborted();
                if self.report.is_some() {
                    return RunEvent::Poll;
                }
                if !self.replay.is_muted() && !self.gone {
                    if let Some(text) = monitor::ending(self.emu, &out, self.facts) {
                        eprintln!("lard: gdb: {text}");
                    }
                }
                RunEvent::Stop(MultiThreadStopReason::SignalWithThread {
                    tid,
                    signal: Signal::SIGTRAP,
                })
            }
            Outcome::SignalStop { signal } => {
                // The thread is about to take `signal`: gdb decides (its
                // `handle` table) whether to show it and whether to pass
                // it; a replay passes the ones on its way.
                self.hook.aborted();
                if self.report.is_some() {
                    return RunEvent::Poll;
                }
                self.signal_stop = Some(tid);
                RunEvent::Stop(MultiThreadStopReason::SignalWithThread {
                    tid,
                    signal: gdb_signal(signal),
                })
            }
            Outcome::Exited(code) => {
                self.ended = Some(out.clone());
                self.reported_end = true;
                RunEvent::Stop(MultiThreadStopReason::Exited((code & 0xff) as u8))
            }
            other => {
                let signal = stop_signal(&other);
                // (Said once: not again by a replay going through it.)
                if let Some(text) = monitor::ending(self.emu, &other, self.facts) {
                    if !self.replay.is_muted() {
                        eprintln!("lard: gdb: {text}");
                    }
                }
                self.ended = Some(other);
                RunEvent::Stop(MultiThreadStopReason::SignalWithThread { tid, signal })
            }
        }
    }

    /// gdb resumes `tid` with `signal`: a signal stop's signal is passed.
    fn note_signal(&mut self, tid: Tid, signal: Option<Signal>) {
        if signal.is_some() && self.signal_stop == Some(tid) {
            self.signal_passed = true;
        }
    }

    /// At a poll: the end of muted output, and checkpoints (periodic, and
    /// near the target of a long replay).
    fn after_poll(&mut self) {
        let pos = self.hook.pos;
        self.replay.unmute_at(pos);
        let due = match self.replay.last_pos() {
            Some(last) => pos >= last + self.replay.interval() || self.near == Some(pos),
            None => true,
        };
        if due && self.ended.is_none() && self.replay.last_pos() != Some(pos) {
            self.checkpoint();
        }
    }

    /// Makes a checkpoint here; in a process restored from it, sets up the
    /// run to the restore's target.
    fn checkpoint(&mut self) {
        if !self.replay.can_checkpoint() {
            return;
        }
        match self.replay.checkpoint(self.hook.pos) {
            Ok(Forked::Live) => {}
            Ok(Forked::Restored(cmd)) => self.apply(cmd),
            Err(e) => {
                eprintln!("lard: gdb: no checkpoint: {e}");
                self.replay.unavailable = Some(e);
            }
        }
    }

    /// Takes gdb's settings from a restore command and aims at its target.
    fn apply(&mut self, cmd: Restore) {
        let pos = self.hook.pos;
        self.hook.breakpoints = cmd.breakpoints.iter().copied().collect();
        let old: Vec<Watch> = self.hook.watches().copied().collect();
        for w in old {
            self.hook.remove_watch(w);
        }
        for w in &cmd.watches {
            let _ = self.hook.add_watch(*w);
        }
        self.hook.set_step(None, None);
        // Breakpoints and watchpoints on the way are the past: a replay
        // does not stop there (a reverse-continue's scan records them).
        self.hook.scan = true;
        self.hook.last_hit = None;
        self.hook.marks.clear();
        if self.replay.high_water > pos {
            self.hook.marks.insert(self.replay.high_water);
        }
        self.near = None;
        if cmd.target > pos + 2 * NEAR {
            self.near = Some(cmd.target - NEAR);
            self.hook.marks.insert(cmd.target - NEAR);
        }
        self.report = Some(cmd.report);
        self.scan_from = Some(pos);
        if cmd.target == pos {
            let tid = self.tid_of(self.m().cpu.cur);
            if let RunEvent::Stop(r) = self.reached(tid) {
                self.pending = Some(r);
            }
        } else {
            self.hook.stop_at = Some(cmd.target);
        }
    }

    /// The run reached a restore's target.
    fn reached(&mut self, tid: Tid) -> RunEvent {
        self.replay.unmute_at(self.hook.pos);
        self.hook.scan = false;
        let trap = MultiThreadStopReason::SignalWithThread {
            tid,
            signal: Signal::SIGTRAP,
        };
        let stop = match self.report.take() {
            Some(Report::Hit(HookStop::Breakpoint)) => MultiThreadStopReason::SwBreak(tid),
            Some(Report::Hit(HookStop::Watch { addr, write })) => MultiThreadStopReason::Watch {
                tid,
                kind: if write {
                    WatchKind::Write
                } else {
                    WatchKind::Read
                },
                addr,
            },
            Some(Report::Begin) => MultiThreadStopReason::ReplayLog {
                tid: Some(tid),
                pos: ReplayLogPosition::Begin,
            },
            Some(Report::ScanEnd) => {
                // The scan of one stretch is done: its last hit, else the
                // stretch before it, else the start.
                let e = match self.hook.last_hit.take() {
                    Some((h, why)) => self.go_to(h, Report::Hit(why), None),
                    None => match self
                        .scan_from
                        .and_then(|f| Some((f, self.replay.before(f)?)))
                    {
                        Some((end, from)) => self.go_to(end, Report::ScanEnd, Some(from)),
                        None => {
                            let first = self.replay.first_pos().unwrap_or(0);
                            self.go_to(first, Report::Begin, None)
                        }
                    },
                };
                eprintln!("lard: gdb: reverse-continue: {e}");
                trap
            }
            _ => trap,
        };
        RunEvent::Stop(stop)
    }

    /// Replays to `target` (a new live process reports there); returns
    /// only with the reason it could not.
    fn go_to(&mut self, target: u64, report: Report, from: Option<u64>) -> String {
        let cmd = Restore {
            target,
            high_water: self.replay.high_water,
            report,
            from,
            breakpoints: self.hook.breakpoints.iter().copied().collect(),
            watches: self.hook.watches().copied().collect(),
        };
        self.replay.restore(&cmd, self.hook.pos)
    }

    /// The position of the current stop: an instruction that faulted was
    /// started but did not complete (a data-race exception's instruction
    /// is not counted: [`Hook::aborted`]).
    fn here(&self) -> u64 {
        match self.ended {
            Some(Outcome::Signaled { fault: Some(_), .. }) => self.hook.pos.saturating_sub(1),
            _ => self.hook.pos,
        }
    }

    /// Why reverse execution cannot run now, if it cannot.
    fn no_reverse(&mut self) -> Option<String> {
        if let Some(why) = &self.replay.unavailable {
            return Some(why.clone());
        }
        if self.replay.last_pos().is_none() {
            return Some("no checkpoint yet".into());
        }
        None
    }

    fn at_begin(&mut self, why: Option<String>) {
        if let Some(why) = why {
            eprintln!("lard: gdb: reverse execution: {why}");
        }
        let tid = self.tid_of(self.m().cpu.cur);
        self.pending = Some(MultiThreadStopReason::ReplayLog {
            tid: Some(tid),
            pos: ReplayLogPosition::Begin,
        });
    }

    /// The stop reason for gdb's interrupt (the run is paused at a poll).
    pub fn interrupted(&self) -> MultiThreadStopReason<u64> {
        MultiThreadStopReason::SignalWithThread {
            tid: self.tid_of(self.m().cpu.cur),
            signal: Signal::SIGINT,
        }
    }

    /// Removes every breakpoint and watchpoint (gdb went away).
    pub fn clear_stops(&mut self) {
        self.hook.breakpoints.clear();
        let ws: Vec<Watch> = self.hook.watches().copied().collect();
        for w in ws {
            self.hook.remove_watch(w);
        }
        self.step = None;
        self.hook.set_step(None, None);
    }
}

/// gdb's number (the remote protocol's, gdb/signals.def) of Linux signal
/// `sig`: they differ from SIGBUS on (SIGUSR1 is gdb's 30, SIGCHLD 20).
pub fn gdb_signal(sig: i32) -> Signal {
    const LINUX_1_TO_31: [u8; 31] = [
        1, 2, 3, 4, 5, 6, 10, 8, 9, 30, 11, 31, 13, 14, 15, 143, 20, 19, 17, 18, 21, 22, 16, 24,
        25, 26, 27, 28, 23, 32, 12,
    ];
    Signal(match sig {
        1..=31 => LINUX_1_TO_31[(sig - 1) as usize],
        32 => 77,
        33..=63 => (sig - 33 + 45) as u8,
        64 => 78,
        _ => 143,
    })
}

/// The signal gdb sees for a run that ended other than by exiting.
fn stop_signal(out: &Outcome) -> Signal {
    match out {
        Outcome::Signaled { signal, .. } | Outcome::SignalStop { signal } => gdb_signal(*signal),
        Outcome::ObserverStop { .. } => Signal::SIGTRAP,
        Outcome::Deadlock(_) => Signal::SIGSTOP,
        Outcome::UnsupportedSyscall { .. } => gdb_signal(libc::SIGSYS),
        Outcome::Stopped(StopReason::Signal(s)) => gdb_signal(*s),
        Outcome::Stopped(_) => Signal::SIGXCPU,
        Outcome::Exited(_) | Outcome::Paused | Outcome::Exec(_) => Signal::SIGTRAP,
    }
}

/// What gdb hears when it resumes a run that ended.
fn final_reason(out: &Outcome) -> MultiThreadStopReason<u64> {
    match out {
        Outcome::Exited(code) => MultiThreadStopReason::Exited((code & 0xff) as u8),
        other => MultiThreadStopReason::Terminated(stop_signal(other)),
    }
}

impl Target for LardTarget<'_> {
    type Arch = LardX86_64;
    type Error = TargetFail;

    fn base_ops(&mut self) -> BaseOps<'_, Self::Arch, Self::Error> {
        BaseOps::MultiThread(self)
    }

    fn support_breakpoints(&mut self) -> Option<BreakpointsOps<'_, Self>> {
        Some(self)
    }

    fn support_monitor_cmd(&mut self) -> Option<MonitorCmdOps<'_, Self>> {
        Some(self)
    }

    fn support_auxv(&mut self) -> Option<AuxvOps<'_, Self>> {
        Some(self)
    }

    fn support_exec_file(&mut self) -> Option<ExecFileOps<'_, Self>> {
        Some(self)
    }

    fn support_host_io(&mut self) -> Option<HostIoOps<'_, Self>> {
        Some(self)
    }

    // lard implements breakpoints itself (Z0); gdb must not write int3.
    fn guard_rail_implicit_sw_breakpoints(&self) -> bool {
        true
    }
}

impl MultiThreadBase for LardTarget<'_> {
    fn read_registers(&mut self, regs: &mut Regs, tid: Tid) -> TargetResult<(), Self> {
        let i = self.index(tid).ok_or(TargetError::NonFatal)?;
        let orig = self.orig_rax.get(&i).copied().unwrap_or(u64::MAX);
        *regs = Regs::load(&self.m().cpu.threads[i].ctx, orig);
        Ok(())
    }

    fn write_registers(&mut self, regs: &Regs, tid: Tid) -> TargetResult<(), Self> {
        let i = self.index(tid).ok_or(TargetError::NonFatal)?;
        self.orig_rax.insert(i, regs.orig_rax);
        let live = self.emu.live_thread();
        let m = self.emu.machine_mut();
        regs.store(&mut m.cpu.threads[i].ctx);
        if i == live {
            let mut uc = m.cpu.uc;
            regs.store(&mut uc);
        }
        Ok(())
    }

    fn read_addrs(&mut self, start: u64, data: &mut [u8], _tid: Tid) -> TargetResult<usize, Self> {
        let mem = &self.m().cpu.mem;
        if let Some(b) = mem.peek(start, data.len() as u64) {
            data.copy_from_slice(&b);
            return Ok(data.len());
        }
        // Across mappings, or up to the first unmapped byte.
        let mut n = 0;
        for (i, d) in data.iter_mut().enumerate() {
            match mem.peek(start.wrapping_add(i as u64), 1) {
                Some(b) => *d = b[0],
                None => break,
            }
            n += 1;
        }
        if n == 0 {
            return Err(TargetError::Errno(14));
        }
        Ok(n)
    }

    fn write_addrs(&mut self, start: u64, data: &[u8], _tid: Tid) -> TargetResult<(), Self> {
        let m = self.emu.machine_mut();
        for (i, &b) in data.iter().enumerate() {
            m.cpu
                .mem
                .poke(start.wrapping_add(i as u64), &[b])
                .ok_or(TargetError::Errno(14))?;
        }
        // Code may have changed: drop its translations.
        m.cpu
            .uc
            .remove_cache(start, start.wrapping_add(data.len() as u64));
        Ok(())
    }

    fn list_active_threads(&mut self, f: &mut dyn FnMut(Tid)) -> Result<(), Self::Error> {
        for t in &self.m().cpu.threads {
            if t.state != ThreadState::Exited {
                if let Some(tid) = Tid::new(t.tid as usize) {
                    f(tid);
                }
            }
        }
        Ok(())
    }

    fn support_resume(&mut self) -> Option<MultiThreadResumeOps<'_, Self>> {
        Some(self)
    }

    fn support_thread_extra_info(&mut self) -> Option<ThreadExtraInfoOps<'_, Self>> {
        Some(self)
    }
}

/// `info threads` shows each thread's detector identity and state.
impl ThreadExtraInfo for LardTarget<'_> {
    fn thread_extra_info(&self, tid: Tid, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let Some(t) = self.index(tid).map(|i| &self.m().cpu.threads[i]) else {
            return Ok(0);
        };
        let state = t.state.describe();
        let text = match t.lthread {
            Some(l) => format!("T{l}, {state}"),
            None => state,
        };
        let n = text.len().min(buf.len());
        buf[..n].copy_from_slice(&text.as_bytes()[..n]);
        Ok(n)
    }
}

impl MultiThreadResume for LardTarget<'_> {
    fn resume(&mut self) -> Result<(), Self::Error> {
        if self.signal_stop.take().is_some() && !std::mem::take(&mut self.signal_passed) {
            self.emu.discard_signal();
        }
        self.hook.set_step(self.step, self.range);
        Ok(())
    }

    fn clear_resume_actions(&mut self) -> Result<(), Self::Error> {
        self.step = None;
        self.range = None;
        self.signal_passed = false;
        Ok(())
    }

    fn set_resume_action_continue(
        &mut self,
        tid: Tid,
        signal: Option<Signal>,
    ) -> Result<(), Self::Error> {
        self.note_signal(tid, signal);
        Ok(())
    }

    fn support_single_step(&mut self) -> Option<MultiThreadSingleStepOps<'_, Self>> {
        Some(self)
    }

    fn support_scheduler_locking(&mut self) -> Option<MultiThreadSchedulerLockingOps<'_, Self>> {
        Some(self)
    }

    fn support_range_step(&mut self) -> Option<MultiThreadRangeSteppingOps<'_, Self>> {
        Some(self)
    }

    fn support_reverse_step(&mut self) -> Option<ReverseStepOps<'_, Tid, Self>> {
        Some(self)
    }

    fn support_reverse_cont(&mut self) -> Option<ReverseContOps<'_, Tid, Self>> {
        Some(self)
    }
}

impl ReverseStep<Tid> for LardTarget<'_> {
    /// Steps back the thread that stopped (gdbstub passes the thread of
    /// the last `Hc`, which gdb does not set for `bs`).
    fn reverse_step(&mut self, _tid: Tid) -> Result<(), Self::Error> {
        if let Some(why) = self.no_reverse() {
            self.at_begin(Some(why));
            return Ok(());
        }
        let here = self.here();
        let prev = self.hook.previous_of(self.m().cpu.cur, here);
        match prev {
            Some(q) => {
                let e = self.go_to(q, Report::Step, None);
                self.at_begin(Some(e));
            }
            None => self.at_begin(None),
        }
        Ok(())
    }
}

impl ReverseCont<Tid> for LardTarget<'_> {
    fn reverse_cont(&mut self) -> Result<(), Self::Error> {
        if let Some(why) = self.no_reverse() {
            self.at_begin(Some(why));
            return Ok(());
        }
        let here = self.here();
        let Some(from) = self.replay.before(here) else {
            self.at_begin(None);
            return Ok(());
        };
        let e = self.go_to(here, Report::ScanEnd, Some(from));
        self.at_begin(Some(e));
        Ok(())
    }
}

/// gdb steps one thread alone over a breakpoint. lard's scheduler stays in
/// charge (a step ends after the stepped thread's next instruction; another
/// thread may run first if its quantum ends there), so that a debugged run
/// interleaves exactly as an undebugged one.
impl MultiThreadSchedulerLocking for LardTarget<'_> {
    fn set_resume_action_scheduler_lock(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// `next` and `step` over a line in one resume: the thread steps until its
/// PC leaves the line's range (or something else stops it).
impl MultiThreadRangeStepping for LardTarget<'_> {
    fn set_resume_action_range_step(
        &mut self,
        tid: Tid,
        start: u64,
        end: u64,
    ) -> Result<(), Self::Error> {
        self.step = self.index(tid);
        self.range = Some((start, end));
        Ok(())
    }
}

impl MultiThreadSingleStep for LardTarget<'_> {
    fn set_resume_action_step(
        &mut self,
        tid: Tid,
        signal: Option<Signal>,
    ) -> Result<(), Self::Error> {
        self.note_signal(tid, signal);
        self.step = self.index(tid);
        Ok(())
    }
}

impl Breakpoints for LardTarget<'_> {
    fn support_sw_breakpoint(&mut self) -> Option<SwBreakpointOps<'_, Self>> {
        Some(self)
    }

    fn support_hw_watchpoint(&mut self) -> Option<HwWatchpointOps<'_, Self>> {
        Some(self)
    }
}

impl SwBreakpoint for LardTarget<'_> {
    fn add_sw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        self.hook.breakpoints.insert(addr);
        Ok(true)
    }

    fn remove_sw_breakpoint(&mut self, addr: u64, _kind: usize) -> TargetResult<bool, Self> {
        Ok(self.hook.breakpoints.remove(&addr))
    }
}

fn watches(addr: u64, len: u64, kind: WatchKind) -> Vec<Watch> {
    let w = |write| Watch { addr, len, write };
    match kind {
        WatchKind::Write => vec![w(true)],
        WatchKind::Read => vec![w(false)],
        WatchKind::ReadWrite => vec![w(true), w(false)],
    }
}

impl HwWatchpoint for LardTarget<'_> {
    fn add_hw_watchpoint(
        &mut self,
        addr: u64,
        len: u64,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        for w in watches(addr, len, kind) {
            self.hook
                .add_watch(w)
                .map_err(|e| TargetError::Fatal(TargetFail::Hook(e.to_string())))?;
        }
        Ok(true)
    }

    fn remove_hw_watchpoint(
        &mut self,
        addr: u64,
        len: u64,
        kind: WatchKind,
    ) -> TargetResult<bool, Self> {
        let mut any = false;
        for w in watches(addr, len, kind) {
            any |= self.hook.remove_watch(w);
        }
        Ok(any)
    }
}

impl MonitorCmd for LardTarget<'_> {
    fn handle_monitor_cmd(
        &mut self,
        cmd: &[u8],
        mut out: ConsoleOutput<'_>,
    ) -> Result<(), Self::Error> {
        let text = monitor::command(self, &String::from_utf8_lossy(cmd));
        for line in text.lines() {
            gdbstub::outputln!(out, "{line}");
        }
        Ok(())
    }
}
