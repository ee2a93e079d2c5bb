//! Tracked accesses: a table of memory instructions of every family the spec
//! names, each encoded with the prefix, decoded back and formatted.

use iced_x86::code_asm::*;
use iced_x86::{Decoder, DecoderOptions, Instruction};
use lard_isa_ext::{decode, encode_tracked, format, DecodedKind, EncodeError, LardFault};

fn assemble(build: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> Instruction {
    let mut a = CodeAssembler::new(64).unwrap();
    build(&mut a).unwrap();
    let bytes = a.assemble(0x1000).unwrap();
    Decoder::with_ip(64, &bytes, 0x1000, DecoderOptions::NONE).decode()
}

type Build = fn(&mut CodeAssembler) -> Result<(), IcedError>;

const TABLE: &[(&str, Build)] = &[
    ("mov dword ptr [rbx], eax", |a| a.mov(dword_ptr(rbx), eax)),
    ("mov rax, qword ptr [rdi+8]", |a| {
        a.mov(rax, qword_ptr(rdi + 8))
    }),
    ("mov byte ptr [r12+r13*4+0x10], cl", |a| {
        a.mov(byte_ptr(r12 + r13 * 4 + 0x10), cl)
    }),
    ("mov word ptr [rsi], dx", |a| a.mov(word_ptr(rsi), dx)),
    ("mov qword ptr [rbp-8], 0x2a", |a| {
        a.mov(qword_ptr(rbp - 8), 42)
    }),
    ("movzx eax, byte ptr [rdi]", |a| a.movzx(eax, byte_ptr(rdi))),
    ("movsx rax, word ptr [rdi]", |a| a.movsx(rax, word_ptr(rdi))),
    ("movsxd rax, dword ptr [rdi]", |a| {
        a.movsxd(rax, dword_ptr(rdi))
    }),
    ("add dword ptr [rdi], 1", |a| a.add(dword_ptr(rdi), 1)),
    ("sub qword ptr [rdi], rax", |a| a.sub(qword_ptr(rdi), rax)),
    ("or byte ptr [rdi], 0x80", |a| a.or(byte_ptr(rdi), 0x80)),
    ("inc qword ptr [r15]", |a| a.inc(qword_ptr(r15))),
    ("cmp dword ptr [rdi], eax", |a| a.cmp(dword_ptr(rdi), eax)),
    ("xchg qword ptr [rdi], rax", |a| a.xchg(qword_ptr(rdi), rax)),
    ("lock cmpxchg qword ptr [rdi], rcx", |a| {
        a.lock().cmpxchg(qword_ptr(rdi), rcx)
    }),
    ("lock xadd dword ptr [rdi], eax", |a| {
        a.lock().xadd(dword_ptr(rdi), eax)
    }),
    ("movdqu xmm0, xmmword ptr [rsi]", |a| {
        a.movdqu(xmm0, xmmword_ptr(rsi))
    }),
    ("movaps xmmword ptr [rdi], xmm1", |a| {
        a.movaps(xmmword_ptr(rdi), xmm1)
    }),
    ("movss xmm2, dword ptr [rax]", |a| {
        a.movss(xmm2, dword_ptr(rax))
    }),
    ("movsd qword ptr [rax], xmm3", |a| {
        a.movsd_2(qword_ptr(rax), xmm3)
    }),
    ("movq xmm0, qword ptr [rdi]", |a| {
        a.movq(xmm0, qword_ptr(rdi))
    }),
    ("vmovdqu ymm0, ymmword ptr [rsi]", |a| {
        a.vmovdqu(ymm0, ymmword_ptr(rsi))
    }),
    ("movsb byte ptr [rdi], byte ptr [rsi]", |a| a.movsb()),
    ("rep stosq qword ptr [rdi]", |a| a.rep().stosq()),
    ("mov eax, dword ptr [0x1106]", |a| {
        a.mov(eax, dword_ptr(0x1106u64))
    }),
    ("jmp qword ptr [rax]", |a| a.jmp(qword_ptr(rax))),
];

#[test]
fn tracked_table_round_trips() {
    for (text, build) in TABLE {
        let insn = assemble(*build);
        let bytes = encode_tracked(&insn, 0x2000).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(bytes[0], 0x36);
        let d = decode(&bytes, 0x2000).unwrap_or_else(|e| panic!("{text}: {e}"));
        let DecodedKind::Tracked(inner) = d.kind else {
            panic!("{text}: not tracked: {d:?}")
        };
        assert_eq!((d.ip, d.len), (0x2000, bytes.len()), "{text}");
        assert_eq!(inner.code(), insn.code(), "{text}");
        assert_eq!(inner.memory_base(), insn.memory_base(), "{text}");
        assert_eq!(inner.memory_index(), insn.memory_index(), "{text}");
        assert_eq!(format(&d), format!("tracked {text}"));
        // Without the prefix, the same bytes are the plain instruction.
        let plain = decode(&bytes[1..], 0x2001).unwrap();
        assert!(matches!(plain.kind, DecodedKind::Plain(_)), "{text}");
    }
}

#[test]
fn rip_relative_targets_are_kept_when_the_prefix_is_added() {
    let insn = assemble(|a| a.mov(eax, dword_ptr(0x5000u64)));
    let bytes = encode_tracked(&insn, 0x3000).unwrap();
    let d = decode(&bytes, 0x3000).unwrap();
    assert_eq!(d.instruction().unwrap().memory_displacement64(), 0x5000);
}

#[test]
fn tracked_without_a_data_access_is_refused() {
    let cases: &[(&str, Build)] = &[
        ("register mov", |a| a.mov(rax, rbx)),
        ("lea", |a| a.lea(rax, qword_ptr(rdi + 8))),
        ("nop with memory", |a| a.nop_1(dword_ptr(rax))),
        ("push", |a| a.push(rax)),
        ("push memory", |a| a.push(qword_ptr(rax))),
        ("call memory", |a| a.call(qword_ptr(rax))),
        ("prefetch", |a| a.prefetcht0(byte_ptr(rax))),
        ("ret", |a| a.ret()),
    ];
    for (what, build) in cases {
        let insn = assemble(*build);
        assert_eq!(
            encode_tracked(&insn, 0),
            Err(EncodeError::Fault(LardFault::TrackedWithoutAccess)),
            "{what}"
        );
        let mut bytes = vec![0x36];
        let mut enc = iced_x86::Encoder::new(64);
        enc.encode(&insn, 1).unwrap();
        bytes.extend(enc.take_buffer());
        match decode(&bytes, 0) {
            Err(lard_isa_ext::DecodeError::Fault { fault, len }) => {
                assert_eq!(fault, LardFault::TrackedWithoutAccess, "{what}");
                assert_eq!(len, bytes.len(), "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}
