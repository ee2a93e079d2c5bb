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
use lard_isa_ext::{
    decode, DecodeError, DecodedKind, KnownLengths, LardFault, LardOp, Step, Sweep,
};
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

/// True when decoding with more bytes after the instruction (`avail` bytes
/// from its start were given) gives the same step: a decoded or faulting
/// instruction read only its own bytes; an invalid one saw a full window.
fn same_in_longer_window(d: &Result<lard_isa_ext::Decoded, DecodeError>, avail: u64) -> bool {
    match d {
        Ok(_) | Err(DecodeError::Fault { .. }) => true,
        Err(DecodeError::Invalid) => avail >= lard_isa_ext::MAX_INSN_LEN as u64,
        Err(DecodeError::Truncated) => false,
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
    /// Kinds of ordinary instructions seen by the scans, which later scans
    /// step over without decoding them (`lard_isa_ext::known`).
    known: KnownLengths,
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
    ///
    /// The sweep of the whole range decodes each function again unless it is
    /// in step with the function's own sweep: when it reaches a function's
    /// start and that sweep ended exactly at the function's end with steps
    /// that any longer window decodes alike ([`same_in_longer_window`]), it
    /// continues at the end, where decoding the function again would have
    /// taken it, finding only sites the function's sweep recorded.
    ///
    /// An ordinary instruction (most steps) is a site only if it is atomic
    /// ([`site_of`]) and always decodes alike in a longer window
    /// ([`same_in_longer_window`]), so the sweeps look at it in place
    /// ([`Sweep::step`]).
    pub fn scan(&mut self, bytes: &[u8], base: u64, starts: &[(u64, u64)]) -> Vec<(u64, Rc<Site>)> {
        let mut found = Vec::new();
        let end = base + bytes.len() as u64;
        // Function start -> the furthest end a sweep from it reached in step.
        let mut in_step: AddrMap<u64> = AddrMap::default();
        let mut in_range = false;
        for &(s, e) in starts {
            if s >= base && s < end {
                in_range = true;
                let e = e.min(end);
                let (lo, hi) = ((s - base) as usize, (e - base) as usize);
                let mut clean = true;
                let mut steps = Sweep::new(&bytes[lo..hi], s);
                loop {
                    steps.skip_known(&self.known, u64::MAX);
                    let Some(step) = steps.step_known(&mut self.known) else {
                        break;
                    };
                    match step {
                        Step::Ordinary { .. } => {}
                        Step::Plain { ip, insn } => self.record_plain(ip, insn, true, &mut found),
                        Step::Other(st) => {
                            clean &= same_in_longer_window(&st.result, e - st.ip);
                            self.record(st.ip, &st.result, true, &mut found);
                        }
                    }
                }
                if clean && e > s {
                    let reach = in_step.entry(s).or_insert(e);
                    *reach = (*reach).max(e);
                }
            }
        }
        // The starts in address order, met by the whole range's sweep with
        // a forward cursor (its positions only grow).
        let mut skips: Vec<(u64, u64)> = in_step.into_iter().collect();
        skips.sort_unstable();
        let mut next_skip = 0;
        let mut steps = Sweep::new(bytes, base);
        loop {
            // Ordinary instructions up to the next function start.
            let stop = skips.get(next_skip).map_or(u64::MAX, |s| s.0);
            steps.skip_known(&self.known, stop);
            let Some(step) = steps.step_known(&mut self.known) else {
                break;
            };
            let ip = match &step {
                Step::Plain { ip, .. } | Step::Ordinary { ip } => *ip,
                Step::Other(st) => st.ip,
            };
            while next_skip < skips.len() && skips[next_skip].0 < ip {
                next_skip += 1;
            }
            if next_skip < skips.len() && skips[next_skip].0 == ip {
                let reach = skips[next_skip].1;
                steps.skip_to(reach);
                continue;
            }
            match step {
                Step::Ordinary { .. } => {}
                Step::Plain { ip, insn } => self.record_plain(ip, insn, !in_range, &mut found),
                Step::Other(st) => self.record(st.ip, &st.result, !in_range, &mut found),
            }
        }
        found
    }

    /// [`CodeMap::record`] for an ordinary instruction: a site only if it
    /// is atomic.
    #[inline]
    fn record_plain(
        &mut self,
        ip: u64,
        insn: &Instruction,
        aligned: bool,
        found: &mut Vec<(u64, Rc<Site>)>,
    ) {
        if (insn.has_lock_prefix() || insn.mnemonic() == Mnemonic::Xchg) && is_atomic(insn) {
            self.record_site(ip, Site::Atomic(MemInsn::new(*insn)), aligned, found);
        }
    }

    /// Records the site (if any) of the instruction decoded at `ip`, unless
    /// one was recorded there; `aligned`: where instructions are known to
    /// start (module docs of `lard_in_functions`).
    fn record(
        &mut self,
        ip: u64,
        result: &Result<lard_isa_ext::Decoded, DecodeError>,
        aligned: bool,
        found: &mut Vec<(u64, Rc<Site>)>,
    ) {
        if let Some(site) = site_of(result) {
            self.record_site(ip, site, aligned, found);
        }
    }

    /// Records `site` at `ip` unless one was recorded there.
    fn record_site(
        &mut self,
        ip: u64,
        site: Site,
        aligned: bool,
        found: &mut Vec<(u64, Rc<Site>)>,
    ) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.sites.entry(ip) {
            if matches!(site, Site::Tracked(_)) {
                self.tracked += 1;
            }
            if aligned && matches!(site, Site::Tracked(_) | Site::Op(_)) {
                self.lard_in_functions.insert(ip);
            }
            let site = Rc::new(site);
            e.insert(site.clone());
            found.push((ip, site));
        }
    }

    /// The kinds of ordinary instruction the scans have learned, for other
    /// analyses of the same code (`lard_isa_ext::known`).
    pub fn known(&self) -> &KnownLengths {
        &self.known
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan without skipping: every function swept, then the whole
    /// range swept again (what [`CodeMap::scan`] must equal).
    fn reference_scan(
        map: &mut CodeMap,
        bytes: &[u8],
        base: u64,
        starts: &[(u64, u64)],
    ) -> Vec<u64> {
        let mut found = Vec::new();
        let end = base + bytes.len() as u64;
        let mut in_range = false;
        for &(s, e) in starts {
            if s >= base && s < end {
                in_range = true;
                let hi = ((e.min(end) - base) as usize).min(bytes.len());
                for st in Sweep::new(&bytes[(s - base) as usize..hi], s) {
                    map.record(st.ip, &st.result, true, &mut found);
                }
            }
        }
        for st in Sweep::new(bytes, base) {
            map.record(st.ip, &st.result, !in_range, &mut found);
        }
        found.into_iter().map(|(ip, _)| ip).collect()
    }

    fn same_scan(bytes: &[u8], base: u64, starts: &[(u64, u64)]) -> usize {
        let (mut fast, mut slow) = (CodeMap::default(), CodeMap::default());
        let got: Vec<u64> = fast
            .scan(bytes, base, starts)
            .into_iter()
            .map(|(ip, _)| ip)
            .collect();
        let want = reference_scan(&mut slow, bytes, base, starts);
        assert_eq!(got, want);
        assert_eq!(fast.lard_in_functions, slow.lard_in_functions);
        assert_eq!(fast.tracked, slow.tracked);
        let kinds = |m: &CodeMap| {
            let mut v: Vec<_> = m
                .sites
                .iter()
                .map(|(ip, s)| (*ip, format!("{s:?}")))
                .collect();
            v.sort();
            v
        };
        assert_eq!(kinds(&fast), kinds(&slow));
        got.len()
    }

    #[test]
    fn skipping_functions_swept_in_step_finds_the_same_sites() {
        // Code with LARD forms, atomics and data among it: Tracked loads
        // (36 8B 07), a LARD op, lock add, xchg, garbage, long prefix runs.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut bytes = Vec::new();
        let pieces: [&[u8]; 7] = [
            &[0x36, 0x48, 0x8B, 0x07],
            &[0x48, 0x0F, 0x1F, 0x84, 0x00, 0x01, 0x4C, 0x52, 0x44],
            &[0xF0, 0x48, 0x01, 0x07],
            &[0x48, 0x87, 0x07],
            &[0x90, 0xC3],
            &[0x66; 17],
            &[0x48, 0x8B, 0x07, 0x48, 0x89, 0x06],
        ];
        let mut ends = Vec::new();
        for _ in 0..4000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(5) {
                bytes.extend((0..x % 11).map(|k| (x >> (k * 5)) as u8));
            } else {
                bytes.extend_from_slice(pieces[(x % 7) as usize]);
            }
            ends.push(bytes.len() as u64);
        }
        let base = 0x40_0000;
        // Functions at instruction boundaries, at odd offsets (out of step),
        // overlapping, sharing a start, empty, and running past the range.
        let mut starts = Vec::new();
        for (k, w) in ends.windows(2).enumerate().step_by(7) {
            let (s, e) = (
                base + w[0],
                base + ends[(k + 1 + k % 9).min(ends.len() - 1)],
            );
            if e <= s + 1 {
                continue;
            }
            starts.push((s, e));
            match k % 5 {
                0 => starts.push((s + 1, e)),
                1 => starts.push((s, e - 1)),
                2 => starts.push((s, s)),
                3 => starts.push((s, e + 3)),
                _ => starts.push((s, base + bytes.len() as u64 + 100)),
            }
        }
        assert!(same_scan(&bytes, base, &starts) > 1000);
        assert!(same_scan(&bytes, base, &[]) > 1000);
        // The C library's bytes, as one range with pseudo-functions.
        if let Ok(libc) = std::fs::read("/lib/x86_64-linux-gnu/libc.so.6") {
            let libc = &libc[..libc.len().min(1 << 20)];
            let starts: Vec<(u64, u64)> = (0..libc.len() as u64)
                .step_by(4093)
                .map(|o| (o, o + 4000))
                .collect();
            same_scan(libc, 0, &starts);
        }
    }
}
