//! Every op × every register choice encodes, decodes back to itself, formats,
//! and is a harmless NOP to an ordinary x86-64 decoder.

use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory, Mnemonic, OpAccess};
use lard_isa_ext::{decode, encode, format, DecodedKind, Gpr, LardOp, OpKind, OP_LEN};

fn all_ops() -> Vec<LardOp> {
    let mut ops = Vec::new();
    for kind in OpKind::ALL {
        let n = kind.operand_count();
        let choices = 16usize.pow(n as u32);
        for i in 0..choices {
            let mut regs = [Gpr::Rax; 3];
            for (slot, reg) in regs.iter_mut().enumerate().take(n) {
                *reg = Gpr::from_number(((i >> (4 * slot)) & 15) as u8);
            }
            ops.push(LardOp::from_operands(kind, regs));
        }
    }
    ops
}

#[test]
fn every_op_and_register_round_trips() {
    let ops = all_ops();
    assert_eq!(ops.len(), 16 + 4 * 256 + 4096);
    let mut seen = std::collections::HashSet::new();
    for op in &ops {
        let bytes = encode(op);
        assert!(
            seen.insert(bytes),
            "two ops share the encoding {bytes:02x?}"
        );
        let d = decode(&bytes, 0x40_1000).unwrap_or_else(|e| panic!("{op}: {e}"));
        assert_eq!(d.kind, DecodedKind::Op(*op));
        assert_eq!((d.ip, d.len), (0x40_1000, OP_LEN));
        let text = format(&d);
        let mut expected = op.kind().mnemonic().to_string();
        for (i, r) in op.operands().iter().enumerate() {
            expected += if i == 0 { " " } else { ", " };
            expected += r.name();
        }
        assert_eq!(text, expected);
    }
}

#[test]
fn every_op_is_a_nop_that_touches_no_memory_on_an_ordinary_cpu() {
    let mut factory = InstructionInfoFactory::new();
    for op in all_ops() {
        let bytes = encode(&op);
        let insn = Decoder::with_ip(64, &bytes, 0, DecoderOptions::NONE).decode();
        assert!(!insn.is_invalid(), "{op}");
        assert_eq!(insn.len(), OP_LEN);
        assert!(
            matches!(insn.mnemonic(), Mnemonic::Nop | Mnemonic::Reservednop),
            "{op}: {:?}",
            insn.code()
        );
        let info = factory.info(&insn);
        assert!(
            info.used_memory()
                .iter()
                .all(|m| m.access() == OpAccess::NoMemAccess),
            "{op} would access memory"
        );
    }
}

#[test]
fn ops_accept_every_register_in_every_slot() {
    // Spot-check the encoding layout against docs/lardx86.md for the three
    // operand slots: ModRM.reg+REX.R, SIB.base+REX.B, SIB.index+REX.X.
    let op = LardOp::CopyHistory {
        src: Gpr::R12,
        dst: Gpr::Rsp,
        len: Gpr::R13,
    };
    assert_eq!(
        encode(&op),
        [0x4E, 0x0F, 0x1F, 0xA4, 0x2C, 0x05, 0x4C, 0x52, 0x44]
    );
    let op = LardOp::Thread { id: Gpr::Rdi };
    assert_eq!(
        encode(&op),
        [0x48, 0x0F, 0x1F, 0xBC, 0x00, 0x01, 0x4C, 0x52, 0x44]
    );
    let op = LardOp::ReadVc {
        dst: Gpr::Rax,
        tid: Gpr::R15,
    };
    assert_eq!(
        encode(&op),
        [0x49, 0x0F, 0x1F, 0x84, 0x07, 0x02, 0x4C, 0x52, 0x44]
    );
}
