//! Memory calls: `mmap` (private copies of files, the host's shared
//! memory for `MAP_SHARED`, shared objects registered as they are mapped),
//! `mprotect`, `munmap`, `brk`, `mremap`, `madvise`, `mincore`.

use super::{host, Call, Made, Ret, Val, EFAULT, EINVAL, ENOMEM};
use crate::binary::objects::{LoadedObject, ObjectKind};
use crate::cpu::memory::{page_ceil, page_floor, MemError, PAGE};
use crate::cpu::uc::prot;
use crate::linux::kernel::{Kernel, Notice};
use crate::linux::sysroot;
use syscalls::Sysno;

/// The top of a process's address space (x86-64, 4-level paging): an
/// `mmap` hint reaching above it is ignored, as natively.
const TASK_SIZE: u64 = 0x7fff_ffff_f000;

const MAP_SHARED: u64 = 0x01;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const MAP_FIXED_NOREPLACE: u64 = 0x100000;

impl Kernel<'_> {
    /// The memory calls.
    pub(super) fn memory_call(&mut self, c: &mut Call) -> Made {
        let a = c.a;
        Ok(match c.sys {
            Sysno::mmap => self.sys_mmap(a),
            Sysno::mprotect => self.sys_mprotect(a),
            Sysno::munmap => {
                let len = page_ceil(a[1]);
                if !a[0].is_multiple_of(PAGE) || len == 0 {
                    return Ok(Val(-EINVAL));
                }
                self.notify(Notice::Unmapped { start: a[0], len });
                match self.cpu.mem.unmap(a[0], len) {
                    Ok(()) => Val(0),
                    Err(_) => Val(-EINVAL),
                }
            }
            Sysno::brk => Val(self.cpu.mem.brk(a[0]) as i64),
            Sysno::mremap => self.sys_mremap(a),
            Sysno::madvise => {
                // MADV_DONTNEED on private anonymous memory reads back zeros.
                if a[2] == 4 {
                    self.cpu.mem.discard(a[0], a[1]);
                }
                Val(0)
            }
            Sysno::mincore => self.sys_mincore(a),
            _ => return self.unsupported(c),
        })
    }

    /// `mincore`: every mapped page is resident (guest memory is the
    /// emulator's own, which it does not page out on its own).
    fn sys_mincore(&mut self, a: [u64; 6]) -> Ret {
        let [addr, len, vec, ..] = a;
        if !addr.is_multiple_of(PAGE) {
            return Val(-EINVAL);
        }
        let len = page_ceil(len);
        if !self.cpu.mem.is_mapped(addr, len) {
            return Val(-ENOMEM);
        }
        let resident = vec![1u8; (len / PAGE) as usize];
        match self.cpu.mem.write(vec, &resident) {
            Some(()) => Val(0),
            None => Val(-EFAULT),
        }
    }

    fn map_err(e: MemError) -> Ret {
        match e {
            MemError::NoMemory => Val(-ENOMEM),
            _ => Val(-EINVAL),
        }
    }

    fn sys_mmap(&mut self, a: [u64; 6]) -> Ret {
        let [addr, len, prot_, flags, fd, off] = a;
        if len == 0 || off % PAGE != 0 {
            return Val(-EINVAL);
        }
        let len = page_ceil(len);
        let perms = (prot_ & 7) as u32;
        let fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0;
        let at = if fixed {
            if addr % PAGE != 0 {
                return Val(-EINVAL);
            }
            if flags & MAP_FIXED != 0 {
                self.notify(Notice::Unmapped { start: addr, len });
                if let Err(e) = self.cpu.mem.unmap(addr, len) {
                    return Self::map_err(e);
                }
            }
            addr
        } else if addr != 0
            && addr % PAGE == 0
            && addr.saturating_add(len) <= TASK_SIZE
            && self.cpu.mem.is_free(addr, len)
        {
            addr
        } else {
            match self.cpu.mem.find_free(len) {
                Some(a) => a,
                None => return Val(-ENOMEM),
            }
        };
        // File contents are copied in (private mappings), through host
        // memory made writable for the copy.
        let file = flags & MAP_ANONYMOUS == 0;
        let name = if file { "[file]" } else { "[mmap]" };
        // MAP_SHARED memory is the host's shared memory, so that processes
        // (a forked child, another process mapping the file) share it. A
        // read-only shared file mapping is a copy, as before: no process can
        // write through it.
        if flags & MAP_SHARED != 0 && (!file || perms & prot::WRITE != 0) {
            let backing = if file { Some((fd, off)) } else { None };
            return match self.map_shared(at, len, perms, backing) {
                Ok(()) => {
                    if file && off == 0 {
                        self.register_object(at, len, fd);
                    }
                    Val(at as i64)
                }
                Err(e) => Val(e),
            };
        }
        if let Err(e) = self.cpu.mem.map(at, len, perms, name) {
            return Self::map_err(e);
        }
        if file {
            let r = self
                .cpu
                .mem
                .fill(at, len, |p| {
                    host(Sysno::pread64, [fd, p as u64, len, off, 0, 0])
                })
                .expect("just mapped");
            if r < 0 {
                let _ = self.cpu.mem.unmap(at, len);
                return Val(r);
            }
        }
        if file && off == 0 {
            self.register_object(at, len, fd);
        }
        if perms & prot::EXEC != 0 {
            self.notify(Notice::CodeMapped { start: at, len });
        }
        Val(at as i64)
    }

    /// A `MAP_SHARED` mapping of `len` bytes at `at`: of the file `fd` at
    /// `off`, or shared anonymous memory (`/dev/zero`, as the kernel makes
    /// it). Returns an errno on failure.
    fn map_shared(
        &mut self,
        at: u64,
        len: u64,
        perms: u32,
        file: Option<(u64, u64)>,
    ) -> Result<(), i64> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let zero;
        let (fd, off) = match file {
            Some((fd, off)) => (fd as i32, off),
            None => {
                zero = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/zero")
                    .map_err(|_| -ENOMEM)?;
                (zero.as_raw_fd(), 0)
            }
        };
        // SAFETY: a descriptor borrowed for the call: ManuallyDrop keeps it
        // open.
        let f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        // SAFETY: a shared mapping of a file the guest opened; the guest
        // may change it underneath, as natively.
        let host = unsafe {
            memmap2::MmapOptions::new()
                .offset(off)
                .len(len as usize)
                .map_mut(&*f)
        }
        .map_err(|e| -i64::from(e.raw_os_error().unwrap_or(libc::EACCES)))?;
        self.cpu
            .mem
            .map_host(at, len, perms, "[shared]", host, true)
            .map_err(|_| -ENOMEM)
    }

    fn sys_mprotect(&mut self, a: [u64; 6]) -> Ret {
        if !a[0].is_multiple_of(PAGE) {
            return Val(-EINVAL);
        }
        let perms = (a[2] & 7) as u32;
        match self.cpu.mem.protect(a[0], a[1], perms) {
            Ok(()) => {
                if perms & prot::EXEC != 0 {
                    self.notify(Notice::CodeMapped {
                        start: a[0],
                        len: page_ceil(a[1]),
                    });
                }
                Val(0)
            }
            Err(e) => Self::map_err(e),
        }
    }

    fn sys_mremap(&mut self, a: [u64; 6]) -> Ret {
        let [old, old_len, new_len, flags, _, _] = a;
        let (old_len, new_len) = (page_ceil(old_len), page_ceil(new_len));
        if old % PAGE != 0 || new_len == 0 {
            return Val(-EINVAL);
        }
        if new_len <= old_len {
            if new_len < old_len {
                let _ = self.cpu.mem.unmap(old + new_len, old_len - new_len);
            }
            return Val(old as i64);
        }
        if flags & 1 == 0 {
            return Val(-ENOMEM);
        }
        let Some(data) = self.cpu.mem.slice(old, old_len).map(|s| s.to_vec()) else {
            return Val(-EFAULT);
        };
        let Some(at) = self.cpu.mem.find_free(new_len) else {
            return Val(-ENOMEM);
        };
        if let Err(e) = self
            .cpu
            .mem
            .map(at, new_len, prot::READ | prot::WRITE, "[mmap]")
        {
            return Self::map_err(e);
        }
        self.cpu.mem.poke(at, &data);
        let _ = self.cpu.mem.unmap(old, old_len);
        Val(at as i64)
    }

    /// A file mapping at offset 0 that starts with an x86-64 ELF header is
    /// a shared object being loaded (by ld.so or `dlopen`): register it with
    /// the file's path (the guest's file descriptors are host descriptors,
    /// so `/proc/self/fd/N` names the file) and its load bias (the mapping
    /// minus its first PT_LOAD's page).
    fn register_object(&mut self, at: u64, len: u64, fd: u64) {
        let Some(hdr) = self.cpu.mem.peek(at, 64.min(len)) else {
            return;
        };
        if hdr.len() < 64 || hdr[..4] != *b"\x7fELF" || hdr[4] != 2 {
            return;
        }
        let u16_at = |o: usize| u16::from_le_bytes([hdr[o], hdr[o + 1]]);
        let (etype, machine) = (u16_at(0x10), u16_at(0x12));
        if !(etype == 2 || etype == 3) || machine != 62 {
            return;
        }
        let phoff = u64::from_le_bytes(hdr[0x20..0x28].try_into().expect("8 bytes"));
        let (phent, phnum) = (u64::from(u16_at(0x36)), u64::from(u16_at(0x38)));
        let first_load = (0..phnum).find_map(|i| {
            let ph = phoff.checked_add(i * phent)?;
            if ph + 56 > len {
                return None;
            }
            let b = self.cpu.mem.peek(at + ph, 56)?;
            let ptype = u32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
            (ptype == 1).then(|| u64::from_le_bytes(b[16..24].try_into().expect("8 bytes")))
        });
        let Some(vaddr) = first_load else {
            return;
        };
        let host_path = match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            Ok(p) => p,
            Err(_) => return,
        };
        let root = self.config.sysroot.clone();
        let name = sysroot::guest_path(root.as_deref(), &host_path);
        self.notify(Notice::ObjectLoaded(Box::new(LoadedObject::new(
            host_path,
            name.to_string_lossy().into_owned(),
            ObjectKind::Library,
            at.wrapping_sub(page_floor(vaddr)),
            (at, at + len),
            root,
        ))));
    }
}
