//! Reading guest binaries: ELF validation and symbols, function ranges from
//! unwind tables, DWARF source lines and LARD-aware disassembly.

pub mod disasm;
pub mod elf;
pub mod functions;
pub mod lines;
pub mod symbols;
