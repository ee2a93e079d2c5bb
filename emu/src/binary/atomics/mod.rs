//! Atomic objects of a binary, from DWARF (docs/binary-mode.md,
//! "Atomics").
//!
//! On x86-64 an atomic load of any order and a relaxed or release atomic
//! store compile to a plain `mov`: the instruction does not say it is
//! atomic, the object's type does. This module reads the executable's DWARF
//! and collects the bytes of every statically allocated object (global and
//! static variables) whose type is atomic — C11 `_Atomic T`
//! (`DW_TAG_atomic_type`) or C++ `std::atomic<T>` / `std::__atomic_base<T>`
//! / `std::atomic_flag` — and the atomic parts of aggregates: struct and
//! class fields, union members and array elements, at any depth.
//!
//! Limits: heap objects have no DWARF type (a `malloc`ed `_Atomic int` is
//! not recognized), nor do stack objects (locals are not collected: their
//! addresses differ per call); a memory order is not in the type, so every
//! plain access of an atomic object is taken as acquire (load) or release
//! (store) — relaxed accesses order too much, which can only hide a race.
//!
//! A location program code accesses with an atomic read-modify-write at a
//! static address (a lock-prefixed instruction or `xchg` whose operand is
//! RIP-relative or absolute) is an atomic object too, whatever its type:
//! gcc's `__atomic` builtins and OpenMP's `atomic` constructs work on plain
//! types, and their loads (`omp atomic read`, `__atomic_load_n`) are plain
//! `mov`s of the same location ([`rmw_locations`]).
//!
//! The result is a sorted list of disjoint byte ranges looked up by binary
//! search (no allocation) for program-code accesses only.

pub mod pcs;

use crate::binary::elf::ElfFile;
use crate::binary::prune::absolute_address;
use gimli::{AttributeValue, EndianSlice, LittleEndian, UnitOffset};
use iced_x86::{Mnemonic, OpKind};
use lard_isa_ext::KnownLengths;
use std::collections::HashMap;

type R<'a> = EndianSlice<'a, LittleEndian>;

/// The atomic bytes of a process's statically allocated objects: sorted,
/// disjoint `[start, end)` run-time address ranges.
#[derive(Clone, Debug, Default)]
pub struct AtomicObjects {
    ranges: Vec<(u64, u64)>,
    /// The span of all ranges (a cheap first test).
    lo: u64,
    hi: u64,
}

impl AtomicObjects {
    /// The atomic objects `dwarf` (an executable or its separate debug
    /// file) describes, at load bias `bias`.
    pub fn of(dwarf: &ElfFile, bias: u64) -> AtomicObjects {
        let ranges = dwarf_atomic_ranges(dwarf)
            .into_iter()
            .map(|(s, e)| (s.wrapping_add(bias), e.wrapping_add(bias)))
            .collect();
        AtomicObjects::from_ranges(ranges)
    }

    /// Atomic objects made of `ranges` (any order; overlapping or adjacent
    /// ranges merge).
    pub fn from_ranges(ranges: Vec<(u64, u64)>) -> AtomicObjects {
        let merged = crate::binary::program::merge_ranges(ranges);
        let (lo, hi) = match (merged.first(), merged.last()) {
            (Some(f), Some(l)) => (f.0, l.1),
            _ => (u64::MAX, 0),
        };
        AtomicObjects {
            ranges: merged,
            lo,
            hi,
        }
    }

    /// Adds another object's atomic ranges.
    pub fn add(&mut self, other: &AtomicObjects) {
        let mut all = std::mem::take(&mut self.ranges);
        all.extend_from_slice(&other.ranges);
        *self = AtomicObjects::from_ranges(all);
    }

    /// True when the byte at `addr` belongs to an atomic object.
    #[inline]
    pub fn contains(&self, addr: u64) -> bool {
        if addr < self.lo || addr >= self.hi {
            return false;
        }
        let i = self.ranges.partition_point(|&(s, _)| s <= addr);
        i > 0 && addr < self.ranges[i - 1].1
    }

    /// True when some atomic byte lies in `[lo, hi)`.
    pub fn overlaps(&self, lo: u64, hi: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, e)| e <= lo);
        self.ranges.get(i).is_some_and(|&(s, _)| s < hi)
    }

    /// Number of disjoint atomic ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// True when no atomic object is known.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// The static locations (unrelocated if `code` is) that the functions
/// `[start, end)` of `code` (bytes at `base`) access with a lock-prefixed
/// instruction or `xchg`: `[addr, addr+size)` of every such memory operand
/// that is RIP-relative or an absolute address.
pub fn rmw_locations(code: &[u8], base: u64, functions: &[(u64, u64)]) -> Vec<(u64, u64)> {
    rmw_locations_known(code, base, functions, &KnownLengths::default())
}

/// [`rmw_locations`], stepping over the instructions of kinds `known` has
/// learned (the LARD-site scan of the same code taught it): none is
/// lock-prefixed or an `xchg`.
pub fn rmw_locations_known(
    code: &[u8],
    base: u64,
    functions: &[(u64, u64)],
    known: &KnownLengths,
) -> Vec<(u64, u64)> {
    let end_of_code = base.saturating_add(code.len() as u64);
    let mut out = Vec::new();
    for &(start, end) in functions {
        if start < base || end > end_of_code || start >= end {
            continue;
        }
        let bytes = &code[(start - base) as usize..(end - base) as usize];
        known.for_each_other(bytes, start, false, |i| {
            let memory = (0..i.op_count()).any(|n| i.op_kind(n) == OpKind::Memory);
            if !memory || !(i.has_lock_prefix() || i.mnemonic() == Mnemonic::Xchg) {
                return;
            }
            let Some(addr) = absolute_address(i) else {
                return;
            };
            let size = i.memory_size().size() as u64;
            if addr != 0 && size > 0 {
                out.push((addr, addr.saturating_add(size)));
            }
        });
    }
    out
}

/// A type's size and the `[offset, offset+len)` parts of it that are
/// atomic.
#[derive(Clone, Debug, Default)]
struct Layout {
    size: u64,
    atomic: Vec<(u64, u64)>,
}

/// Types nest at most this deep (a guard against cyclic or corrupt DWARF).
const MAX_DEPTH: u32 = 24;
/// Array elements are expanded one by one up to this many ranges per
/// variable; beyond it the whole array counts as atomic when any part of an
/// element is (an over-approximation that can only add order).
const MAX_PARTS: u64 = 1 << 16;

/// The unrelocated atomic byte ranges of `file`'s global and static
/// variables (empty without DWARF).
fn dwarf_atomic_ranges(file: &ElfFile) -> Vec<(u64, u64)> {
    let Some(dwarf) = file.dwarf() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let mut walker = Walker {
            dwarf: &dwarf,
            unit: &unit,
            memo: HashMap::new(),
        };
        let mut vars = Vec::new();
        let mut cursor = unit.entries();
        while let Ok(Some(e)) = cursor.next_dfs() {
            if e.tag() != gimli::DW_TAG_variable {
                continue;
            }
            let pieces = e
                .attr_value(gimli::DW_AT_location)
                .map(|v| static_pieces(&dwarf, &unit, v))
                .unwrap_or_default();
            if pieces.is_empty() {
                continue;
            }
            let ty = match e.attr_value(gimli::DW_AT_type) {
                Some(AttributeValue::UnitRef(t)) => Some(t),
                // A definition that refers to its declaration (C++ static
                // members, `extern` declarations defined later).
                _ => [gimli::DW_AT_specification, gimli::DW_AT_abstract_origin]
                    .into_iter()
                    .find_map(|a| match e.attr_value(a) {
                        Some(AttributeValue::UnitRef(d)) => Some(d),
                        _ => None,
                    })
                    .and_then(|d| unit.entry(d).ok())
                    .and_then(|d| match d.attr_value(gimli::DW_AT_type) {
                        Some(AttributeValue::UnitRef(t)) => Some(t),
                        _ => None,
                    }),
            };
            if let Some(ty) = ty {
                vars.push((pieces, ty));
            }
        }
        for (pieces, ty) in vars {
            let l = walker.layout(ty, 0);
            for &(s, e) in &l.atomic {
                out.extend(place(&pieces, s, e));
            }
        }
    }
    out
}

/// Where a statically allocated variable lives: `(offset, len, addr)` —
/// bytes `[offset, offset+len)` of the object are at `addr` — from a
/// location that is an address (`DW_OP_addr`, gcc; `DW_OP_addrx`, clang's
/// DWARF 5), possibly plus a constant, or a composite of such pieces
/// (`DW_OP_piece`: clang splits a global aggregate into one global per
/// field). Pieces that are not in memory (a value computed on the DWARF
/// stack, an optimized-out field) are left out. Empty when the location is
/// anything else (a register, a frame offset, a location list).
fn static_pieces<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &gimli::Unit<R<'a>>,
    v: AttributeValue<R<'a>>,
) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    let AttributeValue::Exprloc(expr) = v else {
        return out;
    };
    // The current piece: None before its first operation, Some(Some(a))
    // while it is the address `a`, Some(None) once it is anything else.
    let mut cur: Option<Option<u64>> = None;
    let mut offset = 0u64;
    let mut pieces = false;
    let mut ops = expr.operations(unit.encoding());
    loop {
        let op = match ops.next() {
            Ok(Some(op)) => op,
            Ok(None) => break,
            Err(_) => return Vec::new(),
        };
        match (op, cur) {
            (gimli::Operation::Address { address }, None) => cur = Some(Some(address)),
            (gimli::Operation::AddressIndex { index }, None) => {
                cur = Some(dwarf.address(unit, index).ok());
            }
            (gimli::Operation::PlusConstant { value }, Some(Some(a))) => {
                cur = Some(Some(a.wrapping_add(value)));
            }
            (
                gimli::Operation::Piece {
                    size_in_bits,
                    bit_offset: None,
                },
                _,
            ) => {
                let len = size_in_bits / 8;
                if let Some(Some(a)) = cur {
                    out.push((offset, len, a));
                }
                offset = offset.saturating_add(len);
                cur = None;
                pieces = true;
            }
            _ => cur = Some(None),
        }
    }
    if !pieces {
        if let Some(Some(a)) = cur {
            out.push((0, u64::MAX, a));
        }
    }
    out.retain(|&(_, len, a)| a != 0 && len > 0);
    out
}

/// The run-time (unrelocated) ranges of the object bytes `[s, e)` of a
/// variable laid out in `pieces`.
fn place(pieces: &[(u64, u64, u64)], s: u64, e: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
    pieces.iter().filter_map(move |&(off, len, addr)| {
        let lo = s.max(off);
        let hi = e.min(off.saturating_add(len));
        (lo < hi).then(|| (addr.saturating_add(lo - off), addr.saturating_add(hi - off)))
    })
}

struct Walker<'d, 'a> {
    dwarf: &'d gimli::Dwarf<R<'a>>,
    unit: &'d gimli::Unit<R<'a>>,
    memo: HashMap<UnitOffset, Layout>,
}

impl Walker<'_, '_> {
    fn layout(&mut self, off: UnitOffset, depth: u32) -> Layout {
        if let Some(l) = self.memo.get(&off) {
            return l.clone();
        }
        let l = if depth > MAX_DEPTH {
            Layout::default()
        } else {
            self.compute(off, depth).unwrap_or_default()
        };
        self.memo.insert(off, l.clone());
        l
    }

    fn type_of(e: &gimli::DebuggingInformationEntry<R<'_>>) -> Option<UnitOffset> {
        match e.attr_value(gimli::DW_AT_type) {
            Some(AttributeValue::UnitRef(t)) => Some(t),
            _ => None,
        }
    }

    fn compute(&mut self, off: UnitOffset, depth: u32) -> Option<Layout> {
        let e = self.unit.entry(off).ok()?;
        let size = e
            .attr_value(gimli::DW_AT_byte_size)
            .and_then(|v| v.udata_value());
        let inner = Self::type_of(&e);
        match e.tag() {
            gimli::DW_TAG_atomic_type => {
                let size = size.or_else(|| inner.map(|t| self.layout(t, depth + 1).size))?;
                Some(whole(size))
            }
            gimli::DW_TAG_typedef
            | gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_restrict_type => Some(self.layout(inner?, depth + 1)),
            gimli::DW_TAG_structure_type | gimli::DW_TAG_class_type | gimli::DW_TAG_union_type => {
                let size = size?;
                let name = e
                    .attr_value(gimli::DW_AT_name)
                    .and_then(|v| self.dwarf.attr_string(self.unit, v).ok())
                    .map(|s| String::from_utf8_lossy(s.slice()).into_owned())
                    .unwrap_or_default();
                if is_std_atomic(&name) {
                    return Some(whole(size));
                }
                let mut members = Vec::new();
                let mut tree = self.unit.entries_tree(Some(off)).ok()?;
                let root = tree.root().ok()?;
                let mut children = root.children();
                while let Ok(Some(c)) = children.next() {
                    let c = c.entry();
                    if !matches!(c.tag(), gimli::DW_TAG_member | gimli::DW_TAG_inheritance) {
                        continue;
                    }
                    // Static members have no location inside the object.
                    if c.attr_value(gimli::DW_AT_external).is_some()
                        || c.attr_value(gimli::DW_AT_declaration).is_some()
                    {
                        continue;
                    }
                    let at = c
                        .attr_value(gimli::DW_AT_data_member_location)
                        .and_then(|v| v.udata_value())
                        .unwrap_or(0);
                    if let Some(t) = Self::type_of(c) {
                        members.push((at, t));
                    }
                }
                let mut atomic = Vec::new();
                for (at, t) in members {
                    let m = self.layout(t, depth + 1);
                    atomic.extend(
                        m.atomic
                            .iter()
                            .map(|&(s, e)| (at.saturating_add(s), at.saturating_add(e))),
                    );
                }
                Some(Layout { size, atomic })
            }
            gimli::DW_TAG_array_type => {
                let elem = self.layout(inner?, depth + 1);
                let mut count: u64 = 1;
                let mut tree = self.unit.entries_tree(Some(off)).ok()?;
                let root = tree.root().ok()?;
                let mut children = root.children();
                let mut any = false;
                while let Ok(Some(c)) = children.next() {
                    let c = c.entry();
                    if c.tag() != gimli::DW_TAG_subrange_type {
                        continue;
                    }
                    let n = match (
                        c.attr_value(gimli::DW_AT_count)
                            .and_then(|v| v.udata_value()),
                        c.attr_value(gimli::DW_AT_upper_bound)
                            .and_then(|v| v.udata_value()),
                    ) {
                        (Some(n), _) => n,
                        (None, Some(u)) => u.saturating_add(1),
                        // Flexible or unknown bound: no elements known.
                        (None, None) => 0,
                    };
                    count = count.saturating_mul(n);
                    any = true;
                }
                if !any {
                    count = 0;
                }
                let size = size.unwrap_or_else(|| elem.size.saturating_mul(count));
                if elem.atomic.is_empty() || count == 0 {
                    return Some(Layout {
                        size,
                        atomic: Vec::new(),
                    });
                }
                let parts = (elem.atomic.len() as u64).saturating_mul(count);
                let atomic = if elem.atomic == [(0, elem.size)] || parts > MAX_PARTS {
                    vec![(0, size)]
                } else {
                    (0..count)
                        .flat_map(|i| {
                            let base = i.saturating_mul(elem.size);
                            elem.atomic.iter().map(move |&(s, e)| {
                                (base.saturating_add(s), base.saturating_add(e))
                            })
                        })
                        .collect()
                };
                Some(Layout { size, atomic })
            }
            _ => Some(Layout {
                size: size.unwrap_or(0),
                atomic: Vec::new(),
            }),
        }
    }
}

fn whole(size: u64) -> Layout {
    Layout {
        size,
        atomic: if size > 0 {
            vec![(0, size)]
        } else {
            Vec::new()
        },
    }
}

/// libstdc++'s atomic class templates (`std::atomic<T>` and the bases it
/// is built from, `std::atomic_flag`, C++20's `std::atomic_ref` excluded:
/// it refers to an object of a plain type).
fn is_std_atomic(name: &str) -> bool {
    ["atomic<", "__atomic_base<", "__atomic_float<"]
        .iter()
        .any(|p| name.starts_with(p))
        || name == "atomic_flag"
        || name == "__atomic_flag_base"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_lookup() {
        let a = AtomicObjects::from_ranges(vec![(0x20, 0x24), (0x10, 0x14), (0x14, 0x18)]);
        assert_eq!(a.len(), 2);
        assert!(a.contains(0x10) && a.contains(0x17) && a.contains(0x23));
        assert!(!a.contains(0x18) && !a.contains(0x0f) && !a.contains(0x24));
        assert!(!AtomicObjects::default().contains(0));
        let mut b = AtomicObjects::default();
        b.add(&a);
        assert!(b.contains(0x20));
    }

    #[test]
    fn lock_prefixed_and_xchg_operands_at_static_addresses() {
        // lock add dword [rip+0x100], 1; xchg [rip+0x200], eax;
        // lock or qword [rsp], 0 (a fence: not a location); mov eax, [rip+0x300]
        let f = [
            0xf0, 0x83, 0x05, 0x00, 0x01, 0x00, 0x00, 0x01, // 8 bytes, ends 0x1008
            0x87, 0x05, 0x00, 0x02, 0x00, 0x00, // 6 bytes, ends 0x100e
            0xf0, 0x48, 0x83, 0x0c, 0x24, 0x00, // ends 0x1014
            0x8b, 0x05, 0x00, 0x03, 0x00, 0x00,
        ];
        let got = rmw_locations(&f, 0x1000, &[(0x1000, 0x1000 + f.len() as u64)]);
        assert_eq!(got, [(0x1108, 0x110c), (0x120e, 0x1212)]);
    }

    #[test]
    fn atomic_bytes_follow_the_pieces_of_a_split_global() {
        // A 16-byte struct split in three: [0,4) not in memory, [4,8) at
        // 0x500, [8,16) at 0x700; its atomic field is [4,8).
        let pieces = [(4, 4, 0x500), (8, 8, 0x700)];
        assert_eq!(place(&pieces, 4, 8).collect::<Vec<_>>(), [(0x500, 0x504)]);
        assert_eq!(place(&pieces, 0, 4).count(), 0);
        assert_eq!(
            place(&pieces, 6, 12).collect::<Vec<_>>(),
            [(0x502, 0x504), (0x700, 0x704)]
        );
        let whole = [(0, u64::MAX, 0x900)];
        assert_eq!(place(&whole, 8, 12).collect::<Vec<_>>(), [(0x908, 0x90c)]);
    }

    #[test]
    fn std_atomic_names() {
        assert!(is_std_atomic("atomic<bool>"));
        assert!(is_std_atomic("__atomic_base<int>"));
        assert!(is_std_atomic("atomic_flag"));
        assert!(!is_std_atomic("atomic_ref<int>"));
        assert!(!is_std_atomic("my_atomic<int>") && !is_std_atomic("counter"));
    }
}

/// Locations program code has accessed with an atomic read-modify-write
/// (a lock-prefixed instruction or `xchg`) at run time, wherever they
/// live — stack, heap, TLS, globals (docs/binary-mode.md, "Atomics"): from
/// that instruction on, a plain access of one is an atomic access. A
/// location stops being one when its memory is reused: its heap block
/// freed, the frames holding it found dead at an OpenMP body's entry, its
/// mapping unmapped. Kept as 8-byte words with a mask of their atomic bytes.
#[derive(Clone, Debug, Default)]
pub struct AtomicLocations {
    words: std::collections::BTreeMap<u64, u8>,
    /// The span of all words (a cheap first test).
    lo: u64,
    hi: u64,
}

impl AtomicLocations {
    /// `[addr, addr + size)` is atomic from now on.
    pub fn add(&mut self, addr: u64, size: u64) {
        let end = addr.saturating_add(size.max(1));
        if self.words.is_empty() {
            (self.lo, self.hi) = (addr & !7, 0);
        }
        let mut a = addr;
        while a < end {
            let w = a & !7;
            let upto = end.min(w + 8);
            let mask = (0xffu16 << (a - w)) as u8 & (0xffu16 >> (w + 8 - upto)) as u8;
            *self.words.entry(w).or_insert(0) |= mask;
            a = upto;
        }
        self.lo = self.lo.min(addr & !7);
        self.hi = self.hi.max((end + 7) & !7);
    }

    /// True when the byte at `addr` is atomic.
    #[inline]
    pub fn contains(&self, addr: u64) -> bool {
        if addr < self.lo || addr >= self.hi {
            return false;
        }
        self.words
            .get(&(addr & !7))
            .is_some_and(|m| m & (1 << (addr & 7)) != 0)
    }

    /// `[start, start + len)` is reused memory: no location in it is
    /// atomic any more.
    pub fn forget(&mut self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        if self.words.is_empty() || end <= self.lo || start >= self.hi {
            return;
        }
        let inside: Vec<u64> = self
            .words
            .range((start & !7)..end)
            .map(|(&w, _)| w)
            .collect();
        for w in inside {
            let keep_lo = if w < start {
                (1u16 << (start - w)) - 1
            } else {
                0
            };
            let keep_hi = if w + 8 > end {
                !((1u16 << (end - w)) - 1) & 0xff
            } else {
                0
            };
            let keep = (keep_lo | keep_hi) as u8;
            if let Some(m) = self.words.get_mut(&w) {
                *m &= keep;
                if *m == 0 {
                    self.words.remove(&w);
                }
            }
        }
        if self.words.is_empty() {
            (self.lo, self.hi) = (0, 0);
        }
    }

    /// The atomic bytes of `[start, start + len)` move `delta` bytes on
    /// (realloc moving a block).
    pub fn moved(&mut self, start: u64, len: u64, to: u64) {
        let bytes: Vec<u64> = self
            .words
            .range((start & !7)..start.saturating_add(len))
            .flat_map(|(&w, &m)| {
                (0..8)
                    .filter(move |b| m & (1 << b) != 0)
                    .map(move |b| w + b)
            })
            .filter(|&a| a >= start && a < start + len)
            .collect();
        self.forget(start, len);
        for a in bytes {
            self.add(to + (a - start), 1);
        }
    }

    /// Number of atomic words.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// True when no location is atomic.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

#[cfg(test)]
mod location_tests {
    use super::AtomicLocations;

    /// Bytes become atomic as instructions touch them, exactly those
    /// bytes, and stop being atomic when their memory is reused.
    #[test]
    fn atomic_locations_follow_their_memory() {
        let mut l = AtomicLocations::default();
        assert!(!l.contains(0x1000));
        l.add(0x1004, 4); // an int in the upper half of a word
        l.add(0x100e, 4); // one crossing into the next word
        let cases = [
            (0x1003, false),
            (0x1004, true),
            (0x1007, true),
            (0x1008, false),
            (0x100d, false),
            (0x100e, true),
            (0x1011, true),
            (0x1012, false),
        ];
        for (a, want) in cases {
            assert_eq!(l.contains(a), want, "{a:#x}");
        }
        l.forget(0x1006, 0x9); // [0x1006, 0x100f)
        let after = [
            (0x1005, true),
            (0x1006, false),
            (0x100e, false),
            (0x100f, true),
        ];
        for (a, want) in after {
            assert_eq!(l.contains(a), want, "{a:#x} after forget");
        }
        l.moved(0x1000, 0x20, 0x2000);
        assert!(!l.contains(0x1005) && l.contains(0x2005) && l.contains(0x2010));
        assert!(!l.contains(0x2006));
        l.forget(0x2000, 0x100);
        assert!(l.is_empty() && !l.contains(0x2005));
    }
}
