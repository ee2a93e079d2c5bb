//! Debugging information of guest objects: source lines of PCs (DWARF line
//! tables, through `addr2line`) and the statement starts among them; the
//! call frames of a stopped thread (`.eh_frame`) and the local variables
//! their stack addresses belong to.

pub mod lines;
pub mod stmt_lines;
pub mod unwind;
pub mod variables;
