//! Source locations for race reports: function, file and line of a guest PC,
//! with the chain of inlined frames (DWARF, through the `addr2line` crate).
//!
//! The SDK's Tracked accessors are always inlined, so the innermost frame of a
//! Tracked instruction is in `lard.h` and the frames around it name the guest
//! line; reports print the whole chain, innermost first, as ThreadSanitizer does.

use super::stmt_lines::StatementLines;
use addr2line::Loader;
use std::path::Path;

/// One frame of a PC's inline chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Function name (demangled), if known.
    pub function: Option<String>,
    /// Source file, if known.
    pub file: Option<String>,
    /// Line, if known.
    pub line: Option<u32>,
}

impl Frame {
    /// `function file:line`, with `??` for what is unknown.
    pub fn text(&self) -> String {
        format!(
            "{} {}:{}",
            self.function.as_deref().unwrap_or("??"),
            self.file.as_deref().unwrap_or("??"),
            self.line.map_or("?".to_string(), |l| l.to_string())
        )
    }
}

/// DWARF line information of the guest executable (absent without debug info).
pub struct SourceLines {
    loader: Option<Loader>,
    statements: StatementLines,
    bias: u64,
}

impl SourceLines {
    /// Reads the debug information of `path`, loaded at `bias`.
    pub fn open(path: &Path, bias: u64) -> SourceLines {
        SourceLines {
            loader: Loader::new(path).ok(),
            statements: StatementLines::open(path),
            bias,
        }
    }

    /// The inline chain at run-time address `pc`, innermost frame first
    /// (empty when the executable has no line information for it). The
    /// innermost line is the last statement start at `pc`
    /// ([`StatementLines`]).
    pub fn frames(&self, pc: u64) -> Vec<Frame> {
        let Some(loader) = &self.loader else {
            return Vec::new();
        };
        let Ok(mut it) = loader.find_frames(pc.wrapping_sub(self.bias)) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Ok(Some(f)) = it.next() {
            out.push(Frame {
                function: f
                    .function
                    .as_ref()
                    .and_then(|n| n.demangle().ok())
                    .map(|c| c.into_owned()),
                file: f.location.as_ref().and_then(|l| l.file).map(str::to_string),
                line: f.location.as_ref().and_then(|l| l.line),
            });
        }
        if let Some(first) = out.first_mut() {
            if let Some((last, stmt)) = self.statements.statement_line(pc.wrapping_sub(self.bias)) {
                if first.line == Some(last) {
                    first.line = Some(stmt);
                }
            }
        }
        out
    }
}
