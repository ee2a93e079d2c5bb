//! The guest address space: host-backed regions mapped into unicorn.
//!
//! Every guest mapping is host memory handed to unicorn with
//! `uc_mem_map_ptr`, so system calls can read and write guest buffers
//! directly through host pointers. Page permissions are unicorn's: a guest
//! write to read-only text faults in the guest, never in the host.
//!
//! **The window.** Guest addresses below [`WINDOW_END`] live in one host
//! reservation: guest address `a` is host address `base + a`. unicorn sees
//! it as one region (patch 0029) and each guest mapping in it as a range
//! with permissions, so a guest `mmap`, `mprotect` or `munmap` costs the
//! same however many mappings the process has (with a unicorn region per
//! mapping, each change rebuilds unicorn's view of all of them: quadratic
//! in the threads a program creates, two mappings per thread stack).
//!
//! **Direct guest addressing.** Translated code makes an access to the
//! window as a plain host access at `base + a` instead of a softmmu TLB
//! look-up (unicorn patch 0020; `--no-direct-memory` keeps the TLB). The
//! window's pages carry host permissions no wider than the guest's (none
//! for an unmapped page), so an access the guest may not make faults on the
//! host, and unicorn sends it on to the softmmu path, which gives the guest
//! the fault it would have had. A mapping outside the window, or one the
//! window cannot hold, has host memory of its own and is reached through
//! the TLB. A page that is writable and executable at once would let a
//! direct store change translated code unseen: the first such mapping turns
//! direct addressing off for the rest of the process.

mod window;
use crate::cpu::uc::{prot, UcError, UcRef};
use memmap2::MmapMut;
use std::collections::BTreeMap;
use window::{host_prot, Host, Window};

/// Guest page size.
pub const PAGE: u64 = 4096;

/// Rounds down to a page boundary.
pub fn page_floor(a: u64) -> u64 {
    a & !(PAGE - 1)
}

/// Rounds up to a page boundary (saturating).
pub fn page_ceil(a: u64) -> u64 {
    a.saturating_add(PAGE - 1) & !(PAGE - 1)
}

/// log2 of [`WINDOW_END`].
pub const WINDOW_BITS: u32 = 45;
/// Guest addresses below this live in the direct window (32 TiB).
pub const WINDOW_END: u64 = 1 << WINDOW_BITS;

/// Where the top-down mmap allocator starts (inside the window).
const MMAP_TOP: u64 = 0x1fff_0000_0000;
/// Lowest address the mmap allocator hands out.
const MMAP_BOTTOM: u64 = 0x1000_0000;

/// One mapped page range.
struct Region {
    len: u64,
    perms: u32,
    /// The host memory behind it (shared by the pieces of a split region).
    host: std::rc::Rc<Host>,
    /// Offset of this region's first byte within `host`.
    host_off: usize,
    /// What it is, for messages: "[stack]", "[heap]", an ELF path, "[mmap]".
    name: &'static str,
    /// A `MAP_SHARED` mapping: its host memory is shared with the other
    /// processes that map it (and with a forked child).
    shared: bool,
}

impl Region {
    fn in_window(&self) -> bool {
        matches!(*self.host, Host::Window(_))
    }
}

/// Why a memory operation failed (errno-style for system calls).
#[derive(Debug)]
pub enum MemError {
    /// No room or the host refused memory.
    NoMemory,
    /// Bad address, length or overlap.
    Invalid,
    /// Unicorn refused.
    Uc(UcError),
}

impl From<UcError> for MemError {
    fn from(e: UcError) -> Self {
        MemError::Uc(e)
    }
}

/// The address space.
pub struct Memory {
    uc: UcRef,
    regions: BTreeMap<u64, Region>,
    /// The region [`Memory::host_ptr`] found last, as `(start, end, perms,
    /// host address of start)`: the emulator reads the same few places
    /// (the stack, a lock) at every intercepted call. Forgotten whenever
    /// `regions` changes ([`Memory::regions_mut`]).
    last: std::cell::Cell<Option<(u64, u64, u32, *mut u8)>>,
    /// The direct window (None: every region has host memory of its own).
    window: Option<Window>,
    /// Whether translated code addresses the window directly (turned off
    /// for good by the first writable and executable page).
    direct: bool,
    /// What [`Memory::find_free`] learnt, as `(hi, bound)`: `hi` is
    /// [`MMAP_TOP`] or a mapped address, and no gap between mappings in
    /// `[hi, MMAP_TOP)` is longer than `bound` bytes, so a search for more
    /// starts at `hi`. Mapping only shrinks gaps; [`Memory::unmap`] keeps
    /// it true.
    free_above: std::cell::Cell<Option<(u64, u64)>>,
    /// Program break: start and current end (page-granular mapping behind it).
    pub brk_start: u64,
    brk_cur: u64,
    brk_mapped: u64,
}

impl Memory {
    /// An empty address space for `uc`: the window when the host can
    /// reserve it (one unicorn region, patch 0029), and direct guest
    /// addressing in it when `direct` asks for it. Call it before anything
    /// is mapped or translated.
    pub fn new(uc: UcRef, direct: bool) -> Memory {
        let window = Window::reserve().filter(|w| {
            // SAFETY: the reservation lives as long as this address space,
            // which the engine does not outlive (`Emulator`'s field order).
            unsafe { uc.window(w.base as *mut u8, WINDOW_END) }.is_ok()
        });
        let direct = direct
            && window
                .as_ref()
                .is_some_and(|w| uc.direct(w.base as u64, WINDOW_BITS).is_ok());
        Memory {
            uc,
            regions: BTreeMap::new(),
            last: std::cell::Cell::new(None),
            window,
            direct,
            free_above: std::cell::Cell::new(None),
            brk_start: 0,
            brk_cur: 0,
            brk_mapped: 0,
        }
    }

    /// Maps fresh zeroed memory at the page range `[addr, addr+len)`.
    pub fn map(
        &mut self,
        addr: u64,
        len: u64,
        perms: u32,
        name: &'static str,
    ) -> Result<(), MemError> {
        if !addr.is_multiple_of(PAGE)
            || len == 0
            || !len.is_multiple_of(PAGE)
            || addr.checked_add(len).is_none()
        {
            return Err(MemError::Invalid);
        }
        if self.overlaps(addr, len) {
            return Err(MemError::Invalid);
        }
        self.writable_code(perms);
        if let Some(w) = self.window.as_ref().filter(|_| Window::holds(addr, len)) {
            let ptr = w.map(addr, len, perms).ok_or(MemError::NoMemory)?;
            let r = self.insert(addr, len, perms, name, Host::Window(ptr), false);
            if let (Err(_), Some(w)) = (&r, &self.window) {
                w.release(addr, len);
            }
            return r;
        }
        let host = MmapMut::map_anon(len as usize).map_err(|_| MemError::NoMemory)?;
        self.insert(addr, len, perms, name, Host::Own(host), false)
    }

    /// Turns direct addressing off before a page becomes writable and
    /// executable at once: a direct store would not see the code it
    /// overwrites (the softmmu path drops the translations of a page it
    /// stores to).
    fn writable_code(&mut self, perms: u32) {
        let wx = prot::WRITE | prot::EXEC;
        if self.direct && perms & wx == wx && self.uc.direct(0, 0).is_ok() {
            self.direct = false;
        }
    }

    /// Maps `host` (a host mapping of at least `len` bytes, e.g. a
    /// `MAP_SHARED` one) at the page range `[addr, addr+len)`.
    pub fn map_host(
        &mut self,
        addr: u64,
        len: u64,
        perms: u32,
        name: &'static str,
        host: MmapMut,
        shared: bool,
    ) -> Result<(), MemError> {
        if !addr.is_multiple_of(PAGE)
            || len == 0
            || !len.is_multiple_of(PAGE)
            || addr.checked_add(len).is_none()
            || (host.len() as u64) < len
        {
            return Err(MemError::Invalid);
        }
        if self.overlaps(addr, len) {
            return Err(MemError::Invalid);
        }
        self.writable_code(perms);
        let exact = host.len() as u64 == len;
        let host = match self
            .window
            .as_ref()
            .filter(|_| exact && Window::holds(addr, len))
        {
            Some(w) => {
                let ptr = w.adopt(addr, len, host).ok_or(MemError::NoMemory)?;
                // Host permissions follow the guest's in the window.
                w.protect(addr, len, host_prot(perms));
                Host::Window(ptr)
            }
            None => Host::Own(host),
        };
        let in_window = matches!(host, Host::Window(_));
        let r = self.insert(addr, len, perms, name, host, shared);
        if let (Err(_), true, Some(w)) = (&r, in_window, &self.window) {
            w.release(addr, len);
        }
        r
    }

    /// Hands `host` to unicorn at `[addr, addr+len)` and records the region.
    fn insert(
        &mut self,
        addr: u64,
        len: u64,
        perms: u32,
        name: &'static str,
        host: Host,
        shared: bool,
    ) -> Result<(), MemError> {
        let host = std::rc::Rc::new(host);
        let ptr = host.as_ptr() as *mut u8;
        // SAFETY: the host memory lives in `regions` until the range is unmapped.
        unsafe { self.uc.map_ptr(addr, len, perms, ptr)? };
        if shared {
            // Another process may run a locked instruction on this memory
            // at the same moment, on another host CPU.
            self.uc.host_atomics();
        }
        self.regions_mut().insert(
            addr,
            Region {
                len,
                perms,
                host,
                host_off: 0,
                name,
                shared,
            },
        );
        Ok(())
    }

    /// Whether `addr` is in a `MAP_SHARED` mapping.
    pub fn is_shared(&self, addr: u64) -> bool {
        self.regions
            .range(..=addr)
            .next_back()
            .is_some_and(|(&s, r)| addr < s + r.len && r.shared)
    }

    /// Whether no page of `[addr, addr+len)` is mapped (a hint `mmap` may
    /// take the range).
    pub fn is_free(&self, addr: u64, len: u64) -> bool {
        addr.checked_add(len).is_some() && !self.overlaps(addr, len)
    }

    fn overlaps(&self, addr: u64, len: u64) -> bool {
        let end = addr + len;
        self.regions
            .range(..end)
            .next_back()
            .is_some_and(|(&s, r)| s + r.len > addr)
    }

    /// Finds a free page range of `len` bytes: the top of the highest gap
    /// below the mmap top that holds it. The search starts below the gaps
    /// an earlier one found too short ([`Memory::free_above`]), so a
    /// program whose mappings fill the space from the top down (thread
    /// stacks) does not walk all of them at each `mmap`.
    pub fn find_free(&self, len: u64) -> Option<u64> {
        let (mut hi, mut bound) = match self.free_above.get() {
            Some((hi, bound)) if bound < len => (hi, bound),
            _ => (MMAP_TOP, 0),
        };
        for (&start, r) in self.regions.range(..hi).rev() {
            let end = start + r.len;
            if end <= hi {
                if hi - end >= len {
                    self.free_above.set(Some((hi, bound)));
                    return Some(hi - len);
                }
                bound = bound.max(hi - end);
            }
            hi = hi.min(start);
            if hi < MMAP_BOTTOM + len {
                return None;
            }
        }
        (hi >= MMAP_BOTTOM + len).then(|| hi - len)
    }

    /// Keeps [`Memory::free_above`] true once `[s, e)` is unmapped: the gap
    /// it leaves, if above `hi`, raises the bound; one that reaches `hi`
    /// or below it (where `hi` stops being mapped) forgets it.
    fn freed(&self, s: u64, e: u64) {
        let Some((hi, bound)) = self.free_above.get() else {
            return;
        };
        if e <= hi || s >= MMAP_TOP {
            return;
        }
        if s <= hi {
            self.free_above.set(None);
            return;
        }
        let below = self
            .regions
            .range(..s)
            .next_back()
            .map_or(0, |(&rs, r)| rs + r.len);
        let above = self
            .regions
            .range(e..)
            .next()
            .map_or(MMAP_TOP, |(&rs, _)| rs)
            .min(MMAP_TOP);
        self.free_above
            .set(Some((hi, bound.max(above.saturating_sub(below)))));
    }

    /// Splits regions so that `at` is a region boundary (if inside one).
    fn split_at(&mut self, at: u64) {
        let Some((&start, _)) = self.regions.range(..at).next_back() else {
            return;
        };
        let r = self.regions_mut().get_mut(&start).expect("region present");
        if start + r.len <= at {
            return;
        }
        let head = at - start;
        let tail = Region {
            len: r.len - head,
            perms: r.perms,
            host: r.host.clone(),
            host_off: r.host_off + head as usize,
            name: r.name,
            shared: r.shared,
        };
        r.len = head;
        self.regions_mut().insert(at, tail);
    }

    /// Unmaps every mapped page in `[addr, addr+len)` (gaps are fine).
    pub fn unmap(&mut self, addr: u64, len: u64) -> Result<(), MemError> {
        let len = page_ceil(len);
        if !addr.is_multiple_of(PAGE) || addr.checked_add(len).is_none() {
            return Err(MemError::Invalid);
        }
        let end = addr + len;
        self.split_at(addr);
        self.split_at(end);
        let victims: Vec<u64> = self.regions.range(addr..end).map(|(&s, _)| s).collect();
        for s in victims {
            let r = self.regions_mut().remove(&s).expect("region present");
            self.freed(s, s + r.len);
            self.uc.unmap(s, r.len)?;
            if let (true, Some(w)) = (r.in_window(), &self.window) {
                w.release(s, r.len);
            }
        }
        Ok(())
    }

    /// Changes permissions of every mapped page in the range; ENOMEM-style
    /// error if part of it is unmapped.
    pub fn protect(&mut self, addr: u64, len: u64, perms: u32) -> Result<(), MemError> {
        let len = page_ceil(len);
        if !addr.is_multiple_of(PAGE) || addr.checked_add(len).is_none() {
            return Err(MemError::Invalid);
        }
        if len == 0 {
            return Ok(());
        }
        if !self.is_mapped(addr, len) {
            return Err(MemError::NoMemory);
        }
        self.writable_code(perms);
        let end = addr + len;
        self.split_at(addr);
        self.split_at(end);
        let keys: Vec<u64> = self.regions.range(addr..end).map(|(&s, _)| s).collect();
        for s in keys {
            self.last.set(None);
            let r = self.regions.get_mut(&s).expect("region present");
            let exec_changes = (r.perms ^ perms) & prot::EXEC != 0;
            self.uc.protect(s, r.len, perms)?;
            if let (true, Some(w)) = (r.in_window(), &self.window) {
                w.protect(s, r.len, host_prot(perms));
            }
            r.perms = perms;
            if exec_changes {
                // Code translated while the range was last executable may be
                // stale: unicorn invalidates translations only on stores to
                // executable pages, so a W^X JIT (RX, RW + rewrite, RX again)
                // would run the old code (guests/plain/jit_code.c). And
                // unicorn checks EXEC only when it translates: code
                // translated before the range lost EXEC would still run
                // (guests/plain/many_mappings.c).
                self.uc.remove_cache(s, s + r.len);
            }
        }
        self.coalesce(end)?;
        self.coalesce(addr)
    }

    /// Merges the region starting at `at` into the one just below it when
    /// they are two pieces of one host mapping with the same permissions,
    /// in lard's map and in unicorn's. unicorn keeps one RAM block and one
    /// memory region per piece, and each map or unmap rebuilds its view of
    /// every region: a program that grows a mapping page by page with
    /// `mprotect` (glibc's thread heaps) would otherwise pay for each step
    /// in proportion to the steps before it.
    fn coalesce(&mut self, at: u64) -> Result<(), MemError> {
        let Some(right) = self.regions.get(&at) else {
            return Ok(());
        };
        let Some((&start, left)) = self.regions.range(..at).next_back() else {
            return Ok(());
        };
        if start + left.len != at
            || left.perms != right.perms
            || !std::rc::Rc::ptr_eq(&left.host, &right.host)
            || left.host_off + left.len as usize != right.host_off
            || left.name != right.name
            || left.shared != right.shared
        {
            return Ok(());
        }
        let (len, perms) = (left.len + right.len, left.perms);
        // SAFETY: `host_off + len` lies within the host mapping, which both
        // pieces keep alive; unicorn writes guest stores through it as it
        // did through the pieces'.
        let ptr = unsafe { left.host.as_ptr().add(left.host_off) as *mut u8 };
        self.uc.unmap(start, len)?;
        // SAFETY: as above; the merged region stays in `regions` until the
        // range is unmapped.
        unsafe { self.uc.map_ptr(start, len, perms, ptr)? };
        let right = self.regions_mut().remove(&at).expect("region present");
        self.regions_mut()
            .get_mut(&start)
            .expect("region present")
            .len += right.len;
        Ok(())
    }

    /// True when every byte of the range is mapped.
    pub fn is_mapped(&self, addr: u64, len: u64) -> bool {
        let mut pos = addr;
        let end = addr.saturating_add(len);
        while pos < end {
            match self.regions.range(..=pos).next_back() {
                Some((&s, r)) if s + r.len > pos => pos = s + r.len,
                _ => return false,
            }
        }
        true
    }

    /// The regions, to change them: forgets [`Memory::host_ptr`]'s last hit.
    fn regions_mut(&mut self) -> &mut BTreeMap<u64, Region> {
        self.last.set(None);
        &mut self.regions
    }

    /// A host pointer to `len` bytes at `addr` if the whole range is mapped
    /// (contiguously in one host mapping) with at least `need` permissions.
    #[inline]
    pub fn host_ptr(&self, addr: u64, len: u64, need: u32) -> Option<*mut u8> {
        if let Some((s, e, perms, host)) = self.last.get() {
            if addr >= s
                && addr.checked_add(len).is_some_and(|end| end <= e)
                && perms & need == need
            {
                return Some(host.wrapping_add((addr - s) as usize));
            }
        }
        self.host_ptr_lookup(addr, len, need)
    }

    /// [`Memory::host_ptr`] through the region table.
    fn host_ptr_lookup(&self, addr: u64, len: u64, need: u32) -> Option<*mut u8> {
        let (&s, r) = self.regions.range(..=addr).next_back()?;
        if s + r.len <= addr || r.perms & need != need {
            return None;
        }
        self.last.set(Some((
            s,
            s + r.len,
            r.perms,
            r.host.as_ptr().wrapping_add(r.host_off) as *mut u8,
        )));
        let off = (addr - s) as usize + r.host_off;
        let mut end = addr.checked_add(len)?;
        // Allow ranges that continue into adjacent pieces of the same host mapping.
        let mut cur_end = s + r.len;
        while end > cur_end {
            let (&ns, nr) = self.regions.range(cur_end..).next()?;
            if ns != cur_end || !std::rc::Rc::ptr_eq(&nr.host, &r.host) || nr.perms & need != need {
                return None;
            }
            cur_end = ns + nr.len;
        }
        end = end.min(cur_end);
        let _ = end;
        Some(r.host.as_ptr().wrapping_add(off) as *mut u8)
    }

    /// A copy of `len` guest bytes that may span several host mappings (e.g.
    /// a buffer across two brk extensions), if every page has `need`.
    pub fn gather(&self, addr: u64, len: u64, need: u32) -> Option<Vec<u8>> {
        let end = addr.checked_add(len)?;
        let mut out = Vec::with_capacity(usize::try_from(len).ok()?);
        let mut pos = addr;
        while pos < end {
            let (&s, r) = self.regions.range(..=pos).next_back()?;
            if s + r.len <= pos || r.perms & need != need {
                return None;
            }
            let n = (s + r.len).min(end) - pos;
            let p = r
                .host
                .as_ptr()
                .wrapping_add((pos - s) as usize + r.host_off);
            // SAFETY: [pos, pos+n) lies inside this region's live host memory.
            out.extend_from_slice(unsafe { std::slice::from_raw_parts(p, n as usize) });
            pos += n;
        }
        Some(out)
    }

    /// Writes `bytes` back over a range [`Memory::gather`] accepted.
    pub fn scatter(&self, addr: u64, bytes: &[u8]) {
        let mut done = 0usize;
        while done < bytes.len() {
            let pos = addr + done as u64;
            let Some((&s, r)) = self.regions.range(..=pos).next_back() else {
                return;
            };
            if s + r.len <= pos {
                return;
            }
            let n = ((s + r.len - pos) as usize).min(bytes.len() - done);
            let p = r
                .host
                .as_ptr()
                .wrapping_add((pos - s) as usize + r.host_off) as *mut u8;
            // SAFETY: as in gather; guest memory is only touched by this thread.
            unsafe { std::ptr::copy_nonoverlapping(bytes[done..].as_ptr(), p, n) };
            done += n;
        }
    }

    /// A copy of guest bytes whatever their permissions (the emulator
    /// inspecting a mapping, e.g. an ELF header mapped PROT_NONE).
    pub fn peek(&self, addr: u64, len: u64) -> Option<Vec<u8>> {
        let p = self.host_ptr(addr, len, 0)?;
        Some(self.unprotected(addr, len, || {
            // SAFETY: host_ptr checked the range lies in live host memory,
            // readable on the host while `unprotected` runs this.
            unsafe { std::slice::from_raw_parts(p, len as usize) }.to_vec()
        }))
    }

    /// Runs `f` on a host pointer to `[addr, addr+len)`, writable on the
    /// host whatever the guest's permissions (a file's contents copied into
    /// a fresh private mapping); None if the range is not mapped in one
    /// host mapping.
    pub fn fill<R>(&self, addr: u64, len: u64, f: impl FnOnce(*mut u8) -> R) -> Option<R> {
        let p = self.host_ptr(addr, len, 0)?;
        Some(self.unprotected(addr, len, || f(p)))
    }

    /// Runs `f` with the window pages of `[addr, addr+len)` readable and
    /// writable on the host, then gives them back their guest permissions:
    /// the emulator's own accesses that ignore the guest's (the loader,
    /// the debugger).
    fn unprotected<R>(&self, addr: u64, len: u64, f: impl FnOnce() -> R) -> R {
        let Some(w) = &self.window else {
            return f();
        };
        let end = addr.saturating_add(len);
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let pieces: Vec<(u64, u64, u32)> = self
            .regions
            .range(..end)
            .rev()
            .take_while(|(&s, r)| s + r.len > addr)
            .filter(|(_, r)| r.in_window() && host_prot(r.perms) != rw)
            .map(|(&s, r)| (s, r.len, r.perms))
            .collect();
        for &(s, l, _) in &pieces {
            w.protect(s, l, rw);
        }
        let out = f();
        for &(s, l, perms) in &pieces {
            w.protect(s, l, host_prot(perms));
        }
        out
    }

    /// A readable guest byte slice.
    pub fn slice(&self, addr: u64, len: u64) -> Option<&[u8]> {
        if len == 0 {
            return Some(&[]);
        }
        let p = self.host_ptr(addr, len, prot::READ)?;
        // SAFETY: host_ptr checked the whole range lies in live host memory.
        Some(unsafe { std::slice::from_raw_parts(p, len as usize) })
    }

    /// A writable guest byte slice.
    #[allow(clippy::mut_from_ref)] // guest memory is shared with unicorn by design
    pub fn slice_mut(&self, addr: u64, len: u64) -> Option<&mut [u8]> {
        if len == 0 {
            return Some(&mut []);
        }
        let p = self.host_ptr(addr, len, prot::WRITE)?;
        // SAFETY: as above; the emulator is single-threaded, so no other
        // reference to these guest bytes is alive while the slice is used.
        Some(unsafe { std::slice::from_raw_parts_mut(p, len as usize) })
    }

    /// Makes `[addr, addr+len)` read back as zeros, as `MADV_DONTNEED` does
    /// on private anonymous memory (needs write permission, like
    /// `slice_mut`); false if the range is not writable guest memory. The
    /// whole pages of a private mapping go back to the host kernel instead
    /// of being written: zeroing them by hand faulted in, and cleared twice,
    /// every page a heap trim released. A `MAP_SHARED` mapping is zeroed
    /// byte by byte, as before.
    pub fn discard(&self, addr: u64, len: u64) -> bool {
        let Some(b) = self.slice_mut(addr, len) else {
            return false;
        };
        if self.is_shared(addr) {
            b.fill(0);
            return true;
        }
        let page = PAGE as usize;
        let p = b.as_mut_ptr() as usize;
        let start = p.next_multiple_of(page);
        let end = (p + b.len()) & !(page - 1);
        if end > start {
            // SAFETY: [start, end) lies inside `b`, a live private anonymous
            // host mapping owned by this address space; unicorn keeps host
            // pointers into it, which stay valid (the pages read as zeros).
            let r = unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED)
            };
            if r == 0 {
                b[..start - p].fill(0);
                b[end - p..].fill(0);
                return true;
            }
        }
        b.fill(0);
        true
    }

    /// Reads a little-endian u32 from guest memory.
    pub fn read_u32(&self, addr: u64) -> Option<u32> {
        self.slice(addr, 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    /// Reads a little-endian u64 from guest memory.
    pub fn read_u64(&self, addr: u64) -> Option<u64> {
        self.slice(addr, 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// Writes bytes into guest memory (needs write permission).
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Option<()> {
        self.slice_mut(addr, bytes.len() as u64)?
            .copy_from_slice(bytes);
        Some(())
    }

    /// Writes bytes ignoring permissions (loader, initial stack).
    pub fn poke(&self, addr: u64, bytes: &[u8]) -> Option<()> {
        let p = self.host_ptr(addr, bytes.len() as u64, 0)?;
        self.unprotected(addr, bytes.len() as u64, || {
            // SAFETY: host_ptr validated the range, writable on the host
            // while `unprotected` runs this.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) }
        });
        Some(())
    }

    /// Reads a NUL-terminated string (at most `max` bytes).
    pub fn read_cstr(&self, addr: u64, max: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        for i in 0..max as u64 {
            let b = *self.slice(addr + i, 1)?.first()?;
            if b == 0 {
                return Some(out);
            }
            out.push(b);
        }
        None
    }

    /// Sets up the program break just above `end` (the highest loaded byte).
    pub fn init_brk(&mut self, end: u64) {
        self.brk_start = page_ceil(end);
        self.brk_cur = self.brk_start;
        self.brk_mapped = self.brk_start;
    }

    /// The brk system call: moves the break if possible, returns the break.
    pub fn brk(&mut self, want: u64) -> u64 {
        if want < self.brk_start {
            return self.brk_cur;
        }
        let need = page_ceil(want);
        if need > self.brk_mapped {
            let len = need - self.brk_mapped;
            if self
                .map(self.brk_mapped, len, prot::READ | prot::WRITE, "[heap]")
                .is_err()
            {
                return self.brk_cur;
            }
            self.brk_mapped = need;
        }
        self.brk_cur = want;
        self.brk_cur
    }

    /// The name of the region containing `addr`, for fault messages.
    pub fn region_name(&self, addr: u64) -> Option<&'static str> {
        let (&s, r) = self.regions.range(..=addr).next_back()?;
        (s + r.len > addr).then_some(r.name)
    }

    /// The mapped region containing `addr`: (start, len).
    pub fn region_of(&self, addr: u64) -> Option<(u64, u64)> {
        let (&s, r) = self.regions.range(..=addr).next_back()?;
        (s + r.len > addr).then_some((s, r.len))
    }

    /// Every mapped region in address order: (start, len, perms, name).
    pub fn regions(&self) -> impl Iterator<Item = (u64, u64, u32, &'static str)> + '_ {
        self.regions
            .iter()
            .map(|(&s, r)| (s, r.len, r.perms, r.name))
    }

    /// Executable regions: (start, len) — for scanning code for LARDx86.
    pub fn executable_regions(&self) -> Vec<(u64, u64)> {
        self.regions
            .iter()
            .filter(|(_, r)| r.perms & prot::EXEC != 0)
            .map(|(&s, r)| (s, r.len))
            .collect()
    }
}

#[cfg(test)]
mod tests;
