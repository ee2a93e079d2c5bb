//! Lengths of ordinary instructions known from their leading bytes, so that
//! a sweep over megabytes of code ([`crate::Sweep::step_known`]) decodes
//! each kind of instruction once instead of every instruction.
//!
//! An instruction's length and meaning are fixed by its *determining bytes*:
//! its prefixes, its opcode and, when it has one, its ModRM byte and the SIB
//! byte that ModRM announces. The rest (displacement, immediate) are values
//! that change neither. [`KnownLengths`] keys on the leading bytes up to
//! and including those (the [`key`] of the bytes) and remembers the length
//! of an instruction that iced-x86 decoded as valid and ordinary to a
//! LARD-aware CPU — not a LARD op or fault, no Tracked prefix — and that is
//! neither `lock`-prefixed nor an `xchg` (no hardware-atomic site). Every
//! other instruction with the same key is then the same instruction but for
//! those values, so it too is ordinary, of that length, and no site.
//!
//! The key always covers the determining bytes: after the prefixes and the
//! opcode it takes the next byte as a ModRM (and the SIB it announces)
//! unless the opcode is one of the few without one in any prefix context
//! (`NO_MODRM_1`, `NO_MODRM_0F`: jumps, calls, `push`/`pop`, `mov` of an
//! immediate, …). Taking a byte that is not a ModRM only makes the key
//! longer than it need be. Test `bytes_with_the_same_key_decode_alike`
//! checks the property against iced-x86 for every opcode of the one-, two-
//! and three-byte maps under twelve prefix combinations. Encodings
//! whose determining bytes lie elsewhere are never keyed: VEX, EVEX and XOP
//! (`C4`, `C5`, `62`, `8F`), `D5`, 3DNow! (`0F 0F`, opcode in the last byte).
//! Neither are the bytes a site can start with: the Tracked prefix (`36`),
//! `lock` (`F0`), `xchg` with memory (`86`, `87`). A `0F 1F` NOP is a LARD
//! op when its displacement carries the signature, so a hit on one is
//! checked again ([`KnownLengths::get`]).

use crate::decode::{is_0f1f_nop, lard_op, PREFIX_KIND};
use iced_x86::{Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic};

/// How many legacy and REX prefixes a key may hold.
const MAX_KEY_PREFIXES: usize = 3;

/// log2 of the number of entries of the table.
const BITS: u32 = 14;

/// One-byte opcodes without a ModRM byte (64-bit mode, any prefix).
const NO_MODRM_1: &[u8] = &[
    0x04, 0x05, 0x0C, 0x0D, 0x14, 0x15, 0x1C, 0x1D, 0x24, 0x25, 0x2C, 0x2D, 0x34, 0x35, 0x3C, 0x3D,
    0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x5B, 0x5C, 0x5D, 0x5E, 0x5F,
    0x68, 0x6A, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7A, 0x7B, 0x7C, 0x7D,
    0x7E, 0x7F, 0x90, 0x98, 0x99, 0x9C, 0x9D, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xAB, 0xAC,
    0xAD, 0xAE, 0xAF, 0xB0, 0xB1, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xBB, 0xBC,
    0xBD, 0xBE, 0xBF, 0xC2, 0xC3, 0xC9, 0xCC, 0xE8, 0xE9, 0xEB, 0xF4, 0xF5, 0xF8, 0xF9, 0xFC, 0xFD,
];

/// Two-byte opcodes (`0F xx`, the `xx`) without a ModRM byte.
const NO_MODRM_0F: &[u8] = &[
    0x05, 0x0B, 0x31, 0xA2, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8B,
    0x8C, 0x8D, 0x8E, 0x8F, 0xC8, 0xC9, 0xCA, 0xCB, 0xCC, 0xCD, 0xCE, 0xCF,
];

/// What a byte is as the first byte of an instruction (after the prefixes
/// so far), for [`key`]: an opcode with or without a ModRM byte, a prefix
/// a key may hold, the `0F` escape, or a byte no key starts with.
const OPCODE: u8 = 0;
const OPCODE_MODRM: u8 = 1;
const PREFIX: u8 = 2;
const ESCAPE_0F: u8 = 3;
const NEVER: u8 = 4;

const FIRST: [u8; 256] = {
    let mut t = [OPCODE_MODRM; 256];
    let mut i = 0;
    while i < NO_MODRM_1.len() {
        t[NO_MODRM_1[i] as usize] = OPCODE;
        i += 1;
    }
    let mut b = 0;
    while b < 256 {
        if PREFIX_KIND[b] == 1 {
            t[b] = PREFIX;
        }
        b += 1;
    }
    // The Tracked prefix, lock, xchg with memory; VEX, EVEX, XOP, D5.
    let never = [0x36, 0xF0, 0x86, 0x87, 0xC4, 0xC5, 0x62, 0x8F, 0xD5];
    let mut i = 0;
    while i < never.len() {
        t[never[i] as usize] = NEVER;
        i += 1;
    }
    t[0x0F] = ESCAPE_0F;
    t
};

/// Whether a `0F xx` opcode (the `xx`) has a ModRM byte: 0 none, 1 one,
/// 2 the opcode continues (`0F 38`, `0F 3A`: three bytes, all with ModRM),
/// 3 never keyed (3DNow!, `0F 0F`).
const SECOND: [u8; 256] = {
    let mut t = [1u8; 256];
    let mut i = 0;
    while i < NO_MODRM_0F.len() {
        t[NO_MODRM_0F[i] as usize] = 0;
        i += 1;
    }
    t[0x38] = 2;
    t[0x3A] = 2;
    t[0x0F] = 3;
    t
};

/// The leading bytes of `bytes` that determine the instruction there,
/// packed (first byte lowest) with their count, or `None` when the
/// instruction is never keyed (module docs) or `bytes` ends first.
#[inline]
pub fn key(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut i = 0;
    let mut class = FIRST[*bytes.first()? as usize];
    while class == PREFIX {
        i += 1;
        if i > MAX_KEY_PREFIXES {
            return None;
        }
        class = FIRST[*bytes.get(i)? as usize];
    }
    let mut n = i + 1;
    let modrm = match class {
        OPCODE => false,
        OPCODE_MODRM => true,
        ESCAPE_0F => {
            n += 1;
            match SECOND[*bytes.get(i + 1)? as usize] {
                0 => false,
                1 => true,
                2 => {
                    n += 1;
                    true
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    if modrm {
        let m = *bytes.get(n)?;
        n += 1 + usize::from(m < 0xC0 && m & 7 == 4);
    }
    let k = if bytes.len() >= 8 {
        let w = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
        // n is at most 8 (three prefixes, three opcode bytes, ModRM, SIB).
        w & (u64::MAX >> (8 * (8 - n)))
    } else {
        if n > bytes.len() {
            return None;
        }
        bytes[..n]
            .iter()
            .rev()
            .fold(0u64, |k, &b| (k << 8) | u64::from(b))
    };
    Some((k, n))
}

#[derive(Clone, Copy, Default)]
struct Entry {
    /// The packed key.
    key: u64,
    /// Bytes in the key; 0 for an empty entry.
    key_len: u8,
    /// The instruction's length.
    len: u8,
    /// A `0F 1F` NOP: a hit is checked for a LARD op.
    nop_0f1f: bool,
    /// Control goes on to the next instruction (iced-x86's
    /// `FlowControl::Next`): no branch, call, return or interrupt.
    flows_on: bool,
}

/// A direct-mapped table from [`key`]s to the lengths of ordinary
/// instructions (module docs). Entries are only ever learned from decoded
/// instructions, so a lost entry (two keys sharing a slot) costs a decode.
pub struct KnownLengths {
    table: Box<[Entry]>,
}

impl Default for KnownLengths {
    fn default() -> Self {
        KnownLengths {
            table: vec![Entry::default(); 1 << BITS].into_boxed_slice(),
        }
    }
}

impl core::fmt::Debug for KnownLengths {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let known = self.table.iter().filter(|e| e.key_len != 0).count();
        write!(f, "KnownLengths({known} keys)")
    }
}

#[inline]
fn slot(key: u64, key_len: usize) -> usize {
    ((key ^ key_len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BITS)) as usize
}

impl KnownLengths {
    /// The length of the instruction at the start of `bytes` if it is an
    /// ordinary instruction of a known kind that `bytes` holds whole: one
    /// that is no site (module docs).
    #[inline]
    pub fn get(&self, bytes: &[u8]) -> Option<usize> {
        self.entry(bytes).map(|(len, _)| len)
    }

    /// [`KnownLengths::get`], and whether control goes on to the next
    /// instruction.
    #[inline]
    fn entry(&self, bytes: &[u8]) -> Option<(usize, bool)> {
        let (k, n) = key(bytes)?;
        let e = &self.table[slot(k, n)];
        if e.key != k || usize::from(e.key_len) != n {
            return None;
        }
        let len = usize::from(e.len);
        if len > bytes.len() || (e.nop_0f1f && lard_op(&bytes[..len]).is_some()) {
            return None;
        }
        Some((len, e.flows_on))
    }

    /// Decodes `bytes` (at address `ip`) instruction after instruction as
    /// iced-x86's decoder iterates them, giving `f` every instruction but
    /// those it steps over without decoding: ordinary instructions of a
    /// known kind (neither `lock` nor `xchg`), which, with `flowing`, must
    /// also let control go on to the next instruction. Returns the address
    /// after the last instruction (`ip` for no bytes). For analyses that
    /// look only at the other instructions; the table is not taught.
    pub fn for_each_other(
        &self,
        bytes: &[u8],
        ip: u64,
        flowing: bool,
        mut f: impl FnMut(&Instruction),
    ) -> u64 {
        let mut decoder = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
        let mut insn = Instruction::default();
        let (mut pos, mut end) = (0, ip);
        while pos < bytes.len() {
            let at = ip.wrapping_add(pos as u64);
            if let Some((len, flows_on)) = self.entry(&bytes[pos..]) {
                if flows_on || !flowing {
                    pos += len;
                    end = at.wrapping_add(len as u64);
                    continue;
                }
            }
            if decoder.position() != pos {
                // Within the buffer: set_position cannot fail.
                let _ = decoder.set_position(pos);
                decoder.set_ip(at);
            }
            decoder.decode_out(&mut insn);
            pos = decoder.position();
            end = insn.next_ip();
            f(&insn);
        }
        end
    }

    /// Learns `insn`, decoded from the start of `bytes` as an ordinary
    /// instruction (no LARD op, no Tracked prefix): remembered unless it is
    /// `lock`-prefixed or an `xchg`, or its bytes are never keyed.
    #[inline]
    pub fn learn(&mut self, bytes: &[u8], insn: &Instruction) {
        if insn.has_lock_prefix() || insn.mnemonic() == Mnemonic::Xchg {
            return;
        }
        let Some((k, n)) = key(bytes) else {
            return;
        };
        self.table[slot(k, n)] = Entry {
            key: k,
            key_len: n as u8,
            len: insn.len() as u8,
            nop_0f1f: is_0f1f_nop(insn.code()),
            flows_on: insn.flow_control() == FlowControl::Next,
        };
    }
}
