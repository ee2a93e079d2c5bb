//! `lard`: run and inspect programs on a LARDx86 CPU.

use clap::{Parser, Subcommand};
use lard_emu::{disasm, elf::ElfFile};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status of `lard disasm` when its input is unusable.
const EXIT_BAD_INPUT: u8 = 1;

#[derive(Parser)]
#[command(
    name = "lard",
    version,
    about = "A user-mode x86-64 emulator with a LARDx86 race-detecting CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// LARD-aware disassembly of an ELF file's code sections.
    Disasm {
        /// The ELF file.
        elf: PathBuf,
        /// Disassemble only this function.
        #[arg(long)]
        symbol: Option<String>,
    },
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"))
        .format_timestamp(None)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Disasm { elf, symbol } => run_disasm(&elf, symbol.as_deref()),
    }
}

fn run_disasm(path: &std::path::Path, symbol: Option<&str>) -> ExitCode {
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
