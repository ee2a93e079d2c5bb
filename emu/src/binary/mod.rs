//! Reading guest binaries: ELF validation and symbols, function ranges from
//! unwind tables, DWARF source lines, the registry of objects loaded into
//! the guest and LARD-aware disassembly.

pub mod atomics;
pub mod demangle;
pub mod disasm;
pub mod elf;
pub mod functions;
pub mod lines;
pub mod objects;
pub mod program;
pub mod prune;
pub mod stmt_lines;
pub mod symbols;
