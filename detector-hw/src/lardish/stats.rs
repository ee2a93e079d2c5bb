//! [`HwStats`]: simulated cycles, event counts and cache occupancy, with a
//! text report and a hand-written JSON serializer.

use std::fmt;

/// Cache contents at one sampling point (RADISH Figure 11), in lines over
/// all caches of the hierarchy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OccupancySample {
    /// Events processed when sampled.
    pub event: u64,
    /// Lines holding data (program, software manager).
    pub data: u64,
    /// Compact metadata lines.
    pub compact_md: u64,
    /// Expanded metadata lines.
    pub expanded_md: u64,
    /// Invalid (free) lines.
    pub invalid: u64,
}

/// Why an access needed a software race check: why the hardware did not
/// hold enough of the deciding byte's history (the first record or status
/// slot found missing, in the order status anchor, last write, last reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwCause {
    /// The byte has no history yet: its metadata was never in hardware
    /// (first access; a fresh metadata line's status is `InSoftware`).
    Cold,
    /// The metadata line holding the record was evicted from the L3.
    Evicted,
    /// The record was held in a compact metadata line that was expanded
    /// (inflated) since, without the half that now holds it.
    Inflated,
    /// ClearHistory/CopyHistory: the history was copied into software, the
    /// cached metadata invalidated, or the history cleared.
    HistoryOp,
    /// A software check could not import the record: no free clock-table
    /// entry.
    ClockTable,
    /// The metadata was evicted by an epoch rollover.
    Rollover,
    /// The core holding the record switched threads since (lazy flush).
    ThreadSwitch,
    /// Every record is held, but the in-hardware status (set by the last
    /// write or software check) does not cover them.
    StaleStatus,
    /// A granularity conflict moved the line's metadata to software (its
    /// block fell back to byte metadata).
    Granularity,
}

impl SwCause {
    /// Every cause, in [`HwStats::sw_causes`] order.
    pub const ALL: [SwCause; 9] = [
        SwCause::Cold,
        SwCause::Evicted,
        SwCause::Inflated,
        SwCause::HistoryOp,
        SwCause::ClockTable,
        SwCause::Rollover,
        SwCause::ThreadSwitch,
        SwCause::StaleStatus,
        SwCause::Granularity,
    ];

    /// Name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            SwCause::Cold => "cold",
            SwCause::Evicted => "evicted",
            SwCause::Inflated => "inflated",
            SwCause::HistoryOp => "history_op",
            SwCause::ClockTable => "clock_table",
            SwCause::Rollover => "rollover",
            SwCause::ThreadSwitch => "thread_switch",
            SwCause::StaleStatus => "stale_status",
            SwCause::Granularity => "granularity",
        }
    }
}

/// Why an access needed a hardware race check (its local permission did
/// not allow it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HwCause {
    /// The core holds no permission for the byte: first access by its
    /// thread since the metadata line was filled or the thread switched.
    NoPermission,
    /// The permission was downgraded by another core's access.
    RemoteAccess,
    /// The permission was set while part of the history was not in
    /// hardware (in-hardware status not `Everything`), so hardware could
    /// not grant more than it saw.
    PartialStatus,
    /// The permission computed from the whole history was too weak: another
    /// thread's last access was not ordered before the core's thread then.
    Unordered,
}

impl HwCause {
    /// Every cause, in [`HwStats::hw_causes`] order.
    pub const ALL: [HwCause; 4] = [
        HwCause::NoPermission,
        HwCause::RemoteAccess,
        HwCause::PartialStatus,
        HwCause::Unordered,
    ];

    /// Name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            HwCause::NoPermission => "no_permission",
            HwCause::RemoteAccess => "remote_access",
            HwCause::PartialStatus => "partial_status",
            HwCause::Unordered => "unordered",
        }
    }
}

/// What LARDISH's cycles were spent on (`HwStats::cycles_by_mechanism`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    /// What no detection also pays: data access latency, non-memory
    /// instructions, other events.
    Base,
    /// Metadata lookups slower than the data access they overlap with.
    Metadata,
    /// Hardware race checks.
    HwCheck,
    /// Software race checks (synchronous; with asynchronous checking cores
    /// only their hardware-check part).
    SwCheck,
    /// The metadata eviction handler.
    MdEviction,
    /// Epoch rollovers.
    Rollover,
    /// Thread switches on a core.
    ContextSwitch,
    /// ReadVC/WriteVC.
    VcOp,
    /// ClearHistory/CopyHistory.
    HistoryOp,
    /// Enqueuing asynchronous checks and waiting for them at synchronization.
    Async,
}

impl Mechanism {
    /// Every mechanism, in [`HwStats::cycles_by_mechanism`] order.
    pub const ALL: [Mechanism; 10] = [
        Mechanism::Base,
        Mechanism::Metadata,
        Mechanism::HwCheck,
        Mechanism::SwCheck,
        Mechanism::MdEviction,
        Mechanism::Rollover,
        Mechanism::ContextSwitch,
        Mechanism::VcOp,
        Mechanism::HistoryOp,
        Mechanism::Async,
    ];

    /// Name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Base => "base",
            Mechanism::Metadata => "metadata",
            Mechanism::HwCheck => "hw_check",
            Mechanism::SwCheck => "sw_check",
            Mechanism::MdEviction => "md_eviction",
            Mechanism::Rollover => "rollover",
            Mechanism::ContextSwitch => "context_switch",
            Mechanism::VcOp => "vc_op",
            Mechanism::HistoryOp => "history_op",
            Mechanism::Async => "async",
        }
    }
}

/// Everything the LARDISH model measures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HwStats {
    /// Events processed.
    pub events: u64,
    /// Instructions retired: one per event plus [`super::Lardish::add_instructions`].
    pub instructions: u64,
    /// Data accesses (tracked or not).
    pub accesses: u64,
    /// Accesses not checked (untracked): Figure 10's "ignored".
    pub untracked: u64,
    /// Tracked accesses to a thread stack, thread-local for the hardware
    /// (no metadata, no check; `lardish.stack_thread_local`).
    pub stack_accesses: u64,
    /// Accesses that broke the granularity learned for their bytes (type
    /// safety optimizations), each turning its block to byte metadata.
    pub granularity_conflicts: u64,
    /// Checked accesses allowed by local permissions.
    pub permission_hits: u64,
    /// Checked accesses resolved by a hardware race check.
    pub hw_checks: u64,
    /// Checked accesses that needed a software race check.
    pub sw_checks: u64,
    /// Software checks by cause, indexed like [`SwCause::ALL`] (sums to
    /// `sw_checks`).
    pub sw_causes: [u64; 9],
    /// Hardware checks by cause, indexed like [`HwCause::ALL`] (sums to
    /// `hw_checks`).
    pub hw_causes: [u64; 4],
    /// Checked accesses reported racy (same as the oracle's).
    pub racy: u64,
    /// Metadata lines evicted from the last-level cache (including
    /// rollovers and CopyHistory's forced evictions).
    pub md_evictions: u64,
    /// Compact metadata lines expanded by a byte access.
    pub inflations: u64,
    /// Epoch rollovers (clock table overflows).
    pub rollovers: u64,
    /// Past merges: clock-table overflows the software manager resolved by
    /// merging entries every thread holds instead of rolling over.
    pub reclaims: u64,
    /// Thread changes on a core (Thread op, context switch).
    pub context_switches: u64,
    /// ClearHistory operations (non-empty).
    pub clear_ops: u64,
    /// CopyHistory operations (non-empty).
    pub copy_ops: u64,
    /// Cached metadata lines invalidated by ClearHistory/CopyHistory.
    pub history_invalidations: u64,
    /// Cycles application cores stalled waiting for asynchronous checks.
    pub async_stall_cycles: u64,
    /// Software checks an application core made itself because every
    /// asynchronous checking core was busy.
    pub async_local_checks: u64,
    /// Permission hits the exact history contradicts (a model bug if > 0).
    pub permission_violations: u64,
    /// Simulated cycles without race detection.
    pub cycles_no_detection: u64,
    /// Simulated cycles under LARDISH.
    pub cycles_lardish: u64,
    /// `cycles_lardish` by mechanism, indexed like [`Mechanism::ALL`] (sums
    /// to `cycles_lardish`).
    pub cycles_by_mechanism: [u64; 10],
    /// Simulated cycles under the FastTrack-in-software cost model.
    pub cycles_fasttrack: u64,
    /// Cache occupancy samples.
    pub occupancy: Vec<OccupancySample>,
}

impl HwStats {
    /// `n` per 1,000 instructions.
    pub fn per_kilo_instruction(&self, n: u64) -> f64 {
        if self.instructions == 0 {
            0.0
        } else {
            n as f64 * 1000.0 / self.instructions as f64
        }
    }

    /// Checked accesses.
    pub fn checked(&self) -> u64 {
        self.permission_hits + self.hw_checks + self.sw_checks
    }

    /// Share (0..1) of all accesses decided by each mechanism:
    /// `[untracked, thread-local stack, permission, hardware check,
    /// software check]`.
    pub fn decided_shares(&self) -> [f64; 5] {
        let total = self.accesses.max(1) as f64;
        [
            self.untracked as f64 / total,
            self.stack_accesses as f64 / total,
            self.permission_hits as f64 / total,
            self.hw_checks as f64 / total,
            self.sw_checks as f64 / total,
        ]
    }

    /// Cycles of `cycles` relative to no detection (1.0 = no overhead).
    pub fn slowdown(&self, cycles: u64) -> f64 {
        cycles as f64 / self.cycles_no_detection.max(1) as f64
    }

    /// The statistics as a JSON object.
    pub fn to_json(&self) -> String {
        let mut s = String::from("{");
        let mut field = |k: &str, v: String| {
            if s.len() > 1 {
                s.push(',');
            }
            s.push('"');
            s.push_str(k);
            s.push_str("\":");
            s.push_str(&v);
        };
        let counts: [(&str, u64); 25] = [
            ("events", self.events),
            ("instructions", self.instructions),
            ("accesses", self.accesses),
            ("untracked", self.untracked),
            ("stack_accesses", self.stack_accesses),
            ("granularity_conflicts", self.granularity_conflicts),
            ("permission_hits", self.permission_hits),
            ("hw_checks", self.hw_checks),
            ("sw_checks", self.sw_checks),
            ("racy", self.racy),
            ("md_evictions", self.md_evictions),
            ("inflations", self.inflations),
            ("rollovers", self.rollovers),
            ("reclaims", self.reclaims),
            ("context_switches", self.context_switches),
            ("clear_ops", self.clear_ops),
            ("copy_ops", self.copy_ops),
            ("history_invalidations", self.history_invalidations),
            ("async_stall_cycles", self.async_stall_cycles),
            ("async_local_checks", self.async_local_checks),
            ("permission_violations", self.permission_violations),
            ("cycles_no_detection", self.cycles_no_detection),
            ("cycles_lardish", self.cycles_lardish),
            ("cycles_fasttrack", self.cycles_fasttrack),
            ("checked", self.checked()),
        ];
        for (k, v) in counts {
            field(k, v.to_string());
        }
        let num = |x: f64| {
            if x.is_finite() {
                format!("{x:.6}")
            } else {
                "null".to_string()
            }
        };
        let pki = format!(
            "{{\"md_evictions\":{},\"inflations\":{},\"hw_checks\":{},\"sw_checks\":{},\"rollovers\":{},\"granularity_conflicts\":{}}}",
            num(self.per_kilo_instruction(self.md_evictions)),
            num(self.per_kilo_instruction(self.inflations)),
            num(self.per_kilo_instruction(self.hw_checks)),
            num(self.per_kilo_instruction(self.sw_checks)),
            num(self.per_kilo_instruction(self.rollovers)),
            num(self.per_kilo_instruction(self.granularity_conflicts)),
        );
        field("per_kilo_instruction", pki);
        let causes = |names: &mut dyn Iterator<Item = (&str, u64)>, per_kilo: bool| {
            let items: Vec<String> = names
                .map(|(k, v)| {
                    let v = if per_kilo {
                        num(self.per_kilo_instruction(v))
                    } else {
                        v.to_string()
                    };
                    format!("\"{k}\":{v}")
                })
                .collect();
            format!("{{{}}}", items.join(","))
        };
        let sw = || {
            SwCause::ALL
                .iter()
                .map(|c| (c.name(), self.sw_causes[*c as usize]))
        };
        let hw = || {
            HwCause::ALL
                .iter()
                .map(|c| (c.name(), self.hw_causes[*c as usize]))
        };
        let mech = || {
            Mechanism::ALL
                .iter()
                .map(|m| (m.name(), self.cycles_by_mechanism[*m as usize]))
        };
        field("lardish_cycles_by_mechanism", causes(&mut mech(), false));
        field("sw_check_causes", causes(&mut sw(), false));
        field("hw_check_causes", causes(&mut hw(), false));
        field(
            "sw_check_causes_per_kilo_instruction",
            causes(&mut sw(), true),
        );
        field(
            "hw_check_causes_per_kilo_instruction",
            causes(&mut hw(), true),
        );
        let sh = self.decided_shares();
        field(
            "decided_shares",
            format!(
                "{{\"untracked\":{},\"stack\":{},\"permission\":{},\"hw_check\":{},\"sw_check\":{}}}",
                num(sh[0]),
                num(sh[1]),
                num(sh[2]),
                num(sh[3]),
                num(sh[4])
            ),
        );
        let samples: Vec<String> = self
            .occupancy
            .iter()
            .map(|o| {
                format!(
                    "{{\"event\":{},\"data\":{},\"compact_md\":{},\"expanded_md\":{},\"invalid\":{}}}",
                    o.event, o.data, o.compact_md, o.expanded_md, o.invalid
                )
            })
            .collect();
        field("occupancy", format!("[{}]", samples.join(",")));
        s.push('}');
        s
    }
}

impl fmt::Display for HwStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "events {}  instructions {}  accesses {}",
            self.events, self.instructions, self.accesses
        )?;
        writeln!(f, "cycles:")?;
        writeln!(f, "  no detection  {:>14}", self.cycles_no_detection)?;
        for (name, c) in [
            ("LARDISH", self.cycles_lardish),
            ("FastTrack", self.cycles_fasttrack),
        ] {
            writeln!(f, "  {name:<12}  {c:>14}  ({:.2}x)", self.slowdown(c))?;
        }
        write!(f, "  LARDISH by mechanism:")?;
        for m in Mechanism::ALL {
            let n = self.cycles_by_mechanism[m as usize];
            if n > 0 {
                write!(f, " {} {n}", m.name())?;
            }
        }
        writeln!(f)?;
        // With asynchronous checking cores only the enqueueing part of a
        // check is charged here (the rest is under `async`).
        if let Some(per) =
            self.cycles_by_mechanism[Mechanism::SwCheck as usize].checked_div(self.sw_checks)
        {
            writeln!(
                f,
                "  {} software checks, {per} LARDISH cycles each (sw_check cycles / checks)",
                self.sw_checks
            )?;
        }
        writeln!(f, "per 1,000 instructions (RADISH Table 2):")?;
        for (name, n) in [
            ("md evictions", self.md_evictions),
            ("md inflations", self.inflations),
            ("hw race checks", self.hw_checks),
            ("sw race checks", self.sw_checks),
            ("rollovers", self.rollovers),
            ("clock merges", self.reclaims),
            ("granularity conflicts", self.granularity_conflicts),
        ] {
            writeln!(f, "  {name:<15} {:>10.3}", self.per_kilo_instruction(n))?;
        }
        writeln!(f, "race checks by cause (count, per 1,000 instructions):")?;
        for c in SwCause::ALL {
            let n = self.sw_causes[c as usize];
            let pki = self.per_kilo_instruction(n);
            writeln!(f, "  sw {:<15} {n:>10} {pki:>10.3}", c.name())?;
        }
        for c in HwCause::ALL {
            let n = self.hw_causes[c as usize];
            let pki = self.per_kilo_instruction(n);
            writeln!(f, "  hw {:<15} {n:>10} {pki:>10.3}", c.name())?;
        }
        let sh = self.decided_shares();
        writeln!(f, "accesses decided by (RADISH Figure 10):")?;
        for (name, x) in [
            ("untracked", sh[0]),
            ("stack", sh[1]),
            ("permissions", sh[2]),
            ("hw check", sh[3]),
            ("sw check", sh[4]),
        ] {
            writeln!(f, "  {name:<12} {:>7.2}%", x * 100.0)?;
        }
        writeln!(
            f,
            "racy {}  context switches {}  clear {}  copy {}  invalidations {}  async stalls {}  local checks {}  permission violations {}",
            self.racy,
            self.context_switches,
            self.clear_ops,
            self.copy_ops,
            self.history_invalidations,
            self.async_stall_cycles,
            self.async_local_checks,
            self.permission_violations
        )?;
        if let Some(o) = self.occupancy.last() {
            writeln!(
                f,
                "last occupancy sample (of {}): data {} compact md {} expanded md {} invalid {}",
                self.occupancy.len(),
                o.data,
                o.compact_md,
                o.expanded_md,
                o.invalid
            )?;
        }
        Ok(())
    }
}
