//! Address → symbol lookup for reports and disassembly.

use crate::binary::demangle;
use crate::binary::elf::Symbol;

/// A sorted symbol table, possibly relocated by a load bias.
#[derive(Clone, Debug, Default)]
pub struct Symbolizer {
    funcs: Vec<Symbol>,
    objects: Vec<Symbol>,
}

impl Symbolizer {
    /// Builds a symbolizer from ELF symbols, adding `bias` to every address.
    pub fn new(symbols: &[Symbol], bias: u64) -> Self {
        let relocate = |s: &Symbol| Symbol {
            addr: s.addr.wrapping_add(bias),
            ..s.clone()
        };
        let mut funcs: Vec<Symbol> = symbols.iter().filter(|s| s.is_func).map(relocate).collect();
        let mut objects: Vec<Symbol> = symbols
            .iter()
            .filter(|s| !s.is_func)
            .map(relocate)
            .collect();
        funcs.sort_by_key(|s| s.addr);
        objects.sort_by_key(|s| s.addr);
        Symbolizer { funcs, objects }
    }

    fn find(table: &[Symbol], addr: u64, sizeless_ok: bool) -> Option<(&Symbol, u64)> {
        let i = table.partition_point(|s| s.addr <= addr);
        let s = table[..i]
            .iter()
            .rev()
            .find(|s| s.size > 0 || sizeless_ok)?;
        let off = addr - s.addr;
        (off < s.size || (s.size == 0 && sizeless_ok)).then_some((s, off))
    }

    /// The function containing `pc` and the offset into it.
    pub fn function(&self, pc: u64) -> Option<(&Symbol, u64)> {
        Self::find(&self.funcs, pc, false)
    }

    /// The data object containing `addr` and the offset into it.
    pub fn object(&self, addr: u64) -> Option<(&Symbol, u64)> {
        Self::find(&self.objects, addr, false)
    }

    /// The data object symbols, sorted by address (aliases included).
    pub fn objects(&self) -> &[Symbol] {
        &self.objects
    }

    /// The exact function starting at `addr`, if any.
    pub fn function_named(&self, name: &str) -> Option<&Symbol> {
        self.funcs.iter().find(|s| s.name == name)
    }

    /// `name+0xoff` for a code address (a Rust name demangled,
    /// [`demangle::display`]), or `None` when no function covers it.
    pub fn describe_pc(&self, pc: u64) -> Option<String> {
        self.function(pc).map(|(s, off)| {
            let name = demangle::display(&s.name);
            if off == 0 {
                name.into_owned()
            } else {
                format!("{name}+{off:#x}")
            }
        })
    }
}
