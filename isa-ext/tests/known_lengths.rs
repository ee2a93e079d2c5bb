//! `KnownLengths`: a sweep that steps over ordinary instructions of kinds it
//! has learned gives the steps of the decoding sweep, and a key holds every
//! byte that decides an instruction's length and meaning.

use iced_x86::{Decoder, DecoderOptions, Mnemonic};
use lard_isa_ext::known::key;
use lard_isa_ext::{DecodeError, DecodedKind, KnownLengths, Step, Sweep};

mod common;
use common::SplitMix;

/// What the sweep found at one position: `None` for a step over an
/// ordinary instruction it did not decode.
type Found = (u64, Option<Result<lard_isa_ext::Decoded, DecodeError>>);

fn known_sweep(bytes: &[u8], base: u64, known: &mut KnownLengths, stop_every: u64) -> Vec<Found> {
    let mut out = Vec::new();
    let mut sweep = Sweep::new(bytes, base);
    let mut stop = base;
    loop {
        if stop_every > 0 {
            while stop <= base + out.len() as u64 {
                stop += stop_every;
            }
        }
        sweep.skip_known(known, if stop_every > 0 { stop } else { u64::MAX });
        let Some(step) = sweep.step_known(known) else {
            break;
        };
        out.push(match step {
            Step::Ordinary { ip } => (ip, None),
            Step::Plain { ip, insn } => (
                ip,
                Some(Ok(lard_isa_ext::Decoded {
                    ip,
                    len: insn.len(),
                    kind: DecodedKind::Plain(*insn),
                })),
            ),
            Step::Other(s) => (s.ip, Some(s.result)),
        });
    }
    out
}

/// Every step `known_sweep` makes is a step of the decoding sweep, and the
/// positions skipped in between are ordinary instructions, neither `lock`
/// nor `xchg`. Returns how many instructions were not decoded.
fn assert_same_sweep(bytes: &[u8], base: u64, known: &mut KnownLengths, stop_every: u64) -> usize {
    let want: Vec<_> = Sweep::new(bytes, base).map(|s| (s.ip, s.result)).collect();
    let got = known_sweep(bytes, base, known, stop_every);
    let mut w = want.iter().peekable();
    let mut skipped = 0;
    for (ip, r) in &got {
        // Positions skipped without a step: ordinary instructions.
        while let Some((wip, wr)) = w.peek() {
            if wip >= ip {
                break;
            }
            assert_ordinary(*wip, wr);
            skipped += 1;
            w.next();
        }
        let (wip, wr) = w.next().expect("the sweep went past the end");
        assert_eq!(wip, ip, "the sweeps are out of step");
        match r {
            None => {
                assert_ordinary(*wip, wr);
                skipped += 1;
            }
            Some(r) => assert_eq!(r, wr, "the sweeps differ at {ip:#x}"),
        }
    }
    for (wip, wr) in w {
        assert_ordinary(*wip, wr);
        skipped += 1;
    }
    skipped
}

fn assert_ordinary(ip: u64, r: &Result<lard_isa_ext::Decoded, DecodeError>) {
    match r {
        Ok(d) => match d.kind {
            DecodedKind::Plain(i) => assert!(
                !i.has_lock_prefix() && i.mnemonic() != Mnemonic::Xchg,
                "a site was stepped over at {ip:#x}"
            ),
            _ => panic!("a LARD instruction was stepped over at {ip:#x}: {r:?}"),
        },
        Err(e) => panic!("bytes that do not decode were stepped over at {ip:#x}: {e}"),
    }
}

#[test]
fn stepping_over_known_kinds_gives_the_decoding_sweep() {
    let mut rng = SplitMix(0xC0DE);
    // Random bytes with LARD forms, prefix runs and common instructions
    // planted (so that kinds repeat and are stepped over).
    let common: [&[u8]; 10] = [
        &[0x48, 0x8B, 0x45, 0xF8],
        &[0x48, 0x89, 0x04, 0x24],
        &[0xE8, 0x10, 0x20, 0x30, 0x40],
        &[0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00],
        &[0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00],
        &[0x0F, 0x1F, 0x84, 0x00, 0x00, 0x4C, 0x52, 0x44],
        &[0xF0, 0x48, 0x0F, 0xB1, 0x17],
        &[0x48, 0x87, 0x07],
        &[0x36, 0x48, 0x8B, 0x07],
        &[0x74, 0x05],
    ];
    let mut bytes = Vec::new();
    while bytes.len() < 256 * 1024 {
        match rng.next() % 6 {
            0 => bytes.extend((0..rng.next() % 9).map(|_| rng.next() as u8)),
            1 => bytes.extend(std::iter::repeat_n(0x66, (rng.next() % 17) as usize)),
            _ => bytes.extend_from_slice(common[(rng.next() % 10) as usize]),
        }
    }
    let mut known = KnownLengths::default();
    assert_same_sweep(&bytes, 0x4000, &mut known, 0);
    // Warm: most ordinary instructions are stepped over now.
    let skipped = assert_same_sweep(&bytes, 0x4000, &mut known, 0);
    assert!(skipped > 20_000, "only {skipped} instructions stepped over");
    // Stopping at positions that instructions straddle or start at.
    assert_same_sweep(&bytes[3..], 0x9003, &mut known, 37);
    // Pure random bytes.
    let random: Vec<u8> = (0..256 * 1024).map(|_| rng.next() as u8).collect();
    assert_same_sweep(&random, 0, &mut known, 0);
    assert_same_sweep(&random, 0, &mut known, 11);
    // Real code, with the table learned from other code.
    for lib in [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ] {
        if let Ok(bytes) = std::fs::read(lib) {
            let mut fresh = KnownLengths::default();
            assert_same_sweep(&bytes, 0, &mut fresh, 0);
            let skipped = assert_same_sweep(&bytes, 0, &mut known, 0);
            assert!(skipped > 100_000, "{lib}: only {skipped} stepped over");
            break;
        }
    }
}

/// iced-x86's length, code and validity of the instruction at the start
/// of `bytes`.
fn iced(bytes: &[u8]) -> (usize, iced_x86::Code, bool) {
    let i = Decoder::with_ip(64, bytes, 0, DecoderOptions::NONE).decode();
    (i.len(), i.code(), i.is_invalid())
}

/// The key property: two byte strings with the same key decode alike. For
/// every opcode of the one-, two- and three-byte maps under a few prefix
/// combinations, every byte after the opcode (the ModRM, when the key
/// takes one) and SIB bytes after those that announce one, with different
/// bytes after the key.
#[test]
fn bytes_with_the_same_key_decode_alike() {
    let mut rng = SplitMix(0x004B_4559);
    let prefixes: [&[u8]; 12] = [
        &[],
        &[0x66],
        &[0xF2],
        &[0xF3],
        &[0x48],
        &[0x67],
        &[0x2E],
        &[0x66, 0x41],
        &[0x48, 0x66],
        &[0xF3, 0x48],
        &[0x64, 0x48],
        &[0x66, 0xF2, 0x4C],
    ];
    let mut opcodes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    opcodes.extend((0..=255u8).map(|b| vec![0x0F, b]));
    opcodes.extend((0..=255u8).map(|b| vec![0x0F, 0x38, b]));
    opcodes.extend((0..=255u8).map(|b| vec![0x0F, 0x3A, b]));
    let mut keyed = 0;
    let mut buf = [0u8; 24];
    for p in prefixes {
        for op in &opcodes {
            // Key -> what the first input with that key decoded to.
            let mut seen = std::collections::HashMap::new();
            for next in 0..=255u8 {
                let head: Vec<u8> = p.iter().chain(op).copied().chain([next]).collect();
                let sibs: &[Option<u8>] = if next < 0xC0 && next & 7 == 4 {
                    &[
                        Some(0x00),
                        Some(0x24),
                        Some(0x25),
                        Some(0x65),
                        Some(0xA4),
                        Some(0xFD),
                    ]
                } else {
                    &[None]
                };
                for &sib in sibs {
                    for _ in 0..3 {
                        buf[..head.len()].copy_from_slice(&head);
                        for b in &mut buf[head.len()..] {
                            *b = rng.next() as u8;
                        }
                        if let Some(sib) = sib {
                            buf[head.len()] = sib;
                        }
                        let Some((k, n)) = key(&buf) else {
                            break;
                        };
                        let got = iced(&buf);
                        let first = *seen.entry((k, n)).or_insert(got);
                        assert_eq!(
                            first,
                            got,
                            "same key {:x?}, different instructions: {:x?}",
                            &buf[..n],
                            &buf[..16]
                        );
                        keyed += 1;
                    }
                }
            }
        }
    }
    assert!(keyed > 1_000_000, "only {keyed} keyed inputs");
}
