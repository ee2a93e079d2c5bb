//! Names of the stack and thread-local locations races are on: the
//! variable, its function and its declaration (`sum, local variable of
//! main declared at prog.c:5`) instead of the mapping (`[stack]`).
//!
//! A stack address is named while its frame exists: when a detector logs
//! a race on a new address ([`Observer::fresh_race_addrs`]), at the end of
//! the quantum in which it did, the thread whose stack holds the address is
//! unwound from its registers with the objects' `.eh_frame`
//! ([`unwind`]) to the frame holding it, and that frame's variables in
//! scope are looked up in DWARF ([`variables`]). An address no frame
//! explains (a frame gone by then, code without call frame information or
//! DWARF) keeps the mapping's name.
//!
//! An address in a thread's copy of the executable's TLS block (x86-64:
//! the block ends at the thread pointer, `%fs` base) is named by the
//! executable's thread-local variables ([`variables::tls_variable`]).

use crate::binary::dwarf::unwind::{self, Regs};
use crate::binary::dwarf::variables::{self, FrameRegs, StackVariable};
use crate::cpu::uc::Reg;
use crate::linux::signals::RED_ZONE;
use crate::machine::Machine;
use crate::machine::ThreadState;
use std::collections::{HashMap, HashSet};

/// The registers in DWARF's x86-64 numbering.
const DWARF_GPRS: [Reg; 16] = [
    Reg::RAX,
    Reg::RDX,
    Reg::RCX,
    Reg::RBX,
    Reg::RSI,
    Reg::RDI,
    Reg::RBP,
    Reg::RSP,
    Reg::R8,
    Reg::R9,
    Reg::R10,
    Reg::R11,
    Reg::R12,
    Reg::R13,
    Reg::R14,
    Reg::R15,
];
/// At most this many frames are unwound per address.
const MAX_FRAMES: usize = 256;

/// A named location: the variable and the kernel thread whose stack or
/// TLS block holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Local {
    /// The variable.
    pub var: StackVariable,
    /// The kernel thread id of its owner.
    pub owner: u32,
}

/// The stack and thread-local addresses named so far.
#[derive(Clone, Debug, Default)]
pub struct LocalNames {
    named: HashMap<u64, Local>,
    tried: HashSet<u64>,
}

impl LocalNames {
    /// The variable at `addr`, if it was named.
    pub fn get(&self, addr: u64) -> Option<&Local> {
        self.named.get(&addr)
    }
}

/// `sum, local variable of main declared at prog.c:5`;
/// `hits, thread-local variable of kernel thread 4001 declared at …`.
pub fn describe(l: &Local) -> String {
    let v = &l.var;
    let mut s = if v.thread_local {
        format!(
            "{}, thread-local variable of kernel thread {}",
            v.name, l.owner
        )
    } else {
        let mut s = format!("{}, local variable", v.name);
        if let Some(f) = &v.function {
            s += &format!(" of {f}");
        }
        s
    };
    if let Some((file, line)) = &v.decl {
        s += &format!(" declared at {file}:{line}");
    }
    s
}

/// `sum in main`, `hits of kernel thread 4001`: the short form, for the
/// summary line.
pub fn short(l: &Local) -> String {
    let v = &l.var;
    match &v.function {
        _ if v.thread_local => format!("{} of kernel thread {}", v.name, l.owner),
        Some(f) => format!("{} in {f}", v.name),
        None => v.name.clone(),
    }
}

impl Machine {
    /// Names the stack addresses detectors logged races on since the last
    /// call (called between quanta: every thread's registers are saved).
    pub fn name_fresh_locals(&mut self) {
        let mut fresh = Vec::new();
        self.obs.observer.fresh_race_addrs(&mut fresh);
        for addr in fresh {
            if !self.obs.locals.tried.insert(addr) {
                continue;
            }
            if let Some(v) = self.local(addr) {
                self.obs.locals.named.insert(addr, v);
            }
        }
    }

    /// The local or thread-local variable holding `addr`, on whichever
    /// thread's stack or TLS block it lies.
    fn local(&self, addr: u64) -> Option<Local> {
        let region = self.cpu.mem.region_of(addr)?;
        let tls = self.tls_template();
        for (i, t) in self.cpu.threads.iter().enumerate() {
            if t.state == ThreadState::Exited {
                continue;
            }
            let reg = |r: Reg| {
                if i == self.cpu.cur {
                    self.cpu.uc.reg(r)
                } else {
                    t.ctx.reg(r)
                }
            };
            let local = |var| Local { var, owner: t.tid };
            if let Some((offset, size)) = tls {
                let block = reg(Reg::FS_BASE).wrapping_sub(offset);
                if addr.wrapping_sub(block) < size {
                    return self.tls_variable(block, addr).map(local);
                }
            }
            let regs = Regs {
                pc: reg(Reg::RIP),
                gpr: DWARF_GPRS.map(|r| Some(reg(r))),
            };
            if self.cpu.mem.region_of(regs.sp()) == Some(region)
                && addr.wrapping_add(RED_ZONE) >= regs.sp()
            {
                return self.frame_variable(regs, addr).map(local);
            }
        }
        None
    }

    /// The executable's TLS block: how far below the thread pointer it
    /// starts, and its size. (The static TLS layout of x86-64, as glibc's
    /// `_dl_determine_tlsoffset` lays it out: the executable's block
    /// is the first below the thread pointer, placed so that its start
    /// keeps the template's alignment offset.)
    fn tls_template(&self) -> Option<(u64, u64)> {
        let (file, _) = self.obs.objects.executable()?.elf_files()?;
        let (vaddr, size, align) = file.tls?;
        let first = vaddr.wrapping_neg() & (align - 1);
        let offset = size.saturating_sub(first).div_ceil(align) * align + first;
        Some((offset, size))
    }

    /// The executable's thread-local variable at `addr` of a TLS block
    /// starting at `block`.
    fn tls_variable(&self, block: u64, addr: u64) -> Option<StackVariable> {
        let exe = self.obs.objects.executable()?;
        let (_, debug) = exe.elf_files()?;
        let read = |a: u64| self.cpu.mem.read_u64(a);
        variables::tls_variable(debug, exe.bias, block, addr, &read)
    }

    /// Unwinds from `regs` to the frame whose stack holds `addr`, and
    /// names the variable there.
    fn frame_variable(&self, mut regs: Regs, addr: u64) -> Option<StackVariable> {
        let read = |a: u64| self.cpu.mem.read_u64(a);
        let mut returned = false;
        for _ in 0..MAX_FRAMES {
            let object = self.obs.objects.at(regs.pc)?;
            let (file, debug) = object.elf_files()?;
            let step = unwind::step(file, object.bias, regs, returned, read)?;
            if addr < step.cfa {
                let frame = FrameRegs {
                    pc: regs.pc,
                    returned,
                    cfa: step.cfa,
                    gpr: regs.gpr,
                };
                return variables::stack_variable(debug, object.bias, &frame, addr, &read);
            }
            if step.caller.sp() <= regs.sp() || step.caller.pc == 0 {
                return None;
            }
            regs = step.caller;
            returned = true;
        }
        None
    }
}
