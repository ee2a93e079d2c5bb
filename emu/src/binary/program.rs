//! Program code versus system code in a binary (LARD §3 applied to C;
//! docs/binary-mode.md).
//!
//! In binary mode lard checks the accesses of *program code* and ignores
//! those of *system code* (libc, libstdc++, libgomp, libpthread, ld.so) —
//! LARD's Rule 1 with "Tracked" replaced by "executed by program code".
//!
//! Inside one static executable the two are told apart by debug
//! information: the program's compilation units carry DWARF (`gcc -g`),
//! the system libraries' archive members as distributions ship them
//! (Debian's `libc.a`, `libgomp.a`, `libstdc++.a`, `libgcc.a`, the crt
//! objects) carry none. Program code is therefore the union of the address
//! ranges of the executable's DWARF compilation units, plus every function
//! whose symbol matches a `--program-code` pattern.
//!
//! A dynamically linked executable without DWARF (every distribution binary
//! is stripped) holds only its own code: the system libraries are separate
//! objects. Its code sections are then its program code (the PLT and the
//! crt's `.init`/`.fini` excepted), and the report says so. A static
//! executable without DWARF has libc inside: it has no program code unless
//! patterns name some (the run says so).

use crate::binary::elf::ElfFile;

/// Where the program-code ranges came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramSource {
    /// DWARF compilation units (and possibly patterns).
    Dwarf,
    /// `--program-code` patterns only (no DWARF in the executable).
    Patterns,
    /// The code sections of a dynamically linked executable without DWARF
    /// (and without a matching pattern).
    Text,
    /// Nothing: the executable has no DWARF and no pattern matched.
    None,
}

/// Code sections of an executable that are not the program's own: lazy
/// binding stubs and the crt's initialisation.
const NOT_PROGRAM_SECTIONS: [&str; 5] = [".plt", ".plt.got", ".plt.sec", ".init", ".fini"];

/// The program code of a process: sorted, disjoint `[start, end)` ranges of
/// run-time addresses.
#[derive(Clone, Debug, Default)]
pub struct ProgramCode {
    ranges: Vec<(u64, u64)>,
}

impl ProgramCode {
    /// The program code of `file` loaded at `bias`: the DWARF compilation
    /// units of `dwarf` (the file itself or its separate debug file) and
    /// the functions of `file` whose names match one of `patterns` (globs
    /// with `*` and `?`), less the allocators linked into it; and their
    /// code (the third result).
    pub fn of(
        dwarf: &ElfFile,
        file: &ElfFile,
        bias: u64,
        patterns: &[String],
    ) -> (ProgramCode, ProgramSource, ProgramCode) {
        let units = dwarf_unit_ranges(dwarf);
        let has_dwarf = !units.is_empty();
        let allocator = allocator_functions(dwarf, file);
        // A compilation unit that holds a C allocator's function is the
        // allocator's (mimalloc is one unit; each of jemalloc's defines
        // functions of its private namespace).
        let (alloc_units, units): (Vec<_>, Vec<_>) = units.into_iter().partition(|u| {
            allocator
                .iter()
                .any(|&(a, _, whole)| whole && u.iter().any(|&(s, e)| s <= a && a < e))
        });
        let mut ranges: Vec<(u64, u64)> = units.into_iter().flatten().collect();
        let mut alloc: Vec<(u64, u64)> = alloc_units.into_iter().flatten().collect();
        alloc.extend(allocator.iter().map(|&(s, e, _)| (s, e)));
        let dwarf = has_dwarf;
        let mut matched = false;
        for s in file.symbols.iter().filter(|s| s.is_func && s.size > 0) {
            if patterns.iter().any(|p| glob_match(p, &s.name)) {
                ranges.push((s.addr, s.addr + s.size));
                matched = true;
            }
        }
        let source = if dwarf {
            ProgramSource::Dwarf
        } else if matched {
            ProgramSource::Patterns
        } else if file.interp.is_some() {
            ranges.extend(
                file.code_sections
                    .iter()
                    .filter(|c| !NOT_PROGRAM_SECTIONS.contains(&c.name.as_str()))
                    .map(|c| (c.addr, c.addr + c.size as u64)),
            );
            ProgramSource::Text
        } else {
            ProgramSource::None
        };
        let mut code = ProgramCode::from_ranges(ranges);
        for &(a, e, _) in &allocator {
            code.remove(a, e);
        }
        let relocate = |r: Vec<(u64, u64)>| {
            ProgramCode::from_ranges(
                r.into_iter()
                    .map(|(s, e)| (s.wrapping_add(bias), e.wrapping_add(bias)))
                    .collect(),
            )
        };
        (relocate(code.ranges), source, relocate(alloc))
    }

    /// Removes `[start, end)` from the program code.
    pub fn remove(&mut self, start: u64, end: u64) {
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        for &(s, e) in &self.ranges {
            if e <= start || s >= end {
                out.push((s, e));
                continue;
            }
            if s < start {
                out.push((s, start));
            }
            if e > end {
                out.push((end, e));
            }
        }
        self.ranges = out;
    }

    /// Program code made of `ranges` (any order, may overlap).
    pub fn from_ranges(ranges: Vec<(u64, u64)>) -> ProgramCode {
        ProgramCode {
            ranges: merge_ranges(ranges),
        }
    }

    /// Adds `ranges` to the program code.
    pub fn add(&mut self, ranges: &[(u64, u64)]) {
        let mut all = std::mem::take(&mut self.ranges);
        all.extend_from_slice(ranges);
        *self = ProgramCode::from_ranges(all);
    }

    /// True when the instruction at `pc` is program code.
    #[inline]
    pub fn contains(&self, pc: u64) -> bool {
        let i = self.ranges.partition_point(|&(s, _)| s <= pc);
        i > 0 && pc < self.ranges[i - 1].1
    }

    /// The ranges, sorted and disjoint.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// True when there is no program code at all.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// The address ranges of each DWARF compilation unit of `file`
/// (unrelocated), empty without debug information.
fn dwarf_unit_ranges(file: &ElfFile) -> Vec<Vec<(u64, u64)>> {
    let Some(dwarf) = file.dwarf() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let Ok(mut ranges) = dwarf.unit_ranges(&unit) else {
            continue;
        };
        let mut unit = Vec::new();
        while let Ok(Some(r)) = ranges.next() {
            // A range starting at 0 is a discarded function's (the linker
            // resolved its address to 0), not code.
            if r.begin != 0 && r.begin < r.end {
                unit.push((r.begin, r.end));
            }
        }
        out.push(unit);
    }
    out
}

/// A C allocator that may be linked into an executable: the function that
/// shows it is there, and the name prefixes of its functions.
struct Allocator {
    entry: &'static str,
    prefixes: &'static [&'static str],
}

/// mimalloc (`mi_*` API, `_mi_*` internals) and jemalloc, with Rust's
/// `tikv-jemallocator` prefix (`_rjem_*`, private names `_rjem_je_*`) or
/// its own (`je_*`).
const ALLOCATORS: [Allocator; 3] = [
    Allocator {
        entry: "mi_malloc",
        prefixes: &["mi_", "_mi_"],
    },
    Allocator {
        entry: "_rjem_malloc",
        prefixes: &["_rjem_"],
    },
    Allocator {
        entry: "je_malloc",
        prefixes: &["je_"],
    },
];

/// The functions of allocators linked into `file` (docs/binary-mode.md,
/// "Allocators in the executable"), which are system code: `(start, end,
/// whole unit)`, unrelocated. A C allocator whose entry `file` defines
/// brings every function named with its prefixes, and the compilation
/// units that hold them (`whole unit`); Rust's global-allocator shims
/// (`__rust_alloc`, `__rdl_*`, `__rg_*`) only themselves.
fn allocator_functions(dwarf: &ElfFile, file: &ElfFile) -> Vec<(u64, u64, bool)> {
    let symbols = || {
        file.symbols
            .iter()
            .chain(&dwarf.symbols)
            .filter(|s| s.is_func && s.size > 0 && s.addr != 0)
    };
    let mut out = Vec::new();
    for a in &ALLOCATORS {
        if symbols().any(|s| s.name == a.entry) {
            out.extend(
                symbols()
                    .filter(|s| a.prefixes.iter().any(|p| s.name.starts_with(p)))
                    .map(|s| (s.addr, s.addr + s.size, true)),
            );
        }
    }
    out.extend(
        symbols()
            .filter(|s| crate::intercept::library::rust_allocator(&s.name).is_some())
            .map(|s| (s.addr, s.addr + s.size, false)),
    );
    out
}

/// Shell-style glob: `*` any run of characters, `?` one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Half-open ranges `[s, e)` (any order; empty ones dropped) as sorted,
/// disjoint ranges: overlapping or adjacent ones merge.
pub fn merge_ranges(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.retain(|&(s, e)| s < e);
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("worker*", "worker_main"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("*lib*.so*", "libfoo.so.1"));
        assert!(!glob_match("main", "main2"));
    }

    #[test]
    fn ranges_merge_and_lookup() {
        let p = ProgramCode::from_ranges(vec![(30, 40), (10, 20), (15, 25), (50, 50)]);
        assert_eq!(p.ranges(), &[(10, 25), (30, 40)]);
        assert!(p.contains(10) && p.contains(24) && p.contains(30));
        assert!(!p.contains(9) && !p.contains(25) && !p.contains(40) && !p.contains(50));
    }

    #[test]
    fn removing_a_range_splits_or_trims() {
        let mut p = ProgramCode::from_ranges(vec![(10, 20), (30, 40), (50, 60)]);
        p.remove(15, 35);
        p.remove(50, 60);
        p.remove(0, 5);
        assert_eq!(p.ranges(), &[(10, 15), (35, 40)]);
    }
}
