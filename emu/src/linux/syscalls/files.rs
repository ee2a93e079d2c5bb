//! Paths and descriptors, passed to the host: `open`, `stat`, `access`,
//! `close`, `dup`, `fcntl`, directories, links, extended attributes. The
//! guest's own `/proc/self/maps` and `/proc/self/exe` are lard's answers;
//! paths go under `--sysroot` first; lard's own descriptors are not the
//! guest's ([`crate::linux::hostfd`]).

use super::{host, host_ret, Call, Made, Ret, Val, EBADF, EFAULT, EINVAL, R, W};
use crate::cpu::uc::prot;
use crate::linux::kernel::Kernel;
use syscalls::Sysno;

impl Kernel<'_> {
    /// The calls on paths and descriptors.
    pub(super) fn files_call(&mut self, c: &mut Call) -> Made {
        let sys = c.sys;
        let a = c.a;
        Ok(match sys {
            Sysno::open => self.sys_openat(libc::AT_FDCWD as u64, a[0], a[1], a[2]),
            // close, dup, dup2, dup3 of a descriptor lard owns: not open, as
            // far as the guest knows (linux::hostfd).
            Sysno::close | Sysno::dup | Sysno::dup2 | Sysno::dup3 if self.is_host_fd(a[0]) => {
                Val(-EBADF)
            }
            Sysno::dup2 | Sysno::dup3 if self.is_host_fd(a[1]) => Val(-EBADF),
            Sysno::close
            | Sysno::lseek
            | Sysno::dup
            | Sysno::dup2
            | Sysno::dup3
            | Sysno::fsync
            | Sysno::fdatasync
            | Sysno::ftruncate
            | Sysno::fallocate
            | Sysno::umask
            | Sysno::fchdir
            | Sysno::fadvise64 => Val(host(sys, a)),
            Sysno::stat | Sysno::lstat => Val(host(
                sys,
                [self.path(c, a[0])?, self.buf(c, a[1], 144, W)?, 0, 0, 0, 0],
            )),
            Sysno::fstat => Val(host(sys, [a[0], self.buf(c, a[1], 144, W)?, 0, 0, 0, 0])),
            Sysno::access => Val(host(sys, [self.path(c, a[0])?, a[1], 0, 0, 0, 0])),
            Sysno::fcntl => Val(host(sys, [a[0], a[1], a[2], 0, 0, 0])),
            Sysno::getcwd => Val(host(sys, [self.buf(c, a[0], a[1], W)?, a[1], 0, 0, 0, 0])),
            Sysno::chdir | Sysno::rmdir | Sysno::unlink => {
                Val(host(sys, [self.str_arg(a[0])?, 0, 0, 0, 0, 0]))
            }
            Sysno::mkdir => Val(host(sys, [self.str_arg(a[0])?, a[1], 0, 0, 0, 0])),
            Sysno::rename => Val(host(
                sys,
                [self.str_arg(a[0])?, self.str_arg(a[1])?, 0, 0, 0, 0],
            )),
            Sysno::creat | Sysno::chmod | Sysno::truncate => {
                Val(host(sys, [self.str_arg(a[0])?, a[1], 0, 0, 0, 0]))
            }
            Sysno::chown | Sysno::lchown => {
                Val(host(sys, [self.str_arg(a[0])?, a[1], a[2], 0, 0, 0]))
            }
            Sysno::link | Sysno::symlink => Val(host(
                sys,
                [self.str_arg(a[0])?, self.str_arg(a[1])?, 0, 0, 0, 0],
            )),
            Sysno::fchmod | Sysno::fchown | Sysno::flock => {
                Val(host(sys, [a[0], a[1], a[2], 0, 0, 0]))
            }
            Sysno::fchmodat => Val(host(sys, [a[0], self.str_arg(a[1])?, a[2], 0, 0, 0])),
            Sysno::fchownat => Val(host(sys, [a[0], self.str_arg(a[1])?, a[2], a[3], a[4], 0])),
            Sysno::renameat | Sysno::renameat2 | Sysno::linkat => Val(host(
                sys,
                [
                    a[0],
                    self.str_arg(a[1])?,
                    a[2],
                    self.str_arg(a[3])?,
                    a[4],
                    0,
                ],
            )),
            Sysno::symlinkat => Val(host(
                sys,
                [self.str_arg(a[0])?, a[1], self.str_arg(a[2])?, 0, 0, 0],
            )),
            Sysno::utimensat => {
                let path = if a[1] != 0 { self.str_arg(a[1])? } else { 0 };
                let times = self.opt_buf(c, a[2], 32, R)?;
                Val(host(sys, [a[0], path, times, a[3], 0, 0]))
            }
            Sysno::readlink => self.sys_readlink(libc::AT_FDCWD as u64, a[0], a[1], a[2]),
            Sysno::readlinkat => self.sys_readlink(a[0], a[1], a[2], a[3]),
            Sysno::getdents64 => Val(host(
                sys,
                [a[0], self.buf(c, a[1], a[2], W)?, a[2], 0, 0, 0],
            )),
            Sysno::openat => self.sys_openat(a[0], a[1], a[2], a[3]),
            Sysno::statfs => Val(host(
                sys,
                [self.path(c, a[0])?, self.buf(c, a[1], 120, W)?, 0, 0, 0, 0],
            )),
            Sysno::fstatfs => Val(host(sys, [a[0], self.buf(c, a[1], 120, W)?, 0, 0, 0, 0])),
            // getxattr, lgetxattr (ls -l asks for ACLs and SELinux labels)
            Sysno::getxattr | Sysno::lgetxattr => Val(host(
                sys,
                [
                    self.path(c, a[0])?,
                    self.str_arg(a[1])?,
                    self.buf(c, a[2], a[3], W)?,
                    a[3],
                    0,
                    0,
                ],
            )),
            Sysno::fgetxattr => Val(host(
                sys,
                [
                    a[0],
                    self.str_arg(a[1])?,
                    self.buf(c, a[2], a[3], W)?,
                    a[3],
                    0,
                    0,
                ],
            )),
            Sysno::listxattr | Sysno::llistxattr => Val(host(
                sys,
                [
                    self.path(c, a[0])?,
                    self.buf(c, a[1], a[2], W)?,
                    a[2],
                    0,
                    0,
                    0,
                ],
            )),
            Sysno::flistxattr => Val(host(
                sys,
                [a[0], self.buf(c, a[1], a[2], W)?, a[2], 0, 0, 0],
            )),
            Sysno::mkdirat => Val(host(sys, [a[0], self.str_arg(a[1])?, a[2], 0, 0, 0])),
            Sysno::newfstatat => Val(host(
                sys,
                [
                    a[0],
                    self.path(c, a[1])?,
                    self.buf(c, a[2], 144, W)?,
                    a[3],
                    0,
                    0,
                ],
            )),
            Sysno::unlinkat => Val(host(sys, [a[0], self.str_arg(a[1])?, a[2], 0, 0, 0])),
            Sysno::faccessat | Sysno::faccessat2 => {
                Val(host(sys, [a[0], self.path(c, a[1])?, a[2], a[3], 0, 0]))
            }
            // close_range: never lard's own descriptors (linux::hostfd)
            Sysno::close_range => self.sys_close_range(a[0], a[1], a[2]),
            Sysno::statx => Val(host(
                sys,
                [
                    a[0],
                    self.path(c, a[1])?,
                    a[2],
                    a[3],
                    self.buf(c, a[4], 256, W)?,
                    0,
                ],
            )),
            _ => return self.unsupported(c),
        })
    }

    fn sys_readlink(&mut self, dirfd: u64, path: u64, buf: u64, len: u64) -> Ret {
        let Some(p) = self.cpu.mem.read_cstr(path, 4096) else {
            return Val(-EFAULT);
        };
        if p == b"/proc/self/exe" {
            let exe = self.process.exe_path.clone();
            let n = exe.len().min(len as usize);
            return match self.cpu.mem.write(buf, &exe[..n]) {
                Some(()) => Val(n as i64),
                None => Val(-EFAULT),
            };
        }
        let Some(pp) = self.cstr(path) else {
            return Val(-EFAULT);
        };
        let Some(bp) = self.ptr(buf, len, prot::WRITE) else {
            return Val(-EFAULT);
        };
        Val(host(Sysno::readlinkat, [dirfd, pp, bp, len, 0, 0]))
    }

    /// open/openat: the guest's own `/proc/self/maps` is synthesized (the
    /// host's would describe lard); other paths go to the host, under
    /// `--sysroot` first.
    fn sys_openat(&mut self, dirfd: u64, path: u64, flags: u64, mode: u64) -> Ret {
        let Some(name) = self.cpu.mem.read_cstr(path, 4096) else {
            return Val(-EFAULT);
        };
        let own = format!("/proc/{}/maps", self.config.process.pid);
        if name == b"/proc/self/maps" || name == own.as_bytes() {
            return Val(self.proc_maps_fd());
        }
        let mut keep = Vec::new();
        let Some(p) = self.path_arg(path, &mut keep) else {
            return Val(-EFAULT);
        };
        Val(host(Sysno::openat, [dirfd, p, flags, mode, 0, 0]))
    }

    /// A memfd holding the guest's memory map in /proc/PID/maps format.
    fn proc_maps_fd(&self) -> i64 {
        let mut text = String::new();
        for (start, len, perms, name) in self.cpu.mem.regions() {
            let object = self.objects.at(start).map(|o| o.name.clone());
            let name = object.as_deref().unwrap_or(match name {
                "[heap]" | "[stack]" => name,
                _ => "",
            });
            let flag = |bit: u32, c: char| if perms & bit != 0 { c } else { '-' };
            text += &format!(
                "{start:012x}-{:012x} {}{}{}p 00000000 00:00 0 {name}\n",
                start + len,
                flag(prot::READ, 'r'),
                flag(prot::WRITE, 'w'),
                flag(prot::EXEC, 'x'),
            );
        }
        // SAFETY: memfd_create with a static name; write from a live buffer.
        unsafe {
            let fd = libc::memfd_create(c"lard-maps".as_ptr(), libc::MFD_CLOEXEC);
            if fd < 0 {
                return host_ret(-1);
            }
            libc::write(fd, text.as_ptr().cast(), text.len());
            libc::lseek(fd, 0, libc::SEEK_SET);
            i64::from(fd)
        }
    }

    /// `close_range(first, last, flags)` on the guest's descriptors: the
    /// range less lard's own, in pieces.
    fn sys_close_range(&mut self, first: u64, last: u64, flags: u64) -> Ret {
        if first > last || first > u64::from(u32::MAX) {
            return Val(-EINVAL);
        }
        let last = last.min(u64::from(u32::MAX));
        let mut own: Vec<u64> = self
            .config
            .host_fds
            .iter()
            .map(|&f| f as u64)
            .filter(|&f| f >= first && f <= last)
            .collect();
        own.sort_unstable();
        let mut from = first;
        for f in own.into_iter().chain(std::iter::once(last + 1)) {
            if from < f {
                let r = host(Sysno::close_range, [from, f - 1, flags, 0, 0, 0]);
                if r < 0 {
                    return Val(r);
                }
            }
            from = f + 1;
        }
        Val(0)
    }
}
