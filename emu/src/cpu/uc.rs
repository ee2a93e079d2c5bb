//! A thin wrapper over unicorn's C API (`unicorn-engine-sys`).
//!
//! The emulator calls unicorn from inside its own hooks (system calls map
//! memory, the scheduler saves contexts, LARD ops write registers), so it uses
//! the raw handle everywhere rather than the `unicorn-engine` crate's safe
//! wrapper, whose hook proxy upgrades a weak reference and borrows a RefCell
//! on every call (≈110 ns per memory access, shared/notes). [`Uc`] owns the
//! engine; [`UcRef`] is a copyable handle used inside hooks.

pub use super::access_buffer::{AccessBuffer, AccessRecord, FlushCallback};
use std::ffi::{c_void, CStr};
use std::fmt;
use unicorn_engine_sys as sys;

pub use sys::RegisterX86 as Reg;

/// A unicorn error code with its message.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct UcError(pub sys::uc_error);

impl fmt::Debug for UcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for UcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SAFETY: uc_strerror returns a static C string for every code.
        let msg = unsafe { CStr::from_ptr(sys::uc_strerror(self.0)) };
        write!(f, "{} ({:?})", msg.to_string_lossy(), self.0)
    }
}

impl std::error::Error for UcError {}

fn check(e: sys::uc_error) -> Result<(), UcError> {
    if e == sys::uc_error::OK {
        Ok(())
    } else {
        Err(UcError(e))
    }
}

/// Page permissions as unicorn encodes them.
pub mod prot {
    /// Readable.
    pub const READ: u32 = 1;
    /// Writable.
    pub const WRITE: u32 = 2;
    /// Executable.
    pub const EXEC: u32 = 4;
    /// All three.
    pub const ALL: u32 = 7;
}

/// A hook callback for code and block hooks.
pub type CodeCallback = unsafe extern "C" fn(*mut sys::uc_engine, u64, u32, *mut c_void);
/// A hook callback for memory accesses.
pub type MemCallback =
    unsafe extern "C" fn(*mut sys::uc_engine, sys::MemType, u64, i32, i64, *mut c_void);
/// A hook callback for invalid memory accesses; returns true to continue.
pub type BadMemCallback =
    unsafe extern "C" fn(*mut sys::uc_engine, sys::MemType, u64, i32, i64, *mut c_void) -> bool;
/// A hook callback for the `syscall` instruction.
pub type SyscallCallback = unsafe extern "C" fn(*mut sys::uc_engine, *mut c_void);
/// A hook callback for `rdtsc`/`rdtscp`; returns non-zero when it set the
/// result registers itself.
pub type TscCallback = unsafe extern "C" fn(*mut sys::uc_engine, *mut c_void) -> i32;
/// A hook callback for invalid instructions; returns true to continue.
pub type InvalidCallback = unsafe extern "C" fn(*mut sys::uc_engine, *mut c_void) -> bool;

/// A copyable handle to a live engine, for use inside hooks: the engine
/// and its general-purpose registers in place (unicorn patch 0022; null if
/// unicorn did not give them, then every read goes through `uc_reg_read`).
#[derive(Clone, Copy, Debug)]
pub struct UcRef(*mut sys::uc_engine, *mut u64);

/// The index of `r` in the registers of [`UcRef`] (QEMU's order), if it
/// is one of the 16 general-purpose registers.
#[inline(always)]
const fn gpr_index(r: Reg) -> Option<usize> {
    Some(match r {
        Reg::RAX => 0,
        Reg::RCX => 1,
        Reg::RDX => 2,
        Reg::RBX => 3,
        Reg::RSP => 4,
        Reg::RBP => 5,
        Reg::RSI => 6,
        Reg::RDI => 7,
        Reg::R8 => 8,
        Reg::R9 => 9,
        Reg::R10 => 10,
        Reg::R11 => 11,
        Reg::R12 => 12,
        Reg::R13 => 13,
        Reg::R14 => 14,
        Reg::R15 => 15,
        _ => return None,
    })
}

/// The owned engine (closed on drop).
pub struct Uc(UcRef);

impl Uc {
    /// Opens an x86-64 engine.
    pub fn new_x86_64() -> Result<Uc, UcError> {
        let mut h = std::ptr::null_mut();
        // SAFETY: plain FFI call with a valid out-pointer.
        check(unsafe { sys::uc_open(sys::Arch::X86, sys::Mode::MODE_64, &mut h) })?;
        // SAFETY: h is a live engine.
        Ok(Uc(unsafe { UcRef::from_raw(h) }))
    }

    /// The handle for hooks and calls.
    pub fn r(&self) -> UcRef {
        self.0
    }
}

impl Drop for Uc {
    fn drop(&mut self) {
        // SAFETY: the handle was opened by uc_open and is closed once.
        unsafe {
            sys::uc_close(self.0 .0);
        }
    }
}

impl UcRef {
    /// The engine handle, for the patch series' entry points declared
    /// beside their users.
    #[inline]
    pub(crate) fn handle(self) -> *mut sys::uc_engine {
        self.0
    }

    /// Wraps the handle unicorn passes to a hook.
    ///
    /// # Safety
    /// `h` must be a live engine.
    pub unsafe fn from_raw(h: *mut sys::uc_engine) -> UcRef {
        // SAFETY: h is a live engine (the caller's promise).
        UcRef(h, unsafe { uc_lard_gprs(h) })
    }

    /// The vector of the CPU exception that last stopped the emulation with
    /// `UC_ERR_EXCEPTION` (0 for a divide error, 19 for a SIMD
    /// floating-point exception, ...), if any (patch 0023).
    pub fn last_exception(self) -> Option<u32> {
        // SAFETY: the engine is live.
        u32::try_from(unsafe { uc_lard_exception(self.0) }).ok()
    }

    /// Reads a 64-bit register (0 if unicorn refuses, which it does only for
    /// register ids it does not know).
    #[inline]
    pub fn reg(self, r: Reg) -> u64 {
        if let Some(i) = gpr_index(r).filter(|_| !self.1.is_null()) {
            // SAFETY: patch 0022's array of 16 registers lives as long as
            // the engine, and no translated code runs while the emulator
            // does (volatile: translated code writes it between calls).
            return unsafe { self.1.add(i).read_volatile() };
        }
        let mut v = 0u64;
        // SAFETY: the engine is live; v is a valid 8-byte out buffer.
        unsafe { sys::uc_reg_read(self.0, r as i32, &mut v as *mut u64 as *mut c_void) };
        v
    }

    /// Writes a 64-bit register.
    #[inline]
    pub fn set_reg(self, r: Reg, v: u64) {
        // SAFETY: as above.
        unsafe { sys::uc_reg_write(self.0, r as i32, &v as *const u64 as *const c_void) };
    }

    /// Reads a register of any width (up to 16 bytes: x87, XMM) into `buf`,
    /// little-endian; false if unicorn refuses.
    pub fn reg_bytes(self, r: Reg, buf: &mut [u8; 16]) -> bool {
        // SAFETY: the engine is live; buf holds the widest register read here.
        unsafe {
            sys::uc_reg_read(self.0, r as i32, buf.as_mut_ptr() as *mut c_void) == sys::uc_error::OK
        }
    }

    /// Writes a register of any width (up to 16 bytes) from `buf`.
    pub fn set_reg_bytes(self, r: Reg, buf: &[u8; 16]) -> bool {
        // SAFETY: as above.
        unsafe {
            sys::uc_reg_write(self.0, r as i32, buf.as_ptr() as *const c_void) == sys::uc_error::OK
        }
    }

    /// Maps host memory at `addr` (page-aligned, `len` a page multiple).
    ///
    /// # Safety
    /// `host` must stay valid for `len` bytes until the range is unmapped.
    pub unsafe fn map_ptr(
        self,
        addr: u64,
        len: u64,
        perms: u32,
        host: *mut u8,
    ) -> Result<(), UcError> {
        check(sys::uc_mem_map_ptr(
            self.0,
            addr,
            len,
            perms,
            host as *mut c_void,
        ))
    }

    /// From now on, atomic read-modify-writes (lock-prefixed instructions,
    /// `xchg`) are host atomic instructions on the guest's memory, atomic
    /// against other processes that share it (patch 0012); code translated
    /// before is dropped. Idempotent.
    pub fn host_atomics(self) {
        // SAFETY: the engine is live; the call sets a flag and flushes the
        // translation cache (not while translated code runs: the emulator
        // calls it from a system call).
        unsafe { uc_lard_host_atomics(self.0) }
    }

    /// Direct guest addressing (patch 0020): with `bits` > 0, translated
    /// code makes a guest access whose address is below `1 << bits` at host
    /// address `base + address` instead of through the softmmu TLB, and
    /// any other through the TLB; 0 turns it off. Code translated before is
    /// dropped. The caller maps every guest page below `1 << bits` at
    /// `base + address` with host permissions no wider than the guest's and
    /// keeps the rest of the window reserved (`PROT_NONE`): an access that
    /// faults on the host goes on in the softmmu path (unicorn's SIGSEGV
    /// handler, installed by the first call), so the guest sees what it
    /// would have seen without it.
    pub fn direct(self, base: u64, bits: u32) -> Result<(), UcError> {
        // SAFETY: the engine is live; not called while translated code runs
        // except from a hook, which the patch allows.
        check(unsafe { uc_lard_direct(self.0, base, bits as std::ffi::c_int) })
    }

    /// The window (patch 0029): guest addresses `[0, size)` are one
    /// unicorn region at host address `host + address`. From then on a
    /// mapping inside it made with [`UcRef::map_ptr`] at its own window
    /// address (`host + addr`) is recorded with its permissions only, so
    /// mapping, unmapping and protecting cost the same however many
    /// mappings there are; unicorn checks an access against the mapping's
    /// permissions as before, and a page no mapping holds is unmapped.
    ///
    /// # Safety
    /// `host` must be a reservation of at least `size` bytes that stays
    /// mapped (its pages may be `PROT_NONE`) while the engine runs; call it
    /// once, before anything is mapped below `size`.
    pub unsafe fn window(self, host: *mut u8, size: u64) -> Result<(), UcError> {
        check(uc_lard_window(self.0, host as *mut c_void, size))
    }

    /// Unmaps a page range.
    pub fn unmap(self, addr: u64, len: u64) -> Result<(), UcError> {
        // SAFETY: the engine is live.
        check(unsafe { sys::uc_mem_unmap(self.0, addr, len) })
    }

    /// Changes the permissions of a page range.
    pub fn protect(self, addr: u64, len: u64, perms: u32) -> Result<(), UcError> {
        // SAFETY: the engine is live.
        check(unsafe { sys::uc_mem_protect(self.0, addr, len, perms) })
    }

    /// Reads guest memory through unicorn (ignores page permissions).
    pub fn read(self, addr: u64, buf: &mut [u8]) -> Result<(), UcError> {
        // SAFETY: buf is a valid buffer of the given length.
        check(unsafe {
            sys::uc_mem_read(
                self.0,
                addr,
                buf.as_mut_ptr() as *mut c_void,
                buf.len() as u64,
            )
        })
    }

    /// Starts (or resumes) emulation at `begin` until stopped.
    pub fn start(self, begin: u64) -> Result<(), UcError> {
        // SAFETY: the engine is live; until=0 is never reached by user code.
        check(unsafe { sys::uc_emu_start(self.0, begin, 0, 0, 0) })
    }

    /// Asks the running emulation to stop at the next block boundary.
    #[inline]
    pub fn stop(self) {
        // SAFETY: the engine is live; callable from hooks.
        unsafe { sys::uc_emu_stop(self.0) };
    }

    /// Discards translated code for `[begin, end)` so new hooks take effect.
    pub fn remove_cache(self, begin: u64, end: u64) {
        // UC_CTL_WRITE(UC_CTL_TB_REMOVE_CACHE, 2)
        let ctl = sys::ControlType(sys::ControlType::TB_REMOVE_CACHE.0 | (1 << 30) | (2 << 26));
        // SAFETY: variadic call with the two u64 arguments this control takes.
        unsafe { sys::uc_ctl(self.0, ctl, begin, end) };
    }

    /// # Safety
    /// `cb` must have the signature unicorn expects for `kind`, and `data`
    /// must stay valid for as long as the engine runs.
    unsafe fn hook_raw(
        self,
        kind: sys::HookType,
        cb: *mut c_void,
        data: *mut c_void,
        begin: u64,
        end: u64,
    ) -> Result<(), UcError> {
        let mut h: sys::uc_hook = 0;
        // SAFETY: cb has the signature unicorn expects for `kind`; data stays
        // valid for the engine's lifetime (the Machine is boxed and outlives it).
        check(sys::uc_hook_add(
            self.0,
            &mut h,
            kind.0 as i32,
            cb,
            data,
            begin,
            end,
        ))
    }

    /// Adds a code hook on `[begin, end]` (inclusive; begin > end means everywhere).
    ///
    /// # Safety
    /// `data` must stay valid for as long as the engine runs.
    pub unsafe fn hook_code(
        self,
        cb: CodeCallback,
        data: *mut c_void,
        begin: u64,
        end: u64,
    ) -> Result<(), UcError> {
        self.hook_raw(sys::HookType::CODE, cb as *mut c_void, data, begin, end)
    }

    /// Adds a hook of `kind` on `[begin, end]` and returns its handle, for
    /// [`UcRef::hook_del`] (a debugger's hooks come and go).
    ///
    /// # Safety
    /// `cb` must have the signature unicorn expects for `kind`, and `data`
    /// must stay valid until the hook is deleted or the engine closed.
    pub unsafe fn hook_add(
        self,
        kind: sys::HookType,
        cb: *mut c_void,
        data: *mut c_void,
        begin: u64,
        end: u64,
    ) -> Result<sys::uc_hook, UcError> {
        let mut h: sys::uc_hook = 0;
        // SAFETY: as the caller promised.
        check(sys::uc_hook_add(
            self.0,
            &mut h,
            kind.0 as i32,
            cb,
            data,
            begin,
            end,
        ))?;
        Ok(h)
    }

    /// Deletes a hook added with [`UcRef::hook_add`].
    pub fn hook_del(self, h: sys::uc_hook) {
        // SAFETY: the engine is live; an unknown handle is refused.
        unsafe { sys::uc_hook_del(self.0, h) };
    }

    /// Drops every TLB entry, so that memory hooks added since take effect
    /// (unicorn decides the slow path per page when it fills the TLB).
    pub fn flush_tlb(self) {
        // UC_CTL_WRITE(UC_CTL_TLB_FLUSH, 0)
        let ctl = sys::ControlType(sys::ControlType::TLB_FLUSH.0 | (1 << 30));
        // SAFETY: this control takes no arguments.
        unsafe { sys::uc_ctl(self.0, ctl) };
    }

    /// Adds a block hook everywhere.
    ///
    /// # Safety
    /// `data` must stay valid for as long as the engine runs.
    pub unsafe fn hook_block(self, cb: CodeCallback, data: *mut c_void) -> Result<(), UcError> {
        self.hook_raw(sys::HookType::BLOCK, cb as *mut c_void, data, 1, 0)
    }

    /// Adds a read+write memory hook everywhere.
    ///
    /// # Safety
    /// `data` must stay valid for as long as the engine runs.
    pub unsafe fn hook_mem(self, cb: MemCallback, data: *mut c_void) -> Result<(), UcError> {
        let kind = sys::HookType(sys::HookType::MEM_READ.0 | sys::HookType::MEM_WRITE.0);
        self.hook_raw(kind, cb as *mut c_void, data, 1, 0)
    }

    /// Adds a hook on accesses to unmapped or protected memory.
    ///
    /// # Safety
    /// `data` must stay valid for as long as the engine runs.
    pub unsafe fn hook_bad_mem(self, cb: BadMemCallback, data: *mut c_void) -> Result<(), UcError> {
        let kind = sys::HookType(
            sys::HookType::MEM_READ_UNMAPPED.0
                | sys::HookType::MEM_WRITE_UNMAPPED.0
                | sys::HookType::MEM_FETCH_UNMAPPED.0
                | sys::HookType::MEM_READ_PROT.0
                | sys::HookType::MEM_WRITE_PROT.0
                | sys::HookType::MEM_FETCH_PROT.0,
        );
        self.hook_raw(kind, cb as *mut c_void, data, 1, 0)
    }

    /// Adds the `syscall` instruction hook.
    ///
    /// # Safety
    /// `data` must stay valid for as long as the engine runs.
    pub unsafe fn hook_syscall(
        self,
        cb: SyscallCallback,
        data: *mut c_void,
    ) -> Result<(), UcError> {
        let mut h: sys::uc_hook = 0;
        // UC_HOOK_INSN takes the instruction id as an extra variadic int.
        check({
            sys::uc_hook_add(
                self.0,
                &mut h,
                sys::HookType::INSN.0 as i32,
                cb as *mut c_void,
                data,
                1,
                0,
                sys::X86Insn::SYSCALL as i32,
            )
        })
    }

    /// Adds `cb` for `rdtsc` and `rdtscp`, which return the host's
    /// time-stamp counter unless a hook sets the result.
    ///
    /// # Safety
    /// `data` must stay valid for as long as the engine runs.
    pub unsafe fn hook_tsc(self, cb: TscCallback, data: *mut c_void) -> Result<(), UcError> {
        for insn in [sys::X86Insn::RDTSC, sys::X86Insn::RDTSCP] {
            let mut h: sys::uc_hook = 0;
            // UC_HOOK_INSN takes the instruction id as an extra variadic int.
            check(sys::uc_hook_add(
                self.0,
                &mut h,
                sys::HookType::INSN.0 as i32,
                cb as *mut c_void,
                data,
                1,
                0,
                insn as i32,
            ))?;
        }
        Ok(())
    }

    /// Adds the invalid-instruction hook.
    ///
    /// # Safety
    /// `data` must stay valid for as long as the engine runs.
    pub unsafe fn hook_invalid(
        self,
        cb: InvalidCallback,
        data: *mut c_void,
    ) -> Result<(), UcError> {
        self.hook_raw(sys::HookType::INSN_INVALID, cb as *mut c_void, data, 1, 0)
    }
}

/// The counters the patched core keeps inside translated code
/// (emu/unicorn-patches/0003, 0015, 0021). Every translation block's
/// prologue spends one block of the quantum and counts the block's
/// instructions — once no block is left or the count has reached
/// `insn_limit`, emulation stops there, before the block executes or
/// counts. No callback per block. The quantum and the count since `base`
/// are one word (`blocks_left << CLOCK_SHIFT | count - base`, one add per
/// block), which translated code keeps in a host register and stores here
/// whenever C code or the emulator may look.
#[repr(C)]
#[derive(Debug, Default)]
struct RawClock {
    word: i64,
    base: u64,
    insn_limit: u64,
    /// `insn_limit - base`, what the prologue compares the word's count with.
    limit_rel: u64,
}

/// Bits of [`RawClock::word`] below the block count (the patch's
/// `LARD_CLOCK_SHIFT`).
const CLOCK_SHIFT: u32 = 37;
/// Mask of the word's count.
const CLOCK_LOW: u64 = (1 << CLOCK_SHIFT) - 1;
/// The most blocks one budget holds: the word's high part is signed, and a
/// block of at most 512 instructions must not carry out of the count.
pub const MAX_BUDGET_BLOCKS: u64 = (1 << (63 - CLOCK_SHIFT)) - 1;

extern "C" {
    /// Declared by patch 0003 (not in unicorn-engine-sys's bindings, which
    /// come from the unpatched header).
    fn uc_lard_clock(uc: *mut sys::uc_engine) -> *mut RawClock;
    /// Declared by patch 0016.
    fn uc_lard_clock_limit(uc: *mut sys::uc_engine, on: bool);
}

/// A handle to the engine's instruction clock (see `RawClock`), valid while
/// the engine lives. Translated code updates it while `uc_emu_start` runs;
/// hooks and the run loop read it on the same thread.
#[derive(Clone, Copy, Debug)]
pub struct Clock(*mut RawClock);

impl Clock {
    fn word(self) -> i64 {
        // SAFETY: the pointer stays valid for the engine's lifetime and only
        // this thread runs translated code, which stores its register
        // before any hook or helper can read it.
        unsafe { std::ptr::addr_of!((*self.0).word).read_volatile() }
    }

    fn base(self) -> u64 {
        // SAFETY: as above.
        unsafe { std::ptr::addr_of!((*self.0).base).read_volatile() }
    }

    /// Sets everything but `insn_limit` from the block count, the count and
    /// the limit.
    fn set(self, blocks: i64, insns: u64, insn_limit: u64) {
        // SAFETY: as above; translated code reloads its register after any
        // hook or helper and at its entry.
        unsafe {
            std::ptr::addr_of_mut!((*self.0).word).write_volatile(blocks << CLOCK_SHIFT);
            std::ptr::addr_of_mut!((*self.0).base).write_volatile(insns);
            std::ptr::addr_of_mut!((*self.0).insn_limit).write_volatile(insn_limit);
            // Below 2^63 for the prologue's signed test (patch 0015).
            std::ptr::addr_of_mut!((*self.0).limit_rel)
                .write_volatile(insn_limit.saturating_sub(insns).min(i64::MAX as u64));
        }
    }

    /// Instructions of the translation blocks entered so far.
    #[inline]
    pub fn insns(self) -> u64 {
        self.base() + (self.word() as u64 & CLOCK_LOW)
    }

    /// Block entries left in the quantum (≤ 0 once it is exhausted).
    #[inline]
    pub fn blocks_left(self) -> i64 {
        self.word() >> CLOCK_SHIFT
    }

    /// Sets the instruction count (a debugger undoing the count of a
    /// translation block it re-entered in the middle: emu/src/gdb/hook.rs).
    pub fn set_insns(self, insns: u64) {
        // SAFETY: as above.
        let limit = unsafe { std::ptr::addr_of!((*self.0).insn_limit).read_volatile() };
        self.set(self.blocks_left(), insns, limit);
    }

    /// Sets the quantum (blocks to execute, at most [`MAX_BUDGET_BLOCKS`])
    /// and the instruction limit for the next `uc_emu_start`.
    pub fn set_budget(self, blocks: u64, insn_limit: u64) {
        let blocks = blocks.min(MAX_BUDGET_BLOCKS) as i64;
        // A count of 2^63 instructions is never reached.
        self.set(blocks, self.insns(), insn_limit.min(i64::MAX as u64));
    }
}

impl UcRef {
    /// Turns on instruction counting inside translated code and returns the
    /// clock. Must be called before anything is translated.
    pub fn clock(self) -> Clock {
        // SAFETY: the engine is live; the patched core returns a pointer into
        // its own state that lives as long as the engine.
        Clock(unsafe { uc_lard_clock(self.0) })
    }

    /// Whether the blocks translated from now on test the clock's
    /// instruction limit (patch 0016; on after [`UcRef::clock`]). Off, a
    /// block's prologue leaves the limit alone, which must then stay
    /// `u64::MAX`; turning the test on drops every translated block, so
    /// that all of them test it. Cheap when nothing changes.
    pub fn clock_limit(self, on: bool) {
        // SAFETY: the engine is live; not called while translated code runs.
        unsafe { uc_lard_clock_limit(self.0, on) }
    }
}

/// Translate-time observation (emu/unicorn-patches/0004): the flags a
/// decision returns and the bits of an access's `info`.
pub mod observe {
    /// Call the access callback before every memory access of the instruction.
    pub const MEM: u32 = 1;
    /// Call the instruction callback before the instruction (like a code hook).
    pub const INSN_CALL: u32 = 2;
    /// `info`: the access is a store.
    pub const WRITE: u32 = 0x100;
    /// `info`: a C helper inside the CPU made the access (fxsave, x87 80-bit, cmpxchg16b...).
    pub const HELPER: u32 = 0x200;
    /// `info`: the access size in bytes.
    pub const SIZE_MASK: u32 = 0xff;
    /// A decision's tag (16 bits) is handed back in `info` shifted by this.
    pub const TAG_SHIFT: u32 = 16;
    /// With [`MEM`]: append the accesses to the [`AccessBuffer`](super::AccessBuffer)
    /// instead of calling the access callback (patch 0008).
    pub const BUFFERED: u32 = 4;
    /// With [`MEM`] and not [`BUFFERED`]: the observation call also makes
    /// the access (patch 0009): smaller translated code, no inline TLB lookup.
    pub const IN_HELPER: u32 = 8;
    /// With [`MEM`]: add 1 to the [`AccessCounters`](super::AccessCounters)
    /// slot in the tag's high byte instead of calling the access callback
    /// (patch 0011): inline, no call.
    pub const COUNT: u32 = 16;
    /// The instruction itself adds 1 to the [`AccessCounters`](super::AccessCounters)
    /// slot in the tag's high byte before it runs (patch 0011): inline, no
    /// call.
    pub const INSN_COUNT: u32 = 32;
}

/// Decides, once per translation of the instruction at `pc`, what of it is
/// observed: [`observe`] flags, plus a tag in the high 16 bits.
pub type DecideCallback = unsafe extern "C" fn(*mut c_void, u64) -> u32;
/// An observed access `(addr, pc, info)` about to happen; non-zero stops
/// before it (after calling `uc_emu_stop`), the CPU state restored to the
/// instruction's start. Must not write registers.
pub type AccessCallback = unsafe extern "C" fn(*mut c_void, u64, u64, u32) -> i32;
/// The instruction call at `pc` (registers synced, as in a code hook).
pub type InsnCallback = unsafe extern "C" fn(*mut c_void, u64);

extern "C" {
    /// Declared by patch 0004.
    fn uc_lard_observe(
        uc: *mut sys::uc_engine,
        decide: DecideCallback,
        on_access: AccessCallback,
        on_insn: InsnCallback,
        opaque: *mut c_void,
    );
}

impl UcRef {
    /// Turns on translate-time observation (patch 0004) for everything
    /// translated from now on. A decision must stay the same while code
    /// translated under it lives: flush a range ([`UcRef::remove_cache`])
    /// when its decision changes.
    ///
    /// # Safety
    /// `data` must stay valid for as long as the engine runs, and the
    /// callbacks must treat it as their user data.
    pub unsafe fn observe(
        self,
        decide: DecideCallback,
        on_access: AccessCallback,
        on_insn: InsnCallback,
        data: *mut c_void,
    ) {
        uc_lard_observe(self.0, decide, on_access, on_insn, data);
    }
}

extern "C" {
    /// Declared by patch 0023.
    fn uc_lard_exception(uc: *mut sys::uc_engine) -> std::ffi::c_int;
}

extern "C" {
    /// Declared by patch 0012.
    fn uc_lard_host_atomics(uc: *mut sys::uc_engine);
}

extern "C" {
    /// Declared by patch 0020.
    fn uc_lard_direct(uc: *mut sys::uc_engine, base: u64, bits: std::ffi::c_int) -> sys::uc_error;
    fn uc_lard_gprs(uc: *mut sys::uc_engine) -> *mut u64;
}

extern "C" {
    /// Declared by patch 0029.
    fn uc_lard_window(uc: *mut sys::uc_engine, host: *mut c_void, size: u64) -> sys::uc_error;
}

extern "C" {
    /// Declared by patch 0011.
    fn uc_lard_counts(uc: *mut sys::uc_engine, counts: *mut u64, n: u32);
}

/// The counters of counted observation (patch 0011): each access of an
/// instruction decided [`observe::COUNT`] adds 1 to the slot its tag's high
/// byte names, inline in translated code, before the access (where the
/// access callback would have been called).
pub struct AccessCounters {
    slots: *mut u64,
    n: usize,
}

impl AccessCounters {
    /// `n` zeroed slots, handed to the engine for everything translated
    /// from now on.
    ///
    /// # Safety
    /// The counters must outlive every run of the engine (translated code
    /// keeps their address); only one set per engine.
    pub unsafe fn new(uc: UcRef, n: usize) -> AccessCounters {
        let slots = Box::into_raw(vec![0u64; n].into_boxed_slice()) as *mut u64;
        uc_lard_counts(uc.0, slots, n as u32);
        AccessCounters { slots, n }
    }

    /// The count in slot `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        assert!(i < self.n);
        // SAFETY: `i` is in the allocation; translated code, the only other
        // writer, does not run while the emulator's code does (one thread).
        unsafe { self.slots.add(i).read_volatile() }
    }
}

impl Drop for AccessCounters {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` as a boxed slice of `n` slots; the
        // engine is not running (see AccessBuffer's Drop).
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.slots, self.n,
            )));
        }
    }
}

/// A saved CPU context (all registers), owned.
pub struct Context(*mut sys::uc_context);

impl Context {
    /// Allocates a context for `uc`.
    pub fn new(uc: UcRef) -> Result<Context, UcError> {
        let mut c = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        check(unsafe { sys::uc_context_alloc(uc.0, &mut c) })?;
        Ok(Context(c))
    }

    /// Saves the engine's current registers into this context.
    pub fn save(&mut self, uc: UcRef) -> Result<(), UcError> {
        // SAFETY: both pointers are live.
        check(unsafe { sys::uc_context_save(uc.0, self.0) })
    }

    /// Loads this context into the engine's registers.
    pub fn restore(&self, uc: UcRef) -> Result<(), UcError> {
        // SAFETY: both pointers are live.
        check(unsafe { sys::uc_context_restore(uc.0, self.0) })
    }

    /// Reads a register of the saved context.
    pub fn reg(&self, r: Reg) -> u64 {
        let mut v = 0u64;
        // SAFETY: valid context and out buffer.
        unsafe { sys::uc_context_reg_read(self.0, r as i32, &mut v as *mut u64 as *mut c_void) };
        v
    }

    /// Reads a register of any width (up to 16 bytes) of the saved context.
    pub fn reg_bytes(&self, r: Reg, buf: &mut [u8; 16]) -> bool {
        // SAFETY: valid context; buf holds the widest register read here.
        unsafe {
            sys::uc_context_reg_read(self.0, r as i32, buf.as_mut_ptr() as *mut c_void)
                == sys::uc_error::OK
        }
    }

    /// Writes a register of any width (up to 16 bytes) of the saved context.
    pub fn set_reg_bytes(&mut self, r: Reg, buf: &[u8; 16]) -> bool {
        // SAFETY: valid context and input buffer.
        unsafe {
            sys::uc_context_reg_write(self.0, r as i32, buf.as_ptr() as *const c_void)
                == sys::uc_error::OK
        }
    }

    /// Writes a register of the saved context.
    pub fn set_reg(&mut self, r: Reg, v: u64) {
        // SAFETY: valid context and input buffer.
        unsafe { sys::uc_context_reg_write(self.0, r as i32, &v as *const u64 as *const c_void) };
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: allocated by uc_context_alloc, freed once.
        unsafe {
            sys::uc_context_free(self.0);
        }
    }
}
