//! Run statistics (`--stats`, `--stats-json`).

use lard_detector_hw::event::AccessKind;
use lard_isa_ext::OpKind;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// Counters kept by the emulator itself (observer-independent).
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Guest instructions retired (all threads).
    pub insns: u64,
    /// Tracked reads and writes delivered.
    pub tracked: [u64; 2],
    /// Untracked non-stack reads and writes delivered (AccessMode::All only).
    pub untracked: [u64; 2],
    /// Untracked stack reads and writes delivered (AccessMode::All only).
    pub stack: [u64; 2],
    /// LARD ops executed, by kind.
    pub ops: BTreeMap<OpKind, u64>,
    /// Low-level synchronization events seen.
    pub sync_events: u64,
    /// Program events (intercepted allocations, locks, thread ends).
    pub program_events: u64,
    /// Context switches.
    pub switches: u64,
    /// Scheduling steps: basic blocks run while at least two threads were
    /// runnable when their quantum began (emu/src/cpu/sched.rs).
    pub steps: u64,
    /// System calls.
    pub syscalls: u64,
}

/// Access counts by class for a batch of accesses, kept without a branch
/// or a memory update per access: the six counters of [`Stats`] (Tracked,
/// untracked non-stack and untracked stack; reads and writes) are 20-bit
/// fields of one `u128` in registers, and an access adds the one-hot word
/// of its class, looked up from its
/// [`AccessRecord`](crate::observe::observer::AccessRecord) bits
/// ([`AccessTally::add_bits`]: two operations for the index, one load, an
/// add with carry). At most [`AccessTally::MAX`] accesses per tally.
#[derive(Clone, Copy, Debug, Default)]
pub struct AccessTally {
    fields: u128,
    /// Accesses counted (checked against [`AccessTally::MAX`]; the batch
    /// loop does not keep it).
    #[cfg(debug_assertions)]
    n: u64,
}

/// Bits of one counter of [`AccessTally`].
const TALLY_BITS: u32 = 20;

/// The index of a record's class: its `bits >> 8` masked to the write
/// (bit 0), stack (bit 2) and Tracked (bit 8) flags.
const TALLY_INDEX: u64 = 0x105;

/// One-hot counter words by [`TALLY_INDEX`]-masked bits.
static TALLY_WORDS: [u128; TALLY_INDEX as usize + 1] = {
    let mut t = [0u128; TALLY_INDEX as usize + 1];
    let mut i = 0;
    while i < t.len() {
        let w = i & 1;
        let class = if i & 0x100 != 0 {
            0
        } else if i & 4 != 0 {
            2
        } else {
            1
        };
        t[i] = 1 << (TALLY_BITS as usize * (2 * class + w));
        i += 1;
    }
    t
};

impl AccessTally {
    /// Most accesses one tally counts.
    pub const MAX: u64 = (1 << TALLY_BITS) - 1;

    /// Counts one access: Tracked, else stack or not (as [`Stats::count_access`]).
    #[inline]
    pub fn add(&mut self, tracked: bool, stack: bool, write: bool) {
        use crate::observe::observer::AccessRecord;
        self.add_bits(AccessRecord::pack(1, write, tracked, stack));
    }

    /// Counts one access from its
    /// [`AccessRecord`](crate::observe::observer::AccessRecord) bits.
    #[inline(always)]
    pub fn add_bits(&mut self, bits: u64) {
        self.fields = self
            .fields
            .wrapping_add(TALLY_WORDS[(bits >> 8 & TALLY_INDEX) as usize]);
        #[cfg(debug_assertions)]
        {
            self.n += 1;
            assert!(self.n <= Self::MAX, "access tally overflow");
        }
    }

    /// `[reads, writes]` of Tracked, untracked non-stack and untracked stack
    /// accesses.
    pub fn classes(&self) -> [[u64; 2]; 3] {
        let f = |k: u32| (self.fields >> (TALLY_BITS * k)) as u64 & Self::MAX;
        [[f(0), f(1)], [f(2), f(3)], [f(4), f(5)]]
    }
}

impl Stats {
    /// Adds a batch's counts ([`AccessTally::classes`]).
    pub fn count_accesses(&mut self, classes: &[[u64; 2]; 3]) {
        let [tracked, untracked, stack] = *classes;
        for w in 0..2 {
            self.tracked[w] += tracked[w];
            self.untracked[w] += untracked[w];
            self.stack[w] += stack[w];
        }
    }

    /// Counts one delivered access.
    #[inline]
    pub fn count_access(&mut self, tracked: bool, stack: bool, kind: AccessKind) {
        let w = usize::from(kind == AccessKind::Write);
        if tracked {
            self.tracked[w] += 1;
        } else if stack {
            self.stack[w] += 1;
        } else {
            self.untracked[w] += 1;
        }
    }

    /// Counts one LARD op.
    pub fn count_op(&mut self, k: OpKind) {
        *self.ops.entry(k).or_default() += 1;
    }
}

/// A finished run's statistics, with per-thread counts and timing.
pub struct Report<'a> {
    /// The counters.
    pub stats: &'a Stats,
    /// (kernel tid, language thread, instructions) per thread.
    pub threads: Vec<(u32, Option<u64>, u64)>,
    /// Wall-clock time of the emulation.
    pub wall: Duration,
    /// Whether accesses were observed (else the access counts are not measured).
    pub observed: &'static str,
    /// The observer's hash of the event stream, if it keeps one.
    pub event_hash: Option<u64>,
}

impl Report<'_> {
    fn mips(&self) -> f64 {
        self.stats.insns as f64 / self.wall.as_secs_f64().max(1e-9) / 1e6
    }

    /// Human-readable text for stderr.
    pub fn text(&self) -> String {
        let s = self.stats;
        let mut o = String::new();
        let _ = writeln!(o, "== lard stats ==");
        let _ = writeln!(o, "instructions retired   {}", s.insns);
        for (tid, l, n) in &self.threads {
            let lang = l.map_or(String::new(), |l| format!(" (language thread {l})"));
            let _ = writeln!(o, "  thread {tid}{lang:<24} {n}");
        }
        let _ = writeln!(o, "accesses observed      {}", self.observed);
        let _ = writeln!(
            o,
            "  tracked              {} reads, {} writes",
            s.tracked[0], s.tracked[1]
        );
        let _ = writeln!(
            o,
            "  untracked non-stack  {} reads, {} writes",
            s.untracked[0], s.untracked[1]
        );
        let _ = writeln!(
            o,
            "  untracked stack      {} reads, {} writes",
            s.stack[0], s.stack[1]
        );
        let ops: Vec<String> = s
            .ops
            .iter()
            .map(|(k, n)| format!("{} {n}", k.mnemonic()))
            .collect();
        let _ = writeln!(
            o,
            "LARD ops               {}",
            if ops.is_empty() {
                "none".into()
            } else {
                ops.join(", ")
            }
        );
        let _ = writeln!(o, "sync events            {}", s.sync_events);
        let _ = writeln!(o, "program events         {}", s.program_events);
        let _ = writeln!(o, "system calls           {}", s.syscalls);
        let _ = writeln!(o, "context switches       {}", s.switches);
        let _ = writeln!(o, "scheduling steps       {}", s.steps);
        let _ = writeln!(o, "wall time              {:.3} s", self.wall.as_secs_f64());
        let _ = writeln!(o, "guest MIPS             {:.1}", self.mips());
        if let Some(h) = self.event_hash {
            let _ = writeln!(o, "event stream hash      {h:016x}");
        }
        o
    }

    /// JSON (schema in docs/cli.md).
    pub fn json(&self) -> String {
        let s = self.stats;
        let threads: Vec<String> = self
            .threads
            .iter()
            .map(|(t, l, n)| {
                let l = l.map_or("null".to_string(), |l| l.to_string());
                format!("{{\"tid\":{t},\"lthread\":{l},\"instructions\":{n}}}")
            })
            .collect();
        let ops: Vec<String> = s
            .ops
            .iter()
            .map(|(k, n)| format!("\"{}\":{n}", k.mnemonic()))
            .collect();
        format!(
            "{{\"instructions\":{},\"threads\":[{}],\"accesses_observed\":\"{}\",\"tracked\":{{\"reads\":{},\"writes\":{}}},\"untracked\":{{\"reads\":{},\"writes\":{}}},\"stack\":{{\"reads\":{},\"writes\":{}}},\"lard_ops\":{{{}}},\"sync_events\":{},\"program_events\":{},\"syscalls\":{},\"context_switches\":{},\"steps\":{},\"wall_seconds\":{:.6},\"guest_mips\":{:.3},\"event_hash\":{}}}\n",
            s.insns,
            threads.join(","),
            self.observed,
            s.tracked[0],
            s.tracked[1],
            s.untracked[0],
            s.untracked[1],
            s.stack[0],
            s.stack[1],
            ops.join(","),
            s.sync_events,
            s.program_events,
            s.syscalls,
            s.switches,
            s.steps,
            self.wall.as_secs_f64(),
            self.mips(),
            self.event_hash.map_or("null".to_string(), |h| format!("\"{h:016x}\""))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::observer::AccessRecord;

    /// A tally of a batch splits into what counting access by access gives.
    #[test]
    fn a_tally_counts_as_count_access() {
        let mut one = Stats::default();
        let mut t = AccessTally::default();
        let mut b = AccessTally::default();
        let mut x = 0x9e37_79b9_u64;
        for _ in 0..1000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (tracked, stack, write) = (x >> 61 & 1 == 1, x >> 62 & 1 == 1, x >> 63 == 1);
            let kind = if write {
                AccessKind::Write
            } else {
                AccessKind::Read
            };
            one.count_access(tracked, stack, kind);
            t.add(tracked, stack, write);
            b.add_bits(AccessRecord::pack(4, write, tracked, stack));
        }
        for t in [t, b] {
            let mut batch = Stats::default();
            batch.count_accesses(&t.classes());
            assert_eq!(
                (batch.tracked, batch.untracked, batch.stack),
                (one.tracked, one.untracked, one.stack)
            );
        }
        assert!(one.tracked[0] > 0 && one.untracked[1] > 0 && one.stack[1] > 0);
    }
}
