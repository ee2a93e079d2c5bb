//! `lard disasm`: LARD-aware disassembly of an ELF file's code sections.

use crate::binary::disasm;
use crate::binary::elf::ElfFile;
use std::path::Path;
use std::process::ExitCode;

/// Exit status when the input is unusable.
use crate::cmd::exit::EXIT_BAD_INPUT;

/// `lard disasm`: the listing on stdout, its summary on stderr.
pub fn run(path: &Path, symbol: Option<&str>) -> ExitCode {
    let file = match ElfFile::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("lard: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match disasm::disasm(&file, symbol, &mut out) {
        Ok(counts) => {
            drop(out);
            eprintln!("lard: {}", disasm::summary(&counts));
            ExitCode::SUCCESS
        }
        Err(disasm::DisasmError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lard: {e}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
    }
}
