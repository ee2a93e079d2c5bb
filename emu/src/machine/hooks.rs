//! The callbacks translated code and unicorn call.

use super::call;
use super::GuestFault;
use super::Machine;
use super::Observe;
use super::ACCESS_BUFFER_ENTRIES;
use crate::cpu::code::Site;
use crate::cpu::uc::observe;
use crate::cpu::uc::AccessBuffer;
use crate::cpu::uc::Reg;
use crate::cpu::uc::UcError;
use crate::intercept::counted::PrunedCounts;
use crate::intercept::names::UnitNote;
use crate::intercept::runtime::Class;
use crate::intercept::CallArgs;
use crate::intercept::Intercept;
use crate::observe::observation::Policy;
use crate::observe::observer::Control;
use lard_detector_hw::event::Access;
use lard_detector_hw::event::AccessKind;
use lard_detector_hw::event::EventKind;
use std::ffi::c_void;
use unicorn_engine_sys as sys;

/// Recovers the machine from hook user data.
///
/// # Safety
/// `data` must be the pointer registered with the hook (a live, boxed Machine
/// that no other reference is using while emulation runs).
#[inline]
unsafe fn machine<'a>(data: *mut c_void) -> &'a mut Machine {
    &mut *(data as *mut Machine)
}

/// The instruction call at `pc` (patch 0004's `UC_LARD_INSN_CALL`, in
/// place of one code hook per PC): runs what [`Machine::call_at`]
/// registered there, in the order the code hooks ran (sites are found
/// before their object's intercepted entries are), each skipped once one
/// before it asked to stop (as unicorn's hook loop did).
unsafe extern "C" fn on_insn(data: *mut c_void, pc: u64) {
    let m = machine(data);
    m.flush_accesses();
    let Some(&what) = m.obs.calls.get(&pc) else {
        return;
    };
    if what & call::SITE != 0 {
        on_site(m, pc);
    }
    if what & call::INTERCEPT != 0 && m.cpu.stop.is_none() {
        on_intercept(m, pc);
    }
    if what & call::RETURN != 0 && m.cpu.stop.is_none() {
        m.binary_return_call(pc);
    }
}

/// Decision callback of translate-time observation (see [`Machine::observes`]).
unsafe extern "C" fn on_decide(data: *mut c_void, pc: u64) -> u32 {
    machine(data).observes(pc).flags()
}

/// A LARD site (or the instruction after a Tracked one, to settle
/// adversarial memory).
fn on_site(m: &mut Machine, pc: u64) {
    if m.obs.adversary.as_ref().is_some_and(|a| a.has_pending()) {
        m.settle_adversarial();
    }
    if m.cpu.stop.is_some() {
        return;
    }
    let Some(site) = m.obs.code.site(pc).cloned() else {
        return;
    };
    match &*site {
        Site::Op(op) => m.lard_op(pc, *op),
        // In binary mode the memory hook reports program accesses.
        Site::Tracked(_) if m.obs.binary.is_some() => {}
        Site::Tracked(i) => m.instruction_accesses(pc, i, true),
        Site::Atomic(i) => m.instruction_accesses(pc, i, false),
        Site::Fault(f) => m.lard_fault(pc, *f),
    }
}

/// The entry of an intercepted function: the call becomes a program event.
fn on_intercept(m: &mut Machine, pc: u64) {
    if m.cpu.stop.is_some() {
        return;
    }
    let Some(what) = m.obs.intercepts.at(pc) else {
        if m.obs.binary.is_some() {
            m.binary_entry(pc);
        }
        return;
    };
    let uc = m.cpu.uc;
    let call = CallArgs {
        args: [uc.reg(Reg::RDI), uc.reg(Reg::RSI), uc.reg(Reg::RDX)],
        ret: m.cpu.mem.read_u64(uc.reg(Reg::RSP)).unwrap_or(0),
    };
    match what.event(&call) {
        Some(e) => {
            m.obs.stats.program_events += 1;
            m.emit(call.ret, EventKind::Program(e));
        }
        None if what == Intercept::NoteReportCount => m.report_count(call.args[0]),
        None if what == Intercept::NoteRanges => m.note_ranges(call.args[0]),
        None => {
            let mem = &m.cpu.mem;
            if let Some(n) = UnitNote::read(|a| mem.read_u64(a), call.args[0]) {
                m.obs.lang_units.insert(n.id, n.clock, n.unit);
            }
        }
    }
}

/// Access callback of translate-time observation: an access of an
/// instruction [`Machine::observes`] said to observe, about to happen;
/// `pc` is the instruction's (a translation-time constant: RIP is never
/// read here), `info` its size, kind and decision tag. Non-zero stops
/// before the access (memory unchanged).
unsafe extern "C" fn on_access(data: *mut c_void, addr: u64, pc: u64, info: u32) -> i32 {
    let m = machine(data);
    // (A C helper's access of a buffered instruction comes here.)
    m.flush_accesses();
    let tag = (info >> observe::TAG_SHIFT) as u16;
    // A program instruction kept by pruning, not an atomic one, whose
    // access may repeat one the detector need not see again
    // (observe::repeats).
    if tag == Observe::TRACKED | Observe::UNPRUNED && m.obs.repeats.is_active() {
        let size = info & observe::SIZE_MASK;
        let write = info & observe::WRITE != 0;
        if m.obs.repeats.is_repeat(m.cpu.cur, pc, addr, size, write) {
            m.count_repeat(if write {
                AccessKind::Write
            } else {
                AccessKind::Read
            });
            return 0;
        }
        return repeatable_access(m, addr, pc, info);
    }
    access::<false>(m, addr, pc, info)
}

/// [`on_access`] of an access that may be repeated (observe::repeats) and
/// is no repeat.
#[inline(never)]
fn repeatable_access(m: &mut Machine, addr: u64, pc: u64, info: u32) -> i32 {
    access::<true>(m, addr, pc, info)
}

/// [`on_access`]'s classification and delivery; with `REPEATABLE`, a
/// checked access off the stack is delivered so that its repeats may be
/// counted without delivery.
#[inline(always)]
fn access<const REPEATABLE: bool>(m: &mut Machine, addr: u64, pc: u64, info: u32) -> i32 {
    let kind = if info & observe::WRITE != 0 {
        AccessKind::Write
    } else {
        AccessKind::Read
    };
    let tag = (info >> observe::TAG_SHIFT) as u16;
    let size = info & observe::SIZE_MASK;
    if tag & Observe::SITE != 0 {
        let a = m.tracked_access(pc, addr, size, kind);
        return i32::from(m.emit_access(pc, a) == Control::Stop);
    }
    let stack = m.is_stack(addr);
    let mut tracked = tag & Observe::TRACKED != 0;
    if let Some(rt) = &mut m.obs.binary {
        match rt.classify(pc, addr, kind, tag, stack, m.cpu.cur) {
            Class::Drop => return 0,
            Class::Checked => tracked = true,
            Class::Unchecked => tracked = false,
            Class::PlainAtomic { deliver, order } => {
                m.binary_plain_atomic(pc, addr, kind, order);
                if !deliver {
                    return 0;
                }
                tracked = false;
            }
        }
    }
    m.obs.stats.count_access(tracked, stack, kind);
    let a = Access {
        pc,
        addr,
        size,
        kind,
        tracked,
        stack,
        origin: m.origin(),
    };
    let c = if REPEATABLE && tracked && !stack {
        m.emit_repeatable_access(pc, a)
    } else {
        m.emit_access(pc, a)
    };
    i32::from(c == Control::Stop)
}

/// The access buffer passed its limit at a block entry (patch 0008).
unsafe extern "C" fn on_flush(data: *mut c_void) {
    machine(data).flush_accesses();
}

/// Hook for accesses to unmapped or protected memory: records the address.
unsafe extern "C" fn on_bad_mem(
    _uc: *mut sys::uc_engine,
    kind: sys::MemType,
    addr: u64,
    _size: i32,
    _value: i64,
    data: *mut c_void,
) -> bool {
    let m = machine(data);
    let what = match kind {
        sys::MemType::READ_UNMAPPED => "read of unmapped memory",
        sys::MemType::WRITE_UNMAPPED => "write to unmapped memory",
        sys::MemType::FETCH_UNMAPPED => "execution of unmapped memory",
        sys::MemType::WRITE_PROT => "write to read-only memory",
        sys::MemType::READ_PROT => "read of unreadable memory",
        sys::MemType::FETCH_PROT => "execution of non-executable memory",
        _ => "invalid memory access",
    };
    m.cpu.bad_access = Some((addr, what));
    false
}

/// Invalid-instruction hook.
unsafe extern "C" fn on_invalid(_uc: *mut sys::uc_engine, data: *mut c_void) -> bool {
    let m = machine(data);
    m.flush_accesses();
    let pc = m.cpu.uc.reg(Reg::RIP);
    m.fault(GuestFault {
        signal: libc::SIGILL,
        pc,
        addr: None,
        what: "invalid instruction".into(),
    });
    false
}

/// `syscall` hook.
unsafe extern "C" fn on_syscall(_uc: *mut sys::uc_engine, data: *mut c_void) {
    let m = machine(data);
    m.flush_accesses();
    // (A system call may map, unmap or protect memory, or start a thread.)
    m.obs.repeats.forget_all();
    m.sync_clock();
    m.syscall();
}

/// `rdtsc`/`rdtscp`: the time-stamp counter is virtual time (1 GHz, from
/// the instructions retired), so a program that reads it (Go's runtime
/// seeds its per-thread random numbers with it) runs the same way every
/// time. `rdtscp`'s processor id (ECX) is 0.
unsafe extern "C" fn on_tsc(_uc: *mut sys::uc_engine, data: *mut c_void) -> i32 {
    let m = machine(data);
    m.sync_clock();
    let tsc = m.cpu.vtime;
    let uc = m.cpu.uc;
    uc.set_reg(Reg::RAX, tsc & 0xffff_ffff);
    uc.set_reg(Reg::RDX, tsc >> 32);
    if m.cpu.mem.slice(uc.reg(Reg::RIP), 3) == Some(&[0x0f, 0x01, 0xf9][..]) {
        uc.set_reg(Reg::RCX, 0);
    }
    1
}

impl Machine {
    /// Installs the always-present hooks.
    pub fn install_hooks(&mut self) -> Result<(), UcError> {
        let data = self as *mut Machine as *mut c_void;
        let uc = self.cpu.uc;
        // SAFETY: the Machine is boxed (stable address) and outlives the
        // engine's runs; the callbacks match the hook types.
        unsafe {
            uc.hook_syscall(on_syscall, data)?;
            uc.hook_tsc(on_tsc, data)?;
            uc.hook_invalid(on_invalid, data)?;
            // Not a data-access hook: it costs nothing on successful accesses.
            uc.hook_bad_mem(on_bad_mem, data)?;
            uc.observe(on_decide, on_access, on_insn, data);
            // Pruned instructions are counted inline where that is all
            // their accesses do (binary mode, pruning on, an observer of
            // program code only).
            if let Some(rt) = self.obs.binary.as_mut() {
                rt.counted = Some(PrunedCounts::new(uc));
            }
            // Accesses are delivered after they happen: only when nothing
            // stops before one, and only where on_access's general path
            // would deliver them (LARD mode, every access, no adversarial
            // memory acting around Tracked accesses).
            if self.obs.policy == Policy::LardAll
                && self.obs.adversary.is_none()
                && !self.obs.observer.stops_on_access()
            {
                self.obs.access_buffer =
                    Some(AccessBuffer::new(uc, on_flush, ACCESS_BUFFER_ENTRIES));
            }
        }
        Ok(())
    }
}
