//! Reading guest binaries: ELF validation and symbols, function ranges from
//! unwind tables, debugging information (`dwarf`), the registry of objects
//! loaded into the guest and LARD-aware disassembly.

pub mod atomics;
pub mod demangle;
pub mod disasm;
pub mod dwarf;
pub mod elf;
pub mod functions;
pub mod objects;
pub mod program;
pub mod prune;
pub mod symbols;
