//! `lard disasm`: LARD-aware disassembly of an ELF file's code sections.

use crate::binary::elf::{CodeSection, ElfFile};
use crate::binary::functions::{function_ranges, RangeSource};
use crate::binary::symbols::Symbolizer;
use lard_isa_ext::{DecodeError, DecodedKind, LardFormatter, OpKind, Sweep, Swept};
use std::collections::BTreeMap;
use std::io::{self, Write};

/// What a sweep over code found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SweepCounts {
    /// Instructions decoded (plain, Tracked and ops; not faults or bad bytes).
    pub instructions: u64,
    /// Tracked accesses.
    pub tracked: u64,
    /// LARD ops by kind.
    pub ops: BTreeMap<OpKind, u64>,
    /// Byte sequences a LARD-aware CPU would fault on, by fault name.
    pub faults: BTreeMap<&'static str, u64>,
    /// Bytes that are no valid x86-64 instruction.
    pub invalid: u64,
}

impl SweepCounts {
    /// Adds one sweep step.
    pub fn add(&mut self, s: &Swept<'_>) {
        match &s.result {
            Ok(d) => {
                self.instructions += 1;
                match d.kind {
                    DecodedKind::Plain(_) => {}
                    DecodedKind::Tracked(_) => self.tracked += 1,
                    DecodedKind::Op(op) => *self.ops.entry(op.kind()).or_default() += 1,
                }
            }
            Err(DecodeError::Fault { fault, .. }) => {
                *self.faults.entry(fault.name()).or_default() += 1
            }
            Err(_) => self.invalid += 1,
        }
    }

    /// Number of LARDx86 constructs found: Tracked accesses, ops and LARD faults.
    pub fn lard_total(&self) -> u64 {
        self.tracked + self.ops.values().sum::<u64>() + self.faults.values().sum::<u64>()
    }

    /// Counts the compiler-emitted functions of `file` (see
    /// [`crate::binary::functions`]): each function range is swept from its start.
    pub fn of_functions(file: &ElfFile) -> (SweepCounts, RangeSource) {
        let (ranges, source) = function_ranges(file);
        let mut counts = SweepCounts::default();
        for (start, end) in ranges {
            let Some(sec) = section_of(file, start) else {
                continue;
            };
            let off = (start - sec.addr) as usize;
            let len = ((end - start) as usize).min(sec.size - off);
            for s in Sweep::new(&file.section_bytes(sec)[off..off + len], start) {
                counts.add(&s);
            }
        }
        (counts, source)
    }
}

/// Why `lard disasm` failed.
#[derive(Debug)]
pub enum DisasmError {
    /// `--symbol` named no function.
    UnknownSymbol(String),
    /// Writing the output failed.
    Io(io::Error),
}

impl std::fmt::Display for DisasmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DisasmError::UnknownSymbol(s) => {
                write!(f, "no function named '{s}' in the symbol table")
            }
            DisasmError::Io(e) => write!(f, "cannot write output: {e}"),
        }
    }
}

impl std::error::Error for DisasmError {}

impl From<io::Error> for DisasmError {
    fn from(e: io::Error) -> Self {
        DisasmError::Io(e)
    }
}

fn hex_bytes(bytes: &[u8]) -> String {
    let mut s: String = bytes.iter().map(|b| format!("{b:02x} ")).collect();
    s.pop();
    s
}

fn write_range(
    out: &mut dyn Write,
    syms: &Symbolizer,
    bytes: &[u8],
    addr: u64,
    counts: &mut SweepCounts,
) -> io::Result<()> {
    let mut fmt = LardFormatter::new();
    for s in Sweep::new(bytes, addr) {
        counts.add(&s);
        if let Some((sym, 0)) = syms.function(s.ip) {
            writeln!(out, "\n{:016x} <{}>:", s.ip, sym.name)?;
        }
        let text = match &s.result {
            Ok(d) => {
                let t = fmt.format(d);
                match d.kind {
                    DecodedKind::Plain(_) => t,
                    _ => format!("{t:<48} ; LARDx86"),
                }
            }
            Err(DecodeError::Fault { fault, .. }) => format!("(LARD fault: {fault})"),
            Err(DecodeError::Invalid) => "(bad)".to_string(),
            Err(DecodeError::Truncated) => "(truncated)".to_string(),
        };
        writeln!(out, "  {:>8x}:\t{:<30}\t{}", s.ip, hex_bytes(s.bytes), text)?;
    }
    Ok(())
}

/// Disassembles `file` (or one function of it) to `out` and returns the counts.
pub fn disasm(
    file: &ElfFile,
    symbol: Option<&str>,
    out: &mut dyn Write,
) -> Result<SweepCounts, DisasmError> {
    let syms = Symbolizer::new(&file.symbols, 0);
    let mut counts = SweepCounts::default();
    if let Some(name) = symbol {
        let sym = syms
            .function_named(name)
            .ok_or_else(|| DisasmError::UnknownSymbol(name.to_string()))?;
        let sec = file
            .code_sections
            .iter()
            .find(|s| sym.addr >= s.addr && sym.addr < s.addr + s.size as u64)
            .ok_or_else(|| DisasmError::UnknownSymbol(name.to_string()))?;
        let start = (sym.addr - sec.addr) as usize;
        let len = (sym.size as usize).min(sec.size - start);
        let bytes = &file.section_bytes(sec)[start..start + len];
        write_range(out, &syms, bytes, sym.addr, &mut counts)?;
    } else {
        for sec in &file.code_sections {
            writeln!(out, "\nDisassembly of section {}:", sec.name)?;
            write_range(out, &syms, file.section_bytes(sec), sec.addr, &mut counts)?;
        }
    }
    Ok(counts)
}

/// One line summarising what a disassembly found, for stderr.
pub fn summary(c: &SweepCounts) -> String {
    let ops: Vec<String> = c
        .ops
        .iter()
        .map(|(k, n)| format!("{} {n}", k.mnemonic()))
        .collect();
    format!(
        "{} instructions, {} tracked, {} LARD ops ({}), {} LARD faults, {} invalid bytes",
        c.instructions,
        c.tracked,
        c.ops.values().sum::<u64>(),
        if ops.is_empty() {
            "none".into()
        } else {
            ops.join(", ")
        },
        c.faults.values().sum::<u64>(),
        c.invalid
    )
}

/// The section containing `addr`, if any.
pub fn section_of(file: &ElfFile, addr: u64) -> Option<&CodeSection> {
    file.code_sections
        .iter()
        .find(|s| addr >= s.addr && addr < s.addr + s.size as u64)
}
