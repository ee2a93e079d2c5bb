//! The registers gdb sees: x86-64 Linux (`org.gnu.gdb.i386.core`, `.sse`,
//! `.linux` with `orig_rax`, `.segments` with `fs_base`/`gs_base`), in the
//! order of the target description lard sends, and their transfer to and
//! from a guest thread's saved context.

use crate::cpu::uc::{Context, Reg};
use gdbstub::arch::{Arch, Registers};

/// The architecture lard describes to gdb.
pub enum LardX86_64 {}

impl Arch for LardX86_64 {
    type Usize = u64;
    type Registers = Regs;
    type BreakpointKind = usize;
    type RegId = ();

    fn target_description_xml() -> Option<&'static str> {
        Some(TARGET_XML)
    }
}

/// Every register of one thread, in target-description order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Regs {
    /// rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp, r8..r15 (gdb's order).
    pub gpr: [u64; 16],
    /// rip.
    pub rip: u64,
    /// eflags.
    pub eflags: u32,
    /// cs, ss, ds, es, fs, gs.
    pub seg: [u32; 6],
    /// st0..st7, 10 bytes each.
    pub st: [[u8; 10]; 8],
    /// fctrl, fstat, ftag, fiseg, fioff, foseg, fooff, fop.
    pub fpu: [u32; 8],
    /// xmm0..xmm15.
    pub xmm: [[u8; 16]; 16],
    /// mxcsr.
    pub mxcsr: u32,
    /// orig_rax (-1: not in a system call).
    pub orig_rax: u64,
    /// fs_base.
    pub fs_base: u64,
    /// gs_base.
    pub gs_base: u64,
}

/// gdb's order of the general-purpose registers.
const GPR: [Reg; 16] = [
    Reg::RAX,
    Reg::RBX,
    Reg::RCX,
    Reg::RDX,
    Reg::RSI,
    Reg::RDI,
    Reg::RBP,
    Reg::RSP,
    Reg::R8,
    Reg::R9,
    Reg::R10,
    Reg::R11,
    Reg::R12,
    Reg::R13,
    Reg::R14,
    Reg::R15,
];
const SEG: [Reg; 6] = [Reg::CS, Reg::SS, Reg::DS, Reg::ES, Reg::FS, Reg::GS];
const ST: [Reg; 8] = [
    Reg::FP0,
    Reg::FP1,
    Reg::FP2,
    Reg::FP3,
    Reg::FP4,
    Reg::FP5,
    Reg::FP6,
    Reg::FP7,
];
/// The x87 control registers as unicorn names them (fiseg/foseg: FCS/FDS).
const FPU: [Reg; 8] = [
    Reg::FPCW,
    Reg::FPSW,
    Reg::FPTAG,
    Reg::FCS,
    Reg::FIP,
    Reg::FDS,
    Reg::FDP,
    Reg::FOP,
];
const XMM: [Reg; 16] = [
    Reg::XMM0,
    Reg::XMM1,
    Reg::XMM2,
    Reg::XMM3,
    Reg::XMM4,
    Reg::XMM5,
    Reg::XMM6,
    Reg::XMM7,
    Reg::XMM8,
    Reg::XMM9,
    Reg::XMM10,
    Reg::XMM11,
    Reg::XMM12,
    Reg::XMM13,
    Reg::XMM14,
    Reg::XMM15,
];

/// Where a thread's registers are: the CPU (the live thread) or a context.
pub trait RegFile {
    /// Reads `r` (up to 16 bytes, little-endian, zero-filled).
    fn get(&self, r: Reg) -> [u8; 16];
    /// Writes `r`.
    fn put(&mut self, r: Reg, v: &[u8; 16]);
}

impl RegFile for Context {
    fn get(&self, r: Reg) -> [u8; 16] {
        let mut b = [0u8; 16];
        self.reg_bytes(r, &mut b);
        b
    }
    fn put(&mut self, r: Reg, v: &[u8; 16]) {
        self.set_reg_bytes(r, v);
    }
}

fn u64_of(b: [u8; 16]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

fn wide(v: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&v.to_le_bytes());
    b
}

impl Regs {
    /// Reads every register from `f`; `orig_rax` is the thread's (lard
    /// keeps none: -1, not in a system call, unless gdb wrote one).
    pub fn load(f: &dyn RegFile, orig_rax: u64) -> Regs {
        let mut r = Regs {
            orig_rax,
            ..Regs::default()
        };
        for (d, &g) in r.gpr.iter_mut().zip(&GPR) {
            *d = u64_of(f.get(g));
        }
        r.rip = u64_of(f.get(Reg::RIP));
        r.eflags = u64_of(f.get(Reg::EFLAGS)) as u32;
        for (d, &g) in r.seg.iter_mut().zip(&SEG) {
            *d = u64_of(f.get(g)) as u32;
        }
        for (d, &g) in r.st.iter_mut().zip(&ST) {
            d.copy_from_slice(&f.get(g)[..10]);
        }
        for (d, &g) in r.fpu.iter_mut().zip(&FPU) {
            *d = u64_of(f.get(g)) as u32;
        }
        for (d, &g) in r.xmm.iter_mut().zip(&XMM) {
            *d = f.get(g);
        }
        r.mxcsr = u64_of(f.get(Reg::MXCSR)) as u32;
        r.fs_base = u64_of(f.get(Reg::FS_BASE));
        r.gs_base = u64_of(f.get(Reg::GS_BASE));
        r
    }

    /// Writes the registers a user-mode program can change into `f`
    /// (general-purpose, rip, eflags, x87 data and control word, SSE,
    /// fs_base, gs_base; not the segment selectors).
    pub fn store(&self, f: &mut dyn RegFile) {
        for (&v, &g) in self.gpr.iter().zip(&GPR) {
            f.put(g, &wide(v));
        }
        f.put(Reg::RIP, &wide(self.rip));
        f.put(Reg::EFLAGS, &wide(u64::from(self.eflags)));
        for (v, &g) in self.st.iter().zip(&ST) {
            let mut b = [0u8; 16];
            b[..10].copy_from_slice(v);
            f.put(g, &b);
        }
        f.put(Reg::FPCW, &wide(u64::from(self.fpu[0])));
        for (v, &g) in self.xmm.iter().zip(&XMM) {
            f.put(g, v);
        }
        f.put(Reg::MXCSR, &wide(u64::from(self.mxcsr)));
        f.put(Reg::FS_BASE, &wide(self.fs_base));
        f.put(Reg::GS_BASE, &wide(self.gs_base));
    }
}

impl Registers for Regs {
    type ProgramCounter = u64;

    fn pc(&self) -> u64 {
        self.rip
    }

    fn gdb_serialize(&self, mut write_byte: impl FnMut(Option<u8>)) {
        let mut put = |b: &[u8]| b.iter().for_each(|&x| write_byte(Some(x)));
        for v in &self.gpr {
            put(&v.to_le_bytes());
        }
        put(&self.rip.to_le_bytes());
        put(&self.eflags.to_le_bytes());
        for v in &self.seg {
            put(&v.to_le_bytes());
        }
        for v in &self.st {
            put(v);
        }
        for v in &self.fpu {
            put(&v.to_le_bytes());
        }
        for v in &self.xmm {
            put(v);
        }
        put(&self.mxcsr.to_le_bytes());
        put(&self.orig_rax.to_le_bytes());
        put(&self.fs_base.to_le_bytes());
        put(&self.gs_base.to_le_bytes());
    }

    fn gdb_deserialize(&mut self, bytes: &[u8]) -> Result<(), ()> {
        let mut rd = Reader(bytes);
        for v in &mut self.gpr {
            *v = u64::from_le_bytes(rd.take()?);
        }
        self.rip = u64::from_le_bytes(rd.take()?);
        self.eflags = u32::from_le_bytes(rd.take()?);
        for v in &mut self.seg {
            *v = u32::from_le_bytes(rd.take()?);
        }
        for v in &mut self.st {
            *v = rd.take()?;
        }
        for v in &mut self.fpu {
            *v = u32::from_le_bytes(rd.take()?);
        }
        for v in &mut self.xmm {
            *v = rd.take()?;
        }
        self.mxcsr = u32::from_le_bytes(rd.take()?);
        self.orig_rax = u64::from_le_bytes(rd.take()?);
        self.fs_base = u64::from_le_bytes(rd.take()?);
        self.gs_base = u64::from_le_bytes(rd.take()?);
        Ok(())
    }
}

/// Takes fixed-size fields off the front of a `G` packet's bytes.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], ()> {
        if self.0.len() < N {
            return Err(());
        }
        let (a, b) = self.0.split_at(N);
        self.0 = b;
        a.try_into().map_err(|_| ())
    }
}

/// The target description: gdb's amd64 Linux features, numbered in the
/// order [`Regs`] serializes them.
pub const TARGET_XML: &str = r#"<?xml version="1.0"?>
<!DOCTYPE target SYSTEM "gdb-target.dtd">
<target version="1.0">
  <architecture>i386:x86-64</architecture>
  <osabi>GNU/Linux</osabi>
  <feature name="org.gnu.gdb.i386.core">
    <flags id="i386_eflags" size="4">
      <field name="CF" start="0" end="0"/>
      <field name="" start="1" end="1"/>
      <field name="PF" start="2" end="2"/>
      <field name="AF" start="4" end="4"/>
      <field name="ZF" start="6" end="6"/>
      <field name="SF" start="7" end="7"/>
      <field name="TF" start="8" end="8"/>
      <field name="IF" start="9" end="9"/>
      <field name="DF" start="10" end="10"/>
      <field name="OF" start="11" end="11"/>
      <field name="NT" start="14" end="14"/>
      <field name="RF" start="16" end="16"/>
      <field name="VM" start="17" end="17"/>
      <field name="AC" start="18" end="18"/>
      <field name="VIF" start="19" end="19"/>
      <field name="VIP" start="20" end="20"/>
      <field name="ID" start="21" end="21"/>
    </flags>
    <reg name="rax" bitsize="64" type="int64" regnum="0"/>
    <reg name="rbx" bitsize="64" type="int64"/>
    <reg name="rcx" bitsize="64" type="int64"/>
    <reg name="rdx" bitsize="64" type="int64"/>
    <reg name="rsi" bitsize="64" type="int64"/>
    <reg name="rdi" bitsize="64" type="int64"/>
    <reg name="rbp" bitsize="64" type="data_ptr"/>
    <reg name="rsp" bitsize="64" type="data_ptr"/>
    <reg name="r8" bitsize="64" type="int64"/>
    <reg name="r9" bitsize="64" type="int64"/>
    <reg name="r10" bitsize="64" type="int64"/>
    <reg name="r11" bitsize="64" type="int64"/>
    <reg name="r12" bitsize="64" type="int64"/>
    <reg name="r13" bitsize="64" type="int64"/>
    <reg name="r14" bitsize="64" type="int64"/>
    <reg name="r15" bitsize="64" type="int64"/>
    <reg name="rip" bitsize="64" type="code_ptr"/>
    <reg name="eflags" bitsize="32" type="i386_eflags"/>
    <reg name="cs" bitsize="32" type="int32"/>
    <reg name="ss" bitsize="32" type="int32"/>
    <reg name="ds" bitsize="32" type="int32"/>
    <reg name="es" bitsize="32" type="int32"/>
    <reg name="fs" bitsize="32" type="int32"/>
    <reg name="gs" bitsize="32" type="int32"/>
    <reg name="st0" bitsize="80" type="i387_ext"/>
    <reg name="st1" bitsize="80" type="i387_ext"/>
    <reg name="st2" bitsize="80" type="i387_ext"/>
    <reg name="st3" bitsize="80" type="i387_ext"/>
    <reg name="st4" bitsize="80" type="i387_ext"/>
    <reg name="st5" bitsize="80" type="i387_ext"/>
    <reg name="st6" bitsize="80" type="i387_ext"/>
    <reg name="st7" bitsize="80" type="i387_ext"/>
    <reg name="fctrl" bitsize="32" type="int" group="float"/>
    <reg name="fstat" bitsize="32" type="int" group="float"/>
    <reg name="ftag" bitsize="32" type="int" group="float"/>
    <reg name="fiseg" bitsize="32" type="int" group="float"/>
    <reg name="fioff" bitsize="32" type="int" group="float"/>
    <reg name="foseg" bitsize="32" type="int" group="float"/>
    <reg name="fooff" bitsize="32" type="int" group="float"/>
    <reg name="fop" bitsize="32" type="int" group="float"/>
  </feature>
  <feature name="org.gnu.gdb.i386.sse">
    <vector id="v8bf16" type="bfloat16" count="8"/>
    <vector id="v4f" type="ieee_single" count="4"/>
    <vector id="v2d" type="ieee_double" count="2"/>
    <vector id="v16i8" type="int8" count="16"/>
    <vector id="v8i16" type="int16" count="8"/>
    <vector id="v4i32" type="int32" count="4"/>
    <vector id="v2i64" type="int64" count="2"/>
    <union id="vec128">
      <field name="v8_bfloat16" type="v8bf16"/>
      <field name="v4_float" type="v4f"/>
      <field name="v2_double" type="v2d"/>
      <field name="v16_int8" type="v16i8"/>
      <field name="v8_int16" type="v8i16"/>
      <field name="v4_int32" type="v4i32"/>
      <field name="v2_int64" type="v2i64"/>
      <field name="uint128" type="uint128"/>
    </union>
    <flags id="i386_mxcsr" size="4">
      <field name="IE" start="0" end="0"/>
      <field name="DE" start="1" end="1"/>
      <field name="ZE" start="2" end="2"/>
      <field name="OE" start="3" end="3"/>
      <field name="UE" start="4" end="4"/>
      <field name="PE" start="5" end="5"/>
      <field name="DAZ" start="6" end="6"/>
      <field name="IM" start="7" end="7"/>
      <field name="DM" start="8" end="8"/>
      <field name="ZM" start="9" end="9"/>
      <field name="OM" start="10" end="10"/>
      <field name="UM" start="11" end="11"/>
      <field name="PM" start="12" end="12"/>
      <field name="FZ" start="15" end="15"/>
    </flags>
    <reg name="xmm0" bitsize="128" type="vec128" regnum="40"/>
    <reg name="xmm1" bitsize="128" type="vec128"/>
    <reg name="xmm2" bitsize="128" type="vec128"/>
    <reg name="xmm3" bitsize="128" type="vec128"/>
    <reg name="xmm4" bitsize="128" type="vec128"/>
    <reg name="xmm5" bitsize="128" type="vec128"/>
    <reg name="xmm6" bitsize="128" type="vec128"/>
    <reg name="xmm7" bitsize="128" type="vec128"/>
    <reg name="xmm8" bitsize="128" type="vec128"/>
    <reg name="xmm9" bitsize="128" type="vec128"/>
    <reg name="xmm10" bitsize="128" type="vec128"/>
    <reg name="xmm11" bitsize="128" type="vec128"/>
    <reg name="xmm12" bitsize="128" type="vec128"/>
    <reg name="xmm13" bitsize="128" type="vec128"/>
    <reg name="xmm14" bitsize="128" type="vec128"/>
    <reg name="xmm15" bitsize="128" type="vec128"/>
    <reg name="mxcsr" bitsize="32" type="i386_mxcsr" group="vector"/>
  </feature>
  <feature name="org.gnu.gdb.i386.linux">
    <reg name="orig_rax" bitsize="64" type="int" regnum="57"/>
  </feature>
  <feature name="org.gnu.gdb.i386.segments">
    <reg name="fs_base" bitsize="64" type="int"/>
    <reg name="gs_base" bitsize="64" type="int"/>
  </feature>
</target>
"#;

impl RegFile for crate::cpu::uc::UcRef {
    fn get(&self, r: Reg) -> [u8; 16] {
        let mut b = [0u8; 16];
        self.reg_bytes(r, &mut b);
        b
    }
    fn put(&mut self, r: Reg, v: &[u8; 16]) {
        self.set_reg_bytes(r, v);
    }
}
