// SPDX-License-Identifier: MIT OR Apache-2.0
//! Runs inside rustc, in tally-macros: the chunk size as Rust source.

/// The number of items each worker of a tally counts at a time, as a
/// `usize` literal.
pub fn chunk_literal() -> String {
    format!("{}usize", 16)
}
