//! LARDx86 ops and the accesses of instructions delivered by their instruction call.

use super::GuestFault;
use super::Machine;
use crate::cpu::code::MemInsn;
use crate::cpu::memory::Memory;
use crate::cpu::uc::Reg;
use crate::cpu::uc::UcRef;
use crate::observe::callstack;
use crate::observe::observation::Policy;
use crate::observe::observer::Control;
use iced_x86::OpAccess;
use iced_x86::Register;
use lard_detector_hw::event::Access;
use lard_detector_hw::event::AccessKind;
use lard_detector_hw::event::EventKind;
use lard_detector_hw::event::LardOp as EvOp;
use lard_detector_hw::event::LowLevelSync;
use lard_isa_ext::check_region;
use lard_isa_ext::LardFault;
use lard_isa_ext::LardOp;

/// The unicorn register for a LARD operand.
pub fn gpr_reg(g: lard_isa_ext::Gpr) -> Reg {
    const REGS: [Reg; 16] = [
        Reg::RAX,
        Reg::RCX,
        Reg::RDX,
        Reg::RBX,
        Reg::RSP,
        Reg::RBP,
        Reg::RSI,
        Reg::RDI,
        Reg::R8,
        Reg::R9,
        Reg::R10,
        Reg::R11,
        Reg::R12,
        Reg::R13,
        Reg::R14,
        Reg::R15,
    ];
    REGS[g.number() as usize]
}

/// Register values for iced-x86's effective-address computation.
fn iced_reg_value(uc: UcRef, r: Register) -> Option<u64> {
    let full = r.full_register();
    let v = match full {
        Register::FS => return Some(uc.reg(Reg::FS_BASE)),
        Register::GS => return Some(uc.reg(Reg::GS_BASE)),
        Register::ES | Register::CS | Register::SS | Register::DS => return Some(0),
        Register::RIP => uc.reg(Reg::RIP),
        _ => {
            let g = lard_isa_ext::Gpr::from_iced(full)?;
            uc.reg(gpr_reg(g))
        }
    };
    Some(match r.size() {
        4 => v & 0xffff_ffff,
        2 => v & 0xffff,
        _ => v,
    })
}

impl Machine {
    /// The PC a Tracked access at `pc` is reported under. Accesses in the
    /// `lard_caller_pc` section (leaf stubs such as lard-cc's `__tsan_read4`,
    /// which never move rsp) belong to the program line that called the stub:
    /// the `call` instruction before the return address at `[rsp]`
    /// (docs/lard-cc.md, "Where a report points"), with the program's call
    /// stack id when the runtime records call stacks (a site,
    /// observe::callstack).
    #[inline(always)]
    pub fn attributed_pc(&self, pc: u64) -> u64 {
        let (lo, hi) = self.obs.caller_pc_range;
        if pc < lo || pc >= hi {
            return pc;
        }
        self.caller_of_stub(pc)
    }

    /// [`Machine::attributed_pc`] inside the `lard_caller_pc` section (out
    /// of line: the range test above is on every Tracked access's path).
    #[inline(never)]
    pub(super) fn caller_of_stub(&self, pc: u64) -> u64 {
        let Some(ret) = self.cpu.mem.read_u64(self.cpu.uc.reg(Reg::RSP)) else {
            return pc;
        };
        let call = call_before(&self.cpu.mem, ret);
        if self.obs.call_stacks == 0 {
            return call;
        }
        callstack::site(call, self.cpu.uc.reg(Reg::RCX) as u32)
    }

    /// Executes the LARD op at `pc`.
    pub(super) fn lard_op(&mut self, pc: u64, op: LardOp) {
        let reg = |g: lard_isa_ext::Gpr| self.cpu.uc.reg(gpr_reg(g));
        let ev = match op {
            LardOp::Thread { id } => {
                let id = reg(id);
                self.cpu.threads[self.cpu.cur].lthread = Some(id);
                EvOp::Thread { id }
            }
            LardOp::ReadVc { dst, tid } => {
                let tid = reg(tid);
                let value = self.cpu.vc.read(self.origin().lard_key(), tid);
                self.cpu.uc.set_reg(gpr_reg(dst), value);
                EvOp::ReadVc { tid, value }
            }
            LardOp::WriteVc { tid, value } => {
                let (tid, value) = (reg(tid), reg(value));
                self.cpu.vc.write(self.origin().lard_key(), tid, value);
                EvOp::WriteVc { tid, value }
            }
            LardOp::ClearHistory { addr, len } => {
                let (addr, len) = (reg(addr), reg(len));
                if let Err(f) = check_region(addr, len) {
                    return self.lard_fault(pc, f);
                }
                EvOp::ClearHistory { addr, len }
            }
            LardOp::CopyHistory { src, dst, len } => {
                let (src, dst, len) = (reg(src), reg(dst), reg(len));
                if let Err(f) = check_region(src, len).and(check_region(dst, len)) {
                    return self.lard_fault(pc, f);
                }
                EvOp::CopyHistory { src, dst, len }
            }
            LardOp::FloorVc { tid, value: out } => {
                let (tid, value) = (reg(tid), reg(out));
                if !self.obs.floors {
                    // No floor is kept: the runtime must keep every entry.
                    self.cpu.uc.set_reg(gpr_reg(out), 0);
                    self.obs.stats.count_op(op.kind());
                    return;
                }
                self.cpu.vc.raise_floor(tid, value);
                EvOp::FloorVc { tid, value }
            }
        };
        self.obs.stats.count_op(op.kind());
        if self.emit(pc, EventKind::Lard(ev)) == Control::Continue {
            self.adversarial_lard(&ev);
        }
        if let EvOp::FloorVc { tid, value } = ev {
            self.prune_unit_names(tid, value);
        }
    }

    /// Forgets the names of the OpenMP units that ran as language thread
    /// `tid` entirely at or below its new floor `value` (`LangUnits::prune`),
    /// but for those a race found so far names; after the floor's event,
    /// which delivered every earlier access to the detectors.
    pub(crate) fn prune_unit_names(&mut self, tid: u64, value: u64) {
        let pinned = self
            .obs
            .observer
            .race_clocks(lard_detector_hw::event::ThreadKey::Lang(tid));
        self.obs.lang_units.prune(tid, value, &pinned);
    }

    pub(super) fn lard_fault(&mut self, pc: u64, f: LardFault) {
        self.fault(GuestFault {
            signal: libc::SIGILL,
            pc,
            addr: None,
            what: format!("LARD fault ({}): {f}", f.name()),
        });
        // Do not execute the faulting instruction.
        self.cpu.uc.set_reg(Reg::RIP, pc);
    }

    /// The Tracked access of `size` bytes at `addr` the instruction at `pc`
    /// is about to make, counted: the one definition of what a Tracked
    /// access is, whether translated code's access callback delivers it
    /// (the default) or a Tracked site's instruction call does (with
    /// adversarial memory). It is reported under
    /// [`Machine::attributed_pc`] and never counted as a stack access.
    #[inline]
    pub(super) fn tracked_access(
        &mut self,
        pc: u64,
        addr: u64,
        size: u32,
        kind: AccessKind,
    ) -> Access {
        self.obs.stats.count_access(true, false, kind);
        Access {
            pc: self.attributed_pc(pc),
            addr,
            size,
            kind,
            tracked: true,
            stack: self.is_stack(addr),
            origin: self.origin(),
        }
    }

    /// Delivers the accesses a Tracked (or atomic) instruction is about to make.
    pub(super) fn instruction_accesses(&mut self, pc: u64, site: &MemInsn, tracked: bool) {
        let uc = self.cpu.uc;
        // A rep-prefixed string instruction with rcx = 0 makes no access.
        if site.rep_string && uc.reg(Reg::RCX) == 0 {
            return;
        }
        // Each operand is delivered as soon as its address is known: an
        // x86 address depends on registers only, which delivering an event
        // never changes, so this equals computing every address first —
        // without collecting them (no allocation on the per-access path).
        // (With adversarial memory on, Tracked sites have an instruction
        // call even when the observer wants no accesses.)
        let deliver = self.obs.policy == Policy::Adversarial { deliver: true };
        for m in &site.mem {
            let size = m.memory_size().size() as u32;
            let Some(addr) = m.virtual_address(0, |r, _, _| iced_reg_value(uc, r)) else {
                continue;
            };
            let kinds: &[AccessKind] = match m.access() {
                OpAccess::Read | OpAccess::CondRead => &[AccessKind::Read],
                OpAccess::Write | OpAccess::CondWrite => &[AccessKind::Write],
                OpAccess::ReadWrite | OpAccess::ReadCondWrite => {
                    &[AccessKind::Read, AccessKind::Write]
                }
                _ => &[],
            };
            for &kind in kinds {
                if tracked {
                    let size = size.max(1);
                    let a = self.tracked_access(pc, addr, size, kind);
                    if deliver && self.emit(pc, EventKind::Access(a)) == Control::Stop {
                        return;
                    }
                    if self.obs.adversary.is_some() {
                        self.adversarial_access(pc, site, addr, u64::from(size), kind);
                    }
                } else if kind == AccessKind::Write {
                    self.emit_sync(pc, LowLevelSync::AtomicRmw { addr, size });
                    if self
                        .obs
                        .binary
                        .as_ref()
                        .is_some_and(|b| b.program.contains(pc))
                    {
                        self.binary_atomic(pc, addr, size.max(1));
                    }
                }
            }
        }
    }
}

/// The call instruction that returns to `ret`: a `call rel32` (e8, 5
/// bytes) or `call [rip+disp32]` (ff 15, 6 bytes, `-fno-plt`) when one ends
/// there, else `ret - 1` (a byte of whatever call it was).
pub fn call_before(mem: &Memory, ret: u64) -> u64 {
    let at = |a: u64| mem.slice(a, 1).map(|b| b[0]);
    if at(ret.wrapping_sub(5)) == Some(0xe8) {
        ret - 5
    } else if at(ret.wrapping_sub(6)) == Some(0xff) && at(ret.wrapping_sub(5)) == Some(0x15) {
        ret - 6
    } else {
        ret.wrapping_sub(1)
    }
}
