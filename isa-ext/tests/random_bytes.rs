//! Robustness: decoding arbitrary bytes never panics, and what it returns is
//! self-consistent. CI runs at least a million inputs; set
//! `LARD_RANDOM_DECODES` for a longer run, e.g.
//! `LARD_RANDOM_DECODES=100000000 cargo test --release -p lard-isa-ext --test random_bytes`.
//! The `cargo fuzz` target in `isa-ext/fuzz` explores further.

use lard_isa_ext::{decode, format, DecodeError, Decoded, DecodedKind, Step, Sweep};

mod common;
use common::SplitMix;

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

/// The decode-per-step sweep the one-decoder sweep must equal: at every
/// position, [`decode`] of the remaining bytes, stepping as `Sweep` does.
fn reference_sweep(
    bytes: &[u8],
    base: u64,
) -> Vec<(u64, Result<lard_isa_ext::Decoded, DecodeError>)> {
    let (mut out, mut pos) = (Vec::new(), 0);
    while pos < bytes.len() {
        let rest = &bytes[pos..];
        let ip = base + pos as u64;
        let r = decode(rest, ip);
        let step = match &r {
            Ok(d) => d.len,
            Err(DecodeError::Fault { len, .. }) => *len,
            Err(DecodeError::Invalid) => 1,
            Err(DecodeError::Truncated) => rest.len(),
        };
        out.push((ip, r));
        pos += step.clamp(1, rest.len());
    }
    out
}

fn assert_sweep_is_decode(bytes: &[u8], base: u64) -> usize {
    let want = reference_sweep(bytes, base);
    let got: Vec<_> = Sweep::new(bytes, base).map(|s| (s.ip, s.result)).collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "sweep and decode differ at {:#x}", w.0);
    }
    // `Sweep::step` gives the same steps, ordinary instructions lent.
    let mut sweep = Sweep::new(bytes, base);
    let mut stepped = Vec::new();
    let mut plain = 0;
    while let Some(step) = sweep.step() {
        stepped.push(match step {
            Step::Plain { ip, insn } => {
                plain += 1;
                let kind = DecodedKind::Plain(*insn);
                (
                    ip,
                    Ok(Decoded {
                        ip,
                        len: insn.len(),
                        kind,
                    }),
                )
            }
            Step::Other(s) => (s.ip, s.result),
            Step::Ordinary { ip } => panic!("Sweep::step decodes every step ({ip:#x})"),
        });
    }
    assert_eq!(stepped.len(), want.len());
    for (g, w) in stepped.iter().zip(&want) {
        assert_eq!(g, w, "Sweep::step and decode differ at {:#x}", w.0);
    }
    assert!(plain > 0);
    got.len()
}

#[test]
fn a_sweep_gives_decode_at_every_step() {
    // Random bytes with LARD forms planted, and runs of prefixes longer than
    // an instruction may be (where a 15-byte window and the whole buffer
    // could disagree).
    let mut rng = SplitMix(0x5eed);
    let mut bytes: Vec<u8> = (0..256 * 1024).map(|_| rng.next() as u8).collect();
    for k in 0..bytes.len() / 512 {
        let at = k * 512 + (rng.next() % 480) as usize;
        match k % 4 {
            0 => bytes[at] = 0x36,
            1 => bytes[at..at + 9]
                .copy_from_slice(&[0x48, 0x0F, 0x1F, 0x84, 0x00, 0x01, 0x4C, 0x52, 0x44]),
            2 => bytes[at..at + 17].fill(0x66),
            _ => bytes[at..at + 14].fill(0x2E),
        }
    }
    assert_sweep_is_decode(&bytes, 0x4000);
    // Real code: the C library the tests run with, if it can be read.
    for lib in [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ] {
        if let Ok(bytes) = std::fs::read(lib) {
            let n = assert_sweep_is_decode(&bytes, 0);
            assert!(n > 100_000, "{lib}: only {n} steps");
            break;
        }
    }
}
