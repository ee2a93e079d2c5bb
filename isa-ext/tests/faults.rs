//! Decode-time LARD faults and the region rule of ClearHistory/CopyHistory.

use lard_isa_ext::{
    check_region, decode, encode, DecodeError, DecodedKind, Gpr, LardFault, LardOp,
};

fn fault_of(bytes: &[u8]) -> LardFault {
    match decode(bytes, 0) {
        Err(DecodeError::Fault { fault, len }) => {
            assert_eq!(len, bytes.len());
            fault
        }
        other => panic!("{bytes:02x?}: expected a fault, got {other:?}"),
    }
}

#[test]
fn unknown_op_numbers_fault() {
    for n in [0u8, 7, 8, 0x80, 0xFF] {
        let mut b = encode(&LardOp::Thread { id: Gpr::Rax });
        b[5] = n;
        assert_eq!(fault_of(&b), LardFault::UnknownOp { number: n });
    }
}

#[test]
fn reserved_fields_fault() {
    // Thread uses only op1; a non-zero base or index is reserved.
    let mut b = encode(&LardOp::Thread { id: Gpr::Rdi });
    b[4] = 0x01; // base = rcx
    assert_eq!(fault_of(&b), LardFault::ReservedField);
    let mut b = encode(&LardOp::ClearHistory {
        addr: Gpr::Rdi,
        len: Gpr::Rsi,
    });
    b[0] |= 0x02; // REX.X: index = r8
    assert_eq!(fault_of(&b), LardFault::ReservedField);
    let mut b = encode(&LardOp::CopyHistory {
        src: Gpr::Rdi,
        dst: Gpr::Rsi,
        len: Gpr::Rdx,
    });
    b[4] |= 0x40; // scale = 2
    assert_eq!(fault_of(&b), LardFault::ReservedField);
}

#[test]
fn prefixed_ops_fault() {
    let op = encode(&LardOp::WriteVc {
        tid: Gpr::Rdi,
        value: Gpr::Rsi,
    });
    for prefix in [0x36u8, 0x66, 0xF3, 0x2E, 0x64, 0x67] {
        let mut b = vec![prefix];
        b.extend_from_slice(&op);
        assert_eq!(fault_of(&b), LardFault::PrefixedOp, "prefix {prefix:02x}");
    }
    // A REX that is not the last prefix is ignored by the CPU and so is a prefix too.
    let mut b = vec![0x41];
    b.extend_from_slice(&op);
    assert_eq!(fault_of(&b), LardFault::PrefixedOp);
}

#[test]
fn op_without_rex_is_recognised() {
    // The canonical form always has REX.W, but the shorter form without REX
    // (registers 0-7 only) has the same meaning.
    let b = [0x0F, 0x1F, 0xBC, 0x00, 0x01, 0x4C, 0x52, 0x44];
    let d = decode(&b, 0).unwrap();
    assert_eq!(d.kind, DecodedKind::Op(LardOp::Thread { id: Gpr::Rdi }));
}

#[test]
fn tracked_with_another_segment_override_faults() {
    for seg in [0x64u8, 0x65, 0x2E, 0x3E, 0x26] {
        // seg ss mov [rbx], eax  and  ss seg mov [rbx], eax
        assert_eq!(
            fault_of(&[seg, 0x36, 0x89, 0x03]),
            LardFault::TrackedSegmentOverride
        );
        assert_eq!(
            fault_of(&[0x36, seg, 0x89, 0x03]),
            LardFault::TrackedSegmentOverride
        );
    }
}

#[test]
fn ordinary_padding_nops_are_plain() {
    let padding: &[&[u8]] = &[
        &[0x0F, 0x1F, 0x00],
        &[0x0F, 0x1F, 0x40, 0x00],
        &[0x0F, 0x1F, 0x44, 0x00, 0x00],
        &[0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00],
        &[0x0F, 0x1F, 0x80, 0, 0, 0, 0],
        &[0x0F, 0x1F, 0x84, 0x00, 0, 0, 0, 0],
        &[0x66, 0x0F, 0x1F, 0x84, 0x00, 0, 0, 0, 0],
        &[0x66, 0x2E, 0x0F, 0x1F, 0x84, 0x00, 0, 0, 0, 0],
    ];
    for p in padding {
        let d = decode(p, 0).unwrap();
        assert!(matches!(d.kind, DecodedKind::Plain(_)), "{p:02x?}");
        assert_eq!(d.len, p.len());
    }
}

#[test]
fn regions_must_be_non_empty_and_within_one_page() {
    assert_eq!(check_region(0x1000, 0), Err(LardFault::EmptyRegion));
    assert_eq!(check_region(0x1000, 4096), Ok(()));
    assert_eq!(check_region(0x1001, 4095), Ok(()));
    assert_eq!(
        check_region(0x1001, 4096),
        Err(LardFault::RegionCrossesPage {
            addr: 0x1001,
            len: 4096
        })
    );
    assert_eq!(check_region(0x1FFF, 1), Ok(()));
    assert_eq!(
        check_region(0x1FFF, 2),
        Err(LardFault::RegionCrossesPage {
            addr: 0x1FFF,
            len: 2
        })
    );
    assert!(check_region(u64::MAX, 1).is_ok());
    assert!(check_region(u64::MAX, u64::MAX).is_err());
}

#[test]
fn truncated_and_invalid_bytes_are_errors() {
    let op = encode(&LardOp::Thread { id: Gpr::Rax });
    for n in 0..op.len() {
        assert_eq!(
            decode(&op[..n], 0).unwrap_err(),
            DecodeError::Truncated,
            "{n} bytes"
        );
    }
    assert_eq!(
        decode(&[0x06, 0x90, 0x90], 0).unwrap_err(),
        DecodeError::Invalid
    ); // push es: invalid in 64-bit mode
    assert_eq!(decode(&[0x36], 0).unwrap_err(), DecodeError::Truncated);
}
