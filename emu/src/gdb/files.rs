//! What gdb reads besides registers and memory: the auxiliary vector
//! (`qXfer:auxv:read`), the executable's path (`qXfer:exec-file:read`) and
//! files (`vFile:open`/`pread`/`fstat`/`close`, gdb's "target:" sysroot),
//! from which gdb relocates a PIE and loads its shared libraries' symbols.
//! A path gdb opens is looked up as the guest's own paths are: under
//! `--sysroot DIR` first.

use super::target::LardTarget;
use crate::machine::Machine;
use gdbstub::target::ext::auxv::Auxv;
use gdbstub::target::ext::exec_file::ExecFile;
use gdbstub::target::ext::host_io::{
    FsKind, HostIo, HostIoClose, HostIoCloseOps, HostIoErrno, HostIoError, HostIoFstat,
    HostIoFstatOps, HostIoOpen, HostIoOpenFlags, HostIoOpenMode, HostIoOpenOps, HostIoPread,
    HostIoPreadOps, HostIoReadlink, HostIoReadlinkOps, HostIoResult, HostIoSetfs, HostIoSetfsOps,
    HostIoStat,
};
use gdbstub::target::TargetResult;
use std::os::unix::fs::{FileExt, MetadataExt};

/// The auxiliary vector on the initial stack (before the first
/// instruction, the stack pointer points at argc, argv, envp, auxv), with
/// its terminating `AT_NULL` pair; empty if it cannot be read.
pub(super) fn initial_auxv(m: &Machine) -> Vec<u8> {
    let mem = &m.cpu.mem;
    let word = |a: u64| -> Option<u64> {
        let b = mem.peek(a, 8)?;
        Some(u64::from_le_bytes(b[..8].try_into().ok()?))
    };
    let auxv = || -> Option<Vec<u8>> {
        let mut a = m.cpu.uc.reg(crate::cpu::uc::Reg::RSP);
        let argc = word(a)?;
        a += 8 * (argc + 2);
        // envp, up to its NULL.
        while word(a)? != 0 {
            a += 8;
        }
        a += 8;
        let start = a;
        // (A bound: the loader writes a few dozen pairs.)
        for _ in 0..256 {
            let key = word(a)?;
            a += 16;
            if key == 0 {
                return mem.peek(start, a - start);
            }
        }
        None
    };
    auxv().unwrap_or_default()
}

/// Copies `data[offset..]` into `buf`, as `qXfer` reads want.
fn xfer(data: &[u8], offset: u64, length: usize, buf: &mut [u8]) -> usize {
    let start = (offset as usize).min(data.len());
    let n = length.min(buf.len()).min(data.len() - start);
    buf[..n].copy_from_slice(&data[start..start + n]);
    n
}

/// Where the executable and ld.so were loaded (`AT_PHDR`, `AT_ENTRY`,
/// `AT_BASE`): gdb relocates a PIE's symbols and finds the shared-library
/// list through ld.so's `r_debug` from them.
impl Auxv for LardTarget<'_> {
    fn get_auxv(&self, offset: u64, length: usize, buf: &mut [u8]) -> TargetResult<usize, Self> {
        Ok(xfer(&self.auxv, offset, length, buf))
    }
}

/// The executable's path, for a gdb started without one.
impl ExecFile for LardTarget<'_> {
    fn get_exec_file(
        &self,
        _pid: Option<gdbstub::common::Pid>,
        offset: u64,
        length: usize,
        buf: &mut [u8],
    ) -> TargetResult<usize, Self> {
        Ok(xfer(&self.m().process.exe_path, offset, length, buf))
    }
}

/// Reading the guest's files: gdb's `target:` sysroot (the default) loads
/// the executable and the libraries the guest mapped through these, so it
/// reads the files the guest did (under `--sysroot`, those under DIR).
/// Read-only: gdb has no reason to write or remove them.
impl HostIo for LardTarget<'_> {
    fn support_open(&mut self) -> Option<HostIoOpenOps<'_, Self>> {
        Some(self)
    }

    fn support_close(&mut self) -> Option<HostIoCloseOps<'_, Self>> {
        Some(self)
    }

    fn support_pread(&mut self) -> Option<HostIoPreadOps<'_, Self>> {
        Some(self)
    }

    fn support_fstat(&mut self) -> Option<HostIoFstatOps<'_, Self>> {
        Some(self)
    }

    fn support_readlink(&mut self) -> Option<HostIoReadlinkOps<'_, Self>> {
        Some(self)
    }

    fn support_setfs(&mut self) -> Option<HostIoSetfsOps<'_, Self>> {
        Some(self)
    }
}

impl LardTarget<'_> {
    /// The host path of a path gdb names (under `--sysroot` first).
    fn host_path(&self, name: &[u8]) -> std::path::PathBuf {
        crate::linux::sysroot::host_path(self.m().config.sysroot.as_deref(), name)
    }
}

impl HostIoOpen for LardTarget<'_> {
    fn open(
        &mut self,
        filename: &[u8],
        flags: HostIoOpenFlags,
        _mode: HostIoOpenMode,
    ) -> HostIoResult<u32, Self> {
        let writes = HostIoOpenFlags::O_WRONLY
            | HostIoOpenFlags::O_RDWR
            | HostIoOpenFlags::O_APPEND
            | HostIoOpenFlags::O_CREAT
            | HostIoOpenFlags::O_TRUNC;
        if flags.intersects(writes) {
            return Err(HostIoError::Errno(HostIoErrno::EROFS));
        }
        let file = std::fs::File::open(self.host_path(filename))?;
        let fd = (0..).find(|n| !self.files.contains_key(n)).unwrap_or(0);
        self.files.insert(fd, file);
        Ok(fd)
    }
}

impl HostIoClose for LardTarget<'_> {
    fn close(&mut self, fd: u32) -> HostIoResult<(), Self> {
        match self.files.remove(&fd) {
            Some(_) => Ok(()),
            None => Err(HostIoError::Errno(HostIoErrno::EBADF)),
        }
    }
}

impl HostIoPread for LardTarget<'_> {
    fn pread(
        &mut self,
        fd: u32,
        count: usize,
        offset: u64,
        buf: &mut [u8],
    ) -> HostIoResult<usize, Self> {
        let f = self
            .files
            .get(&fd)
            .ok_or(HostIoError::Errno(HostIoErrno::EBADF))?;
        let n = count.min(buf.len());
        Ok(f.read_at(&mut buf[..n], offset)?)
    }
}

impl HostIoFstat for LardTarget<'_> {
    fn fstat(&mut self, fd: u32) -> HostIoResult<HostIoStat, Self> {
        let f = self
            .files
            .get(&fd)
            .ok_or(HostIoError::Errno(HostIoErrno::EBADF))?;
        let m = f.metadata()?;
        // (The protocol's fields are 32 bits wide but for sizes.)
        let narrow = |v: u64| v as u32;
        Ok(HostIoStat {
            st_dev: narrow(m.dev()),
            st_ino: narrow(m.ino()),
            st_mode: HostIoOpenMode::from_bits_truncate(m.mode()),
            st_nlink: narrow(m.nlink()),
            st_uid: m.uid(),
            st_gid: m.gid(),
            st_rdev: narrow(m.rdev()),
            st_size: m.size(),
            st_blksize: m.blksize(),
            st_blocks: m.blocks(),
            st_atime: m.atime() as u32,
            st_mtime: m.mtime() as u32,
            st_ctime: m.ctime() as u32,
        })
    }
}

impl HostIoReadlink for LardTarget<'_> {
    fn readlink(&mut self, filename: &[u8], buf: &mut [u8]) -> HostIoResult<usize, Self> {
        use std::os::unix::ffi::OsStrExt;
        let target = std::fs::read_link(self.host_path(filename))?;
        let bytes = target.as_os_str().as_bytes();
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        Ok(n)
    }
}

/// gdb names the process whose view of the file system it wants: there
/// is one, the guest's.
impl HostIoSetfs for LardTarget<'_> {
    fn setfs(&mut self, _fs: FsKind) -> HostIoResult<(), Self> {
        Ok(())
    }
}
