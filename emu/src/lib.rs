//! The lard emulator: a user-mode x86-64 emulator whose CPU implements
//! LARDx86, and the pieces of the `lard` command.

#![deny(missing_docs)]

pub mod accuracy;
pub mod accuracy_cmd;
pub mod code;
pub mod detect;
pub mod disasm;
pub mod elf;
pub mod functions;
pub mod lines;
pub mod loader;
pub mod machine;
pub mod manifest;
pub mod memory;
pub mod observer;
pub mod run;
pub mod sched;
pub mod stats;
pub mod symbols;
pub mod syscalls;
pub mod uc;
pub mod vclock;
