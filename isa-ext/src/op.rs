//! The six LARDx86 operations that are instructions of their own
//! (the seventh, Tracked, is a prefix: see [`crate::decode::Decoded`]).

use crate::reg::Gpr;
use core::fmt;

/// A LARDx86 operation with its register operands.
///
/// Operand order follows the LARD paper (§4.1) and docs/lardx86.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LardOp {
    /// `Thread id`: the current low-level thread now runs language thread `id`.
    Thread {
        /// Register holding the language-level thread id.
        id: Gpr,
    },
    /// `ReadVC dst, tid`: `dst` ← entry `tid` of the current thread's vector clock.
    ReadVc {
        /// Destination register.
        dst: Gpr,
        /// Register holding the entry's thread id.
        tid: Gpr,
    },
    /// `WriteVC tid, value`: entry `tid` of the current thread's vector clock ← `value`.
    WriteVc {
        /// Register holding the entry's thread id.
        tid: Gpr,
        /// Register holding the new clock value.
        value: Gpr,
    },
    /// `ClearHistory addr, len`: discard the access histories of `[addr, addr+len)`.
    ClearHistory {
        /// Register holding the first address.
        addr: Gpr,
        /// Register holding the length in bytes.
        len: Gpr,
    },
    /// `CopyHistory src, dst, len`: copy histories of `[src, src+len)` onto `[dst, dst+len)`.
    CopyHistory {
        /// Register holding the source address.
        src: Gpr,
        /// Register holding the destination address.
        dst: Gpr,
        /// Register holding the length in bytes.
        len: Gpr,
    },
    /// `FloorVC tid, value`: entry `tid` of every clock is at least `value`
    /// from now on; a CPU that keeps no floors sets `value` to 0 instead.
    FloorVc {
        /// Register holding the entry's thread id.
        tid: Gpr,
        /// Register holding the floor (in), 0 if no floor was raised (out).
        value: Gpr,
    },
}

/// Which of the six operations, without operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum OpKind {
    /// Thread.
    Thread = 1,
    /// ReadVC.
    ReadVc = 2,
    /// WriteVC.
    WriteVc = 3,
    /// ClearHistory.
    ClearHistory = 4,
    /// CopyHistory.
    CopyHistory = 5,
    /// FloorVC.
    FloorVc = 6,
}

impl OpKind {
    /// All six kinds in op-number order.
    pub const ALL: [OpKind; 6] = [
        OpKind::Thread,
        OpKind::ReadVc,
        OpKind::WriteVc,
        OpKind::ClearHistory,
        OpKind::CopyHistory,
        OpKind::FloorVc,
    ];

    /// The op number carried in the low byte of the signature displacement.
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// The kind with op number `n`, if any.
    pub fn from_number(n: u8) -> Option<OpKind> {
        OpKind::ALL.into_iter().find(|k| k.number() == n)
    }

    /// How many register operands the op takes (1 to 3).
    pub const fn operand_count(self) -> usize {
        match self {
            OpKind::Thread => 1,
            OpKind::ReadVc | OpKind::WriteVc | OpKind::ClearHistory | OpKind::FloorVc => 2,
            OpKind::CopyHistory => 3,
        }
    }

    /// The mnemonic as the formatter prints it, e.g. `"lard.clearhistory"`.
    pub const fn mnemonic(self) -> &'static str {
        match self {
            OpKind::Thread => "lard.thread",
            OpKind::ReadVc => "lard.readvc",
            OpKind::WriteVc => "lard.writevc",
            OpKind::ClearHistory => "lard.clearhistory",
            OpKind::CopyHistory => "lard.copyhistory",
            OpKind::FloorVc => "lard.floorvc",
        }
    }
}

impl LardOp {
    /// The op's kind.
    pub const fn kind(&self) -> OpKind {
        match self {
            LardOp::Thread { .. } => OpKind::Thread,
            LardOp::ReadVc { .. } => OpKind::ReadVc,
            LardOp::WriteVc { .. } => OpKind::WriteVc,
            LardOp::ClearHistory { .. } => OpKind::ClearHistory,
            LardOp::CopyHistory { .. } => OpKind::CopyHistory,
            LardOp::FloorVc { .. } => OpKind::FloorVc,
        }
    }

    /// The register operands in order (1 to 3 of them).
    pub fn operands(&self) -> Vec<Gpr> {
        match *self {
            LardOp::Thread { id } => vec![id],
            LardOp::ReadVc { dst, tid } => vec![dst, tid],
            LardOp::WriteVc { tid, value } => vec![tid, value],
            LardOp::ClearHistory { addr, len } => vec![addr, len],
            LardOp::CopyHistory { src, dst, len } => vec![src, dst, len],
            LardOp::FloorVc { tid, value } => vec![tid, value],
        }
    }

    /// Builds the op of `kind` from its operands in order; missing operands
    /// are `rax` (the encoding's value for an unused field).
    pub fn from_operands(kind: OpKind, ops: [Gpr; 3]) -> LardOp {
        let [a, b, c] = ops;
        match kind {
            OpKind::Thread => LardOp::Thread { id: a },
            OpKind::ReadVc => LardOp::ReadVc { dst: a, tid: b },
            OpKind::WriteVc => LardOp::WriteVc { tid: a, value: b },
            OpKind::ClearHistory => LardOp::ClearHistory { addr: a, len: b },
            OpKind::CopyHistory => LardOp::CopyHistory {
                src: a,
                dst: b,
                len: c,
            },
            OpKind::FloorVc => LardOp::FloorVc { tid: a, value: b },
        }
    }
}

impl fmt::Display for LardOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind().mnemonic())?;
        for (i, r) in self.operands().iter().enumerate() {
            f.write_str(if i == 0 { " " } else { ", " })?;
            f.write_str(r.name())?;
        }
        Ok(())
    }
}
