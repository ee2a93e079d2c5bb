//! Where the functions are: address ranges of compiler-emitted code.
//!
//! gcc, clang and rustc describe every function they emit with a Frame
//! Description Entry in `.eh_frame` (x86-64 psABI unwind tables). The ranges
//! those entries cover are exactly the bytes the compiler produced as code —
//! unlike a linear sweep of `.text`, which also walks over constant tables and
//! strings that hand-written assembly keeps in `.text`. Where an ELF has no
//! `.eh_frame`, sized function symbols are used instead.

use crate::binary::elf::ElfFile;
use crate::binary::program::merge_ranges;
use gimli::{BaseAddresses, CieOrFde, EhFrame, LittleEndian, UnwindSection};

/// Where a list of function ranges came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeSource {
    /// Frame Description Entries in `.eh_frame`.
    EhFrame,
    /// Sized function symbols.
    Symbols,
    /// Neither was available.
    None,
}

/// Address ranges `[start, end)` of functions, sorted and non-overlapping.
pub fn function_ranges(file: &ElfFile) -> (Vec<(u64, u64)>, RangeSource) {
    let mut ranges = eh_frame_ranges(file);
    let mut source = RangeSource::EhFrame;
    if ranges.is_empty() {
        ranges = file
            .symbols
            .iter()
            .filter(|s| s.is_func && s.size > 0)
            .map(|s| (s.addr, s.addr + s.size))
            .collect();
        source = if ranges.is_empty() {
            RangeSource::None
        } else {
            RangeSource::Symbols
        };
    }
    (merge_ranges(ranges), source)
}

/// One Frame Description Entry: a function (or a part of one, such as a
/// `.cold` partition) as the compiler emitted it, unrelocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fde {
    /// First byte of the code.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// True when the entry names a language-specific data area (C++
    /// exception tables): the unwinder may enter the code at landing pads.
    pub lsda: bool,
}

/// Every Frame Description Entry of `.eh_frame`, in file order (not merged:
/// static pruning needs each function's own start).
pub fn fdes(file: &ElfFile) -> Vec<Fde> {
    let mut out = Vec::new();
    eh_frame_walk(file, |start, len, lsda| {
        out.push(Fde {
            start,
            end: start.saturating_add(len),
            lsda,
        })
    });
    out
}

fn eh_frame_ranges(file: &ElfFile) -> Vec<(u64, u64)> {
    let mut ranges = Vec::new();
    eh_frame_walk(file, |start, len, _| {
        ranges.push((start, start.saturating_add(len)))
    });
    ranges
}

/// Calls `f(start, len, has_lsda)` for every FDE with code.
fn eh_frame_walk(file: &ElfFile, mut f: impl FnMut(u64, u64, bool)) {
    let Some((eh_addr, eh_bytes)) = file.section(".eh_frame") else {
        return;
    };
    let text_addr = file.section(".text").map_or(0, |(a, _)| a);
    let bases = BaseAddresses::default()
        .set_eh_frame(eh_addr)
        .set_text(text_addr);
    let eh = EhFrame::new(eh_bytes, LittleEndian);
    let mut entries = eh.entries(&bases);
    // A malformed entry ends the walk: what was read so far is still valid.
    while let Ok(Some(entry)) = entries.next() {
        if let CieOrFde::Fde(partial) = entry {
            if let Ok(fde) = partial.parse(|s, b, o| s.cie_from_offset(b, o)) {
                if fde.len() > 0 {
                    f(fde.initial_address(), fde.len(), fde.lsda().is_some());
                }
            }
        }
    }
}
