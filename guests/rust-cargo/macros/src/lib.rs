// SPDX-License-Identifier: MIT OR Apache-2.0
//! Runs inside rustc: `chunk!()` expands to the chunk size of a tally.
use proc_macro::TokenStream;

/// The number of items each worker of a tally counts at a time.
#[proc_macro]
pub fn chunk(_input: TokenStream) -> TokenStream {
    tally_macro_support::chunk_literal().parse().unwrap()
}
