//! The variable a stack or thread-local address belongs to, from DWARF.
//!
//! On a stack: the
//! variables and parameters in scope at a frame's PC, their locations
//! evaluated with the frame's CFA, stack and frame pointers, and their
//! types' sizes, so that an address inside an array or a structure is
//! named down to the element and member (`a[3]`, `p.x`).
//!
//! A variable another thread can race on has its address taken, so it
//! lives in memory; but an optimizing compiler may describe it, at the call
//! that made the next frame, as a value (`DW_OP_lit0; DW_OP_stack_value`:
//! what it holds) and give its address only elsewhere in the function. When
//! no location at the frame's PC is an address, the function's other
//! locations of the variable are evaluated with the frame's registers
//! (only registers the frame preserved across its call are known), and one
//! that holds the address names it.
//!
//! In a thread's static TLS block: the executable's thread-local
//! variables, their `DW_OP_form_tls_address` locations evaluated in the
//! block.

use crate::binary::elf::ElfFile;
use gimli::{
    AttributeValue, DwAt, DwTag, EndianSlice, EvaluationResult, Expression, LittleEndian, Location,
    Reader, Unit, UnitOffset, Value,
};

type R<'a> = EndianSlice<'a, LittleEndian>;
type Dwarf<'a> = gimli::Dwarf<R<'a>>;

/// A frame, as its variables' locations need it.
#[derive(Clone, Copy, Debug)]
pub struct FrameRegs {
    /// The frame's run-time PC.
    pub pc: u64,
    /// `pc` is a return address (an outer frame): the frame is at the
    /// call just before it.
    pub returned: bool,
    /// The frame's canonical frame address.
    pub cfa: u64,
    /// The frame's registers, by DWARF number (`None`: unknown).
    pub gpr: [Option<u64>; 16],
}

/// A local or thread-local variable (or parameter) holding an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackVariable {
    /// A thread-local variable (else a local one).
    pub thread_local: bool,
    /// The variable's name, with the element or member the address is in
    /// (`sum`, `a[3]`, `p.x`, `buf+5`).
    pub name: String,
    /// The function whose frame holds it (the inlined function for a
    /// variable of an inlined call).
    pub function: Option<String>,
    /// Where it is declared: file and line.
    pub decl: Option<(String, u64)>,
}

/// The variable of the frame `frame` of the object whose DWARF is in
/// `file` (mapped at `bias`) that holds address `target`; `read` reads a
/// guest word (for locations that load a pointer).
pub fn stack_variable(
    file: &ElfFile,
    bias: u64,
    frame: &FrameRegs,
    target: u64,
    read: &dyn Fn(u64) -> Option<u64>,
) -> Option<StackVariable> {
    let dwarf = file.dwarf()?;
    let pc = frame.pc.wrapping_sub(bias);
    // Scopes are those of the call instruction; a location list may
    // describe the variable at the return address only.
    let scope_pc = pc.wrapping_sub(u64::from(frame.returned));
    let look = Lookup {
        dwarf: &dwarf,
        bias,
        frame,
        scope_pc,
        pcs: [scope_pc, pc],
        target,
        read,
        tls: None,
    };
    look.find()
}

/// The thread-local variable of the object whose DWARF is in `file`
/// (mapped at `bias`) that holds address `target` of a thread whose copy
/// of the object's TLS block starts at `block`.
pub fn tls_variable(
    file: &ElfFile,
    bias: u64,
    block: u64,
    target: u64,
    read: &dyn Fn(u64) -> Option<u64>,
) -> Option<StackVariable> {
    let dwarf = file.dwarf()?;
    let frame = FrameRegs {
        pc: 0,
        returned: false,
        cfa: 0,
        gpr: [None; 16],
    };
    let look = Lookup {
        dwarf: &dwarf,
        bias,
        frame: &frame,
        scope_pc: 0,
        pcs: [0, 0],
        target,
        read,
        tls: Some(block),
    };
    look.find()
}

impl Lookup<'_, '_> {
    /// The variable holding the target, in the first unit that has one.
    fn find(&self) -> Option<StackVariable> {
        let dwarf = self.dwarf;
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            if self.tls.is_none() && !contains(dwarf.unit_ranges(&unit), self.scope_pc) {
                continue;
            }
            let Ok(mut tree) = unit.entries_tree(None) else {
                continue;
            };
            let Ok(root) = tree.root() else {
                continue;
            };
            let mut found = None;
            let _ = self.walk(&unit, root, &Scope::default(), &mut found);
            if let Some((_, v)) = found {
                return Some(v);
            }
        }
        None
    }
}

/// What a lookup needs at every entry.
struct Lookup<'a, 'd> {
    dwarf: &'a Dwarf<'d>,
    bias: u64,
    frame: &'a FrameRegs,
    scope_pc: u64,
    pcs: [u64; 2],
    target: u64,
    read: &'a dyn Fn(u64) -> Option<u64>,
    /// Thread-local variables are looked for, in the TLS block there.
    tls: Option<u64>,
}

/// The function an entry is in.
#[derive(Clone, Default)]
struct Scope<'d> {
    function: Option<String>,
    frame_base: Option<AttributeValue<R<'d>>>,
}

/// True when one of the ranges contains `pc`.
fn contains<T: Reader>(ranges: gimli::Result<gimli::RangeIter<T>>, pc: u64) -> bool {
    let Ok(mut ranges) = ranges else {
        return false;
    };
    while let Ok(Some(r)) = ranges.next() {
        if r.begin <= pc && pc < r.end {
            return true;
        }
    }
    false
}

impl<'d> Lookup<'_, 'd> {
    /// Looks for the variable under `node` (in `scope`); `found` keeps the
    /// smallest variable holding the target, with its size.
    fn walk(
        &self,
        unit: &Unit<R<'d>>,
        node: gimli::EntriesTreeNode<R<'d>>,
        scope: &Scope<'d>,
        found: &mut Option<(u64, StackVariable)>,
    ) -> gimli::Result<()> {
        let entry = node.entry();
        let mut inner = scope.clone();
        match entry.tag {
            gimli::DW_TAG_subprogram
            | gimli::DW_TAG_inlined_subroutine
            | gimli::DW_TAG_lexical_block => {
                if self.tls.is_none()
                    && !contains(self.dwarf.die_ranges(unit, entry), self.scope_pc)
                {
                    return Ok(());
                }
                if entry.tag != gimli::DW_TAG_lexical_block {
                    inner.function = self.name(unit, entry);
                }
                if entry.tag == gimli::DW_TAG_subprogram {
                    inner.frame_base = entry.attr_value(gimli::DW_AT_frame_base);
                }
            }
            gimli::DW_TAG_variable | gimli::DW_TAG_formal_parameter => {
                if scope.function.is_some() || self.tls.is_some() {
                    self.variable(unit, entry, scope, found);
                }
                return Ok(());
            }
            gimli::DW_TAG_compile_unit | gimli::DW_TAG_namespace => {}
            _ => return Ok(()),
        }
        let mut children = node.children();
        while let Some(child) = children.next()? {
            self.walk(unit, child, &inner, found)?;
        }
        Ok(())
    }

    /// Records variable `entry` if it holds the target.
    fn variable(
        &self,
        unit: &Unit<R<'d>>,
        entry: &gimli::DebuggingInformationEntry<R<'d>>,
        scope: &Scope<'d>,
        found: &mut Option<(u64, StackVariable)>,
    ) {
        let Some(location) = entry.attr_value(gimli::DW_AT_location) else {
            return;
        };
        let mut addrs = Vec::new();
        match location {
            AttributeValue::Exprloc(e) => addrs.extend(self.evaluate(unit, e, scope)),
            value => {
                let Ok(Some(mut list)) = self.dwarf.attr_locations(unit, value) else {
                    return;
                };
                let mut elsewhere = Vec::new();
                while let Ok(Some(l)) = list.next() {
                    if self
                        .pcs
                        .iter()
                        .any(|&p| l.range.begin <= p && p < l.range.end)
                    {
                        addrs.extend(self.evaluate(unit, l.data, scope));
                    } else {
                        elsewhere.push(l.data);
                    }
                }
                if addrs.is_empty() {
                    addrs.extend(
                        elsewhere
                            .into_iter()
                            .filter_map(|e| self.evaluate(unit, e, scope)),
                    );
                }
            }
        }
        let decl = self.origin(unit, entry);
        let ty = attr_ref(&decl, gimli::DW_AT_type);
        let size = ty.and_then(|t| type_size(unit, t, 0)).unwrap_or(1);
        for addr in addrs {
            let off = self.target.wrapping_sub(addr);
            if off >= size || found.as_ref().is_some_and(|(s, _)| *s <= size) {
                continue;
            }
            let Some(name) = self.name(unit, entry) else {
                return;
            };
            let suffix = ty.map_or(String::new(), |t| member_path(self.dwarf, unit, t, off, 0));
            *found = Some((
                size,
                StackVariable {
                    thread_local: self.tls.is_some(),
                    name: name + &suffix,
                    function: scope.function.clone(),
                    decl: self.decl(unit, &decl),
                },
            ));
        }
    }

    /// The entry an inlined or out-of-line copy stands for (its
    /// `DW_AT_abstract_origin` or `DW_AT_specification`), else itself.
    fn origin(
        &self,
        unit: &Unit<R<'d>>,
        entry: &gimli::DebuggingInformationEntry<R<'d>>,
    ) -> gimli::DebuggingInformationEntry<R<'d>> {
        let mut e = entry.clone();
        for _ in 0..4 {
            let next = attr_ref(&e, gimli::DW_AT_abstract_origin)
                .or_else(|| attr_ref(&e, gimli::DW_AT_specification));
            match next.and_then(|o| unit.entry(o).ok()) {
                Some(o) => e = o,
                None => break,
            }
        }
        e
    }

    /// An entry's name (through its origin).
    fn name(
        &self,
        unit: &Unit<R<'d>>,
        entry: &gimli::DebuggingInformationEntry<R<'d>>,
    ) -> Option<String> {
        let e = if entry.attr_value(gimli::DW_AT_name).is_some() {
            entry.clone()
        } else {
            self.origin(unit, entry)
        };
        string(self.dwarf, unit, e.attr_value(gimli::DW_AT_name)?)
    }

    /// `(file, line)` of a declaration.
    fn decl(
        &self,
        unit: &Unit<R<'d>>,
        entry: &gimli::DebuggingInformationEntry<R<'d>>,
    ) -> Option<(String, u64)> {
        let line = entry.attr_value(gimli::DW_AT_decl_line)?.udata_value()?;
        let index = match entry.attr_value(gimli::DW_AT_decl_file)? {
            AttributeValue::FileIndex(i) => i,
            v => v.udata_value()?,
        };
        let header = unit.line_program.as_ref()?.header();
        let file = header.file(index)?;
        let mut path = string(self.dwarf, unit, file.path_name())?;
        if !path.starts_with('/') {
            if let Some(dir) = file
                .directory(header)
                .and_then(|d| string(self.dwarf, unit, d))
            {
                path = format!("{dir}/{path}");
            }
        }
        Some((path, line))
    }

    /// The address a location expression gives in this frame, if it is
    /// one in memory.
    fn evaluate(
        &self,
        unit: &Unit<R<'d>>,
        expr: Expression<R<'d>>,
        scope: &Scope<'d>,
    ) -> Option<u64> {
        let mut eval = expr.evaluation(unit.encoding());
        let mut step = eval.evaluate().ok()?;
        for _ in 0..64 {
            step = match step {
                EvaluationResult::Complete => {
                    let pieces = eval.result();
                    return match pieces.as_slice() {
                        [p] => match p.location {
                            Location::Address { address } => Some(address),
                            _ => None,
                        },
                        _ => None,
                    };
                }
                EvaluationResult::RequiresMemory { address, size, .. } => {
                    let v = (self.read)(address)?;
                    let v = if size >= 8 {
                        v
                    } else {
                        v & ((1u64 << (u32::from(size) * 8)) - 1)
                    };
                    eval.resume_with_memory(Value::Generic(v))
                }
                EvaluationResult::RequiresRegister { register, .. } => {
                    eval.resume_with_register(Value::Generic(self.register(register)?))
                }
                EvaluationResult::RequiresFrameBase => {
                    let base = self.frame_base(unit, scope)?;
                    eval.resume_with_frame_base(base)
                }
                EvaluationResult::RequiresCallFrameCfa => {
                    eval.resume_with_call_frame_cfa(self.frame.cfa)
                }
                EvaluationResult::RequiresRelocatedAddress(a) => {
                    eval.resume_with_relocated_address(a.wrapping_add(self.bias))
                }
                EvaluationResult::RequiresTls(off) => {
                    eval.resume_with_tls(self.tls?.wrapping_add(off))
                }
                _ => return None,
            }
            .ok()?;
        }
        None
    }

    /// The value of register `r` in the frame, if known.
    fn register(&self, r: gimli::Register) -> Option<u64> {
        *self.frame.gpr.get(usize::from(r.0))?
    }

    /// The function's frame base (`DW_AT_frame_base`): the CFA for gcc and
    /// clang on x86-64, or a register.
    fn frame_base(&self, unit: &Unit<R<'d>>, scope: &Scope<'d>) -> Option<u64> {
        let AttributeValue::Exprloc(e) = scope.frame_base? else {
            return None;
        };
        let mut eval = e.evaluation(unit.encoding());
        let mut step = eval.evaluate().ok()?;
        for _ in 0..8 {
            step = match step {
                EvaluationResult::Complete => break,
                EvaluationResult::RequiresCallFrameCfa => {
                    eval.resume_with_call_frame_cfa(self.frame.cfa)
                }
                EvaluationResult::RequiresRegister { register, .. } => {
                    eval.resume_with_register(Value::Generic(self.register(register)?))
                }
                _ => return None,
            }
            .ok()?;
        }
        match eval.result().as_slice() {
            [p] => match p.location {
                Location::Address { address } => Some(address),
                Location::Register { register } => self.register(register),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The unit-local entry an attribute refers to.
fn attr_ref(e: &gimli::DebuggingInformationEntry<R<'_>>, at: DwAt) -> Option<UnitOffset> {
    match e.attr_value(at)? {
        AttributeValue::UnitRef(o) => Some(o),
        _ => None,
    }
}

/// A string attribute's text.
fn string<'d>(dwarf: &Dwarf<'d>, unit: &Unit<R<'d>>, v: AttributeValue<R<'d>>) -> Option<String> {
    let s = dwarf.attr_string(unit, v).ok()?;
    Some(s.to_string_lossy().into_owned())
}

/// Tags that only qualify the type they refer to.
const QUALIFIERS: [DwTag; 5] = [
    gimli::DW_TAG_typedef,
    gimli::DW_TAG_const_type,
    gimli::DW_TAG_volatile_type,
    gimli::DW_TAG_restrict_type,
    gimli::DW_TAG_atomic_type,
];

/// The type at `t` past qualifiers and typedefs.
fn strip<'d>(
    unit: &Unit<R<'d>>,
    mut t: UnitOffset,
) -> Option<gimli::DebuggingInformationEntry<R<'d>>> {
    for _ in 0..16 {
        let e = unit.entry(t).ok()?;
        if !QUALIFIERS.contains(&e.tag) {
            return Some(e);
        }
        t = attr_ref(&e, gimli::DW_AT_type)?;
    }
    None
}

/// The element type and the dimensions of an array type (`None` if one
/// is not a constant).
fn array_dims(unit: &Unit<R<'_>>, array: UnitOffset) -> Option<(UnitOffset, Vec<u64>)> {
    let e = unit.entry(array).ok()?;
    let elem = attr_ref(&e, gimli::DW_AT_type)?;
    let mut tree = unit.entries_tree(Some(array)).ok()?;
    let root = tree.root().ok()?;
    let mut children = root.children();
    let mut dims = Vec::new();
    while let Ok(Some(c)) = children.next() {
        let c = c.entry();
        if c.tag != gimli::DW_TAG_subrange_type {
            continue;
        }
        let n = match c.attr_value(gimli::DW_AT_count) {
            Some(v) => v.udata_value()?,
            None => c.attr_value(gimli::DW_AT_upper_bound)?.udata_value()? + 1,
        };
        dims.push(n);
    }
    (!dims.is_empty()).then_some((elem, dims))
}

/// The size in bytes of the type at `t`, if known.
fn type_size(unit: &Unit<R<'_>>, t: UnitOffset, depth: u32) -> Option<u64> {
    if depth > 16 {
        return None;
    }
    let e = strip(unit, t)?;
    if let Some(n) = e
        .attr_value(gimli::DW_AT_byte_size)
        .and_then(|v| v.udata_value())
    {
        return Some(n);
    }
    match e.tag {
        gimli::DW_TAG_pointer_type | gimli::DW_TAG_reference_type => Some(8),
        gimli::DW_TAG_array_type => {
            let (elem, dims) = array_dims(unit, e.offset())?;
            let es = type_size(unit, elem, depth + 1)?;
            dims.iter().try_fold(es, |acc, &n| acc.checked_mul(n))
        }
        _ => None,
    }
}

/// The element and member path to byte `off` of the type at `t`
/// (`[3]`, `.x`, `[1][2].y`, `+5` inside a scalar).
fn member_path(
    dwarf: &Dwarf<'_>,
    unit: &Unit<R<'_>>,
    t: UnitOffset,
    off: u64,
    depth: u32,
) -> String {
    let plain = || {
        if off == 0 {
            String::new()
        } else {
            format!("+{off}")
        }
    };
    if depth > 8 {
        return plain();
    }
    let Some(e) = strip(unit, t) else {
        return plain();
    };
    match e.tag {
        gimli::DW_TAG_array_type => {
            let Some((elem, dims)) = array_dims(unit, e.offset()) else {
                return plain();
            };
            let Some(es) = type_size(unit, elem, 0).filter(|&s| s > 0) else {
                return plain();
            };
            let mut flat = off / es;
            let mut idx = vec![0; dims.len()];
            for (i, &n) in dims.iter().enumerate().rev() {
                idx[i] = flat % n.max(1);
                flat /= n.max(1);
            }
            let text: String = idx.iter().map(|i| format!("[{i}]")).collect();
            text + &member_path(dwarf, unit, elem, off % es, depth + 1)
        }
        gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type | gimli::DW_TAG_class_type => {
            let Ok(mut tree) = unit.entries_tree(Some(e.offset())) else {
                return plain();
            };
            let Ok(root) = tree.root() else {
                return plain();
            };
            let mut children = root.children();
            while let Ok(Some(c)) = children.next() {
                let m = c.entry();
                if m.tag != gimli::DW_TAG_member {
                    continue;
                }
                let at = m
                    .attr_value(gimli::DW_AT_data_member_location)
                    .and_then(|v| v.udata_value())
                    .unwrap_or(0);
                let Some(mt) = attr_ref(m, gimli::DW_AT_type) else {
                    continue;
                };
                let size = type_size(unit, mt, 0).unwrap_or(0);
                if off >= at && off < at + size {
                    let name = m
                        .attr_value(gimli::DW_AT_name)
                        .and_then(|v| string(dwarf, unit, v))
                        .unwrap_or_default();
                    // rustc names a tuple's fields `__0`, `__1`, …: Rust
                    // writes `.0`.
                    let name = match name.strip_prefix("__") {
                        Some(n) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                            n.to_string()
                        }
                        _ => name,
                    };
                    return format!(".{name}") + &member_path(dwarf, unit, mt, off - at, depth + 1);
                }
            }
            plain()
        }
        _ => plain(),
    }
}
