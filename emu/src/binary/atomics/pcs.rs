//! Atomic accesses of a binary by instruction, from DWARF's inlined frames
//! (docs/binary-mode.md, "Atomics", "Atomic operations from inlined
//! frames").
//!
//! An atomic load or a relaxed or release store is a plain `mov` on
//! x86-64; the object's type says it is atomic only for typed objects
//! ([`super`]). A `-g` build of Rust or C++ says it by the code:
//! the `mov` lies inside an inlined call of the language's atomic
//! operation — Rust's `core::sync::atomic::atomic_load`/`atomic_store`
//! (and the read-modify-writes, `atomic_add`, `atomic_compare_exchange`,
//! …, behind every `AtomicT` method), libstdc++'s `std::atomic<T>` and
//! `std::__atomic_base<T>` members (`load`, `store`, the conversion and
//! assignment operators, the read-modify-writes) and `std::atomic_flag` —
//! and DWARF records that call as a `DW_TAG_inlined_subroutine` with the
//! instructions' ranges. Its memory-order parameter (`order`, `success`
//! and `failure` in Rust; `__m`, `__m1`, `__m2` in libstdc++) is a
//! constant there when the program passed one: `DW_AT_const_value`, or a
//! location `DW_OP_litN`/`DW_OP_constu N` with `DW_OP_stack_value`, also
//! as every entry of a location list. An order that is not a constant is
//! taken as acquire/release (as for typed atomic objects: it can only add
//! order).
//!
//! The result maps instruction addresses to the order of the innermost
//! atomic frame around them (an inner frame without a constant order
//! inherits its caller's): sorted, disjoint ranges, looked up by binary
//! search behind a span test.

use crate::binary::elf::ElfFile;
use gimli::{AttributeValue, DebugInfoOffset, EndianSlice, LittleEndian, UnitOffset};
use std::collections::BTreeMap;

type R<'a> = EndianSlice<'a, LittleEndian>;

/// The memory order of an atomic operation, as far as happens-before
/// needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemOrder {
    /// No edge.
    Relaxed,
    /// A load (or the load of a read-modify-write) acquires.
    Acquire,
    /// A store (or the store of a read-modify-write) releases.
    Release,
    /// Both (acq_rel, seq_cst, and an order that is not a constant).
    AcqRel,
}

impl MemOrder {
    /// True when a load with this order acquires.
    pub fn acquires(self) -> bool {
        matches!(self, MemOrder::Acquire | MemOrder::AcqRel)
    }

    /// True when a store with this order releases.
    pub fn releases(self) -> bool {
        matches!(self, MemOrder::Release | MemOrder::AcqRel)
    }

    /// The order of an operation with both orders' edges (a
    /// compare-exchange's success and failure orders).
    fn join(self, other: MemOrder) -> MemOrder {
        match (
            self.acquires() || other.acquires(),
            self.releases() || other.releases(),
        ) {
            (true, true) => MemOrder::AcqRel,
            (true, false) => MemOrder::Acquire,
            (false, true) => MemOrder::Release,
            (false, false) => MemOrder::Relaxed,
        }
    }
}

/// The languages whose atomic operations are recognized, by their memory
/// order's encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lang {
    /// `core::sync::atomic::Ordering`: Relaxed 0, Release 1, Acquire 2,
    /// AcqRel 3, SeqCst 4.
    Rust,
    /// `std::memory_order`: relaxed 0, consume 1, acquire 2, release 3,
    /// acq_rel 4, seq_cst 5.
    Cpp,
}

impl Lang {
    fn order(self, v: u64) -> MemOrder {
        match (self, v) {
            (_, 0) => MemOrder::Relaxed,
            (Lang::Rust, 1) | (Lang::Cpp, 3) => MemOrder::Release,
            (Lang::Rust, 2) | (Lang::Cpp, 1 | 2) => MemOrder::Acquire,
            _ => MemOrder::AcqRel,
        }
    }

    /// True for the name of a memory-order parameter.
    fn is_order_param(self, name: &[u8]) -> bool {
        match self {
            Lang::Rust => matches!(name, b"order" | b"success" | b"failure"),
            Lang::Cpp => matches!(name, b"__m" | b"__m1" | b"__m2"),
        }
    }
}

/// Instruction ranges of a process's program code inside inlined atomic
/// operations, with their memory orders.
#[derive(Clone, Debug, Default)]
pub struct AtomicPcs {
    /// Sorted, disjoint `[start, end)` run-time address ranges.
    ranges: Vec<(u64, u64, MemOrder)>,
    lo: u64,
    hi: u64,
    /// The gap `[start, end)` between ranges that held the last address
    /// looked up without a match: the instructions of a translation block
    /// are decided in address order, and most lie in one gap.
    gap: std::cell::Cell<(u64, u64)>,
}

impl AtomicPcs {
    /// The inlined atomic operations `dwarf` (an executable or its
    /// separate debug file) records, at load bias `bias`.
    pub fn of(dwarf: &ElfFile, bias: u64) -> AtomicPcs {
        let mut frames = Vec::new();
        if let Some(d) = dwarf.dwarf() {
            collect(&d, &mut frames);
        }
        AtomicPcs::from_frames(
            frames
                .into_iter()
                .map(|(depth, s, e, o)| (depth, s.wrapping_add(bias), e.wrapping_add(bias), o))
                .collect(),
        )
    }

    /// The ranges of `frames` (`(depth, start, end, order)`), a deeper
    /// frame's order over its callers'.
    fn from_frames(mut frames: Vec<(u32, u64, u64, MemOrder)>) -> AtomicPcs {
        frames.retain(|f| f.1 < f.2);
        frames.sort_by_key(|f| f.0);
        let mut painted: BTreeMap<u64, (u64, MemOrder)> = BTreeMap::new();
        for (_, s, e, o) in frames {
            // Cut what [s, e) covers out of the ranges painted so far.
            let over: Vec<(u64, u64, MemOrder)> = painted
                .range(..e)
                .rev()
                .take_while(|(_, &(end, _))| end > s)
                .map(|(&start, &(end, ord))| (start, end, ord))
                .collect();
            for (start, end, ord) in over {
                painted.remove(&start);
                if start < s {
                    painted.insert(start, (s, ord));
                }
                if end > e {
                    painted.insert(e, (end, ord));
                }
            }
            painted.insert(s, (e, o));
        }
        let ranges: Vec<(u64, u64, MemOrder)> =
            painted.into_iter().map(|(s, (e, o))| (s, e, o)).collect();
        let (lo, hi) = match (ranges.first(), ranges.last()) {
            (Some(f), Some(l)) => (f.0, l.1),
            _ => (u64::MAX, 0),
        };
        AtomicPcs {
            ranges,
            lo,
            hi,
            gap: Default::default(),
        }
    }

    /// The memory order of the atomic operation the instruction at `pc`
    /// belongs to, if it belongs to one.
    #[inline]
    pub fn order(&self, pc: u64) -> Option<MemOrder> {
        if pc < self.lo || pc >= self.hi {
            return None;
        }
        let (gs, ge) = self.gap.get();
        if pc >= gs && pc < ge {
            return None;
        }
        let i = self.ranges.partition_point(|&(s, _, _)| s <= pc);
        if let Some(&(_, e, o)) = i.checked_sub(1).and_then(|p| self.ranges.get(p)) {
            if pc < e {
                return Some(o);
            }
        }
        // pc lies between the range before i (or the span's start) and
        // range i.
        let start = i.checked_sub(1).map_or(self.lo, |p| self.ranges[p].1);
        let end = self.ranges.get(i).map_or(self.hi, |r| r.0);
        self.gap.set((start, end));
        None
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// True when no atomic operation is known.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// The language of an atomic operation's function, from its linkage name:
/// Rust's `core::sync::atomic::atomic_*` helpers (legacy or v0 mangling),
/// libstdc++'s `std::atomic`, `std::__atomic_base`, `std::__atomic_float`
/// and `std::atomic_flag` members.
fn atomic_function(linkage: &str) -> Option<Lang> {
    if let Ok(d) = rustc_demangle::try_demangle(linkage) {
        let name = format!("{d:#}");
        let f = name.strip_prefix("core::sync::atomic::atomic_")?;
        let op = f.split("::").next().unwrap_or(f);
        const OPS: &[&str] = &[
            "load",
            "store",
            "swap",
            "add",
            "sub",
            "and",
            "nand",
            "or",
            "xor",
            "max",
            "min",
            "umax",
            "umin",
            "compare_exchange",
            "compare_exchange_weak",
        ];
        return OPS.contains(&op).then_some(Lang::Rust);
    }
    let rest = linkage.strip_prefix("_ZN")?;
    let rest = rest.trim_start_matches(['K', 'V', 'r']);
    let class = rest.strip_prefix("St")?;
    [
        "6atomicI",
        "13__atomic_baseI",
        "14__atomic_floatI",
        "11atomic_flag",
    ]
    .iter()
    .any(|c| class.starts_with(c))
    .then_some(Lang::Cpp)
}

/// Every inlined call of an atomic operation in `dwarf`: `(depth, start,
/// end, order)`, unrelocated.
fn collect<'a>(dwarf: &gimli::Dwarf<R<'a>>, out: &mut Vec<(u32, u64, u64, MemOrder)>) {
    let mut others = Units::of(dwarf);
    let mut names: BTreeMap<DebugInfoOffset, Option<Lang>> = BTreeMap::new();
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let Ok(mut tree) = unit.entries_tree(None) else {
            continue;
        };
        let Ok(root) = tree.root() else {
            continue;
        };
        let mut cx = Walk {
            dwarf,
            unit: &unit,
            others: &mut others,
            names: &mut names,
            out: &mut *out,
        };
        cx.walk(root, 0, None);
    }
}

/// Depth of DIE nesting followed (a guard against corrupt DWARF).
const MAX_DEPTH: u32 = 200;

/// The compilation units of a DWARF file by offset, each parsed when a
/// reference first reaches it: a function inlined across codegen units or
/// crates (cargo's release profile: 16 codegen units and ThinLTO) refers
/// to its abstract DIE, and that DIE's parameters, in the unit that holds
/// it (`DW_FORM_ref_addr`).
struct Units<'a> {
    /// Every unit's header, in offset order.
    headers: Vec<gimli::UnitHeader<R<'a>>>,
    /// The units parsed so far, by index in `headers`.
    parsed: BTreeMap<usize, Option<gimli::Unit<R<'a>>>>,
}

impl<'a> Units<'a> {
    fn of(dwarf: &gimli::Dwarf<R<'a>>) -> Units<'a> {
        let mut headers = Vec::new();
        let mut it = dwarf.units();
        while let Ok(Some(h)) = it.next() {
            headers.push(h);
        }
        Units {
            headers,
            parsed: BTreeMap::new(),
        }
    }

    /// The unit holding `off`, and `off` inside it.
    fn get(
        &mut self,
        dwarf: &gimli::Dwarf<R<'a>>,
        off: DebugInfoOffset,
    ) -> Option<(&gimli::Unit<R<'a>>, UnitOffset)> {
        let i = self
            .headers
            .partition_point(|h| h.offset().0 <= off.0)
            .checked_sub(1)?;
        let header = self.headers[i];
        let at = off.to_unit_offset(&header)?;
        let unit = self
            .parsed
            .entry(i)
            .or_insert_with(|| dwarf.unit(header).ok())
            .as_ref()?;
        Some((unit, at))
    }
}

/// A reference attribute as an offset in `.debug_info`: in the unit's
/// form (`UnitRef`) or any unit's (`DebugInfoRef`).
fn global_ref(
    unit: &gimli::Unit<R<'_>>,
    v: Option<AttributeValue<R<'_>>>,
) -> Option<DebugInfoOffset> {
    match v? {
        AttributeValue::UnitRef(o) => o.to_debug_info_offset(&unit.header),
        AttributeValue::DebugInfoRef(o) => Some(o),
        _ => None,
    }
}

/// One walk over a unit's DIEs: the unit, the others (for references
/// into them), the origins decided so far and the frames found.
struct Walk<'a, 'w> {
    dwarf: &'w gimli::Dwarf<R<'a>>,
    unit: &'w gimli::Unit<R<'a>>,
    others: &'w mut Units<'a>,
    names: &'w mut BTreeMap<DebugInfoOffset, Option<Lang>>,
    out: &'w mut Vec<(u32, u64, u64, MemOrder)>,
}

impl<'a> Walk<'a, '_> {
    fn walk(
        &mut self,
        node: gimli::EntriesTreeNode<'_, '_, R<'a>>,
        depth: u32,
        outer: Option<MemOrder>,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        let entry = node.entry();
        let mut lang = None;
        if entry.tag() == gimli::DW_TAG_inlined_subroutine {
            if let Some(origin) =
                global_ref(self.unit, entry.attr_value(gimli::DW_AT_abstract_origin))
            {
                lang = match self.names.get(&origin) {
                    Some(&l) => l,
                    None => {
                        let l = origin_lang(self.dwarf, self.others, origin);
                        self.names.insert(origin, l);
                        l
                    }
                };
            }
        }
        // The frame's instruction ranges, read before its children are.
        let mut ranges = Vec::new();
        if lang.is_some() {
            if let Ok(mut r) = self.dwarf.die_ranges(self.unit, entry) {
                while let Ok(Some(r)) = r.next() {
                    ranges.push((r.begin, r.end));
                }
            }
        }
        // The memory-order parameters come before the frames inlined into
        // this one (DWARF's order of children), so a child frame inherits
        // the order known when it is reached.
        let mut order: Option<MemOrder> = None;
        let mut children = node.children();
        while let Ok(Some(child)) = children.next() {
            let c = child.entry();
            if let Some(l) = lang {
                if matches!(
                    c.tag(),
                    gimli::DW_TAG_formal_parameter | gimli::DW_TAG_variable
                ) && self.param_name(c).is_some_and(|n| l.is_order_param(&n))
                {
                    if let Some(v) = constant(self.dwarf, self.unit, c) {
                        let o = l.order(v);
                        order = Some(order.map_or(o, |p| p.join(o)));
                    }
                    continue;
                }
            }
            let inner = match lang {
                Some(_) => Some(order.or(outer).unwrap_or(MemOrder::AcqRel)),
                None => outer,
            };
            self.walk(child, depth + 1, inner);
        }
        if lang.is_some() {
            let o = order.or(outer).unwrap_or(MemOrder::AcqRel);
            self.out
                .extend(ranges.into_iter().map(|(s, e)| (depth, s, e, o)));
        }
    }

    /// The name of a parameter or variable DIE, on it or on its abstract
    /// origin (in this unit or another).
    fn param_name(&mut self, e: &gimli::DebuggingInformationEntry<R<'a>>) -> Option<Vec<u8>> {
        if let Some(v) = e.attr_value(gimli::DW_AT_name) {
            return self
                .dwarf
                .attr_string(self.unit, v)
                .ok()
                .map(|s| s.slice().to_vec());
        }
        let o = global_ref(self.unit, e.attr_value(gimli::DW_AT_abstract_origin))?;
        let (unit, at) = self.others.get(self.dwarf, o)?;
        let v = unit.entry(at).ok()?.attr_value(gimli::DW_AT_name)?;
        self.dwarf
            .attr_string(unit, v)
            .ok()
            .map(|s| s.slice().to_vec())
    }
}

/// The language of the atomic operation whose abstract DIE is at
/// `origin`, if it is one: its linkage name, on it or on the declaration
/// it specifies (in any unit).
fn origin_lang<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    units: &mut Units<'a>,
    origin: DebugInfoOffset,
) -> Option<Lang> {
    let mut at = origin;
    for _ in 0..4 {
        let (unit, off) = units.get(dwarf, at)?;
        let e = unit.entry(off).ok()?;
        for a in [gimli::DW_AT_linkage_name, gimli::DW_AT_MIPS_linkage_name] {
            if let Some(v) = e.attr_value(a) {
                let s = dwarf.attr_string(unit, v).ok()?;
                return atomic_function(&String::from_utf8_lossy(s.slice()));
            }
        }
        at = [gimli::DW_AT_specification, gimli::DW_AT_abstract_origin]
            .into_iter()
            .find_map(|a| global_ref(unit, e.attr_value(a)))?;
    }
    None
}

/// The constant value of a parameter or variable DIE: `DW_AT_const_value`,
/// or a location that computes a constant (`DW_OP_litN`, `DW_OP_constu`,
/// … then `DW_OP_stack_value`), directly or in every entry of a location
/// list.
fn constant<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &gimli::Unit<R<'a>>,
    e: &gimli::DebuggingInformationEntry<R<'a>>,
) -> Option<u64> {
    if let Some(v) = e.attr_value(gimli::DW_AT_const_value) {
        return v.udata_value();
    }
    let loc = e.attr_value(gimli::DW_AT_location)?;
    if let AttributeValue::Exprloc(expr) = loc {
        return expr_constant(unit, expr);
    }
    let mut list = dwarf.attr_locations(unit, loc).ok()??;
    let mut value = None;
    while let Ok(Some(entry)) = list.next() {
        let v = expr_constant(unit, entry.data)?;
        if value.is_some_and(|p| p != v) {
            return None;
        }
        value = Some(v);
    }
    value
}

/// The constant a location expression computes, if it is `constant,
/// DW_OP_stack_value`.
fn expr_constant<'a>(unit: &gimli::Unit<R<'a>>, expr: gimli::Expression<R<'a>>) -> Option<u64> {
    let mut ops = expr.operations(unit.encoding());
    let v = match ops.next().ok()?? {
        gimli::Operation::UnsignedConstant { value } => value,
        gimli::Operation::SignedConstant { value } => u64::try_from(value).ok()?,
        _ => return None,
    };
    match ops.next().ok()?? {
        gimli::Operation::StackValue => {}
        _ => return None,
    }
    ops.next().ok()?.is_none().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::{atomic_function, AtomicPcs, Lang, MemOrder};

    #[test]
    fn atomic_functions_by_linkage_name() {
        let table = [
            (
                "_ZN4core4sync6atomic11atomic_load17h422ed1b7d3a1a4a9E",
                Some(Lang::Rust),
            ),
            (
                "_ZN4core4sync6atomic12atomic_store17h85036176d5c4ba80E",
                Some(Lang::Rust),
            ),
            (
                "_ZN4core4sync6atomic10atomic_add17h85036176d5c4ba80E",
                Some(Lang::Rust),
            ),
            ("_ZN4core4sync6atomic5fence17h85036176d5c4ba80E", None),
            ("_ZNKSt6atomicIbE4loadESt12memory_order", Some(Lang::Cpp)),
            (
                "_ZNSt13__atomic_baseIbE5storeEbSt12memory_order",
                Some(Lang::Cpp),
            ),
            (
                "_ZNVSt13__atomic_baseIiE9fetch_addEiSt12memory_order",
                Some(Lang::Cpp),
            ),
            ("_ZNSt6thread4joinEv", None),
            ("_ZN7MailboxC4Ev", None),
            ("main", None),
        ];
        for (name, want) in table {
            assert_eq!(atomic_function(name), want, "{name}");
        }
    }

    #[test]
    fn orders_by_language() {
        assert_eq!(Lang::Rust.order(1), MemOrder::Release);
        assert_eq!(Lang::Rust.order(2), MemOrder::Acquire);
        assert_eq!(Lang::Rust.order(4), MemOrder::AcqRel);
        assert_eq!(Lang::Cpp.order(2), MemOrder::Acquire);
        assert_eq!(Lang::Cpp.order(3), MemOrder::Release);
        assert_eq!(Lang::Cpp.order(5), MemOrder::AcqRel);
        assert_eq!(Lang::Cpp.order(0), MemOrder::Relaxed);
        assert_eq!(MemOrder::Acquire.join(MemOrder::Release), MemOrder::AcqRel);
        assert_eq!(MemOrder::Relaxed.join(MemOrder::Relaxed), MemOrder::Relaxed);
    }

    #[test]
    fn a_deeper_frame_paints_over_its_caller() {
        let pcs = AtomicPcs::from_frames(vec![
            (2, 0x110, 0x118, MemOrder::Relaxed),
            (1, 0x100, 0x120, MemOrder::Acquire),
            (1, 0x200, 0x204, MemOrder::Release),
        ]);
        assert_eq!(pcs.order(0x0ff), None);
        assert_eq!(pcs.order(0x100), Some(MemOrder::Acquire));
        assert_eq!(pcs.order(0x110), Some(MemOrder::Relaxed));
        assert_eq!(pcs.order(0x117), Some(MemOrder::Relaxed));
        assert_eq!(pcs.order(0x118), Some(MemOrder::Acquire));
        assert_eq!(pcs.order(0x120), None);
        assert_eq!(pcs.order(0x203), Some(MemOrder::Release));
        assert_eq!(pcs.order(0x204), None);
        assert_eq!(pcs.len(), 4);
        // Answers do not depend on the order of the look-ups (the cached
        // gap).
        for pc in [0x150, 0x1ff, 0x120, 0x119, 0x200, 0x150, 0x118, 0x117] {
            let want = match pc {
                0x110..=0x117 => Some(MemOrder::Relaxed),
                0x100..=0x11f => Some(MemOrder::Acquire),
                0x200..=0x203 => Some(MemOrder::Release),
                _ => None,
            };
            assert_eq!(pcs.order(pc), want, "{pc:#x}");
        }
    }
}
