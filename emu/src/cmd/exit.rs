//! The exit statuses of `lard` (docs/cli.md, "Exit status"): one
//! definition each, for `lard run` and for the subcommands that read a
//! child run's status or give their own.

/// `--max-insns`: the instruction limit stopped the guest.
pub const EXIT_MAX_INSNS: u8 = 120;
/// `--timeout`: the wall-clock limit stopped the guest.
pub const EXIT_TIMEOUT: u8 = 121;
/// Every live guest thread blocked forever.
pub const EXIT_DEADLOCK: u8 = 122;
/// `--strict-syscalls`: the guest made an unsupported system call.
pub const EXIT_UNSUPPORTED_SYSCALL: u8 = 123;
/// `--on-race exception`: a data-race exception stopped the guest before
/// the racy access took effect.
pub const EXIT_RACE_EXCEPTION: u8 = 124;
/// `--gdb`: lard could not listen for or accept gdb.
pub const EXIT_GDB: u8 = 119;
/// lard itself failed (cannot write a report, emulator error).
pub const EXIT_INTERNAL: u8 = 125;
/// The guest is not a runnable x86-64 executable (or its interpreter is
/// not).
pub const EXIT_NOT_RUNNABLE: u8 = 126;
/// The guest file, its interpreter (PT_INTERP) or the `--sysroot`
/// directory does not exist or cannot be read.
pub const EXIT_NOT_FOUND: u8 = 127;
/// An input file is unusable (`--hw-config`, `--adversarial-at`, a
/// `--record-trace` file that cannot be created).
pub const EXIT_BAD_INPUT: u8 = 1;
/// A usage error clap does not catch (options that do not go together).
pub const EXIT_USAGE: u8 = 2;
