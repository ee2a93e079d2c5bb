//! HardRace-style static pruning of program code (HardRace §4.1; binary
//! mode, docs/binary-mode.md): memory instructions that provably touch only
//! their own thread's private stack frame cannot race, so their accesses
//! are not delivered to the detector.
//!
//! Two analyses, each a per-function value-set argument about `rsp`/`rbp`:
//!
//! * **frame** — `push`, `pop`, `call`, `ret`, `leave`, `enter`: implicit
//!   accesses to the return address and saved registers, slots no program
//!   code names;
//! * **private stack** — explicit accesses whose address is `rsp`-based (or
//!   `rbp`-based in a function that sets `rbp` from `rsp`), in a function
//!   that never lets a stack address escape: no instruction reads `rsp` (or
//!   the frame pointer) as a value, other than adjusting the stack pointer
//!   itself (`sub/add/and rsp, imm`, `mov rbp, rsp`, `mov rsp, rbp`,
//!   `lea rsp, [rbp-…]`). A frame whose address is taken (`lea rdi,
//!   [rsp+8]`, arrays shared with threads, OpenMP's shared locals) keeps all
//!   its accesses checked.
//!
//! An access through any other register is never pruned, so a race between
//! a pruned access and another thread's access would need a pointer to the
//! frame in another thread, which the escape check rules out.

use crate::cpu::code::AddrMap;
use iced_x86::{Decoder, DecoderOptions, Instruction, Mnemonic, OpKind, Register};

/// Why an instruction was pruned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pruned {
    /// Implicit frame access (push/pop/call/ret/leave/enter).
    Frame,
    /// Explicit access to a frame whose address never escapes.
    PrivateStack,
}

/// The result of pruning: which PCs are not observed, and the static
/// counts per analysis.
#[derive(Clone, Debug, Default)]
pub struct Pruning {
    /// PCs whose accesses are not delivered, with the analysis that
    /// pruned them.
    pub pcs: AddrMap<Pruned>,
    /// Memory instructions examined.
    pub memory_insns: u64,
    /// Pruned by the frame analysis.
    pub frame: u64,
    /// Pruned by the private-stack analysis.
    pub private_stack: u64,
}

fn is_frame_op(i: &Instruction) -> bool {
    matches!(
        i.mnemonic(),
        Mnemonic::Push
            | Mnemonic::Pop
            | Mnemonic::Call
            | Mnemonic::Ret
            | Mnemonic::Leave
            | Mnemonic::Enter
    )
}

fn has_memory_operand(i: &Instruction) -> bool {
    (0..i.op_count()).any(|n| i.op_kind(n) == OpKind::Memory)
}

fn is_stack_reg(r: Register) -> bool {
    matches!(
        r,
        Register::RSP | Register::ESP | Register::SP | Register::SPL
    )
}

fn is_fp_reg(r: Register) -> bool {
    matches!(
        r,
        Register::RBP | Register::EBP | Register::BP | Register::BPL
    )
}

/// True when the instruction only adjusts the stack or frame pointer (not
/// an escape of a stack address).
fn adjusts_stack(i: &Instruction) -> bool {
    let dst = if i.op_count() > 0 && i.op_kind(0) == OpKind::Register {
        i.op0_register()
    } else {
        return false;
    };
    match i.mnemonic() {
        Mnemonic::Sub | Mnemonic::Add | Mnemonic::And => {
            is_stack_reg(dst)
                && i.op_count() == 2
                && i.op_kind(1) != OpKind::Register
                && i.op_kind(1) != OpKind::Memory
        }
        Mnemonic::Mov => {
            i.op_count() == 2
                && i.op_kind(1) == OpKind::Register
                && ((dst == Register::RBP && i.op1_register() == Register::RSP)
                    || (dst == Register::RSP && i.op1_register() == Register::RBP))
        }
        Mnemonic::Lea => is_stack_reg(dst),
        _ => false,
    }
}

/// Prunes the functions `[start, end)` of `code` (bytes at `base`).
pub fn prune(code: &[u8], base: u64, functions: &[(u64, u64)]) -> Pruning {
    let mut out = Pruning::default();
    let end_of_code = base + code.len() as u64;
    for &(start, end) in functions {
        if start < base || end > end_of_code || start >= end {
            continue;
        }
        let bytes = &code[(start - base) as usize..(end - base) as usize];
        let insns: Vec<Instruction> = Decoder::with_ip(64, bytes, start, DecoderOptions::NONE)
            .into_iter()
            .collect();
        let frame_pointer = insns.iter().any(|i| {
            i.mnemonic() == Mnemonic::Mov
                && i.op_count() == 2
                && i.op_kind(0) == OpKind::Register
                && i.op_kind(1) == OpKind::Register
                && i.op0_register() == Register::RBP
                && i.op1_register() == Register::RSP
        });
        let stack_base = |r: Register| is_stack_reg(r) || (frame_pointer && is_fp_reg(r));
        // Escape: a stack (or frame) pointer read as a value anywhere.
        let escapes = insns.iter().any(|i| {
            if i.is_invalid() {
                return true;
            }
            if adjusts_stack(i) || is_frame_op(i) {
                return false;
            }
            let lea_of_stack = i.mnemonic() == Mnemonic::Lea && stack_base(i.memory_base());
            let reads_reg = (0..i.op_count())
                .any(|n| i.op_kind(n) == OpKind::Register && stack_base(i.op_register(n)));
            lea_of_stack || reads_reg
        });
        for i in &insns {
            if !has_memory_operand(i) && !is_frame_op(i) {
                continue;
            }
            out.memory_insns += 1;
            if is_frame_op(i) && !has_memory_operand(i) {
                out.frame += 1;
                out.pcs.insert(i.ip(), Pruned::Frame);
            } else if !escapes
                && i.mnemonic() != Mnemonic::Lea
                && stack_base(i.memory_base())
                && i.memory_index() == Register::None
                && !is_frame_op(i)
            {
                out.private_stack += 1;
                out.pcs.insert(i.ip(), Pruned::PrivateStack);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_frames_are_pruned_escaping_ones_are_not() {
        // f: push rbx; sub rsp,16; mov [rsp+8],rdi; mov rax,[rsp+8];
        //    mov [rdi],rax; add rsp,16; pop rbx; ret
        let f = [
            0x53, 0x48, 0x83, 0xec, 0x10, 0x48, 0x89, 0x7c, 0x24, 0x08, 0x48, 0x8b, 0x44, 0x24,
            0x08, 0x48, 0x89, 0x07, 0x48, 0x83, 0xc4, 0x10, 0x5b, 0xc3,
        ];
        let p = prune(&f, 0x1000, &[(0x1000, 0x1000 + f.len() as u64)]);
        assert_eq!((p.frame, p.private_stack), (3, 2));
        assert!(!p.pcs.contains_key(&0x100f), "the access through rdi stays");
        // g: sub rsp,24; lea rdi,[rsp+8]; mov [rsp+8],rax; call h; add rsp,24; ret
        let g = [
            0x48, 0x83, 0xec, 0x18, 0x48, 0x8d, 0x7c, 0x24, 0x08, 0x48, 0x89, 0x44, 0x24, 0x08,
            0xe8, 0x00, 0x00, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x18, 0xc3,
        ];
        let p = prune(&g, 0x2000, &[(0x2000, 0x2000 + g.len() as u64)]);
        assert_eq!(p.private_stack, 0, "the frame's address escapes");
        assert_eq!(p.frame, 2);
    }
}
