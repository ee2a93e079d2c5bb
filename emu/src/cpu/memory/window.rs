//! Direct guest addressing: the host reservation guest memory below
//! [`WINDOW_END`] lives in, at a fixed offset.

use super::{PAGE, WINDOW_END};
use crate::cpu::uc::prot;
use memmap2::MmapMut;

/// The host memory behind a region (shared by the pieces of a split one).
pub(super) enum Host {
    /// A host mapping of its own, unmapped when the last piece goes.
    Own(MmapMut),
    /// Pages of the window at `base + guest address`: given back to the
    /// reservation page range by page range as the guest unmaps them.
    Window(*mut u8),
}

impl Host {
    pub(super) fn as_ptr(&self) -> *const u8 {
        match self {
            Host::Own(m) => m.as_ptr(),
            Host::Window(p) => *p,
        }
    }
}

/// The host reservation of direct guest addressing.
pub(super) struct Window {
    pub(super) base: usize,
}

/// The host protection of a guest page with `perms`: readable when the
/// guest may read or execute it (translation reads code), writable when
/// the guest may write it.
pub(super) fn host_prot(perms: u32) -> libc::c_int {
    let mut p = libc::PROT_NONE;
    if perms & (prot::READ | prot::WRITE | prot::EXEC) != 0 {
        p |= libc::PROT_READ;
    }
    if perms & prot::WRITE != 0 {
        p |= libc::PROT_WRITE;
    }
    p
}

impl Drop for Window {
    fn drop(&mut self) {
        // SAFETY: the reservation `reserve` made; the guest memory in it
        // goes with the address space that owns the window.
        unsafe { libc::munmap(self.base as *mut libc::c_void, (WINDOW_END + PAGE) as usize) };
    }
}

impl Window {
    /// Reserves `WINDOW_END` bytes and a guard page past them (an access
    /// that starts below the end and crosses it faults there).
    pub(super) fn reserve() -> Option<Window> {
        // SAFETY: a fresh anonymous reservation; no memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                (WINDOW_END + PAGE) as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(Window { base: p as usize })
    }

    pub(super) fn holds(addr: u64, len: u64) -> bool {
        addr.checked_add(len).is_some_and(|end| end <= WINDOW_END)
    }

    pub(super) fn host(&self, addr: u64) -> *mut u8 {
        (self.base + addr as usize) as *mut u8
    }

    /// Fresh zeroed pages at `[addr, addr+len)`.
    pub(super) fn map(&self, addr: u64, len: u64, perms: u32) -> Option<*mut u8> {
        // SAFETY: the range lies inside the reservation, which only this
        // address space maps into; MAP_FIXED replaces its reserved pages.
        let p = unsafe {
            libc::mmap(
                self.host(addr) as *mut libc::c_void,
                len as usize,
                host_prot(perms),
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(p as *mut u8)
    }

    /// Moves the host mapping `m` (exactly `len` bytes) to `[addr, addr+len)`.
    pub(super) fn adopt(&self, addr: u64, len: u64, m: MmapMut) -> Option<*mut u8> {
        if m.len() as u64 != len {
            return None;
        }
        // SAFETY: moves a mapping this function owns over reserved pages.
        let p = unsafe {
            libc::mremap(
                m.as_ptr() as *mut libc::c_void,
                len as usize,
                len as usize,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                self.host(addr) as *mut libc::c_void,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        // The mapping lives on at its new address; its old one is gone.
        std::mem::forget(m);
        Some(p as *mut u8)
    }

    /// Gives `[addr, addr+len)` back to the reservation.
    pub(super) fn release(&self, addr: u64, len: u64) {
        // SAFETY: as in `map`; the pages become inaccessible and their
        // memory goes back to the host.
        unsafe {
            libc::mmap(
                self.host(addr) as *mut libc::c_void,
                len as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
    }

    /// Sets the host protection of `[addr, addr+len)`.
    pub(super) fn protect(&self, addr: u64, len: u64, prot: libc::c_int) {
        // SAFETY: a range of mapped window pages.
        unsafe { libc::mprotect(self.host(addr) as *mut libc::c_void, len as usize, prot) };
    }
}
