//! LARD faults: what a LARD-aware CPU raises instead of executing a malformed
//! or out-of-bounds LARDx86 operation (docs/lardx86.md §"Faults").

use core::fmt;

/// Size of the page that ClearHistory/CopyHistory regions must stay within.
pub const PAGE_SIZE: u64 = 4096;

/// A LARD fault. Every fault is precise: the faulting instruction has no
/// effect, and the CPU delivers it like an invalid-opcode exception (SIGILL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LardFault {
    /// A signature displacement with an op number that names no operation.
    UnknownOp {
        /// The op number found.
        number: u8,
    },
    /// An op with SIB.scale ≠ 0 or a non-zero operand field it does not use.
    ReservedField,
    /// An op preceded by a legacy prefix (or a REX that is not the last prefix).
    PrefixedOp,
    /// Tracked on an instruction that makes no data access through an explicit
    /// memory operand (register forms, `lea`, NOPs and hints, push/pop/call).
    TrackedWithoutAccess,
    /// Tracked combined with another segment override (FS, GS, CS, DS, ES).
    TrackedSegmentOverride,
    /// ClearHistory/CopyHistory with a length of zero.
    EmptyRegion,
    /// ClearHistory/CopyHistory whose region crosses a 4 KiB page boundary
    /// (or wraps around the address space).
    RegionCrossesPage {
        /// First byte of the offending region.
        addr: u64,
        /// Its length.
        len: u64,
    },
}

impl LardFault {
    /// A short stable name for messages and JSON, e.g. `"region-crosses-page"`.
    pub const fn name(&self) -> &'static str {
        match self {
            LardFault::UnknownOp { .. } => "unknown-op",
            LardFault::ReservedField => "reserved-field",
            LardFault::PrefixedOp => "prefixed-op",
            LardFault::TrackedWithoutAccess => "tracked-without-access",
            LardFault::TrackedSegmentOverride => "tracked-segment-override",
            LardFault::EmptyRegion => "empty-region",
            LardFault::RegionCrossesPage { .. } => "region-crosses-page",
        }
    }
}

impl fmt::Display for LardFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LardFault::UnknownOp { number } => write!(f, "unknown LARD op number {number}"),
            LardFault::ReservedField => f.write_str("LARD op with a reserved field set"),
            LardFault::PrefixedOp => f.write_str("LARD op with a prefix"),
            LardFault::TrackedWithoutAccess => {
                f.write_str("Tracked prefix on an instruction without an explicit memory access")
            }
            LardFault::TrackedSegmentOverride => {
                f.write_str("Tracked prefix combined with another segment override")
            }
            LardFault::EmptyRegion => f.write_str("history region of length 0"),
            LardFault::RegionCrossesPage { addr, len } => write!(
                f,
                "history region [{addr:#x}, {addr:#x}+{len:#x}) crosses a 4 KiB page"
            ),
        }
    }
}

impl std::error::Error for LardFault {}

/// Checks a ClearHistory/CopyHistory region: non-empty and within one page.
pub fn check_region(addr: u64, len: u64) -> Result<(), LardFault> {
    if len == 0 {
        return Err(LardFault::EmptyRegion);
    }
    let offset = addr % PAGE_SIZE;
    if len > PAGE_SIZE - offset {
        return Err(LardFault::RegionCrossesPage { addr, len });
    }
    Ok(())
}
