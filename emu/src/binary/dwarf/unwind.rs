//! One step of a stopped thread's call stack outward, by the object's
//! `.eh_frame` (the x86-64 psABI's call frame information): the frame's
//! canonical frame address (CFA: the stack pointer before the call that
//! made the frame), and the caller's PC, stack pointer and the registers
//! it preserved across the call.
//!
//! Reports use it to find which function's frame holds a stack address
//! ([`crate::observe::locals`]).

use crate::binary::elf::ElfFile;
use gimli::{
    BaseAddresses, CfaRule, EhFrame, LittleEndian, Register, RegisterRule, UnwindContext,
    UnwindSection, X86_64,
};

/// DWARF's numbers of the x86-64 registers a callee preserves (`%rbx`,
/// `%rbp`, `%r12`–`%r15`): known in outer frames when the call frame
/// information says where they were saved.
const CALLEE_SAVED: [u16; 6] = [3, 6, 12, 13, 14, 15];

/// The registers of a frame, by DWARF register number (0–15: `%rax`,
/// `%rdx`, `%rcx`, `%rbx`, `%rsi`, `%rdi`, `%rbp`, `%rsp`, `%r8`–`%r15`),
/// `None` where unknown (a caller-saved register in an outer frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs {
    /// The frame's PC: where it stopped (innermost frame), else the return
    /// address into it.
    pub pc: u64,
    /// The general registers.
    pub gpr: [Option<u64>; 16],
}

impl Regs {
    /// `%rsp` (always known).
    pub fn sp(&self) -> u64 {
        self.gpr[7].unwrap_or(0)
    }

    /// The value of DWARF register `r`, if known.
    pub fn get(&self, r: Register) -> Option<u64> {
        *self.gpr.get(usize::from(r.0))?
    }
}

/// A frame's CFA and its caller's registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The frame's canonical frame address.
    pub cfa: u64,
    /// The caller's registers (its PC is the return address).
    pub caller: Regs,
}

/// Unwinds one frame of `file` (mapped at `bias`) whose registers are
/// `regs`; `returned` says `regs.pc` is a return address (an outer
/// frame), whose call instruction ends just before it. `read` reads a
/// guest word. `None` without call frame information for the PC, with a
/// CFA rule this unwinder does not follow (a DWARF expression, an unknown
/// register), or when memory cannot be read.
pub fn step(
    file: &ElfFile,
    bias: u64,
    regs: Regs,
    returned: bool,
    read: impl Fn(u64) -> Option<u64>,
) -> Option<Step> {
    let (eh_addr, eh_bytes) = file.section(".eh_frame")?;
    let eh = EhFrame::new(eh_bytes, LittleEndian);
    let mut bases = BaseAddresses::default().set_eh_frame(eh_addr);
    if let Some((text, _)) = file.section(".text") {
        bases = bases.set_text(text);
    }
    if let Some((hdr, _)) = file.section(".eh_frame_hdr") {
        bases = bases.set_eh_frame_hdr(hdr);
    }
    if let Some((got, _)) = file.section(".got") {
        bases = bases.set_got(got);
    }
    let at = regs.pc.wrapping_sub(bias).wrapping_sub(u64::from(returned));
    let mut ctx = UnwindContext::new();
    let row = eh
        .unwind_info_for_address(&bases, &mut ctx, at, EhFrame::cie_from_offset)
        .ok()?;
    let cfa = match row.cfa() {
        CfaRule::RegisterAndOffset { register, offset } => {
            regs.get(*register)?.wrapping_add_signed(*offset)
        }
        CfaRule::Expression(_) => return None,
    };
    let restore = |r: Register| match row.register(r) {
        None | Some(RegisterRule::SameValue) => regs.get(r),
        Some(RegisterRule::Offset(n)) => read(cfa.wrapping_add_signed(n)),
        Some(RegisterRule::ValOffset(n)) => Some(cfa.wrapping_add_signed(n)),
        Some(RegisterRule::Register(from)) => regs.get(from),
        Some(_) => None,
    };
    // x86-64: the return address is the word below the CFA.
    let pc = match row.register(X86_64::RA) {
        Some(RegisterRule::Offset(n)) => read(cfa.wrapping_add_signed(n))?,
        _ => read(cfa.wrapping_sub(8))?,
    };
    let mut gpr = [None; 16];
    for r in CALLEE_SAVED {
        gpr[usize::from(r)] = restore(Register(r));
    }
    gpr[7] = Some(cfa);
    Some(Step {
        cfa,
        caller: Regs { pc, gpr },
    })
}
