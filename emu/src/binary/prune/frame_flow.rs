//! The flow-sensitive private-stack analysis (HardRace §4.1): which
//! registers hold addresses into the function's own frame, instruction by
//! instruction, so that a frame whose address is taken (`lea rax,
//! [rsp+0x80]`, an array walked through a pointer, a pointer spilled to a
//! slot and reloaded) but never leaves the function is still private.
//!
//! A forward data-flow pass over the function's control flow keeps, per
//! general-purpose register, whether it *may* hold a frame address (for
//! the escape check), whether it *must* (derived from the stack pointer by
//! adding offsets and indices: accesses through it are pruned), and its
//! value relative to the stack pointer at entry when known (to follow
//! spill slots). The frame escapes when a value that may be a frame
//! address is stored anywhere but a slot of the frame, handed to a callee
//! (a caller-saved register at a call, a slot stored in the call's block
//! — a stack argument), returned, moved to a non-general register or used
//! in any instruction the analysis does not model. A function whose frame
//! never escapes has every access through a *must* register pruned.
//!
//! The pass relies on what every compiled function does (the System V
//! ABI; docs/binary-mode.md): callee-saved registers are only saved and
//! restored by callees, a stack argument is stored in the block of its
//! call, and an access through a pointer derived from a frame address
//! stays inside the object it points to (C's rule; ThreadSanitizer's
//! capture analysis skips such non-escaping locals the same way).

use iced_x86::{FlowControl, Instruction, Mnemonic, OpKind, Register};
use lard_isa_ext::reg::Gpr;

/// Callee-saved registers (System V): rbx, rbp, r12–r15.
const CALLEE_SAVED: u16 = 1 << 3 | 1 << 5 | 0xf000;
/// The stack pointer's bit.
const RSP: u16 = 1 << 4;
/// The return value registers: rax and rdx.
const RETURNED: u16 = 1 | 1 << 2;
/// Registers a callee may read as arguments: rdi, rsi, rdx, rcx, r8, r9
/// and the static chain r10 (rax only counts vector arguments, r11 is
/// scratch).
const ARGUMENTS: u16 = 1 << 7 | 1 << 6 | 1 << 2 | 1 << 1 | 1 << 8 | 1 << 9 | 1 << 10;

fn is_cmov(m: Mnemonic) -> bool {
    matches!(
        m,
        Mnemonic::Cmovb
            | Mnemonic::Cmovbe
            | Mnemonic::Cmovl
            | Mnemonic::Cmovle
            | Mnemonic::Cmovae
            | Mnemonic::Cmova
            | Mnemonic::Cmovge
            | Mnemonic::Cmovg
            | Mnemonic::Cmove
            | Mnemonic::Cmovne
            | Mnemonic::Cmovs
            | Mnemonic::Cmovns
            | Mnemonic::Cmovo
            | Mnemonic::Cmovno
            | Mnemonic::Cmovp
            | Mnemonic::Cmovnp
    )
}

/// Bit of a general-purpose register's full register (rax 0 … r15 15).
fn bit(r: Register) -> u16 {
    if r.is_gpr() {
        1 << r.full_register().number()
    } else {
        0
    }
}

fn index(r: Register) -> usize {
    r.full_register().number()
}

/// Whether a write of `r` replaces the whole 64-bit register (32-bit
/// writes zero-extend; 8- and 16-bit writes keep the rest).
fn whole(r: Register) -> bool {
    r.is_gpr64() || r.is_gpr32()
}

/// What is known before an instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    /// Registers that may hold a frame address.
    may: u16,
    /// Registers that hold an address derived from the stack pointer.
    must: u16,
    /// Register values relative to the stack pointer at entry.
    off: [Option<i64>; 16],
    /// 8-byte frame slots (offsets from the entry stack pointer) that may
    /// hold a frame address, and whether they must.
    slots: Vec<(i64, bool)>,
    /// A slot was given a frame address in this block since the last call:
    /// it may be the next call's stack argument.
    fresh: bool,
}

impl State {
    fn entry() -> State {
        let mut off = [None; 16];
        off[4] = Some(0);
        State {
            may: RSP,
            must: RSP,
            off,
            slots: Vec::new(),
            fresh: false,
        }
    }

    /// The least state both paths satisfy.
    fn join(&self, other: &State) -> State {
        let mut off = [None; 16];
        for (n, o) in off.iter_mut().enumerate() {
            if self.off[n] == other.off[n] {
                *o = self.off[n];
            }
        }
        let mut slots = Vec::new();
        for &(at, must) in &self.slots {
            let theirs = other.slots.iter().find(|s| s.0 == at).map(|s| s.1);
            slots.push((at, must && theirs == Some(true)));
        }
        for &(at, _) in &other.slots {
            if !self.slots.iter().any(|s| s.0 == at) {
                slots.push((at, false));
            }
        }
        slots.sort_unstable();
        State {
            may: self.may | other.may,
            must: self.must & other.must,
            off,
            slots,
            fresh: self.fresh || other.fresh,
        }
    }

    fn set(&mut self, r: Register, may: bool, must: bool, off: Option<i64>) {
        let b = bit(r);
        if b == 0 {
            return;
        }
        if whole(r) {
            self.may = if may { self.may | b } else { self.may & !b };
        } else if may {
            self.may |= b;
        }
        let keep_must = must && r.is_gpr64();
        self.must = if keep_must {
            self.must | b
        } else {
            self.must & !b
        };
        self.off[index(r)] = if r.is_gpr64() { off } else { None };
        if b == RSP {
            // The stack pointer stays in the frame whatever it is set to.
            self.may |= RSP;
            self.must |= RSP;
        }
    }

    fn may(&self, r: Register) -> bool {
        self.may & bit(r) != 0
    }

    fn must(&self, r: Register) -> bool {
        self.must & bit(r) != 0
    }

    fn off(&self, r: Register) -> Option<i64> {
        if r.is_gpr64() {
            self.off[index(r)]
        } else {
            None
        }
    }

    /// The memory operand's address relative to the entry stack pointer.
    fn addr_off(&self, i: &Instruction) -> Option<i64> {
        if i.memory_index() != Register::None || moved_segment(i) {
            return None;
        }
        Some(self.off(i.memory_base())? + i.memory_displacement64() as i64)
    }

    /// The memory operand addresses the frame through a stack-derived
    /// register.
    fn addr_must(&self, i: &Instruction) -> bool {
        let (b, x) = (i.memory_base(), i.memory_index());
        !moved_segment(i)
            && !i.is_vsib()
            && ((self.must(b) && !self.may(x))
                || (x != Register::None
                    && i.memory_index_scale() == 1
                    && self.must(x)
                    && !self.may(b)))
    }

    /// The memory operand may address the frame.
    fn addr_may(&self, i: &Instruction) -> bool {
        self.may(i.memory_base()) || self.may(i.memory_index())
    }

    /// What a read of `size` bytes at the memory operand may load: a frame
    /// address (and certainly one).
    fn load(&self, i: &Instruction, size: u64) -> (bool, bool) {
        if let Some(at) = self.addr_off(i) {
            let end = at + size as i64;
            let hit = self.slots.iter().find(|s| s.0 < end && at < s.0 + 8);
            return match hit {
                Some(&(s, must)) => (true, must && s == at && size == 8),
                None => (false, false),
            };
        }
        if self.slots.is_empty() || !self.addr_may(i) {
            return (false, false);
        }
        // Through a pointer derived from the frame, other than the stack
        // pointer itself, at an unknown offset: an element of the object it
        // points to, not a slot.
        let array = self.addr_must(i) && bit(i.memory_base()) != RSP;
        (!array, false)
    }

    /// Forgets the slots a store of `size` bytes at the memory operand
    /// overwrites with a value that is no frame address.
    fn overwrite(&mut self, i: &Instruction, size: u64) {
        if let Some(at) = self.addr_off(i) {
            let end = at + size as i64;
            self.slots.retain(|s| !(s.0 < end && at < s.0 + 8));
        }
    }

    /// Keeps the slots a read-modify-write of `size` bytes at the memory
    /// operand touches as ones that may, not must, hold a frame address.
    fn weaken(&mut self, i: &Instruction, size: u64) {
        let at = self.addr_off(i);
        for s in &mut self.slots {
            if at.is_none_or(|at| s.0 < at + size as i64 && at < s.0 + 8) {
                s.1 = false;
            }
        }
    }

    /// A store of register `r` at the memory operand: a slot, or an escape.
    fn store(&mut self, i: &Instruction, r: Register) -> Result<(), Escape> {
        if !self.may(r) {
            self.overwrite(i, r.size() as u64);
            return Ok(());
        }
        match self.addr_off(i) {
            Some(at) if r.is_gpr64() && at + 8 <= 0 => {
                self.overwrite(i, 8);
                self.slots.push((at, self.must(r)));
                self.slots.sort_unstable();
                self.fresh = true;
                Ok(())
            }
            _ => Err(Escape),
        }
    }
}

/// A frame address may leave the function.
#[derive(Debug)]
struct Escape;

/// fs/gs move the address off the frame.
fn moved_segment(i: &Instruction) -> bool {
    matches!(i.memory_segment(), Register::FS | Register::GS)
}

fn has_memory(i: &Instruction) -> bool {
    (0..i.op_count()).any(|n| i.op_kind(n) == OpKind::Memory)
}

fn reg_op(i: &Instruction, n: u32) -> Option<Register> {
    (n < i.op_count() && i.op_kind(n) == OpKind::Register).then(|| i.op_register(n))
}

fn imm_op(i: &Instruction, n: u32) -> Option<i64> {
    if n >= i.op_count() {
        return None;
    }
    match i.op_kind(n) {
        OpKind::Immediate8
        | OpKind::Immediate8to16
        | OpKind::Immediate8to32
        | OpKind::Immediate8to64
        | OpKind::Immediate16
        | OpKind::Immediate32
        | OpKind::Immediate32to64
        | OpKind::Immediate64 => Some(i.immediate(n) as i64),
        _ => None,
    }
}

/// Registers other than the memory operand's address that `i` reads or
/// writes, explicit or implicit.
fn value_regs(i: &Instruction, info: &mut iced_x86::InstructionInfoFactory) -> (u16, u16) {
    let (b, x) = (i.memory_base(), i.memory_index());
    let mut read = 0;
    let mut written = 0;
    for u in info.info(i).used_registers() {
        let r = u.register();
        use iced_x86::OpAccess::*;
        let is_addr = has_memory(i) && (r == b || r == x);
        match u.access() {
            Read | CondRead if !is_addr => read |= bit(r),
            Write | CondWrite => written |= bit(r),
            ReadWrite | ReadCondWrite => {
                read |= bit(r);
                written |= bit(r);
            }
            _ => {}
        }
    }
    (read, written)
}

/// One instruction's effect on `st`, or the escape it makes.
fn step(
    st: &mut State,
    i: &Instruction,
    info: &mut iced_x86::InstructionInfoFactory,
) -> Result<(), Escape> {
    if i.is_invalid() {
        return Err(Escape);
    }
    let op0 = reg_op(i, 0);
    let op1 = reg_op(i, 1);
    let gpr0 = op0.filter(|r| r.is_gpr());
    let mem_size = || i.memory_size().size() as u64;
    match i.mnemonic() {
        Mnemonic::Nop | Mnemonic::Cmp | Mnemonic::Test | Mnemonic::Bt | Mnemonic::Endbr64 => {
            return Ok(());
        }
        Mnemonic::Lea => {
            let d = gpr0.ok_or(Escape)?;
            let off = st.addr_off(i);
            let (may, must) = (st.addr_may(i), st.addr_must(i));
            st.set(d, may, must, off);
            return Ok(());
        }
        Mnemonic::Mov | Mnemonic::Movzx | Mnemonic::Movsx | Mnemonic::Movsxd => match (gpr0, op1) {
            (Some(d), Some(s)) if s.is_gpr() => {
                let plain = i.mnemonic() == Mnemonic::Mov && d.is_gpr64() && s.is_gpr64();
                let (may, must, off) = (st.may(s), st.must(s), st.off(s));
                if plain {
                    st.set(d, may, must, off);
                } else {
                    st.set(d, may, false, None);
                }
                return Ok(());
            }
            (Some(d), None) if has_memory(i) => {
                let (may, must) = st.load(i, mem_size());
                let whole_load = i.mnemonic() == Mnemonic::Mov && d.is_gpr64();
                st.set(d, may, must && whole_load, None);
                return Ok(());
            }
            (Some(d), None) => {
                st.set(d, false, false, None);
                return Ok(());
            }
            (None, Some(s)) if s.is_gpr() && has_memory(i) => return st.store(i, s),
            (None, None) if has_memory(i) => {
                st.overwrite(i, mem_size());
                return Ok(());
            }
            _ => {}
        },
        Mnemonic::Push => {
            if has_memory(i) && st.load(i, 8).0 {
                return Err(Escape);
            }
            let at = st.off[4].map(|d| d - 8);
            let tainted = op0.is_some_and(|r| st.may(r));
            st.off[4] = at;
            if tainted {
                let (Some(at), Some(r)) = (at, op0) else {
                    return Err(Escape);
                };
                st.slots.retain(|s| !(s.0 < at + 8 && at < s.0 + 8));
                st.slots.push((at, st.must(r) && r.is_gpr64()));
                st.slots.sort_unstable();
                st.fresh = true;
            } else if let Some(at) = at {
                st.slots.retain(|s| !(s.0 < at + 8 && at < s.0 + 8));
            }
            return Ok(());
        }
        Mnemonic::Pop => {
            let at = st.off[4];
            let (may, must) = match at {
                Some(at) => st
                    .slots
                    .iter()
                    .find(|s| s.0 < at + 8 && at < s.0 + 8)
                    .map_or((false, false), |s| (true, s.1 && s.0 == at)),
                None => (!st.slots.is_empty(), false),
            };
            st.off[4] = at.map(|d| d + 8);
            return match gpr0 {
                Some(d) if bit(d) != RSP => {
                    st.set(d, may, must, None);
                    Ok(())
                }
                _ if may => Err(Escape),
                _ => {
                    if has_memory(i) {
                        st.overwrite(i, 8);
                    }
                    Ok(())
                }
            };
        }
        Mnemonic::Leave => {
            st.off[4] = st.off[5].map(|d| d + 8);
            let at = st.off[5];
            let may = match at {
                Some(at) => st.slots.iter().any(|s| s.0 < at + 8 && at < s.0 + 8),
                None => !st.slots.is_empty(),
            };
            st.set(Register::RBP, may, false, None);
            return Ok(());
        }
        Mnemonic::Add | Mnemonic::Sub | Mnemonic::Inc | Mnemonic::Dec => {
            if let Some(d) = gpr0 {
                let sub = matches!(i.mnemonic(), Mnemonic::Sub | Mnemonic::Dec);
                let k = match i.mnemonic() {
                    Mnemonic::Inc | Mnemonic::Dec => Some(1),
                    _ => imm_op(i, 1),
                };
                let (src_may, src_must) = match op1 {
                    Some(s) if sub && s == d => {
                        st.set(d, false, false, None);
                        return Ok(());
                    }
                    Some(s) => (st.may(s), st.must(s)),
                    None if has_memory(i) => {
                        let l = st.load(i, mem_size());
                        (l.0, false)
                    }
                    None => (false, false),
                };
                if bit(d) == RSP {
                    if src_may {
                        return Err(Escape);
                    }
                    st.off[4] = match (st.off[4], k) {
                        (Some(o), Some(k)) if d.is_gpr64() => Some(if sub { o - k } else { o + k }),
                        _ => None,
                    };
                    return Ok(());
                }
                let (dm, dmust, doff) = (st.may(d), st.must(d), st.off(d));
                if dmust && !src_may {
                    let off = match (doff, k) {
                        (Some(o), Some(k)) => Some(if sub { o - k } else { o + k }),
                        _ => None,
                    };
                    st.set(d, true, true, off);
                } else if !dm && src_must && !sub {
                    st.set(d, true, true, None);
                } else {
                    st.set(d, dm || src_may, false, None);
                }
                return Ok(());
            }
        }
        Mnemonic::Xor if op0.is_some() && op0 == op1 => {
            st.set(op0.unwrap_or(Register::None), false, false, None);
            return Ok(());
        }
        Mnemonic::And if gpr0.is_some_and(|d| bit(d) == RSP) && imm_op(i, 1).is_some() => {
            st.off[4] = None;
            return Ok(());
        }
        Mnemonic::And
        | Mnemonic::Or
        | Mnemonic::Xor
        | Mnemonic::Adc
        | Mnemonic::Sbb
        | Mnemonic::Shl
        | Mnemonic::Shr
        | Mnemonic::Sar
        | Mnemonic::Rol
        | Mnemonic::Ror
        | Mnemonic::Not
        | Mnemonic::Neg
        | Mnemonic::Imul
        | Mnemonic::Bswap
            if gpr0.is_some_and(|d| bit(d) != RSP) && i.op_count() <= 3 =>
        {
            // A value computed from a frame address: kept for the escape
            // check, no longer an address to prune through.
            let d = gpr0.unwrap_or(Register::None);
            let mut may = st.may(d);
            for n in 1..i.op_count() {
                match i.op_kind(n) {
                    OpKind::Register => may |= st.may(i.op_register(n)),
                    OpKind::Memory => may |= st.load(i, mem_size()).0,
                    _ => {}
                }
            }
            st.set(d, may, false, None);
            return Ok(());
        }
        Mnemonic::Call => {
            if op0.is_some_and(|r| st.may(r)) || st.fresh || st.may & ARGUMENTS != 0 {
                return Err(Escape);
            }
            if has_memory(i) && st.load(i, 8).0 {
                return Err(Escape);
            }
            let clobbered = !(CALLEE_SAVED | RSP);
            st.may &= !clobbered;
            st.must &= !clobbered;
            for n in 0..16 {
                if clobbered & (1 << n) != 0 {
                    st.off[n] = None;
                }
            }
            st.fresh = false;
            return Ok(());
        }
        Mnemonic::Ret => {
            return if st.may & (RETURNED | CALLEE_SAVED) != 0 {
                Err(Escape)
            } else {
                Ok(())
            };
        }
        m if is_cmov(m) && gpr0.is_some_and(|d| bit(d) != RSP) => {
            let d = gpr0.unwrap_or(Register::None);
            let (may, must) = match (op1, has_memory(i)) {
                (Some(s), _) => (st.may(s), st.must(s)),
                (None, true) => st.load(i, mem_size()),
                _ => (false, false),
            };
            st.set(d, st.may(d) || may, st.must(d) && must, None);
            return Ok(());
        }
        _ => {}
    }
    match i.flow_control() {
        FlowControl::Next => {}
        FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch
            if i.op_kind(0) != OpKind::Register && i.op_kind(0) != OpKind::Memory =>
        {
            return Ok(());
        }
        _ => {
            // Indirect jumps, interrupts, system calls and the rest: any
            // frame address in a register may go with them.
            return if st.may & !RSP != 0 || st.fresh {
                Err(Escape)
            } else {
                Ok(())
            };
        }
    }
    // Any other instruction: reading a frame address as a value escapes;
    // what it writes holds none (or what it loads from a slot).
    let (read, written) = value_regs(i, info);
    if i.is_string_instruction() {
        // rsi and rdi address the memory (an array of the frame when they
        // hold frame addresses) and move through it; rcx counts; a value
        // stored or loaded is no frame address unless read from a slot.
        let addresses = bit(Register::RSI) | bit(Register::RDI);
        let rsi_reads_slot = !st.slots.is_empty()
            && st.may(Register::RSI)
            && !st.must(Register::RSI)
            && read & bit(Register::RSI) != 0;
        if read & st.may & !(RSP | addresses) != 0 || rsi_reads_slot {
            return Err(Escape);
        }
        for r in [Register::RSI, Register::RDI] {
            if written & bit(r) != 0 {
                st.set(r, st.may(r), st.must(r), None);
            }
        }
        for r in [Register::RAX, Register::RCX] {
            if written & bit(r) != 0 {
                st.set(r, false, false, None);
            }
        }
        return Ok(());
    }
    if read & st.may & !RSP != 0 {
        return Err(Escape);
    }
    if read & RSP != 0 && !i.is_stack_instruction() {
        return Err(Escape);
    }
    let mut loaded = false;
    if has_memory(i) {
        let reads = info.info(i).used_memory().iter().any(|m| {
            !matches!(
                m.access(),
                iced_x86::OpAccess::Write | iced_x86::OpAccess::NoMemAccess
            )
        });
        if reads && st.load(i, mem_size().max(1)).0 {
            if written & !RSP == 0 {
                // A frame address moved to another register file.
                return Err(Escape);
            }
            loaded = true;
        }
        if info
            .info(i)
            .used_memory()
            .iter()
            .any(|m| super::writes(m.access()))
        {
            if loaded {
                // Read and written (xadd): what it leaves there may still
                // be a frame address, no longer a certain one.
                st.weaken(i, mem_size().max(1));
            } else {
                st.overwrite(i, mem_size().max(8));
            }
        }
    }
    for g in Gpr::ALL {
        let n = g.number();
        if written & (1 << n) != 0 && n != 4 {
            st.set(g.to_iced(), loaded, false, None);
        }
    }
    if written & RSP != 0 {
        // enter, pushf, popf and the rest: the stack pointer moved by an
        // amount not followed here.
        st.off[4] = None;
    }
    Ok(())
}

/// The PCs of `insns` (one function, `[start, end)`, entered only at its
/// first instruction) whose memory operand is in the function's own frame,
/// when that frame never escapes; `None` when it may.
pub(super) fn private_frame_accesses(
    insns: &[Instruction],
    is_entry: impl Fn(u64) -> bool,
    info: &mut iced_x86::InstructionInfoFactory,
) -> Option<Vec<u64>> {
    let (start, end) = (insns.first()?.ip(), insns.last()?.next_ip());
    let at = |pc: u64| insns.binary_search_by_key(&pc, |i| i.ip()).ok();
    // Block starts: the entry, branch targets and what follows a transfer.
    let mut leader = vec![false; insns.len()];
    leader[0] = true;
    for (n, i) in insns.iter().enumerate() {
        if i.flow_control() == FlowControl::Next {
            continue;
        }
        if n + 1 < insns.len() {
            leader[n + 1] = true;
        }
        if matches!(
            i.flow_control(),
            FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch
        ) && i.op_kind(0) != OpKind::Register
            && i.op_kind(0) != OpKind::Memory
        {
            let t = i.near_branch_target();
            if (start..end).contains(&t) {
                leader[at(t)?] = true;
            } else if !is_entry(t) {
                return None;
            }
        }
    }
    let mut input: Vec<Option<State>> = vec![None; insns.len()];
    input[0] = Some(State::entry());
    let mut work = vec![0usize];
    let mut must_at: Vec<bool> = vec![false; insns.len()];
    let mut reached = vec![false; insns.len()];
    while let Some(first) = work.pop() {
        let mut st = input[first].clone()?;
        st.fresh = false;
        let mut n = first;
        loop {
            let i = &insns[n];
            reached[n] = true;
            must_at[n] = has_memory(i)
                && i.mnemonic() != Mnemonic::Lea
                && st.addr_must(i)
                && !matches!(i.mnemonic(), Mnemonic::Nop);
            step(&mut st, i, info).ok()?;
            let mut succ = Vec::new();
            match i.flow_control() {
                // A call that ends the function's code is one that does
                // not return (abort, a failed assertion).
                FlowControl::Call | FlowControl::IndirectCall if n + 1 == insns.len() => {}
                FlowControl::Next
                | FlowControl::Call
                | FlowControl::IndirectCall
                | FlowControl::Interrupt => succ.push(n + 1),
                FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch => {
                    if i.flow_control() == FlowControl::ConditionalBranch {
                        succ.push(n + 1);
                    }
                    let t = i.near_branch_target();
                    if (start..end).contains(&t) {
                        succ.push(at(t)?);
                    } else if st.may & !RSP != 0 || st.fresh {
                        // A tail call that may take a frame address along.
                        return None;
                    }
                }
                FlowControl::Return | FlowControl::Exception => {}
                _ => return None,
            }
            let mut next_in_block = None;
            for s in succ {
                if s >= insns.len() {
                    // Falls out of the function's range.
                    return None;
                }
                if !leader[s] {
                    next_in_block = Some(s);
                    continue;
                }
                let joined = match &input[s] {
                    Some(old) => old.join(&st),
                    None => st.clone(),
                };
                if input[s].as_ref() != Some(&joined) {
                    input[s] = Some(joined);
                    work.push(s);
                }
            }
            match next_in_block {
                Some(s) => n = s,
                None => break,
            }
        }
    }
    Some(
        insns
            .iter()
            .enumerate()
            .filter(|&(n, _)| reached[n] && must_at[n])
            .map(|(_, i)| i.ip())
            .collect(),
    )
}
