//! The debugger's view of execution: one unicorn code hook before every
//! guest instruction (and memory hooks for watchpoints) that counts
//! instructions exactly and stops the run where gdb asked — at a
//! breakpoint, after one instruction of a stepped thread, after a watched
//! access, at an instruction count (replay), or every so often to look for
//! gdb's interrupt.
//!
//! A stop leaves the CPU loop in the middle of a translation block whose
//! instructions the patched core already counted (patch 0003). Resuming
//! re-enters a block at the stop's PC, which counts its instructions and
//! spends a quantum unit again; the run loop gives the unit back
//! (`Emulator::resume`) and the first hook after a resume puts the count
//! back, so a debugged run schedules exactly as an undebugged one.

use crate::cpu::uc::{Reg, UcError, UcRef};
use crate::machine::{Machine, Stop};
use std::collections::{BTreeMap, HashSet};
use std::ffi::c_void;
use unicorn_engine_sys as sys;

/// Instructions between two looks at the connection for gdb's interrupt.
pub const POLL_INTERVAL: u64 = 1 << 18;

/// Why the hook stopped the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookStop {
    /// Time to look for an interrupt; nothing for gdb.
    Poll,
    /// A software breakpoint at the thread's RIP.
    Breakpoint,
    /// The stepped thread executed one instruction.
    Step,
    /// The thread made a watched access (the instruction completed).
    Watch {
        /// The watched address the access touched.
        addr: u64,
        /// True for a write.
        write: bool,
    },
    /// The run reached the instruction count it was asked to stop at.
    Position,
}

/// What a watchpoint watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Watch {
    /// First byte.
    pub addr: u64,
    /// Length in bytes.
    pub len: u64,
    /// Writes (else reads).
    pub write: bool,
}

/// Stepping one thread: its first instruction after the resume executes,
/// the hook stops before its second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepState {
    /// The thread (index) has not run yet.
    Armed(usize),
    /// Its one instruction is executing.
    Running(usize),
}

/// The hooks' state; boxed, its address is the hooks' user data.
pub struct Hook {
    machine: *mut Machine,
    uc: UcRef,
    code_hook: sys::uc_hook,
    /// Instructions started so far (all threads), the run's position.
    pub pos: u64,
    /// Software breakpoints (PCs).
    pub breakpoints: HashSet<u64>,
    watches: BTreeMap<Watch, sys::uc_hook>,
    step: Option<StepState>,
    /// With `step`: keep stepping while the thread's PC is in `[start, end)`
    /// (gdb's range stepping, `next` over a line in one resume).
    range: Option<(u64, u64)>,
    /// A watched access made by the thread (index): stop before its next instruction.
    watch_hit: Option<(usize, u64, bool)>,
    /// Stop once `pos` reaches this.
    pub stop_at: Option<u64>,
    poll_left: u64,
    /// The clock value to restore at the first instruction after a resume.
    fixup: Option<u64>,
    /// The first instruction after a resume executes whatever is set there.
    resumed: bool,
    /// Why the hook last stopped the run.
    pub stopped: Option<HookStop>,
    /// The last run ended at a hook's stop.
    paused: bool,
    /// Positions where the run pauses silently (as at a poll): replay's
    /// checkpoints and the end of muted output.
    pub marks: std::collections::BTreeSet<u64>,
    /// The position at which each thread (index) took over the CPU, in order.
    pub switches: Vec<(u64, usize)>,
    /// Scanning for reverse-continue: breakpoint and watchpoint hits are
    /// recorded in `last_hit` instead of stopping the run.
    pub scan: bool,
    /// The last hit a scan recorded: the position to stop at and why.
    pub last_hit: Option<(u64, HookStop)>,
}

impl Hook {
    /// Installs the code hook on `m`'s engine; must happen before anything
    /// is translated (unicorn decides at translation whether an
    /// instruction calls code hooks).
    pub fn install(m: &mut Machine) -> Result<Box<Hook>, UcError> {
        let mut h = Box::new(Hook {
            machine: m as *mut Machine,
            uc: m.cpu.uc,
            code_hook: 0,
            pos: 0,
            breakpoints: HashSet::new(),
            watches: BTreeMap::new(),
            step: None,
            range: None,
            watch_hit: None,
            stop_at: None,
            poll_left: POLL_INTERVAL,
            fixup: None,
            resumed: false,
            stopped: None,
            paused: false,
            marks: Default::default(),
            switches: Vec::new(),
            scan: false,
            last_hit: None,
        });
        let data = &mut *h as *mut Hook as *mut c_void;
        // SAFETY: on_code has the code-hook signature; the Hook is boxed and
        // deleted from the engine in Drop before it is freed.
        h.code_hook = unsafe {
            m.cpu
                .uc
                .hook_add(sys::HookType::CODE, on_code as *mut c_void, data, 1, 0)?
        };
        Ok(h)
    }

    /// Sets the thread (index) to step on the next resumes, if any, and
    /// the range of PCs it steps through without stopping.
    pub fn set_step(&mut self, step: Option<usize>, range: Option<(u64, u64)>) {
        self.step = step.map(StepState::Armed);
        self.range = range;
    }

    /// Prepares each `Emulator::resume`.
    pub fn prepare(&mut self) {
        // SAFETY: the machine outlives the hook and is not in use now.
        let m = unsafe { &*self.machine };
        // Only a hook's stop left a counted block to give back.
        if std::mem::take(&mut self.paused) {
            self.fixup = Some(m.cpu.clock.insns());
            self.resumed = true;
        }
        self.stopped = None;
    }

    /// Adds a watchpoint (a bounded memory hook; the TLB is flushed so
    /// that the watched pages take unicorn's slow path).
    pub fn add_watch(&mut self, w: Watch) -> Result<(), UcError> {
        if self.watches.contains_key(&w) || w.len == 0 {
            return Ok(());
        }
        let kind = if w.write {
            sys::HookType::MEM_WRITE
        } else {
            sys::HookType::MEM_READ
        };
        let data = self as *mut Hook as *mut c_void;
        // SAFETY: on_mem has the memory-hook signature; self is boxed and
        // deletes the hook before it is freed.
        let h = unsafe {
            self.uc.hook_add(
                kind,
                on_mem as *mut c_void,
                data,
                w.addr,
                w.addr + w.len - 1,
            )?
        };
        self.watches.insert(w, h);
        self.uc.flush_tlb();
        Ok(())
    }

    /// Removes a watchpoint; false if there was none.
    pub fn remove_watch(&mut self, w: Watch) -> bool {
        match self.watches.remove(&w) {
            Some(h) => {
                self.uc.hook_del(h);
                self.uc.flush_tlb();
                true
            }
            None => false,
        }
    }

    /// The watchpoints.
    pub fn watches(&self) -> impl Iterator<Item = &Watch> {
        self.watches.keys()
    }

    /// The position of the last instruction thread `t` started before
    /// position `before`, if any (from the switch log).
    pub fn previous_of(&self, t: usize, before: u64) -> Option<u64> {
        let mut end = before;
        for &(start, thread) in self.switches.iter().rev() {
            if start >= before {
                continue;
            }
            if thread == t && start < end {
                return Some(end - 1);
            }
            end = start;
        }
        None
    }

    /// The run stopped inside the instruction the hook counted last (a
    /// data-race exception: it did not take effect): it is not counted,
    /// and resuming executes it as after the hook's own stop.
    pub fn aborted(&mut self) {
        self.pos = self.pos.saturating_sub(1);
        self.paused = true;
        self.stopped = None;
    }

    /// Forgets the switch log from position `pos` on (a replay re-creates it).
    pub fn truncate_switches(&mut self, pos: u64) {
        self.switches.retain(|&(p, _)| p < pos);
    }

    fn stop(&mut self, m: &mut Machine, pc: u64, why: HookStop) {
        self.stopped = Some(why);
        self.paused = true;
        m.cpu.stop = Some(Stop::Debug);
        m.cpu.uc.set_reg(Reg::RIP, pc);
        m.cpu.uc.stop();
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        for (_, h) in std::mem::take(&mut self.watches) {
            self.uc.hook_del(h);
        }
        self.uc.hook_del(self.code_hook);
    }
}

/// Before every guest instruction.
unsafe extern "C" fn on_code(_uc: *mut sys::uc_engine, pc: u64, _size: u32, data: *mut c_void) {
    // SAFETY: data is the boxed Hook (see Hook::install); the machine is the
    // one whose engine runs, and hooks run one at a time on its thread.
    let h = &mut *(data as *mut Hook);
    let m = &mut *h.machine;
    if let Some(c) = h.fixup.take() {
        m.cpu.clock.set_insns(c);
    }
    // Something already stopped the run (an instruction call, a system
    // call): this instruction does not execute now.
    if m.cpu.stop.is_some() {
        return;
    }
    let first = std::mem::take(&mut h.resumed);
    let cur = m.cpu.cur;
    if h.switches.last().is_none_or(|&(_, t)| t != cur) {
        h.switches.push((h.pos, cur));
    }
    if !first {
        if h.stop_at == Some(h.pos) {
            h.stop_at = None;
            return h.stop(m, pc, HookStop::Position);
        }
        if let Some((t, addr, write)) = h.watch_hit {
            if t == cur {
                h.watch_hit = None;
                let why = HookStop::Watch { addr, write };
                if !h.scan {
                    return h.stop(m, pc, why);
                }
                h.last_hit = Some((h.pos, why));
            }
        }
        if h.step == Some(StepState::Running(cur))
            && !h
                .range
                .is_some_and(|(start, end)| (start..end).contains(&pc))
        {
            h.step = None;
            return h.stop(m, pc, HookStop::Step);
        }
        if !h.breakpoints.is_empty() && h.breakpoints.contains(&pc) {
            if !h.scan {
                return h.stop(m, pc, HookStop::Breakpoint);
            }
            h.last_hit = Some((h.pos, HookStop::Breakpoint));
        }
        // (Silent pauses come after every other check: the instruction
        // they pause at runs unchecked when the run resumes.)
        if h.marks.first().is_some_and(|&p| p <= h.pos) {
            h.marks.retain(|&p| p > h.pos);
            return h.stop(m, pc, HookStop::Poll);
        }
        h.poll_left = h.poll_left.saturating_sub(1);
        if h.poll_left == 0 {
            h.poll_left = POLL_INTERVAL;
            return h.stop(m, pc, HookStop::Poll);
        }
    }
    if first && h.scan && h.breakpoints.contains(&pc) {
        // (A scan's stretch starts at a checkpoint: the stop before it
        // checked this instruction; the stretch records its hit.)
        h.last_hit = Some((h.pos, HookStop::Breakpoint));
    }
    if h.step == Some(StepState::Armed(cur)) {
        h.step = Some(StepState::Running(cur));
    }
    h.pos += 1;
}

/// A watched access, about to happen: the thread stops before its next
/// instruction (the access's own instruction completes, as on hardware);
/// a reverse-continue's scan records the access's instruction instead.
unsafe extern "C" fn on_mem(
    _uc: *mut sys::uc_engine,
    kind: sys::MemType,
    addr: u64,
    _size: i32,
    _value: i64,
    data: *mut c_void,
) {
    // SAFETY: as in on_code.
    let h = &mut *(data as *mut Hook);
    let m = &*h.machine;
    let write = kind == sys::MemType::WRITE;
    if h.scan {
        // Going backwards, a watched access stops before its instruction
        // (the one the code hook counted last).
        h.last_hit = Some((h.pos.saturating_sub(1), HookStop::Watch { addr, write }));
        return;
    }
    if h.watch_hit.is_none() {
        h.watch_hit = Some((m.cpu.cur, addr, write));
    }
}
