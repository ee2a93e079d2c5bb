//! The lard emulator: a user-mode x86-64 emulator whose CPU implements
//! LARDx86, and the pieces of the `lard` command.
//!
//! * [`cpu`]: the unicorn CPU, guest memory, LARD sites, scheduling and the
//!   architectural vector clocks — the machine itself;
//! * [`linux`]: the process the kernel would set up and the system calls;
//! * [`binary`]: reading ELF files and their DWARF — symbols, lines,
//!   function ranges, disassembly;
//! * [`observe`]: the event stream's consumers — observers, detectors,
//!   detector variants and run statistics;
//! * [`intercept`]: guest functions intercepted by symbol, turned into
//!   program events;
//! * [`cmd`]: the `lard` subcommands (`lard run` in [`cmd::run`]) and the
//!   guest manifest they read;
//! * [`report`]: what a run reports of its races: suppressions, SARIF;
//! * [`run`]: setting up a process and running it to completion;
//! * [`gdb`]: `lard run --gdb`, the GDB remote-protocol server.

#![deny(missing_docs)]

pub mod binary;
pub mod cmd;
pub mod cpu;
pub mod gdb;
pub mod intercept;
pub mod linux;
pub mod machine;
pub mod observe;
pub mod report;
pub mod run;
