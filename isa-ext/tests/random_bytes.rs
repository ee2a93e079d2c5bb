//! Robustness: decoding arbitrary bytes never panics, and what it returns is
//! self-consistent. CI runs at least a million inputs; set
//! `LARD_RANDOM_DECODES` for a longer run, e.g.
//! `LARD_RANDOM_DECODES=100000000 cargo test --release -p lard-isa-ext --test random_bytes`.
//! The `cargo fuzz` target in `isa-ext/fuzz` explores further.

use lard_isa_ext::{decode, format, DecodeError, Sweep};

struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[test]
fn a_million_random_inputs_decode_without_panicking() {
    let n: u64 = std::env::var("LARD_RANDOM_DECODES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut rng = SplitMix(0x1A2D);
    let (mut ok, mut faults) = (0u64, 0u64);
    let mut buf = [0u8; 16];
    for i in 0..n {
        for chunk in buf.chunks_mut(8) {
            chunk.copy_from_slice(&rng.next().to_le_bytes()[..chunk.len()]);
        }
        // Bias a quarter of the inputs toward the LARD forms so their checks run.
        match i % 8 {
            0 => buf[0] = 0x36,
            1 => {
                buf[..3].copy_from_slice(&[0x48, 0x0F, 0x1F]);
                buf[3] = 0x84 | (buf[3] & 0x38);
                buf[6..9].copy_from_slice(&[0x4C, 0x52, 0x44]);
            }
            _ => {}
        }
        let len = (rng.next() % 17) as usize;
        match decode(&buf[..len], 0x1000) {
            Ok(d) => {
                assert!(d.len >= 1 && d.len <= len.min(15));
                let _ = format(&d);
                ok += 1;
            }
            Err(DecodeError::Fault { len: l, .. }) => {
                assert!(l >= 1 && l <= len);
                faults += 1;
            }
            Err(_) => {}
        }
    }
    println!("{n} random inputs: {ok} decoded, {faults} LARD faults");
    assert!(ok > n / 4, "suspiciously few valid decodes: {ok}");
    assert!(faults > 0, "the LARD-biased inputs produced no faults");
}

#[test]
fn sweeps_cover_every_byte_exactly_once() {
    let mut rng = SplitMix(7);
    let bytes: Vec<u8> = (0..64 * 1024).map(|_| rng.next() as u8).collect();
    let mut pos = 0x4000u64;
    for s in Sweep::new(&bytes, 0x4000) {
        assert_eq!(s.ip, pos);
        assert!(!s.bytes.is_empty());
        pos += s.bytes.len() as u64;
    }
    assert_eq!(pos, 0x4000 + bytes.len() as u64);
}
