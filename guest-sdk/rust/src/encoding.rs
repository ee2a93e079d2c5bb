// SPDX-License-Identifier: MIT OR Apache-2.0
//! The LARDx86 encodings (docs/lardx86.md §2), computed at compile time from
//! register numbers.
//!
//! Every op is one 9-byte reserved NOP `0F 1F /r` with a signature:
//!
//! ```text
//! REX(0x48|R<<2|X<<1|B) 0F 1F ModRM(0x84|op1<<3) SIB(op3<<3|op2) op 'L' 'R' 'D'
//! ```
//!
//! op1 = REX.R:ModRM.reg, op2 = REX.B:SIB.base, op3 = REX.X:SIB.index; unused
//! operand fields are 0 (`rax`). Tracked is the prefix byte [`TRACKED_PREFIX`].
//!
//! ```
//! use lard::encoding::*;
//! assert_eq!(encode(WRITEVC, RDI, RSI, RAX), [0x48, 0x0f, 0x1f, 0xbc, 0x06, 0x03, 0x4c, 0x52, 0x44]);
//! ```

/// The Tracked prefix: the SS segment override, ignored in 64-bit mode.
pub const TRACKED_PREFIX: u8 = 0x36;

/// Op number of Thread.
pub const THREAD: u8 = 1;
/// Op number of ReadVC.
pub const READVC: u8 = 2;
/// Op number of WriteVC.
pub const WRITEVC: u8 = 3;
/// Op number of ClearHistory.
pub const CLEARHISTORY: u8 = 4;
/// Op number of CopyHistory.
pub const COPYHISTORY: u8 = 5;
/// Op number of FloorVC.
pub const FLOORVC: u8 = 6;

/// Register number of `rax` (also the value of an unused operand field).
pub const RAX: u8 = 0;
/// Register number of `rcx`.
pub const RCX: u8 = 1;
/// Register number of `rdx`.
pub const RDX: u8 = 2;
/// Register number of `rbx`.
pub const RBX: u8 = 3;
/// Register number of `rsp`.
pub const RSP: u8 = 4;
/// Register number of `rbp`.
pub const RBP: u8 = 5;
/// Register number of `rsi`.
pub const RSI: u8 = 6;
/// Register number of `rdi`.
pub const RDI: u8 = 7;
/// Register number of `r8` (`r9`..`r15` are 9..15).
pub const R8: u8 = 8;

/// The canonical 9-byte encoding of op `op` with register operands
/// `op1`, `op2`, `op3` (numbers 0..=15; pass [`RAX`] for unused fields).
pub const fn encode(op: u8, op1: u8, op2: u8, op3: u8) -> [u8; 9] {
    assert!(
        op1 < 16 && op2 < 16 && op3 < 16,
        "register numbers are 0..=15"
    );
    assert!(op >= THREAD && op <= FLOORVC, "op numbers are 1..=6");
    [
        0x48 | ((op1 >> 3) << 2) | ((op3 >> 3) << 1) | (op2 >> 3),
        0x0f,
        0x1f,
        0x84 | ((op1 & 7) << 3),
        ((op3 & 7) << 3) | (op2 & 7),
        op,
        0x4c,
        0x52,
        0x44,
    ]
}

// The forms the SDK emits (operands pinned to these registers).
pub(crate) const THREAD_RDI: [u8; 9] = encode(THREAD, RDI, RAX, RAX);
pub(crate) const READVC_RAX_RDI: [u8; 9] = encode(READVC, RAX, RDI, RAX);
pub(crate) const WRITEVC_RDI_RSI: [u8; 9] = encode(WRITEVC, RDI, RSI, RAX);
pub(crate) const CLEARHISTORY_RDI_RSI: [u8; 9] = encode(CLEARHISTORY, RDI, RSI, RAX);
pub(crate) const COPYHISTORY_RDI_RSI_RDX: [u8; 9] = encode(COPYHISTORY, RDI, RSI, RDX);
pub(crate) const FLOORVC_RDI_RAX: [u8; 9] = encode(FLOORVC, RDI, RAX, RAX);

#[cfg(test)]
mod tests {
    use super::*;

    /// The examples of docs/lardx86.md §2.2.
    #[test]
    fn spec_examples() {
        let b = |s: &str| -> Vec<u8> {
            s.split(' ')
                .map(|x| u8::from_str_radix(x, 16).unwrap())
                .collect()
        };
        assert_eq!(
            encode(THREAD, RDI, RAX, RAX).to_vec(),
            b("48 0f 1f bc 00 01 4c 52 44")
        );
        assert_eq!(
            encode(READVC, RAX, 15, RAX).to_vec(),
            b("49 0f 1f 84 07 02 4c 52 44")
        );
        assert_eq!(
            encode(WRITEVC, RDI, RSI, RAX).to_vec(),
            b("48 0f 1f bc 06 03 4c 52 44")
        );
        assert_eq!(
            encode(CLEARHISTORY, RDI, RSI, RAX).to_vec(),
            b("48 0f 1f bc 06 04 4c 52 44")
        );
        assert_eq!(
            encode(COPYHISTORY, 12, RSP, 13).to_vec(),
            b("4e 0f 1f a4 2c 05 4c 52 44")
        );
    }

    #[test]
    fn emitted_forms() {
        assert_eq!(
            THREAD_RDI,
            [0x48, 0x0f, 0x1f, 0xbc, 0x00, 0x01, 0x4c, 0x52, 0x44]
        );
        assert_eq!(
            READVC_RAX_RDI,
            [0x48, 0x0f, 0x1f, 0x84, 0x07, 0x02, 0x4c, 0x52, 0x44]
        );
        assert_eq!(
            WRITEVC_RDI_RSI,
            [0x48, 0x0f, 0x1f, 0xbc, 0x06, 0x03, 0x4c, 0x52, 0x44]
        );
        assert_eq!(
            CLEARHISTORY_RDI_RSI,
            [0x48, 0x0f, 0x1f, 0xbc, 0x06, 0x04, 0x4c, 0x52, 0x44]
        );
        assert_eq!(
            COPYHISTORY_RDI_RSI_RDX,
            [0x48, 0x0f, 0x1f, 0xbc, 0x16, 0x05, 0x4c, 0x52, 0x44]
        );
        assert_eq!(
            FLOORVC_RDI_RAX,
            [0x48, 0x0f, 0x1f, 0xbc, 0x00, 0x06, 0x4c, 0x52, 0x44]
        );
    }

    /// Every register in every slot: the fields decode back.
    #[test]
    fn all_registers_round_trip() {
        for op in THREAD..=FLOORVC {
            for r1 in 0..16u8 {
                for r2 in 0..16u8 {
                    for r3 in 0..16u8 {
                        let e = encode(op, r1, r2, r3);
                        assert_eq!(e[0] & 0xf8, 0x48);
                        assert_eq!(e[3] >> 6, 0b10);
                        assert_eq!(e[3] & 7, 0b100);
                        assert_eq!(e[4] >> 6, 0);
                        let d1 = ((e[0] >> 2) & 1) << 3 | (e[3] >> 3) & 7;
                        let d2 = (e[0] & 1) << 3 | e[4] & 7;
                        let d3 = ((e[0] >> 1) & 1) << 3 | (e[4] >> 3) & 7;
                        assert_eq!((d1, d2, d3, e[5]), (r1, r2, r3, op));
                        assert_eq!(&e[6..], &[0x4c, 0x52, 0x44]);
                    }
                }
            }
        }
    }
}
