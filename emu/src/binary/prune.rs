//! HardRace-style static pruning of program code (HardRace §4.1-4.3;
//! binary mode, docs/binary-mode.md): memory instructions whose accesses
//! provably cannot race, nor change whether a later access races, are not
//! delivered to the detector. Every decision is made before the run and
//! depends on the PC alone ([`Pruning::pcs`]).
//!
//! Four analyses, tried in this order:
//!
//! * **frame** (§4.1) — `push`, `pop`, `call`, `ret`, `leave`, `enter`:
//!   implicit accesses to the return address and saved registers, slots no
//!   program code names;
//! * **private stack** (§4.1) — accesses into the function's own frame
//!   when no frame address leaves the function: through registers derived
//!   from `rsp` by the flow-sensitive pass of [`frame_flow`] in functions
//!   entered only at their start, else `rsp`/`rbp`-based ones in a
//!   function where no instruction reads `rsp` (or the frame pointer) as a
//!   value other than to adjust the stack pointer (`sub/add/and rsp, imm`,
//!   `mov rbp, rsp`, `mov rsp, rbp`, `lea rsp, [rbp-…]`). A `.cold`
//!   partition and the function jumping to it share a frame and get
//!   neither;
//! * **read-only data** (§4.2, must race-free by *notWrite*) — reads at a
//!   fixed address inside the executable's non-writable segments, where
//!   binary mode checks no write;
//! * **redundant** (§4.3) — an access to exactly the bytes an earlier
//!   write of the same block wrote, in the same epoch, with no other thread
//!   able to run in between ([`TB_SAFE_INSNS`]).
//!
//! The stack analyses are per-function value-set arguments about
//! `rsp`/`rbp` and the registers derived from them: a race between a
//! pruned access and another thread's access would need a pointer to the
//! frame in another thread, which the escape checks rule out.

use crate::binary::program::ProgramCode;
use crate::cpu::code::AddrMap;
use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Instruction, InstructionInfoFactory, Mnemonic, OpAccess,
    OpKind, Register, UsedMemory,
};
use lard_isa_ext::KnownLengths;

/// Why an instruction was pruned (one analysis per instruction, tried in
/// this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pruned {
    /// Implicit frame access (push/pop/call/ret/leave/enter).
    Frame,
    /// Explicit access to a frame whose address never escapes.
    PrivateStack,
    /// Must race-free (HardRace §4.2, *notWrite*): a read of the
    /// executable's read-only data, which no checked access writes.
    ReadOnly,
    /// Redundant (HardRace §4.3): the same bytes were just written by the
    /// same thread in the same epoch, with no other thread able to run in
    /// between, so the check cannot fail and its record changes nothing.
    Redundant,
}

impl Pruned {
    /// Every kind, in table order.
    pub const ALL: [Pruned; 4] = [
        Pruned::Frame,
        Pruned::PrivateStack,
        Pruned::ReadOnly,
        Pruned::Redundant,
    ];

    /// The row name in the pruning table.
    pub fn name(self) -> &'static str {
        match self {
            Pruned::Frame => "frame",
            Pruned::PrivateStack => "private stack",
            Pruned::ReadOnly => "read-only data",
            Pruned::Redundant => "redundant",
        }
    }

    /// The HardRace section the analysis follows.
    pub fn section(self) -> &'static str {
        match self {
            Pruned::Frame | Pruned::PrivateStack => "§4.1",
            Pruned::ReadOnly => "§4.2",
            Pruned::Redundant => "§4.3",
        }
    }

    /// Index into per-kind counters.
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What the analyses know about the executable besides its code, all at
/// run-time addresses.
#[derive(Clone, Debug, Default)]
pub struct Image {
    /// Address ranges of its segments mapped without write permission
    /// (code and constants): binary mode never checks a write there.
    pub readonly: Vec<(u64, u64)>,
    /// Function entries (every `.eh_frame` entry start and function
    /// symbol): control may arrive there from anywhere.
    pub entries: Vec<u64>,
    /// Code that control may enter at addresses no instruction names:
    /// functions with C++ exception tables (landing pads) and `.cold`
    /// partitions (targets of their parent's jump tables).
    pub unstructured: Vec<(u64, u64)>,
}

impl Image {
    /// True when `[addr, addr+len)` lies inside one read-only range.
    pub fn is_readonly(&self, addr: u64, len: u64) -> bool {
        self.readonly
            .iter()
            .any(|&(s, e)| addr >= s && addr.saturating_add(len) <= e)
    }
}

/// The result of pruning: which PCs are not observed, and the static
/// counts per analysis.
#[derive(Clone, Debug, Default)]
pub struct Pruning {
    /// PCs whose accesses are not delivered, with the analysis that
    /// pruned them.
    pub pcs: AddrMap<Pruned>,
    /// Memory instructions examined.
    pub memory_insns: u64,
    /// Instructions pruned per analysis (indexed by [`Pruned::index`]).
    pub by_kind: [u64; 4],
}

impl Pruning {
    /// Adds another object's result.
    pub fn extend(&mut self, other: Pruning) {
        self.memory_insns += other.memory_insns;
        for (a, b) in self.by_kind.iter_mut().zip(other.by_kind) {
            *a += b;
        }
        self.pcs.extend(other.pcs);
    }

    fn mark(&mut self, pc: u64, kind: Pruned) {
        self.by_kind[kind.index()] += 1;
        self.pcs.insert(pc, kind);
    }
}

fn is_frame_op(i: &Instruction) -> bool {
    matches!(
        i.mnemonic(),
        Mnemonic::Push
            | Mnemonic::Pop
            | Mnemonic::Call
            | Mnemonic::Ret
            | Mnemonic::Leave
            | Mnemonic::Enter
    )
}

fn has_memory_operand(i: &Instruction) -> bool {
    (0..i.op_count()).any(|n| i.op_kind(n) == OpKind::Memory)
}

fn is_stack_reg(r: Register) -> bool {
    matches!(
        r,
        Register::RSP | Register::ESP | Register::SP | Register::SPL
    )
}

fn is_fp_reg(r: Register) -> bool {
    matches!(
        r,
        Register::RBP | Register::EBP | Register::BP | Register::BPL
    )
}

/// True when the instruction only adjusts the stack or frame pointer (not
/// an escape of a stack address).
fn adjusts_stack(i: &Instruction) -> bool {
    let dst = if i.op_count() > 0 && i.op_kind(0) == OpKind::Register {
        i.op0_register()
    } else {
        return false;
    };
    match i.mnemonic() {
        Mnemonic::Sub | Mnemonic::Add | Mnemonic::And => {
            is_stack_reg(dst)
                && i.op_count() == 2
                && i.op_kind(1) != OpKind::Register
                && i.op_kind(1) != OpKind::Memory
        }
        Mnemonic::Mov => {
            i.op_count() == 2
                && i.op_kind(1) == OpKind::Register
                && ((dst == Register::RBP && i.op1_register() == Register::RSP)
                    || (dst == Register::RSP && i.op1_register() == Register::RBP))
        }
        Mnemonic::Lea => is_stack_reg(dst),
        _ => false,
    }
}

/// How many instructions, counted from the first instruction after one
/// that ends a translation block, the redundancy analysis looks at. Threads
/// switch only where a translation block starts (docs/binary-mode.md); a
/// block ends at every instruction [`ends_block`] names, and otherwise only
/// after 512 instructions, 4000 TCG ops or 4 KiB of code — never within 12
/// instructions (at most ~300 ops each) of its start.
pub const TB_SAFE_INSNS: usize = 12;

/// Prunes the functions `[start, end)` of `code` (bytes at `base`).
pub fn prune(code: &[u8], base: u64, functions: &[(u64, u64)], image: &Image) -> Pruning {
    prune_known(code, base, functions, image, &KnownLengths::default())
}

/// [`prune`], its control-flow pass stepping over the instructions of
/// kinds `known` has learned that let control go on (the LARD-site scan
/// of the same code taught it): they add no path leader.
pub fn prune_known(
    code: &[u8],
    base: u64,
    functions: &[(u64, u64)],
    image: &Image,
    known: &KnownLengths,
) -> Pruning {
    let mut out = Pruning::default();
    let end_of_code = base + code.len() as u64;
    // The functions in the code, as (start, bytes). They are decoded twice,
    // once for the control flow of all and once each for its analyses,
    // rather than kept decoded: a large executable has millions of
    // instructions (40 bytes each decoded).
    let ranges: Vec<(u64, &[u8])> = functions
        .iter()
        .filter(|&&(start, end)| start >= base && end <= end_of_code && start < end)
        .map(|&(start, end)| (start, &code[(start - base) as usize..(end - base) as usize]))
        .collect();
    let Flow {
        leaders,
        jump_tables,
        mut foreign,
        mut called,
    } = control_flow(&ranges, image, known);
    foreign.sort_unstable_by_key(|f| f.1);
    called.sort_unstable();
    called.dedup();
    let frames = FrameShapes::new(&ranges, &foreign, &called);
    // Where control may arrive from anywhere, as a sorted range set: a
    // stripped C++ executable has thousands of such ranges, and the
    // redundancy analysis asks for every instruction.
    let entered_anywhere = ProgramCode::from_ranges(
        image
            .unstructured
            .iter()
            .chain(jump_tables.iter())
            .copied()
            .collect(),
    );
    let entered_anywhere = Ranges::new(entered_anywhere.ranges());
    let mut info = InstructionInfoFactory::new();
    let mut walk = Walk::default();
    let mut prev_end = None;
    let mut insns: Vec<Instruction> = Vec::new();
    for &(start, bytes) in &ranges {
        insns.clear();
        insns.extend(Decoder::with_ip(64, bytes, start, DecoderOptions::NONE));
        // The redundancy analysis reads the other analyses' marks of the
        // function's own instructions only.
        let end = start + bytes.len() as u64;
        let shape = frames.shape(start, end);
        let flow = if shape == FrameShape::Closed && !entered_anywhere.contains(start) {
            frame_flow::private_frame_accesses(
                &insns,
                |t| image.entries.binary_search(&t).is_ok(),
                &mut info,
            )
        } else {
            None
        };
        stack_analyses(
            &insns,
            shape != FrameShape::Shared,
            flow.as_deref(),
            &mut out,
        );
        read_only(&insns, image, &mut info, &mut out);
        // A function that starts where the previous one ended may be
        // entered by falling through: keep counting from the block start.
        if insns.first().map(|i| i.ip()) != prev_end {
            walk = Walk::default();
        }
        redundant(
            &insns,
            &leaders,
            &entered_anywhere,
            &mut walk,
            &mut info,
            &mut out,
        );
        prev_end = insns.last().map(|i| i.next_ip());
    }
    out
}

/// A position in a sorted sequence for look-ups that come mostly in
/// increasing order (the analyses walk each function's instructions in
/// address order): a few steps forward from the last answer, else a
/// binary search.
#[derive(Default)]
struct Cursor(std::cell::Cell<usize>);

impl Cursor {
    /// How many elements of `sorted` have a key at or below `pc`.
    fn seek<T>(&self, sorted: &[T], key: impl Fn(&T) -> u64, pc: u64) -> usize {
        let mut n = self.0.get().min(sorted.len());
        if n > 0 && key(&sorted[n - 1]) > pc {
            n = sorted.partition_point(|x| key(x) <= pc);
        } else {
            let mut steps = 0;
            while n < sorted.len() && key(&sorted[n]) <= pc {
                n += 1;
                steps += 1;
                if steps == 8 {
                    n += sorted[n..].partition_point(|x| key(x) <= pc);
                    break;
                }
            }
        }
        self.0.set(n);
        n
    }
}

/// The addresses where a basic block may start (entries, branch targets,
/// the instruction after a branch), sorted and read through a [`Cursor`]:
/// hashing the millions of addresses of a large executable cost more than
/// the analyses.
struct Leaders {
    sorted: Vec<u64>,
    cursor: Cursor,
}

impl Leaders {
    fn new(mut v: Vec<u64>) -> Leaders {
        v.sort_unstable();
        v.dedup();
        Leaders {
            sorted: v,
            cursor: Cursor::default(),
        }
    }

    /// Whether a block may start at `pc`.
    fn contains(&self, pc: u64) -> bool {
        let n = self.cursor.seek(&self.sorted, |&p| p, pc);
        n > 0 && self.sorted[n - 1] == pc
    }
}

/// Sorted, disjoint address ranges read through a [`Cursor`].
struct Ranges<'a> {
    ranges: &'a [(u64, u64)],
    cursor: Cursor,
}

impl<'a> Ranges<'a> {
    fn new(ranges: &'a [(u64, u64)]) -> Ranges<'a> {
        Ranges {
            ranges,
            cursor: Cursor::default(),
        }
    }

    /// Whether `pc` lies in one of the ranges.
    fn contains(&self, pc: u64) -> bool {
        let n = self.cursor.seek(self.ranges, |r| r.0, pc);
        n > 0 && pc < self.ranges[n - 1].1
    }
}

/// The redundancy analysis' state at an instruction boundary.
struct Walk {
    /// Instructions since the last block start, this one included.
    since_block: usize,
    /// The previous instruction ends a translation block.
    after_end: bool,
    /// Bytes written in this block that nothing has invalidated since.
    written: Vec<AddrKey>,
}

impl Default for Walk {
    fn default() -> Self {
        Walk {
            since_block: 0,
            after_end: true,
            written: Vec::new(),
        }
    }
}

/// How a function's frame may be reached from code outside its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FrameShape {
    /// Entered only at its start; leaves only by calls, returns and tail
    /// calls: the flow-sensitive analysis may run.
    Closed,
    /// Entered in its middle from elsewhere: only the flow-insensitive
    /// scan applies.
    Entered,
    /// A partition of a function (a `.cold` part: jumped to, never called)
    /// or a function that jumps to one: its frame is another range's too,
    /// and nothing of it is private.
    Shared,
}

/// The jumps between functions, to tell [`FrameShape`]s apart.
struct FrameShapes<'a> {
    /// (source function start, target) of every jump leaving its
    /// function, sorted by target.
    foreign: &'a [(u64, u64)],
    /// Starts of the functions that are partitions, sorted.
    partitions: Vec<u64>,
    /// Starts of the functions that jump to a partition, sorted.
    parents: Vec<u64>,
}

impl<'a> FrameShapes<'a> {
    fn new(ranges: &[(u64, &[u8])], foreign: &'a [(u64, u64)], called: &[u64]) -> Self {
        let mut partitions = Vec::new();
        let mut parents = Vec::new();
        for &(start, bytes) in ranges {
            let end = start + bytes.len() as u64;
            let lo = foreign.partition_point(|f| f.1 < start);
            let hi = foreign.partition_point(|f| f.1 < end);
            if lo < hi && called.binary_search(&start).is_err() {
                partitions.push(start);
                parents.extend(foreign[lo..hi].iter().map(|f| f.0));
            }
        }
        partitions.sort_unstable();
        parents.sort_unstable();
        parents.dedup();
        FrameShapes {
            foreign,
            partitions,
            parents,
        }
    }

    fn shape(&self, start: u64, end: u64) -> FrameShape {
        if self.partitions.binary_search(&start).is_ok()
            || self.parents.binary_search(&start).is_ok()
        {
            return FrameShape::Shared;
        }
        let lo = self.foreign.partition_point(|f| f.1 <= start);
        let hi = self.foreign.partition_point(|f| f.1 < end);
        if lo < hi {
            FrameShape::Entered
        } else {
            FrameShape::Closed
        }
    }
}

/// HardRace §4.1 as a per-function scan: frame operations and accesses to
/// a frame whose address never escapes. `flow_private` lists the accesses
/// the flow-sensitive analysis found in a frame that never escapes
/// ([`frame_flow`]); `own_frame` is false for a frame other code shares.
fn stack_analyses(
    insns: &[Instruction],
    own_frame: bool,
    flow_private: Option<&[u64]>,
    out: &mut Pruning,
) {
    let frame_pointer = insns.iter().any(|i| {
        i.mnemonic() == Mnemonic::Mov
            && i.op_count() == 2
            && i.op_kind(0) == OpKind::Register
            && i.op_kind(1) == OpKind::Register
            && i.op0_register() == Register::RBP
            && i.op1_register() == Register::RSP
    });
    let stack_base = |r: Register| is_stack_reg(r) || (frame_pointer && is_fp_reg(r));
    // Escape: a stack (or frame) pointer read as a value anywhere.
    let escapes = insns.iter().any(|i| {
        if i.is_invalid() {
            return true;
        }
        if adjusts_stack(i) || is_frame_op(i) {
            return false;
        }
        let lea_of_stack = i.mnemonic() == Mnemonic::Lea && stack_base(i.memory_base());
        let reads_reg = (0..i.op_count())
            .any(|n| i.op_kind(n) == OpKind::Register && stack_base(i.op_register(n)));
        lea_of_stack || reads_reg
    });
    for i in insns {
        if !has_memory_operand(i) && !is_frame_op(i) {
            continue;
        }
        out.memory_insns += 1;
        if is_frame_op(i) && !has_memory_operand(i) {
            out.mark(i.ip(), Pruned::Frame);
        } else if own_frame
            && ((!escapes
                && i.mnemonic() != Mnemonic::Lea
                && stack_base(i.memory_base())
                && i.memory_index() == Register::None
                && !is_frame_op(i))
                || flow_private.is_some_and(|p| p.binary_search(&i.ip()).is_ok()))
        {
            out.mark(i.ip(), Pruned::PrivateStack);
        }
    }
}

/// Path leaders (instructions control may reach other than from the one
/// before: function entries, direct branch targets, instructions after a
/// control transfer) and the functions that jump through a register or
/// memory (switch tables, computed goto), whose targets are not known.
fn control_flow(ranges: &[(u64, &[u8])], image: &Image, known: &KnownLengths) -> Flow {
    let mut leaders: Vec<u64> = image.entries.clone();
    let mut indirect = Vec::new();
    let mut foreign = Vec::new();
    let mut called = Vec::new();
    for &(start, bytes) in ranges {
        let first_indirect = indirect.len();
        let range_end = start + bytes.len() as u64;
        let end = known.for_each_other(bytes, start, true, |i| {
            if i.flow_control() == FlowControl::Next {
                return;
            }
            leaders.push(i.next_ip());
            if (0..i.op_count()).any(|n| {
                matches!(
                    i.op_kind(n),
                    OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
                )
            }) {
                let t = i.near_branch_target();
                leaders.push(t);
                if i.flow_control() == FlowControl::Call {
                    called.push(t);
                } else if !(start..range_end).contains(&t) {
                    foreign.push((start, t));
                }
            }
            if i.flow_control() == FlowControl::IndirectBranch {
                indirect.push((i.ip(), start, 0));
            }
        });
        // (The function's range: its first instruction to the end of its
        // last.)
        for e in &mut indirect[first_indirect..] {
            e.2 = end;
        }
    }
    // The function around each indirect jump: from the entry at or before
    // it to the next entry (or the ends of its range).
    let jump_tables = indirect
        .into_iter()
        .map(|(pc, lo, hi)| {
            let at = image.entries.partition_point(|&e| e <= pc);
            let start = if at > 0 {
                image.entries[at - 1].max(lo)
            } else {
                lo
            };
            let end = image.entries.get(at).map_or(hi, |&e| e.min(hi));
            (start, end)
        })
        .collect();
    Flow {
        leaders: Leaders::new(leaders),
        jump_tables,
        foreign,
        called,
    }
}

/// What [`control_flow`] finds.
struct Flow {
    leaders: Leaders,
    /// The functions with indirect jumps (jump tables).
    jump_tables: Vec<(u64, u64)>,
    /// (source function start, target) of each jump that leaves its
    /// function.
    foreign: Vec<(u64, u64)>,
    /// Call targets.
    called: Vec<u64>,
}

/// True for an instruction after which QEMU starts a new translation block
/// (or that is synchronization in binary mode): every control transfer,
/// interrupt and system call, lock-prefixed and `xchg`-with-memory atomics,
/// string instructions (a `rep` loops through its own block), and the
/// instructions QEMU's x86 translator ends a block after.
pub fn ends_block(i: &Instruction) -> bool {
    i.is_invalid()
        || i.flow_control() != FlowControl::Next
        || i.has_lock_prefix()
        || i.is_string_instruction()
        || (i.mnemonic() == Mnemonic::Xchg && has_memory_operand(i))
        || (i.op_count() > 0
            && i.op_kind(0) == OpKind::Register
            && i.op0_register().is_segment_register())
        || matches!(
            i.mnemonic(),
            Mnemonic::Cpuid
                | Mnemonic::Rdtsc
                | Mnemonic::Rdtscp
                | Mnemonic::Rdpmc
                | Mnemonic::Rdrand
                | Mnemonic::Rdseed
                | Mnemonic::Hlt
                | Mnemonic::Pause
                | Mnemonic::Wrfsbase
                | Mnemonic::Wrgsbase
                | Mnemonic::Enter
                | Mnemonic::Popf
                | Mnemonic::Popfq
                | Mnemonic::Sti
                | Mnemonic::Cli
        )
}

fn writes(a: OpAccess) -> bool {
    matches!(
        a,
        OpAccess::Write | OpAccess::CondWrite | OpAccess::ReadWrite | OpAccess::ReadCondWrite
    )
}

/// The single explicit memory operand of `i`, when that is all the memory
/// it touches, unconditionally and without a mask: its access and size.
/// The address of `i`'s memory operand when it is known without running the
/// instruction: RIP-relative, or a plain displacement (no base, no index).
pub fn absolute_address(i: &Instruction) -> Option<u64> {
    if i.is_ip_rel_memory_operand() {
        Some(i.ip_rel_memory_address())
    } else if i.memory_base() == Register::None && i.memory_index() == Register::None {
        Some(i.memory_displacement64())
    } else {
        None
    }
}

fn single_access(i: &Instruction, info: &mut InstructionInfoFactory) -> Option<(OpAccess, u64)> {
    if !may_access_once(i) {
        return None;
    }
    single_access_in(info.info(i).used_memory())
}

/// The first tests of [`single_access`], on the instruction alone.
#[inline]
fn may_access_once(i: &Instruction) -> bool {
    has_memory_operand(i) && i.op_mask() == Register::None && !i.is_vsib()
}

/// [`single_access`] of an instruction that passed [`may_access_once`],
/// from the memory iced-x86 says it uses.
fn single_access_in(used: &[UsedMemory]) -> Option<(OpAccess, u64)> {
    if used.len() != 1 {
        return None;
    }
    let m = used[0];
    let size = m.memory_size().size() as u64;
    (size > 0
        && matches!(
            m.access(),
            OpAccess::Read | OpAccess::Write | OpAccess::ReadWrite
        ))
    .then_some((m.access(), size))
}

/// A segment override that moves the address (fs/gs); none for ds/ss/es/cs,
/// whose bases are 0 in 64-bit mode.
fn segment(i: &Instruction) -> Register {
    match i.memory_segment() {
        Register::FS | Register::GS => i.memory_segment(),
        _ => Register::None,
    }
}

/// HardRace §4.2, the *notWrite* condition: a read of the executable's
/// read-only data (rip-relative or absolute address) cannot race, because
/// binary mode checks no write there (docs/binary-mode.md).
fn read_only(
    insns: &[Instruction],
    image: &Image,
    info: &mut InstructionInfoFactory,
    out: &mut Pruning,
) {
    if image.readonly.is_empty() {
        return;
    }
    for i in insns {
        if out.pcs.contains_key(&i.ip()) || segment(i) != Register::None {
            continue;
        }
        // The address first: it needs no instruction info.
        let Some(addr) = absolute_address(i) else {
            continue;
        };
        let Some((OpAccess::Read, size)) = single_access(i, info) else {
            continue;
        };
        if image.is_readonly(addr, size) {
            out.mark(i.ip(), Pruned::ReadOnly);
        }
    }
}

/// An address expression: equal keys are equal addresses while no register
/// in them is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AddrKey {
    segment: Register,
    base: Register,
    index: Register,
    scale: u32,
    disp: u64,
    size: u64,
}

fn addr_key(i: &Instruction, size: u64) -> AddrKey {
    let (base, index, scale, disp) = if i.is_ip_rel_memory_operand() {
        (Register::None, Register::None, 0, i.ip_rel_memory_address())
    } else {
        (
            i.memory_base().full_register(),
            i.memory_index().full_register(),
            i.memory_index_scale(),
            i.memory_displacement64(),
        )
    };
    AddrKey {
        segment: segment(i),
        base,
        index,
        scale,
        disp,
        size,
    }
}

/// HardRace §4.3, restricted until exact (docs/binary-mode.md): an access
/// `y` is redundant when an earlier write `x` of the same basic block wrote
/// exactly the same bytes (same address expression, registers unchanged,
/// same size), nothing between them writes memory (a plain store may be a
/// release of a DWARF atomic) or synchronizes, and both lie within
/// [`TB_SAFE_INSNS`] instructions of the start of a translation block, so
/// no other thread runs between them. Then `y`'s check finds `x` (same
/// thread, same epoch) as the last write and only this thread's reads: it
/// cannot race; and `x`'s record answers every later check as `y`'s would.
fn redundant(
    insns: &[Instruction],
    leaders: &Leaders,
    entered_anywhere: &Ranges,
    walk: &mut Walk,
    info: &mut InstructionInfoFactory,
    out: &mut Pruning,
) {
    let Walk {
        since_block,
        after_end,
        written,
    } = walk;
    for i in insns {
        let pc = i.ip();
        if *after_end {
            *since_block = 0;
            written.clear();
        }
        if leaders.contains(pc) {
            written.clear();
        }
        *since_block += 1;
        let end = ends_block(i);
        *after_end = end;
        if end || entered_anywhere.contains(pc) || *since_block > TB_SAFE_INSNS {
            written.clear();
            continue;
        }
        // Without a memory operand and with nothing written, the
        // instruction neither is redundant, nor records, nor invalidates.
        let memory = may_access_once(i);
        if !memory && written.is_empty() {
            continue;
        }
        let used = info.info(i);
        let access = if memory {
            single_access_in(used.used_memory())
        } else {
            None
        };
        if let Some((_, size)) = access {
            let key = addr_key(i, size);
            if !out.pcs.contains_key(&pc) && written.contains(&key) {
                out.mark(pc, Pruned::Redundant);
            }
        }
        if used.used_memory().iter().any(|m| writes(m.access())) {
            written.clear();
        }
        for r in used.used_registers() {
            if writes(r.access()) {
                let full = r.register().full_register();
                written.retain(|k| k.base != full && k.index != full);
            }
        }
        if let Some((OpAccess::Write | OpAccess::ReadWrite, size)) = access {
            let key = addr_key(i, size);
            let recorded = !matches!(
                out.pcs.get(&pc),
                Some(Pruned::Frame | Pruned::PrivateStack | Pruned::ReadOnly)
            );
            let regs_kept = used.used_registers().iter().all(|r| {
                !writes(r.access())
                    || (r.register().full_register() != key.base
                        && r.register().full_register() != key.index)
            });
            if recorded && regs_kept && *since_block < TB_SAFE_INSNS {
                written.push(key);
            }
        }
    }
}

mod frame_flow;
#[cfg(test)]
mod tests;
