//! Buffered observation (unicorn patch 0008): the access buffer translated
//! code appends to, and the layout of its entries ([`AccessRecord`]), which
//! observers read in place as a batch.

use super::uc::UcRef;
use lard_detector_hw::event::{Access, AccessKind, Origin};
use std::ffi::c_void;
use unicorn_engine_sys as sys;

/// Most entries translated code appends between two checks of the access
/// buffer's limit: patch 0008 ends a translation block once it has generated
/// `UC_LARD_BUF_TB_MAX` (256) appends, so a block appends at most that plus
/// one instruction's (a handful); 1,024 leaves a wide margin.
pub(crate) const BUFFER_SLACK: usize = 1024;

/// The pointers of patch 0008's access buffer inside the engine
/// (`struct uc_lard_buffer`).
#[repr(C)]
struct RawBuffer {
    pos: *mut u64,
    limit: *mut u64,
}

/// Called by translated code (at the entry of a block that appends, patch
/// 0016) once the access buffer has passed its limit; must empty it
/// ([`AccessBuffer::clear`]).
pub type FlushCallback = unsafe extern "C" fn(*mut c_void);

extern "C" {
    /// Declared by patch 0008.
    fn uc_lard_buffer(uc: *mut sys::uc_engine, flush: FlushCallback) -> *mut RawBuffer;
}

/// The access buffer of buffered observation (patch 0008): translated code
/// appends one entry per observed access of an instruction decided
/// [`observe::BUFFERED`], inline and without calling the emulator: an
/// [`AccessRecord`] whose `bits` hold the access callback's `info` until the
/// emulator rewrites them ([`AccessBuffer::records_mut`]). The emulator
/// empties it, in order, before anything else it does and when the entry
/// of a block that appends finds it past its limit.
pub struct AccessBuffer {
    raw: *mut RawBuffer,
    /// `capacity` entries, allocated here (see `Drop`).
    start: *mut AccessRecord,
    capacity: usize,
}

impl AccessBuffer {
    /// Turns buffering on in `uc` with room for `entries` entries before a
    /// flush (plus the slack a block may append after its check).
    ///
    /// # Safety
    /// Call before anything is translated, after [`UcRef::clock`] and
    /// [`UcRef::observe`] (`flush` gets the latter's user data). The buffer
    /// must outlive every later `uc_emu_start` of the engine.
    pub unsafe fn new(uc: UcRef, flush: FlushCallback, entries: usize) -> AccessBuffer {
        let capacity = entries + BUFFER_SLACK;
        let words: Box<[AccessRecord]> = vec![
            AccessRecord {
                addr: 0,
                pc: 0,
                bits: 0
            };
            capacity
        ]
        .into_boxed_slice();
        let start = Box::into_raw(words) as *mut AccessRecord;
        let raw = uc_lard_buffer(uc.handle(), flush);
        let b = AccessBuffer {
            raw,
            start,
            capacity,
        };
        std::ptr::addr_of_mut!((*raw).limit).write_volatile(start.add(entries) as *mut u64);
        b.clear();
        b
    }

    /// Number of entries appended since the last [`AccessBuffer::clear`].
    #[inline]
    pub fn len(&self) -> usize {
        // SAFETY: `raw` lives as long as the engine; translated code is not
        // running while the emulator's code is (one thread).
        let pos =
            unsafe { std::ptr::addr_of!((*self.raw).pos).read_volatile() } as *mut AccessRecord;
        // SAFETY: pos points into the allocation, at or after start.
        let n = unsafe { pos.offset_from(self.start) } as usize;
        assert!(n <= self.capacity, "access buffer overflow");
        n
    }

    /// True when no entry is waiting.
    #[inline]
    pub fn is_empty(&self) -> bool {
        // SAFETY: as in `len`.
        unsafe {
            std::ptr::addr_of!((*self.raw).pos).read_volatile() as *mut AccessRecord == self.start
        }
    }

    /// The entries appended since the last [`AccessBuffer::clear`], oldest
    /// first (`bits` as translated code wrote them: the access callback's
    /// `info`, until the caller rewrites them).
    #[inline]
    pub fn records_mut(&mut self) -> &mut [AccessRecord] {
        // SAFETY: the first `len()` entries were written by translated code,
        // which does not run while this borrow lives.
        unsafe { std::slice::from_raw_parts_mut(self.start, self.len()) }
    }

    /// Empties the buffer.
    #[inline]
    pub fn clear(&self) {
        // SAFETY: as in `len`.
        unsafe { std::ptr::addr_of_mut!((*self.raw).pos).write_volatile(self.start as *mut u64) };
    }
}

impl Drop for AccessBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` as a boxed slice of `capacity` entries;
        // the engine is not running (its pointers are left dangling but are
        // only used by translated code).
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.start,
                self.capacity,
            )));
        }
    }
}

/// One access of a batch ([`Observer::accesses`](crate::observe::observer::Observer::accesses)), packed in three words
/// (the batch shares its origin): the layout unicorn patch 0008's access
/// buffer uses, so a batch is handed over where translated code wrote it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessRecord {
    /// First byte accessed.
    pub addr: u64,
    /// Address of the instruction.
    pub pc: u64,
    /// Size in bytes ([`AccessRecord::SIZE`]) and the [`AccessRecord::WRITE`],
    /// [`AccessRecord::TRACKED`] and [`AccessRecord::STACK`] flags.
    pub bits: u64,
}

impl AccessRecord {
    /// `bits`: the size in bytes.
    pub const SIZE: u64 = 0xff;
    /// `bits`: a write.
    pub const WRITE: u64 = 0x100;
    /// `bits`: an access to a thread's stack.
    pub const STACK: u64 = 0x400;
    /// `bits`: a Tracked access. (Size, write and Tracked sit where unicorn
    /// patch 0004's access `info` has them, so a buffered entry needs only
    /// its stack flag added.)
    pub const TRACKED: u64 = 0x1_0000;

    /// The `bits` of an access of `size` bytes.
    #[inline]
    pub fn pack(size: u32, write: bool, tracked: bool, stack: bool) -> u64 {
        u64::from(size) & Self::SIZE
            | u64::from(write) << 8
            | u64::from(stack) << 10
            | u64::from(tracked) << 16
    }

    /// The record of an access.
    #[inline]
    pub fn new(a: &Access) -> AccessRecord {
        AccessRecord {
            addr: a.addr,
            pc: a.pc,
            bits: Self::pack(a.size, a.kind == AccessKind::Write, a.tracked, a.stack),
        }
    }

    /// The access this record stands for, made by `origin`.
    #[inline]
    pub fn access(&self, origin: Origin) -> Access {
        Access {
            pc: self.pc,
            addr: self.addr,
            size: (self.bits & Self::SIZE) as u32,
            kind: if self.bits & Self::WRITE != 0 {
                AccessKind::Write
            } else {
                AccessKind::Read
            },
            tracked: self.bits & Self::TRACKED != 0,
            stack: self.bits & Self::STACK != 0,
            origin,
        }
    }
}
