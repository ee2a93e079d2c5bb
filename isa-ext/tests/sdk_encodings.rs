//! The guest-side encodings cannot drift from `isa-ext`: every op × every
//! register choice is assembled with the SDK's GNU as macros
//! (`guest-sdk/include/lardx86.inc`), and with the C header's inline asm
//! (`guest-sdk/include/lard.h`), and the bytes must equal [`encode`].

use lard_isa_ext::{decode, encode, DecodedKind, Gpr, LardOp, OpKind};
use std::path::{Path, PathBuf};
use std::process::Command;

fn sdk_include() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest-sdk/include")
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Assembles or compiles `src` with gcc and returns the raw `.text` bytes.
fn text_bytes(name: &str, src: &str, ext: &str) -> Vec<u8> {
    let dir = out_dir(name);
    let source = dir.join(format!("{name}.{ext}"));
    std::fs::write(&source, src).unwrap();
    let obj = dir.join(format!("{name}.o"));
    let bin = dir.join(format!("{name}.bin"));
    let st = Command::new("gcc")
        .args(["-c", "-O2", "-I"])
        .arg(sdk_include())
        .arg("-o")
        .arg(&obj)
        .arg(&source)
        .status()
        .expect("gcc must be installed (make test installs it)");
    assert!(st.success(), "gcc failed on {}", source.display());
    let st = Command::new("objcopy")
        .args(["-O", "binary", "-j", ".text"])
        .arg(&obj)
        .arg(&bin)
        .status()
        .expect("objcopy (binutils) must be installed");
    assert!(st.success());
    std::fs::read(bin).unwrap()
}

fn all_ops() -> Vec<LardOp> {
    let mut ops = Vec::new();
    for kind in OpKind::ALL {
        let n = kind.operand_count();
        for i in 0..16usize.pow(n as u32) {
            let mut regs = [Gpr::Rax; 3];
            for (slot, r) in regs.iter_mut().enumerate().take(n) {
                *r = Gpr::from_number(((i >> (4 * slot)) & 15) as u8);
            }
            ops.push(LardOp::from_operands(kind, regs));
        }
    }
    ops
}

fn macro_name(kind: OpKind) -> &'static str {
    match kind {
        OpKind::Thread => "lard_thread",
        OpKind::ReadVc => "lard_readvc",
        OpKind::WriteVc => "lard_writevc",
        OpKind::ClearHistory => "lard_clearhistory",
        OpKind::CopyHistory => "lard_copyhistory",
        OpKind::FloorVc => "lard_floorvc",
    }
}

#[test]
fn gas_macros_encode_every_op_and_register_as_isa_ext_does() {
    let ops = all_ops();
    let mut src = String::from(".include \"lardx86.inc\"\n.text\n");
    for (i, op) in ops.iter().enumerate() {
        // Alternate the two register spellings the macros accept.
        let regs: Vec<String> = op
            .operands()
            .iter()
            .map(|r| {
                if i % 2 == 0 {
                    format!("%{r}")
                } else {
                    r.to_string()
                }
            })
            .collect();
        src += &format!("{} {}\n", macro_name(op.kind()), regs.join(", "));
    }
    src += "lard_tracked movl %eax, (%rbx)\nlard_tracked movq 8(%rdi), %r11\n";
    let bytes = text_bytes("gas_macros", &src, "S");
    let expected: Vec<u8> = ops.iter().flat_map(encode).collect();
    assert_eq!(
        &bytes[..expected.len()],
        &expected[..],
        "macro encodings differ from isa-ext"
    );
    let rest = &bytes[expected.len()..];
    let a = decode(rest, 0).unwrap();
    assert!(matches!(a.kind, DecodedKind::Tracked(_)), "{a:?}");
    let b = decode(&rest[a.len..], 0).unwrap();
    assert!(matches!(b.kind, DecodedKind::Tracked(_)), "{b:?}");
    assert_eq!(a.len + b.len, rest.len());
}

#[test]
fn c_header_emits_the_ops_isa_ext_decodes() {
    // Each function pins its arguments in the ABI registers, so the header's
    // register choice is visible; the decoded op kinds must appear in order.
    let src = r#"
#include <lard.h>
void t_thread(uint64_t id) { lard_thread(id); }
uint64_t t_read(uint64_t tid) { return lard_read_vc(tid); }
void t_write(uint64_t tid, uint64_t v) { lard_write_vc(tid, v); }
void t_clear(void *p) { lard_clear_history(p, 64); }
void t_copy(const void *s, void *d) { lard_copy_history(s, d, 64); }
uint64_t t_floor(uint64_t tid, uint64_t v) { return lard_floor_vc(tid, v); }
uint32_t t_load(const void *p) { return lard_load32(p); }
void t_store(void *p, uint64_t v) { lard_store64(p, v); }
"#;
    let bytes = text_bytes("c_header", src, "c");
    let mut kinds = Vec::new();
    let mut tracked = 0;
    for s in lard_isa_ext::Sweep::new(&bytes, 0) {
        match s.result {
            Ok(d) => match d.kind {
                DecodedKind::Op(op) => kinds.push(op.kind()),
                DecodedKind::Tracked(_) => tracked += 1,
                DecodedKind::Plain(_) => {}
            },
            Err(e) => panic!("lard.h produced undecodable bytes at {:#x}: {e}", s.ip),
        }
    }
    for k in OpKind::ALL {
        assert!(
            kinds.contains(&k),
            "{k:?} missing from lard.h output: {kinds:?}"
        );
    }
    assert_eq!(
        tracked, 2,
        "one Tracked instruction per lard_load32/lard_store64"
    );
}
