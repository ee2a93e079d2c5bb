//! Decoding bytes into LARD-aware instructions.
//!
//! The decoder lets iced-x86 find each instruction's length and meaning, then
//! recognises the two LARDx86 forms on the raw bytes:
//! - an op: a `0F 1F` reserved-NOP with ModRM mod=10 rm=100 whose 32-bit
//!   displacement carries the signature `0x44524Cxx` (see [`crate::encode`]);
//! - Tracked: an SS segment-override prefix (`36`) among the legacy prefixes.

use crate::encode::{SIGNATURE, TRACKED_PREFIX};
use crate::fault::LardFault;
use crate::known::KnownLengths;
use crate::op::{LardOp, OpKind};
use crate::reg::Gpr;
use iced_x86::{
    Code, Decoder, DecoderError, DecoderOptions, Instruction, InstructionInfoFactory, OpAccess,
    OpKind as IcedOpKind,
};

/// A decoded instruction as a LARD-aware CPU sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// Address of the first byte.
    pub ip: u64,
    /// Length in bytes, prefixes included.
    pub len: usize,
    /// What it is.
    pub kind: DecodedKind,
}

/// The three kinds of instruction a LARD-aware CPU distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodedKind {
    /// An ordinary x86-64 instruction.
    Plain(Instruction),
    /// A Tracked access: the underlying instruction (its `ip`/`len` cover the
    /// whole encoding, prefix included, but it carries no segment prefix).
    Tracked(Instruction),
    /// One of the six LARDx86 operations.
    Op(LardOp),
}

impl Decoded {
    /// The address of the next instruction.
    pub fn next_ip(&self) -> u64 {
        self.ip.wrapping_add(self.len as u64)
    }

    /// The underlying x86 instruction, unless this is a LARD op.
    pub fn instruction(&self) -> Option<&Instruction> {
        match &self.kind {
            DecodedKind::Plain(i) | DecodedKind::Tracked(i) => Some(i),
            DecodedKind::Op(_) => None,
        }
    }

    /// True for a Tracked access.
    pub fn is_tracked(&self) -> bool {
        matches!(self.kind, DecodedKind::Tracked(_))
    }

    /// The LARD op, if this is one.
    pub fn op(&self) -> Option<LardOp> {
        match self.kind {
            DecodedKind::Op(op) => Some(op),
            _ => None,
        }
    }
}

/// Why bytes did not decode into an executable instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes end inside an instruction.
    Truncated,
    /// Not a valid x86-64 instruction (an ordinary CPU raises #UD).
    Invalid,
    /// A well-formed x86-64 instruction that a LARD-aware CPU faults on;
    /// `len` is its length, so a disassembler can step over it.
    Fault {
        /// The fault.
        fault: LardFault,
        /// Length of the faulting instruction in bytes.
        len: usize,
    },
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DecodeError::Truncated => f.write_str("truncated instruction"),
            DecodeError::Invalid => f.write_str("invalid instruction"),
            DecodeError::Fault { fault, .. } => write!(f, "LARD fault: {fault}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Longest x86 instruction, in bytes (the window [`decode`] reads).
pub const MAX_INSN_LEN: usize = 15;

const fn is_legacy_prefix(b: u8) -> bool {
    matches!(
        b,
        0xF0 | 0xF2 | 0xF3 | 0x2E | 0x36 | 0x3E | 0x26 | 0x64 | 0x65 | 0x66 | 0x67
    )
}

const fn is_rex(b: u8) -> bool {
    matches!(b, 0x40..=0x4F)
}

fn is_segment_override(b: u8) -> bool {
    matches!(b, 0x2E | 0x36 | 0x3E | 0x26 | 0x64 | 0x65)
}

/// Number of leading prefix bytes (legacy and REX) of an instruction.
fn prefix_len(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|&&b| is_legacy_prefix(b) || is_rex(b))
        .count()
}

/// True for the reserved-NOP forms of `0F 1F` that carry LARD ops.
pub(crate) fn is_0f1f_nop(code: Code) -> bool {
    matches!(
        code,
        Code::Nop_rm16
            | Code::Nop_rm32
            | Code::Nop_rm64
            | Code::Reservednop_rm16_r16_0F1F
            | Code::Reservednop_rm32_r32_0F1F
            | Code::Reservednop_rm64_r64_0F1F
    )
}

/// Recognises a LARD op in the raw bytes of a `0F 1F` NOP of length `len`.
/// `None` means an ordinary NOP.
pub(crate) fn lard_op(raw: &[u8]) -> Option<Result<LardOp, LardFault>> {
    let len = raw.len();
    // ModRM, SIB and disp32 are the last six bytes, preceded by 0F 1F.
    if len < 8 || raw[len - 8..len - 6] != [0x0F, 0x1F] {
        return None;
    }
    let modrm = raw[len - 6];
    let sib = raw[len - 5];
    let disp = u32::from_le_bytes([raw[len - 4], raw[len - 3], raw[len - 2], raw[len - 1]]);
    if modrm >> 6 != 0b10 || modrm & 7 != 0b100 || disp & 0xFFFF_FF00 != SIGNATURE {
        return None;
    }
    let prefixes = &raw[..len - 8];
    let rex = match prefixes {
        [] => 0,
        [r] if is_rex(*r) => *r,
        _ => return Some(Err(LardFault::PrefixedOp)),
    };
    let Some(kind) = OpKind::from_number(disp as u8) else {
        return Some(Err(LardFault::UnknownOp { number: disp as u8 }));
    };
    let field = |ext: u8, low: u8| Gpr::from_number((ext & 1) << 3 | (low & 7));
    let reg = field(rex >> 2, modrm >> 3);
    let index = field(rex >> 1, sib >> 3);
    let base = field(rex, sib);
    let slots = [reg, base, index];
    let unused_nonzero = slots[kind.operand_count()..].iter().any(|r| *r != Gpr::Rax);
    if sib >> 6 != 0 || unused_nonzero {
        return Some(Err(LardFault::ReservedField));
    }
    Some(Ok(LardOp::from_operands(kind, slots)))
}

/// True when operand kind `k` is a memory operand written in the instruction
/// (ModRM memory or the string instructions' implicit-but-named operands).
fn is_explicit_memory(k: IcedOpKind) -> bool {
    matches!(
        k,
        IcedOpKind::Memory
            | IcedOpKind::MemorySegSI
            | IcedOpKind::MemorySegESI
            | IcedOpKind::MemorySegRSI
            | IcedOpKind::MemorySegDI
            | IcedOpKind::MemorySegEDI
            | IcedOpKind::MemorySegRDI
            | IcedOpKind::MemoryESDI
            | IcedOpKind::MemoryESEDI
            | IcedOpKind::MemoryESRDI
    )
}

/// Why `insn` cannot carry the Tracked prefix, or `None` if it can: it must
/// access data memory through an explicit memory operand and must not push or
/// pop (its only accesses are the ones it names).
pub fn tracked_fault(insn: &Instruction) -> Option<LardFault> {
    let has_explicit = (0..insn.op_count()).any(|i| is_explicit_memory(insn.op_kind(i)));
    if !has_explicit || insn.stack_pointer_increment() != 0 {
        return Some(LardFault::TrackedWithoutAccess);
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(insn);
    let accesses = info
        .used_memory()
        .iter()
        .any(|m| m.access() != OpAccess::NoMemAccess);
    if accesses {
        None
    } else {
        Some(LardFault::TrackedWithoutAccess)
    }
}

/// Decodes one instruction from the start of `bytes`, located at `ip`.
pub fn decode(bytes: &[u8], ip: u64) -> Result<Decoded, DecodeError> {
    let window = &bytes[..bytes.len().min(MAX_INSN_LEN)];
    let mut decoder = Decoder::with_ip(64, window, ip, DecoderOptions::NONE);
    let insn = decoder.decode();
    if insn.is_invalid() {
        return Err(match decoder.last_error() {
            DecoderError::NoMoreBytes => DecodeError::Truncated,
            _ => DecodeError::Invalid,
        });
    }
    classify(insn, &window[..insn.len()], ip)
}

/// The legacy and REX prefixes of the raw bytes of an instruction (never
/// its last byte).
fn prefixes_of(raw: &[u8]) -> &[u8] {
    &raw[..prefix_len(raw).min(raw.len().saturating_sub(1))]
}

/// Each byte's role among an instruction's leading bytes: 0 no prefix, 1
/// a legacy or REX prefix, 2 the Tracked prefix.
pub(crate) const PREFIX_KIND: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let v = b as u8;
        t[b] = if v == TRACKED_PREFIX {
            2
        } else if is_legacy_prefix(v) || is_rex(v) {
            1
        } else {
            0
        };
        b += 1;
    }
    t
};

/// `prefixes_of(raw).contains(&TRACKED_PREFIX)`, in one pass that stops at
/// the first byte that is no prefix (most instructions' first or second).
#[inline]
fn has_tracked_prefix(raw: &[u8]) -> bool {
    for &b in &raw[..raw.len().saturating_sub(1)] {
        match PREFIX_KIND[b as usize] {
            0 => return false,
            2 => return true,
            _ => {}
        }
    }
    false
}

/// True when the valid instruction `insn`, whose raw bytes are `raw`, is an
/// ordinary one ([`DecodedKind::Plain`]): no LARD op, no Tracked prefix.
#[inline]
fn is_plain(insn: &Instruction, raw: &[u8]) -> bool {
    !has_tracked_prefix(raw) && (!is_0f1f_nop(insn.code()) || lard_op(raw).is_none())
}

/// What the valid instruction `insn`, whose raw bytes are `raw` (prefixes
/// included), at `ip`, is to a LARD-aware CPU.
fn classify(insn: Instruction, raw: &[u8], ip: u64) -> Result<Decoded, DecodeError> {
    let len = raw.len();
    if is_0f1f_nop(insn.code()) {
        match lard_op(raw) {
            Some(Ok(op)) => {
                return Ok(Decoded {
                    ip,
                    len,
                    kind: DecodedKind::Op(op),
                })
            }
            Some(Err(fault)) => return Err(DecodeError::Fault { fault, len }),
            None => {}
        }
    }
    if !has_tracked_prefix(raw) {
        return Ok(Decoded {
            ip,
            len,
            kind: DecodedKind::Plain(insn),
        });
    }
    let prefixes = prefixes_of(raw);
    let fault = |fault| Err(DecodeError::Fault { fault, len });
    if prefixes
        .iter()
        .any(|&b| is_segment_override(b) && b != TRACKED_PREFIX)
    {
        return fault(LardFault::TrackedSegmentOverride);
    }
    // Decode the instruction again without the prefix, so that it carries no
    // segment override, then give it back its full address and length.
    let removed = prefixes.iter().filter(|&&b| b == TRACKED_PREFIX).count();
    let stripped: Vec<u8> = prefixes
        .iter()
        .copied()
        .filter(|&b| b != TRACKED_PREFIX)
        .chain(raw[prefixes.len()..].iter().copied())
        .collect();
    let mut inner =
        Decoder::with_ip(64, &stripped, ip + removed as u64, DecoderOptions::NONE).decode();
    if inner.is_invalid() || inner.len() != stripped.len() {
        return Err(DecodeError::Invalid);
    }
    inner.set_ip(ip);
    inner.set_len(len);
    if let Some(f) = tracked_fault(&inner) {
        return fault(f);
    }
    Ok(Decoded {
        ip,
        len,
        kind: DecodedKind::Tracked(inner),
    })
}

/// One step of a linear sweep: where it was, the bytes, and what they decode to.
#[derive(Clone, Debug)]
pub struct Swept<'a> {
    /// Address of the first byte.
    pub ip: u64,
    /// The bytes this step consumed.
    pub bytes: &'a [u8],
    /// The decoded instruction, or why it did not decode.
    pub result: Result<Decoded, DecodeError>,
}

/// One step of a [`Sweep`] as [`Sweep::step`] gives it.
#[derive(Debug)]
pub enum Step<'s, 'a> {
    /// An ordinary instruction at `ip`: the step the iterator gives as
    /// `Ok(Decoded { ip, len: insn.len(), kind: DecodedKind::Plain(*insn) })`,
    /// lent instead of copied.
    Plain {
        /// Address of the first byte.
        ip: u64,
        /// The instruction.
        insn: &'s Instruction,
    },
    /// Any other step, as the iterator gives it.
    Other(Swept<'a>),
    /// An ordinary instruction at `ip` that is neither `lock`-prefixed nor
    /// an `xchg`, found by [`Sweep::step_known`] without decoding it.
    Ordinary {
        /// Address of the first byte.
        ip: u64,
    },
}

/// A linear sweep over a code buffer: decodes instruction after instruction,
/// stepping over faulting ones by their length and over invalid bytes one at
/// a time (the way `objdump` resynchronises).
///
/// Every step gives what [`decode`] gives at that position. One iced-x86
/// decoder runs over the whole buffer (constructing one per instruction cost
/// more than the decoding); a valid instruction it finds read at most
/// [`MAX_INSN_LEN`] bytes, so it is the one [`decode`]'s window finds, and
/// anything else is decoded again by [`decode`] itself.
pub struct Sweep<'a> {
    bytes: &'a [u8],
    base: u64,
    pos: usize,
    decoder: Decoder<'a>,
    insn: Instruction,
}

impl core::fmt::Debug for Sweep<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Sweep")
            .field("base", &self.base)
            .field("pos", &self.pos)
            .field("len", &self.bytes.len())
            .finish()
    }
}

impl<'a> Sweep<'a> {
    /// A sweep over `bytes`, whose first byte is at address `base`.
    pub fn new(bytes: &'a [u8], base: u64) -> Self {
        Sweep {
            bytes,
            base,
            pos: 0,
            decoder: Decoder::with_ip(64, bytes, base, DecoderOptions::NONE),
            insn: Instruction::default(),
        }
    }

    /// Continues the sweep at `ip` (at or after the next position, within
    /// the buffer; otherwise nothing changes): for a caller that knows the
    /// steps in between, e.g. from an earlier sweep in step with this one.
    pub fn skip_to(&mut self, ip: u64) {
        let pos = ip.wrapping_sub(self.base) as usize;
        if pos >= self.pos && pos <= self.bytes.len() {
            self.pos = pos;
        }
    }

    /// The next step, as the iterator gives it, but an ordinary instruction
    /// (most of any code) lent rather than wrapped in a [`Swept`]: for a
    /// caller that only looks for the others, a scan over megabytes of code.
    #[inline]
    pub fn step(&mut self) -> Option<Step<'_, 'a>> {
        if self.pos < self.bytes.len() && self.decoder.position() == self.pos {
            let ip = self.base.wrapping_add(self.pos as u64);
            self.decoder.decode_out(&mut self.insn);
            let len = self.insn.len();
            // A valid instruction within the window: what `decode_here`
            // decodes and classifies (it decodes again from here otherwise).
            if !self.insn.is_invalid()
                && len <= MAX_INSN_LEN
                && is_plain(&self.insn, &self.bytes[self.pos..self.pos + len])
            {
                self.pos += len;
                return Some(Step::Plain {
                    ip,
                    insn: &self.insn,
                });
            }
        }
        self.next().map(Step::Other)
    }

    /// Steps over the ordinary instructions of kinds `known` has learned
    /// (as [`Sweep::step_known`] gives them, [`Step::Ordinary`]) from the
    /// next position on, stopping at the first other one, at the end, or
    /// once the position is at or past `stop`.
    #[inline]
    pub fn skip_known(&mut self, known: &KnownLengths, stop: u64) {
        let end = match stop.checked_sub(self.base) {
            Some(s) => self
                .bytes
                .len()
                .min(usize::try_from(s).unwrap_or(usize::MAX)),
            None => return,
        };
        while self.pos < end {
            match known.get(&self.bytes[self.pos..]) {
                Some(len) => self.pos += len,
                None => break,
            }
        }
    }

    /// [`Sweep::step`] for a caller that looks for sites only: an ordinary
    /// instruction of a kind `known` has learned (no `lock`, no `xchg`;
    /// crate::known) is a [`Step::Ordinary`], stepped over without
    /// decoding it; every other position is decoded as by [`Sweep::step`],
    /// and an ordinary instruction found so is learned.
    #[inline]
    pub fn step_known(&mut self, known: &mut KnownLengths) -> Option<Step<'_, 'a>> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let ip = self.base.wrapping_add(self.pos as u64);
        let rest = &self.bytes[self.pos..];
        if let Some(len) = known.get(rest) {
            self.pos += len;
            return Some(Step::Ordinary { ip });
        }
        if self.decoder.position() != self.pos && self.decoder.set_position(self.pos).is_ok() {
            self.decoder.set_ip(ip);
        }
        if self.decoder.position() == self.pos {
            self.decoder.decode_out(&mut self.insn);
            let len = self.insn.len();
            if !self.insn.is_invalid() && len <= MAX_INSN_LEN && is_plain(&self.insn, &rest[..len])
            {
                known.learn(rest, &self.insn);
                self.pos += len;
                return Some(Step::Plain {
                    ip,
                    insn: &self.insn,
                });
            }
        }
        self.next().map(Step::Other)
    }

    /// The instruction at the current position, as [`decode`] gives it.
    fn decode_here(&mut self, ip: u64) -> Result<Decoded, DecodeError> {
        let rest = &self.bytes[self.pos..];
        if self.decoder.position() != self.pos {
            if self.decoder.set_position(self.pos).is_err() {
                return decode(rest, ip);
            }
            self.decoder.set_ip(ip);
        }
        self.decoder.decode_out(&mut self.insn);
        if self.insn.is_invalid() || self.insn.len() > MAX_INSN_LEN {
            return decode(rest, ip);
        }
        classify(self.insn, &rest[..self.insn.len()], ip)
    }
}

impl<'a> Iterator for Sweep<'a> {
    type Item = Swept<'a>;

    fn next(&mut self) -> Option<Swept<'a>> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let ip = self.base.wrapping_add(self.pos as u64);
        let result = self.decode_here(ip);
        let rest = &self.bytes[self.pos..];
        let step = match &result {
            Ok(d) => d.len,
            Err(DecodeError::Fault { len, .. }) => *len,
            Err(DecodeError::Invalid) => 1,
            Err(DecodeError::Truncated) => rest.len(),
        };
        let step = step.clamp(1, rest.len());
        self.pos += step;
        Some(Swept {
            ip,
            bytes: &rest[..step],
            result,
        })
    }
}
