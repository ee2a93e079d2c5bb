//! Text form of LARD-aware instructions (docs/lardx86.md §"Assembly syntax").
//!
//! Ordinary instructions use iced-x86's Intel syntax with `0x` hex numbers and
//! a space after each comma; Tracked accesses get a visible `tracked ` prefix;
//! ops print as `lard.<name>` followed by their registers:
//!
//! ```text
//! tracked mov dword ptr [rbx], eax
//! lard.clearhistory rdi, rsi
//! ```

use crate::decode::{Decoded, DecodedKind};
use iced_x86::{Formatter, Instruction, IntelFormatter, MemorySizeOptions};

/// A reusable formatter for [`Decoded`] instructions.
pub struct LardFormatter {
    inner: IntelFormatter,
}

impl Default for LardFormatter {
    fn default() -> Self {
        Self::new()
    }
}

impl LardFormatter {
    /// A formatter with the project's syntax settings.
    pub fn new() -> Self {
        let mut inner = IntelFormatter::new();
        let opts = inner.options_mut();
        opts.set_hex_prefix("0x");
        opts.set_hex_suffix("");
        opts.set_uppercase_hex(false);
        opts.set_space_after_operand_separator(true);
        opts.set_first_operand_char_index(0);
        opts.set_memory_size_options(MemorySizeOptions::Always);
        LardFormatter { inner }
    }

    /// Formats an ordinary x86 instruction.
    pub fn format_plain(&mut self, insn: &Instruction) -> String {
        let mut out = String::new();
        self.inner.format(insn, &mut out);
        out
    }

    /// Formats a decoded instruction.
    pub fn format(&mut self, d: &Decoded) -> String {
        match &d.kind {
            DecodedKind::Plain(i) => self.format_plain(i),
            DecodedKind::Tracked(i) => format!("tracked {}", self.format_plain(i)),
            DecodedKind::Op(op) => op.to_string(),
        }
    }
}

/// Formats one decoded instruction with a fresh formatter.
pub fn format(d: &Decoded) -> String {
    LardFormatter::new().format(d)
}
