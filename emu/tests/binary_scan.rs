//! Unambiguity of the LARDx86 encoding (docs/lardx86.md §"Unambiguity"):
//! code that gcc, clang and rustc emit for ordinary programs never decodes as
//! a LARDx86 op, a Tracked access or a LARD fault.
//!
//! The scan covers every function range that `.eh_frame` attributes to the
//! compilers (see `lard_emu::binary::functions`) in the machine's system binaries, the
//! C library, and this project's own `lard` binary and test executable.

use lard_emu::binary::disasm::SweepCounts;
use lard_emu::binary::elf::ElfFile;
use std::path::{Path, PathBuf};

fn candidates() -> Vec<PathBuf> {
    let mut files = vec![
        PathBuf::from(env!("CARGO_BIN_EXE_lard")),
        std::env::current_exe().expect("test executable path"),
    ];
    for libc in [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ] {
        if Path::new(libc).exists() {
            files.push(libc.into());
            break;
        }
    }
    let release = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/lard");
    if release.exists() {
        files.push(release);
    }
    let mut bins: Vec<PathBuf> = std::fs::read_dir("/usr/bin")
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    bins.sort();
    files.extend(bins);
    files
}

#[test]
fn compiler_emitted_code_contains_no_lardx86() {
    let mut total = SweepCounts::default();
    let mut scanned = 0usize;
    let mut offenders = Vec::new();
    for path in candidates() {
        if !path.is_file() {
            continue;
        }
        // Non-ELF files, scripts and other architectures are simply not code to scan.
        let Ok(file) = ElfFile::open(&path) else {
            continue;
        };
        let (counts, _) = SweepCounts::of_functions(&file);
        if counts.lard_total() != 0 {
            offenders.push(format!("{}: {counts:?}", path.display()));
        }
        total.instructions += counts.instructions;
        total.invalid += counts.invalid;
        scanned += 1;
    }
    println!(
        "scanned {} instructions in {scanned} ELF files; LARDx86 constructs found: {}",
        total.instructions,
        offenders.len()
    );
    assert!(scanned >= 3, "too few binaries to scan ({scanned})");
    assert!(
        total.instructions > 1_000_000,
        "scanned only {} instructions",
        total.instructions
    );
    assert!(
        offenders.is_empty(),
        "LARDx86 found in compiler output:\n{}",
        offenders.join("\n")
    );
}
