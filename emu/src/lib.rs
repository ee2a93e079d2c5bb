//! The lard emulator: a user-mode x86-64 emulator whose CPU implements
//! LARDx86, and the pieces of the `lard` command.

#![deny(missing_docs)]

pub mod disasm;
pub mod elf;
pub mod functions;
pub mod symbols;
