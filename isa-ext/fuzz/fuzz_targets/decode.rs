//! `cargo fuzz run decode` (from isa-ext/): decoding, sweeping and formatting
//! arbitrary bytes never panics, and decoded lengths stay within the input.
#![no_main]

use lard_isa_ext::{decode, format, DecodeError, Sweep};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match decode(data, 0x1000) {
        Ok(d) => {
            assert!(d.len >= 1 && d.len <= data.len());
            let _ = format(&d);
        }
        Err(DecodeError::Fault { len, .. }) => assert!(len >= 1 && len <= data.len()),
        Err(_) => {}
    }
    let covered: usize = Sweep::new(data, 0).map(|s| s.bytes.len()).sum();
    assert_eq!(covered, data.len());
});
