use super::*;

/// The cursor answers as a set does, in address order, backwards and
/// past either end.
#[test]
fn leaders_answer_as_a_set_in_any_order() {
    let l = Leaders::new(vec![40, 10, 30, 10, 20]);
    let queries = [
        (5, false),
        (10, true),
        (11, false),
        (20, true),
        (40, true),
        (10, true),
        (25, false),
        (30, true),
        (30, true),
        (41, false),
        (0, false),
        (20, true),
        (99, false),
    ];
    for (pc, want) in queries {
        assert_eq!(l.contains(pc), want, "{pc}");
    }
    assert!(!Leaders::new(Vec::new()).contains(0));
    // Far jumps forward (past the cursor's steps) and back.
    let l = Leaders::new((0..100).map(|i| i * 10).collect());
    for pc in [0, 995, 990, 5, 500, 510, 511, 990, 1000] {
        assert_eq!(l.contains(pc), pc % 10 == 0 && pc < 1000, "{pc}");
    }
}

#[test]
fn ranges_answer_by_containment_in_any_order() {
    let v: Vec<(u64, u64)> = (0..50).map(|i| (i * 100, i * 100 + 10)).collect();
    let r = Ranges::new(&v);
    for pc in [0, 9, 10, 4905, 4910, 105, 99, 100, 2000, 2011, 5000, 0] {
        assert_eq!(r.contains(pc), pc % 100 < 10 && pc < 5000, "{pc}");
    }
    assert!(!Ranges::new(&[]).contains(7));
}

#[test]
fn private_frames_are_pruned_escaping_ones_are_not() {
    // f: push rbx; sub rsp,16; mov [rsp+8],rdi; mov rax,[rsp+8];
    //    mov [rdi],rax; add rsp,16; pop rbx; ret
    let f = [
        0x53, 0x48, 0x83, 0xec, 0x10, 0x48, 0x89, 0x7c, 0x24, 0x08, 0x48, 0x8b, 0x44, 0x24, 0x08,
        0x48, 0x89, 0x07, 0x48, 0x83, 0xc4, 0x10, 0x5b, 0xc3,
    ];
    let p = prune(
        &f,
        0x1000,
        &[(0x1000, 0x1000 + f.len() as u64)],
        &Image::default(),
    );
    assert_eq!((p.by_kind[0], p.by_kind[1]), (3, 2));
    assert!(!p.pcs.contains_key(&0x100f), "the access through rdi stays");
    // g: sub rsp,24; lea rdi,[rsp+8]; mov [rsp+8],rax; call h; add rsp,24; ret
    let g = [
        0x48, 0x83, 0xec, 0x18, 0x48, 0x8d, 0x7c, 0x24, 0x08, 0x48, 0x89, 0x44, 0x24, 0x08, 0xe8,
        0x00, 0x00, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x18, 0xc3,
    ];
    let p = prune(
        &g,
        0x2000,
        &[(0x2000, 0x2000 + g.len() as u64)],
        &Image::default(),
    );
    assert_eq!(p.by_kind[1], 0, "the frame's address escapes");
    assert_eq!(p.by_kind[0], 2);
}

use iced_x86::code_asm::*;

fn assemble(base: u64, f: impl FnOnce(&mut CodeAssembler)) -> Vec<u8> {
    let mut a = CodeAssembler::new(64).unwrap();
    f(&mut a);
    a.assemble(base).unwrap()
}

fn kinds(code: &[u8], base: u64, image: &Image) -> Vec<Option<Pruned>> {
    let p = prune(code, base, &[(base, base + code.len() as u64)], image);
    Decoder::with_ip(64, code, base, DecoderOptions::NONE)
        .into_iter()
        .map(|i| p.pcs.get(&i.ip()).copied())
        .collect()
}

#[test]
fn reads_of_read_only_data_are_pruned_writes_and_other_data_are_not() {
    let base = 0x40_1000;
    let code = assemble(base, |a| {
        a.movsd_2(xmm0, qword_ptr(0x48_b040u64)).unwrap(); // .rodata
        a.mov(rax, qword_ptr(0x4b_b3a0u64)).unwrap(); // .data
        a.mov(qword_ptr(0x48_b040u64), rax).unwrap(); // a write there
        a.mov(rax, qword_ptr(rbx + 8)).unwrap(); // unknown address
        a.ret().unwrap();
    });
    let image = Image {
        readonly: vec![(0x48_b000, 0x48_c000)],
        ..Image::default()
    };
    let got = kinds(&code, base, &image);
    assert_eq!(
        got,
        vec![
            Some(Pruned::ReadOnly),
            None,
            None,
            None,
            Some(Pruned::Frame)
        ]
    );
}

#[test]
fn a_write_makes_the_same_bytes_redundant_until_anything_changes() {
    let base = 0x40_2000;
    let code = assemble(base, |a| {
        a.mov(qword_ptr(rax + rdi * 8), rdx).unwrap(); // x
        a.mov(rdx, qword_ptr(rax + rdi * 8)).unwrap(); // redundant read
        a.add(rdx, rsi).unwrap();
        a.mov(qword_ptr(rax + rdi * 8), rdx).unwrap(); // redundant write
        a.mov(ecx, dword_ptr(rax + rdi * 8)).unwrap(); // other size
        a.mov(qword_ptr(rbx), rcx).unwrap(); // a store elsewhere
        a.mov(rdx, qword_ptr(rax + rdi * 8)).unwrap(); // after it: kept
        a.mov(qword_ptr(rax + rdi * 8), rdx).unwrap(); // x again
        a.add(rdi, 1).unwrap(); // index changes
        a.mov(rdx, qword_ptr(rax + rdi * 8)).unwrap(); // kept
        a.mov(rdx, qword_ptr(rax + rdi * 8)).unwrap(); // read after read: kept
        a.ret().unwrap();
    });
    let got = kinds(&code, base, &Image::default());
    let r = Some(Pruned::Redundant);
    assert_eq!(
        got,
        vec![
            None,
            r,
            None,
            r,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
            Some(Pruned::Frame)
        ]
    );
}

#[test]
fn redundancy_stops_at_leaders_sync_and_far_from_a_block_start() {
    let base = 0x40_3000;
    let code = assemble(base, |a| {
        let mut l = a.create_label();
        a.mov(qword_ptr(rax), rdx).unwrap();
        a.set_label(&mut l).unwrap();
        a.mov(rdx, qword_ptr(rax)).unwrap(); // a branch target: kept
        a.mov(qword_ptr(rax), rdx).unwrap();
        a.lock().add(qword_ptr(rbx), 1).unwrap(); // synchronization
        a.mov(rdx, qword_ptr(rax)).unwrap(); // kept
        a.jne(l).unwrap();
    });
    let got = kinds(&code, base, &Image::default());
    assert_eq!(got, vec![None, None, None, None, None, None]);
    // Past TB_SAFE_INSNS instructions from the block start: kept.
    let code = assemble(base, |a| {
        for _ in 0..TB_SAFE_INSNS {
            a.add(rcx, 1).unwrap();
        }
        a.mov(qword_ptr(rax), rdx).unwrap();
        a.mov(rdx, qword_ptr(rax)).unwrap();
        a.ret().unwrap();
    });
    let got = kinds(&code, base, &Image::default());
    assert!(got.iter().all(|k| *k != Some(Pruned::Redundant)), "{got:?}");
    // Inside a function that jumps through a table: nothing.
    let code = assemble(base, |a| {
        a.mov(qword_ptr(rax), rdx).unwrap();
        a.mov(rdx, qword_ptr(rax)).unwrap();
        a.jmp(rcx).unwrap();
    });
    let image = Image {
        entries: vec![base],
        ..Image::default()
    };
    assert_eq!(kinds(&code, base, &image), vec![None, None, None]);
}

/// Stepping over the kinds the site scan learned changes neither the
/// pruned PCs nor the counts, nor the RMW locations: the C library as
/// code, in pseudo-functions at odd offsets (out of step with its
/// instructions too), with a table the scan of the same bytes taught.
#[test]
fn known_kinds_give_the_same_pruning_and_rmw_locations() {
    let Ok(libc) = std::fs::read("/lib/x86_64-linux-gnu/libc.so.6") else {
        return;
    };
    let base = 0x7f00_0000_0000u64;
    let functions: Vec<(u64, u64)> = (0..libc.len() as u64 - 5000)
        .step_by(2039)
        .map(|o| (base + o, base + o + 1900 + o % 700))
        .collect();
    let image = Image {
        readonly: vec![(base, base + libc.len() as u64 / 2)],
        entries: functions.iter().map(|f| f.0).collect(),
        unstructured: vec![(base + 0x1_0000, base + 0x1_2000)],
    };
    let mut known = lard_isa_ext::KnownLengths::default();
    for &(s, e) in &functions {
        let bytes = &libc[(s - base) as usize..(e - base) as usize];
        let mut sweep = lard_isa_ext::Sweep::new(bytes, s);
        loop {
            sweep.skip_known(&known, u64::MAX);
            if sweep.step_known(&mut known).is_none() {
                break;
            }
        }
    }
    let want = prune(&libc, base, &functions, &image);
    let got = prune_known(&libc, base, &functions, &image, &known);
    assert!(want.memory_insns > 100_000);
    assert_eq!(got.memory_insns, want.memory_insns);
    assert_eq!(got.by_kind, want.by_kind);
    assert_eq!(got.pcs, want.pcs);
    let want = crate::binary::atomics::rmw_locations(&libc, base, &functions);
    let got = crate::binary::atomics::rmw_locations_known(&libc, base, &functions, &known);
    assert!(!want.is_empty());
    assert_eq!(got, want);
}

/// The function the frame-flow cases are built in: `push rbx; sub rsp,
/// 0x40; lea rbx, [rsp+8]; xor ecx, ecx`, the case's body, the probe (a
/// read through `rbx`, indexed by `rcx`), the case's tail, then `add rsp,
/// 0x40; pop rbx; ret` — and whether the probe is pruned.
fn probe_pruned(
    body: impl FnOnce(&mut CodeAssembler),
    tail: impl FnOnce(&mut CodeAssembler),
) -> bool {
    let base = 0x40_1000;
    let code = assemble(base, |a| {
        a.push(rbx).unwrap();
        a.sub(rsp, 0x40).unwrap();
        a.lea(rbx, qword_ptr(rsp + 8)).unwrap();
        a.xor(ecx, ecx).unwrap();
        body(a);
        a.movsd_2(xmm1, qword_ptr(rbx + rcx * 8)).unwrap();
        tail(a);
        a.add(rsp, 0x40).unwrap();
        a.pop(rbx).unwrap();
        a.ret().unwrap();
    });
    let image = Image {
        entries: vec![base, EXTERNAL],
        ..Image::default()
    };
    let p = prune(&code, base, &[(base, base + code.len() as u64)], &image);
    let probe = Decoder::with_ip(64, &code, base, DecoderOptions::NONE)
        .into_iter()
        .find(|i| i.mnemonic() == Mnemonic::Movsd && i.memory_base() == Register::RBX)
        .unwrap();
    match p.pcs.get(&probe.ip()) {
        Some(Pruned::PrivateStack) => true,
        None => false,
        Some(k) => panic!("pruned as {k:?}"),
    }
}

/// A function entry outside the cases' function.
const EXTERNAL: u64 = 0x50_0000;

/// Each way a frame address may leave a function keeps the accesses
/// through it checked; every way of using it inside does not.
#[test]
fn frame_addresses_in_registers_are_followed_until_they_escape() {
    type Asm = fn(&mut CodeAssembler);
    let none: Asm = |_| {};
    let cases: [(&str, Asm, Asm, bool); 21] = [
        ("used in place", none, none, true),
        (
            "walked by an advancing pointer",
            |a| {
                let mut top = a.create_label();
                a.set_label(&mut top).unwrap();
                a.add(rbx, 8).unwrap();
                a.cmp(rbx, rsp).unwrap();
                a.jne(top).unwrap();
            },
            none,
            true,
        ),
        (
            "kept in a callee-saved register across a call",
            |a| {
                a.mov(edi, 5).unwrap();
                a.call(EXTERNAL).unwrap();
            },
            none,
            true,
        ),
        (
            "spilled to a slot and reloaded after a call",
            |a| {
                let mut top = a.create_label();
                a.mov(qword_ptr(rsp + 0x30), rbx).unwrap();
                a.set_label(&mut top).unwrap();
                a.mov(edi, 1).unwrap();
                a.call(EXTERNAL).unwrap();
                a.mov(rbx, qword_ptr(rsp + 0x30)).unwrap();
                a.dec(rcx).unwrap();
                a.jne(top).unwrap();
            },
            none,
            true,
        ),
        (
            "indexing the stack pointer itself",
            |a| a.movsd_2(xmm2, qword_ptr(rsp + rcx * 8 + 8)).unwrap(),
            none,
            true,
        ),
        (
            "cleared by a string instruction",
            |a| {
                a.lea(rdi, qword_ptr(rsp + 16)).unwrap();
                a.mov(ecx, 4).unwrap();
                a.xor(eax, eax).unwrap();
                a.rep().stosq().unwrap();
                a.xor(ecx, ecx).unwrap();
            },
            none,
            true,
        ),
        (
            "stored by a string instruction",
            |a| {
                a.lea(rdi, qword_ptr(0x4b_b3a0u64)).unwrap();
                a.mov(rax, rbx).unwrap();
                a.stosq().unwrap();
            },
            none,
            false,
        ),
        (
            "advanced in its slot, reloaded and passed",
            |a| {
                let mut next = a.create_label();
                a.mov(qword_ptr(rsp + 0x30), rbx).unwrap();
                a.add(qword_ptr(rsp + 0x30), 8).unwrap();
                a.jmp(next).unwrap();
                a.set_label(&mut next).unwrap();
                a.mov(rdi, qword_ptr(rsp + 0x30)).unwrap();
                a.call(EXTERNAL).unwrap();
            },
            none,
            false,
        ),
        (
            "added to in its slot by xadd, reloaded and passed",
            |a| {
                // (A block of its own: no stack argument for the call.)
                let mut next = a.create_label();
                a.mov(qword_ptr(rsp + 0x30), rbx).unwrap();
                a.xor(eax, eax).unwrap();
                a.xadd(qword_ptr(rsp + 0x30), rax).unwrap();
                a.jmp(next).unwrap();
                a.set_label(&mut next).unwrap();
                a.xor(eax, eax).unwrap();
                a.mov(rdi, qword_ptr(rsp + 0x30)).unwrap();
                a.call(EXTERNAL).unwrap();
            },
            none,
            false,
        ),
        (
            "passed as an argument",
            |a| {
                a.mov(rdi, rbx).unwrap();
                a.call(EXTERNAL).unwrap();
            },
            none,
            false,
        ),
        (
            "left in an argument register at a call",
            |a| {
                a.lea(rsi, qword_ptr(rsp + 16)).unwrap();
                a.mov(edi, 5).unwrap();
                a.call(EXTERNAL).unwrap();
            },
            none,
            false,
        ),
        (
            "stored to a global",
            |a| a.mov(qword_ptr(0x4b_b3a0u64), rbx).unwrap(),
            none,
            false,
        ),
        (
            "stored as a stack argument",
            |a| {
                a.mov(qword_ptr(rsp), rbx).unwrap();
                a.call(EXTERNAL).unwrap();
            },
            none,
            false,
        ),
        (
            "pushed before a call",
            |a| {
                a.push(rbx).unwrap();
                a.call(EXTERNAL).unwrap();
                a.add(rsp, 8).unwrap();
            },
            none,
            false,
        ),
        (
            "moved to a vector register",
            |a| a.movq(xmm0, rbx).unwrap(),
            none,
            false,
        ),
        ("returned", none, |a| a.mov(rax, rbx).unwrap(), false),
        (
            "exchanged with memory",
            |a| a.xchg(qword_ptr(rdx), rbx).unwrap(),
            none,
            false,
        ),
        (
            "given to a system call",
            |a| {
                a.mov(rsi, rbx).unwrap();
                a.syscall().unwrap();
            },
            none,
            false,
        ),
        (
            "taken along by a tail call",
            none,
            |a| {
                a.mov(rdi, rbx).unwrap();
                a.add(rsp, 0x40).unwrap();
                a.pop(rbx).unwrap();
                a.jmp(EXTERNAL).unwrap();
            },
            false,
        ),
        (
            "maybe a heap pointer (conditional move)",
            |a| {
                a.mov(rdx, qword_ptr(0x4b_b3a0u64)).unwrap();
                a.test(ecx, ecx).unwrap();
                a.cmovne(rbx, rdx).unwrap();
            },
            none,
            false,
        ),
        (
            "masked (no longer an address into the frame)",
            |a| a.and(rbx, -16).unwrap(),
            none,
            false,
        ),
    ];
    for (name, body, tail, want) in cases {
        assert_eq!(probe_pruned(body, tail), want, "{name}");
    }
}

/// A `.cold` partition (jumped to, never called) shares its parent's
/// frame: an escape in either keeps both frames' accesses checked.
#[test]
fn a_partition_and_its_parent_share_a_frame() {
    let base = 0x40_1000;
    let cold = base + 0x100;
    let code = assemble(base, |a| {
        a.sub(rsp, 0x18).unwrap();
        a.mov(qword_ptr(rsp + 8), rax).unwrap();
        a.test(eax, eax).unwrap();
        a.jne(cold).unwrap();
        a.add(rsp, 0x18).unwrap();
        a.ret().unwrap();
        a.zero_bytes().unwrap();
    });
    let mut code = code;
    code.resize(0x100, 0xcc);
    code.extend(assemble(cold, |a| {
        a.lea(rdi, qword_ptr(rsp + 8)).unwrap();
        a.call(EXTERNAL).unwrap();
        a.ud2().unwrap();
    }));
    let functions = [(base, base + 0x20), (cold, base + code.len() as u64)];
    let image = Image {
        entries: vec![base, cold, EXTERNAL],
        ..Image::default()
    };
    let p = prune(&code, base, &functions, &image);
    assert_eq!(p.by_kind[Pruned::PrivateStack.index()], 0);
    // The same parent without the jump keeps its frame private.
    let alone = assemble(base, |a| {
        a.sub(rsp, 0x18).unwrap();
        a.mov(qword_ptr(rsp + 8), rax).unwrap();
        a.add(rsp, 0x18).unwrap();
        a.ret().unwrap();
    });
    let p = prune(&alone, base, &[(base, base + alone.len() as u64)], &image);
    assert_eq!(p.by_kind[Pruned::PrivateStack.index()], 1);
}
