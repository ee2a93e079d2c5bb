//! Encoding LARDx86 ops and Tracked instructions into bytes.
//!
//! Every op has one canonical 9-byte form (docs/lardx86.md §"Encoding"):
//!
//! ```text
//! REX(0x48|R<<2|X<<1|B)  0F 1F  ModRM(mod=10 reg=op1 rm=100)  SIB(ss=00 index=op3 base=op2)  disp32(0x44524C00|op)
//! ```
//!
//! On a processor without LARD this is `nop qword ptr [op2+op3*1+0x44524Cxx]`:
//! a reserved-NOP that never touches memory.

use crate::fault::LardFault;
use crate::op::LardOp;
use crate::reg::Gpr;
use iced_x86::{Encoder, Instruction};

/// Length in bytes of every encoded LARDx86 op.
pub const OP_LEN: usize = 9;

/// Upper 24 bits of the signature displacement: the bytes `L R D` once the op
/// number is added in the low byte (little-endian: `op 'L' 'R' 'D'`).
pub const SIGNATURE: u32 = 0x4452_4C00;

/// The Tracked prefix: the SS segment override, ignored in 64-bit mode.
pub const TRACKED_PREFIX: u8 = 0x36;

/// The three operand slots, in encoding order: ModRM.reg, SIB.base, SIB.index.
fn slots(op: &LardOp) -> [Gpr; 3] {
    let ops = op.operands();
    let get = |i: usize| ops.get(i).copied().unwrap_or(Gpr::Rax);
    [get(0), get(1), get(2)]
}

/// Encodes `op` in its canonical 9-byte form.
pub fn encode(op: &LardOp) -> [u8; OP_LEN] {
    let [reg, base, index] = slots(op).map(Gpr::number);
    let rex = 0x48 | ((reg >> 3) << 2) | ((index >> 3) << 1) | (base >> 3);
    let modrm = 0x84 | ((reg & 7) << 3);
    let sib = ((index & 7) << 3) | (base & 7);
    let disp = (SIGNATURE | u32::from(op.kind().number())).to_le_bytes();
    [
        rex, 0x0F, 0x1F, modrm, sib, disp[0], disp[1], disp[2], disp[3],
    ]
}

/// Why an instruction could not be encoded as a Tracked access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The instruction would be invalid as a Tracked access.
    Fault(LardFault),
    /// iced-x86 could not encode the underlying instruction.
    Iced(String),
}

impl core::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            EncodeError::Fault(fault) => write!(f, "not a valid Tracked access: {fault}"),
            EncodeError::Iced(e) => write!(f, "cannot encode instruction: {e}"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// Encodes `insn` at address `ip` with the Tracked prefix in front of it.
///
/// The instruction must make a data access through an explicit memory
/// operand (see [`crate::decode::tracked_fault`]); otherwise the result would
/// raise a LARD fault and an error is returned instead.
pub fn encode_tracked(insn: &Instruction, ip: u64) -> Result<Vec<u8>, EncodeError> {
    if let Some(fault) = crate::decode::tracked_fault(insn) {
        return Err(EncodeError::Fault(fault));
    }
    // The prefix shifts the instruction by one byte; RIP-relative operands and
    // branch targets are absolute in iced-x86, so encode at ip + 1.
    let mut encoder = Encoder::new(64);
    encoder
        .encode(insn, ip + 1)
        .map_err(|e| EncodeError::Iced(e.to_string()))?;
    let mut bytes = vec![TRACKED_PREFIX];
    bytes.extend(encoder.take_buffer());
    Ok(bytes)
}
