//! The sixteen general-purpose registers that LARDx86 ops take as operands.

use core::fmt;
use iced_x86::Register;

/// A 64-bit general-purpose register, numbered as x86-64 encodes it
/// (ModRM/SIB field plus the REX extension bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
#[allow(missing_docs)] // the variants are the architectural register names
pub enum Gpr {
    Rax = 0,
    Rcx = 1,
    Rdx = 2,
    Rbx = 3,
    Rsp = 4,
    Rbp = 5,
    Rsi = 6,
    Rdi = 7,
    R8 = 8,
    R9 = 9,
    R10 = 10,
    R11 = 11,
    R12 = 12,
    R13 = 13,
    R14 = 14,
    R15 = 15,
}

impl Gpr {
    /// All sixteen registers in encoding order.
    pub const ALL: [Gpr; 16] = [
        Gpr::Rax,
        Gpr::Rcx,
        Gpr::Rdx,
        Gpr::Rbx,
        Gpr::Rsp,
        Gpr::Rbp,
        Gpr::Rsi,
        Gpr::Rdi,
        Gpr::R8,
        Gpr::R9,
        Gpr::R10,
        Gpr::R11,
        Gpr::R12,
        Gpr::R13,
        Gpr::R14,
        Gpr::R15,
    ];

    /// The register with encoding number `n & 15`.
    pub const fn from_number(n: u8) -> Gpr {
        Gpr::ALL[(n & 15) as usize]
    }

    /// The 4-bit encoding number (0 = rax … 15 = r15).
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// The lower-case Intel name, e.g. `"r12"`.
    pub const fn name(self) -> &'static str {
        const NAMES: [&str; 16] = [
            "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11",
            "r12", "r13", "r14", "r15",
        ];
        NAMES[self as usize]
    }

    /// The same register as iced-x86 names it.
    pub fn to_iced(self) -> Register {
        const REGS: [Register; 16] = [
            Register::RAX,
            Register::RCX,
            Register::RDX,
            Register::RBX,
            Register::RSP,
            Register::RBP,
            Register::RSI,
            Register::RDI,
            Register::R8,
            Register::R9,
            Register::R10,
            Register::R11,
            Register::R12,
            Register::R13,
            Register::R14,
            Register::R15,
        ];
        REGS[self as usize]
    }

    /// The 64-bit register iced-x86 calls `reg`, if it is a general-purpose one.
    pub fn from_iced(reg: Register) -> Option<Gpr> {
        Gpr::ALL.into_iter().find(|g| g.to_iced() == reg)
    }
}

impl fmt::Display for Gpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
