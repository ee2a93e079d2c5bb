//! What the emulator knows about guest code: the *LARD sites* — instructions
//! the LARDx86 CPU must act on. (Instructions are counted by translated code
//! itself: `uc::Clock`.)
//!
//! Sites are found by decoding executable memory when it is mapped (the ELF
//! image at load, `mmap`/`mprotect` with PROT_EXEC later). When unicorn
//! translates an instruction it asks `Machine::observes` what to do there
//! (unicorn patch 0004): a Tracked site's accesses call the emulator from
//! translated code with their address, size and kind; a LARD op gets an
//! instruction call. Ordinary instructions run at full speed, and the cost
//! of a site does not depend on how many sites exist.

use iced_x86::{Instruction, Mnemonic};
use lard_isa_ext::{decode, DecodeError, DecodedKind, LardFault, LardOp, Sweep};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

/// A fast hasher for integer keys (the block cache is looked up per block).
#[derive(Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A HashMap keyed by addresses.
pub type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<IntHasher>>;

/// An instruction the LARDx86 CPU acts on.
#[derive(Clone, Debug)]
pub enum Site {
    /// A Tracked access: the underlying instruction and its memory operands.
    Tracked(MemInsn),
    /// A LARD op.
    Op(LardOp),
    /// Bytes a LARD-aware CPU faults on when executed.
    Fault(LardFault),
    /// A hardware-visible atomic: lock-prefixed RMW or `xchg` with memory
    /// (only hooked when an observer wants low-level synchronization).
    Atomic(MemInsn),
}

/// An instruction with its memory operands worked out once, at scan time,
/// so that executing it only evaluates their addresses.
#[derive(Clone, Debug)]
pub struct MemInsn {
    /// The instruction.
    pub insn: Instruction,
    /// Its memory operands (iced-x86's description: registers, scale,
    /// displacement, size and read/write access).
    pub mem: Vec<iced_x86::UsedMemory>,
    /// A `rep`/`repne` string instruction (no access when rcx = 0).
    pub rep_string: bool,
}

impl MemInsn {
    fn new(insn: Instruction) -> MemInsn {
        let mut f = iced_x86::InstructionInfoFactory::new();
        let mem = f.info(&insn).used_memory().to_vec();
        let rep_string =
            (insn.has_rep_prefix() || insn.has_repne_prefix()) && insn.is_string_instruction();
        MemInsn {
            insn,
            mem,
            rep_string,
        }
    }
}

/// Classifies one decoded instruction.
fn site_of(d: &Result<lard_isa_ext::Decoded, DecodeError>) -> Option<Site> {
    match d {
        Ok(d) => match d.kind {
            DecodedKind::Tracked(i) => Some(Site::Tracked(MemInsn::new(i))),
            DecodedKind::Op(op) => Some(Site::Op(op)),
            DecodedKind::Plain(i) => is_atomic(&i).then(|| Site::Atomic(MemInsn::new(i))),
        },
        Err(DecodeError::Fault { fault, .. }) => Some(Site::Fault(*fault)),
        Err(_) => None,
    }
}

/// Lock-prefixed instructions and `xchg` with a memory operand.
pub fn is_atomic(i: &Instruction) -> bool {
    let mem = (0..i.op_count()).any(|n| i.op_kind(n) == iced_x86::OpKind::Memory);
    mem && (i.has_lock_prefix() || i.mnemonic() == Mnemonic::Xchg)
}

/// LARD sites.
#[derive(Default)]
pub struct CodeMap {
    sites: AddrMap<Rc<Site>>,
    /// How many of `sites` are Tracked accesses.
    tracked: usize,
    /// The Tracked accesses and LARD ops found where instructions are known
    /// to start: inside a function of `.eh_frame`, or anywhere in code that
    /// has no `.eh_frame`. The linear sweep of a whole range also decodes
    /// data a function keeps among its code (OpenSSL's perlasm tables, V8's
    /// embedded builtins), where an `ss` byte can read as a Tracked prefix;
    /// those sites are checked when run but do not make a program a LARD
    /// program.
    lard_in_functions: std::collections::HashSet<u64>,
}

impl CodeMap {
    /// Forgets the sites in a range (code was unmapped).
    pub fn forget(&mut self, start: u64, len: u64) {
        let tracked = &mut self.tracked;
        self.lard_in_functions
            .retain(|&a| a < start || a >= start + len);
        self.sites.retain(|&a, s| {
            let keep = a < start || a >= start + len;
            if !keep && matches!(**s, Site::Tracked(_)) {
                *tracked -= 1;
            }
            keep
        });
    }

    /// Scans `bytes` (at `base`) from `starts` — each an address where an
    /// instruction begins, e.g. function starts from `.eh_frame` — and from the
    /// beginning of the range, recording LARD sites. Returns the new sites.
    pub fn scan(&mut self, bytes: &[u8], base: u64, starts: &[(u64, u64)]) -> Vec<(u64, Rc<Site>)> {
        let mut found = Vec::new();
        let mut sweep = |from: u64, to: u64, aligned: bool, found: &mut Vec<(u64, Rc<Site>)>| {
            let (lo, hi) = (
                (from - base) as usize,
                ((to - base) as usize).min(bytes.len()),
            );
            for s in Sweep::new(&bytes[lo..hi], from) {
                if let Some(site) = site_of(&s.result) {
                    if let std::collections::hash_map::Entry::Vacant(e) = self.sites.entry(s.ip) {
                        if matches!(site, Site::Tracked(_)) {
                            self.tracked += 1;
                        }
                        if aligned && matches!(site, Site::Tracked(_) | Site::Op(_)) {
                            self.lard_in_functions.insert(s.ip);
                        }
                        let site = Rc::new(site);
                        e.insert(site.clone());
                        found.push((s.ip, site));
                    }
                }
            }
        };
        let end = base + bytes.len() as u64;
        let mut in_range = false;
        for &(s, e) in starts {
            if s >= base && s < end {
                in_range = true;
                sweep(s, e.min(end), true, &mut found);
            }
        }
        sweep(base, end, !in_range, &mut found);
        found
    }

    /// The site at `pc` (shared: cloning it does not copy the site).
    #[inline]
    pub fn site(&self, pc: u64) -> Option<&Rc<Site>> {
        self.sites.get(&pc)
    }

    /// True when some scanned code carries LARDx86 (a Tracked access or a
    /// LARD op) where instructions are known to start: the program was
    /// built for LARD.
    pub fn has_lard_code(&self) -> bool {
        !self.lard_in_functions.is_empty()
    }

    /// The hardware-atomic sites found so far.
    pub fn atomic_sites(&self) -> Vec<(u64, Rc<Site>)> {
        self.sites
            .iter()
            .filter(|(_, s)| matches!(***s, Site::Atomic(_)))
            .map(|(&pc, s)| (pc, s.clone()))
            .collect()
    }

    /// How many Tracked instructions the scanned code holds.
    #[inline]
    pub fn tracked_sites(&self) -> usize {
        self.tracked
    }

    /// True when `pc` is a Tracked instruction.
    #[inline]
    pub fn is_tracked(&self, pc: u64) -> bool {
        matches!(self.sites.get(&pc).map(|s| &**s), Some(Site::Tracked(_)))
    }

    /// Re-decodes one instruction (for fault messages).
    pub fn describe(bytes: &[u8], pc: u64) -> String {
        match decode(bytes, pc) {
            Ok(d) => lard_isa_ext::format(&d),
            Err(e) => format!("({e})"),
        }
    }
}
