//! Debugging information of guest objects: source lines of PCs (DWARF line
//! tables, through `addr2line`) and the statement starts among them.

pub mod lines;
pub mod stmt_lines;
