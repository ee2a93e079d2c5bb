//! The statement line of an address whose line-table rows disagree.
//!
//! A line table may give one address several rows: gcc gives the single
//! instruction of `static long get(void) { return x; }` the rows of `{`,
//! of `return x;` and of `}`, only the first two marked as statement
//! starts (`is_stmt`). A lookup that takes the last row (binutils'
//! `addr2line`, the `addr2line` crate) names the `}` line; gdb takes the
//! last statement start and names `return x;`, the line a person reads as
//! the access. [`StatementLines`] finds that row, from the DWARF line
//! program, for the frames of a report.

use crate::binary::elf::ElfFile;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

/// An executable's line programs, searched on demand.
pub struct StatementLines {
    path: std::path::PathBuf,
    /// The executable, read at the first search.
    elf: std::cell::OnceCell<Option<ElfFile>>,
    /// Answers already found, by (unbiased) address.
    cache: RefCell<HashMap<u64, Option<(u32, u32)>>>,
}

/// One row at the address searched.
#[derive(Clone, Copy)]
struct Row {
    line: u32,
    file: u64,
    is_stmt: bool,
}

impl StatementLines {
    /// The line programs of `path` (read when first searched; none if it
    /// cannot be read).
    pub fn open(path: &Path) -> StatementLines {
        StatementLines {
            path: path.to_path_buf(),
            elf: std::cell::OnceCell::new(),
            cache: RefCell::new(HashMap::new()),
        }
    }

    /// For `addr` (a file address), when its rows end with one that does
    /// not start a statement and an earlier row of the same file does:
    /// `(line of the last row, line of the last statement start)`.
    pub fn statement_line(&self, addr: u64) -> Option<(u32, u32)> {
        if let Some(hit) = self.cache.borrow().get(&addr) {
            return *hit;
        }
        let found = self.search(addr);
        self.cache.borrow_mut().insert(addr, found);
        found
    }

    fn search(&self, addr: u64) -> Option<(u32, u32)> {
        let elf = self.elf.get_or_init(|| ElfFile::open(&self.path).ok());
        let dwarf = elf.as_ref()?.dwarf()?;
        let mut units = dwarf.units();
        while let Ok(Some(header)) = units.next() {
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            let covers = dwarf.unit_ranges(&unit).ok().is_some_and(|mut r| {
                while let Ok(Some(range)) = r.next() {
                    if range.begin <= addr && addr < range.end {
                        return true;
                    }
                }
                false
            });
            if !covers {
                continue;
            }
            let program = unit.line_program.clone()?;
            let mut rows = program.rows();
            let mut at: Vec<Row> = Vec::new();
            while let Ok(Some((_, row))) = rows.next_row() {
                if row.end_sequence() {
                    if !at.is_empty() {
                        break;
                    }
                    continue;
                }
                if row.address() == addr {
                    at.push(Row {
                        line: row.line().map_or(0, |l| l.get() as u32),
                        file: row.file_index(),
                        is_stmt: row.is_stmt(),
                    });
                } else if !at.is_empty() {
                    break;
                }
            }
            let last = *at.last()?;
            if last.is_stmt {
                return None;
            }
            let stmt = at
                .iter()
                .rev()
                .find(|r| r.is_stmt && r.file == last.file && r.line != 0)?;
            return Some((last.line, stmt.line));
        }
        None
    }
}
