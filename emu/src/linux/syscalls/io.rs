//! Reading, writing and waiting on descriptors, passed to the host:
//! `read`, `write` and their vector forms, `ioctl`, `poll`, `select`,
//! `epoll`, pipes, sockets (`accept`, `recvfrom`/`sendto`,
//! `recvmsg`/`sendmsg`), `eventfd`, `timerfd`. A replay under `--gdb`
//! drops output the guest already wrote ([`Process::quiet_output`](crate::linux::state::Process::quiet_output)).

use super::{host, Call, Fault, Made, Ret, Val, EFAULT, EINVAL, R, W};
use crate::cpu::uc::prot;
use crate::linux::kernel::Kernel;
use syscalls::Sysno;

const ENOTTY: i64 = 25;

impl Kernel<'_> {
    /// The calls that read, write or wait on descriptors.
    pub(super) fn io_call(&mut self, c: &mut Call) -> Made {
        let sys = c.sys;
        let a = c.a;
        Ok(match sys {
            Sysno::read | Sysno::pread64 => Val(host(
                sys,
                [a[0], self.buf(c, a[1], a[2], W)?, a[2], a[3], 0, 0],
            )),
            // write, pwrite64 (a replay under --gdb drops stdout and stderr
            // output the guest already wrote: Process::quiet_output)
            Sysno::write | Sysno::pwrite64 if self.quiet(a[0]) => {
                // (The buffer must be readable, as for the real write.)
                let _ = self.buf(c, a[1], a[2], R)?;
                Val(a[2] as i64)
            }
            Sysno::write | Sysno::pwrite64 => Val(host(
                sys,
                [a[0], self.buf(c, a[1], a[2], R)?, a[2], a[3], 0, 0],
            )),
            Sysno::poll => Val(host(
                sys,
                [self.buf(c, a[0], a[1] * 8, W)?, a[1], a[2], 0, 0, 0],
            )),
            Sysno::ioctl => {
                // The buffer each request passes: its length, and whether
                // the host reads or writes it.
                let (len, need) = match a[1] {
                    // TCGETS, TIOCGWINSZ: pass through with the buffer
                    0x5401 => (60, W),
                    0x5413 => (8, W),
                    // TCSETS, TCSETSW, TCSETSF: a termios the guest wrote
                    0x5402..=0x5404 => (60, R),
                    // FIONBIO (libuv's way to O_NONBLOCK), FIOASYNC: an int in
                    0x5421 | 0x5452 => (4, R),
                    // FIONREAD: an int out
                    0x541b => (4, W),
                    // FIONCLEX, FIOCLEX: no argument
                    0x5450 | 0x5451 => return Ok(Val(host(sys, [a[0], a[1], 0, 0, 0, 0]))),
                    _ => return Ok(Val(-ENOTTY)),
                };
                Val(host(
                    sys,
                    [a[0], a[1], self.buf(c, a[2], len, need)?, 0, 0, 0],
                ))
            }
            Sysno::readv | Sysno::writev => self.sys_iov(sys, a),
            Sysno::pipe => Val(host(sys, [self.buf(c, a[0], 8, W)?, 0, 0, 0, 0, 0])),
            Sysno::pipe2 => Val(host(sys, [self.buf(c, a[0], 8, W)?, a[1], 0, 0, 0, 0])),
            // getsockname, getpeername: the address buffer is *addrlen long
            Sysno::getsockname | Sysno::getpeername => {
                let Some(len) = self.cpu.mem.read_u32(a[2]) else {
                    return Err(Fault);
                };
                let len = u64::from(len);
                Val(host(
                    sys,
                    [
                        a[0],
                        self.buf(c, a[1], len, W)?,
                        self.buf(c, a[2], 4, W)?,
                        0,
                        0,
                        0,
                    ],
                ))
            }
            Sysno::socketpair => Val(host(
                sys,
                [a[0], a[1], a[2], self.buf(c, a[3], 8, W)?, 0, 0],
            )),
            // accept, accept4: the peer's address into *addrlen bytes (a
            // null address: none); accept4's flags
            Sysno::accept | Sysno::accept4 => {
                let (addr, len) = self.sockaddr_out(c, a[1], a[2])?;
                let flags = if sys == Sysno::accept4 { a[3] } else { 0 };
                Val(host(sys, [a[0], addr, len, flags, 0, 0]))
            }
            // recvfrom: the data, and the sender's address as accept's
            Sysno::recvfrom => {
                let data = self.buf(c, a[1], a[2], W)?;
                let (addr, len) = self.sockaddr_out(c, a[4], a[5])?;
                Val(host(sys, [a[0], data, a[2], a[3], addr, len]))
            }
            // sendto: the data and an optional address of addrlen bytes
            Sysno::sendto => Val(host(
                sys,
                [
                    a[0],
                    self.buf(c, a[1], a[2], R)?,
                    a[2],
                    a[3],
                    self.opt_buf(c, a[4], a[5], R)?,
                    a[5],
                ],
            )),
            Sysno::recvmsg | Sysno::sendmsg => self.sys_msg(c, sys, a)?,
            Sysno::sendfile => {
                let off = self.opt_buf(c, a[2], 8, W)?;
                Val(host(sys, [a[0], a[1], off, a[3], 0, 0]))
            }
            // select: three fd_sets of nfds bits and a timeval
            Sysno::select => {
                let set = a[0].min(1024).div_ceil(8);
                let mut ptrs = [0u64; 3];
                for (i, &addr) in a[1..4].iter().enumerate() {
                    if addr != 0 {
                        ptrs[i] = self.buf(c, addr, set, W)?;
                    }
                }
                let tv = self.opt_buf(c, a[4], 16, W)?;
                Val(host(sys, [a[0], ptrs[0], ptrs[1], ptrs[2], tv, 0]))
            }
            // ppoll: the signal mask is applied as the guest asks
            Sysno::ppoll => {
                let fds = self.buf(c, a[0], a[1] * 8, W)?;
                let tmo = self.opt_buf(c, a[2], 16, W)?;
                let mask = self.opt_buf(c, a[3], 8, R)?;
                Val(host(sys, [fds, a[1], tmo, mask, a[4], 0]))
            }
            // socket; connect (a UNIX socket to a daemon such as nscd);
            // bind, listen
            Sysno::socket => Val(host(sys, [a[0], a[1], a[2], 0, 0, 0])),
            Sysno::connect | Sysno::bind => Val(host(
                sys,
                [a[0], self.buf(c, a[1], a[2], R)?, a[2], 0, 0, 0],
            )),
            Sysno::listen | Sysno::shutdown => Val(host(sys, [a[0], a[1], 0, 0, 0, 0])),
            // setsockopt: an option value the guest wrote; getsockopt: one
            // the host writes, *optlen long
            Sysno::setsockopt => Val(host(
                sys,
                [a[0], a[1], a[2], self.opt_buf(c, a[3], a[4], R)?, a[4], 0],
            )),
            Sysno::getsockopt => {
                let Some(len) = self.cpu.mem.read_u32(a[4]) else {
                    return Err(Fault);
                };
                Val(host(
                    sys,
                    [
                        a[0],
                        a[1],
                        a[2],
                        self.opt_buf(c, a[3], u64::from(len), W)?,
                        self.buf(c, a[4], 4, W)?,
                        0,
                    ],
                ))
            }
            // pselect6: fd_sets, a timespec, and {sigset pointer, size}
            Sysno::pselect6 => {
                let set = a[0].min(1024).div_ceil(8);
                let mut ptrs = [0u64; 3];
                for (i, &addr) in a[1..4].iter().enumerate() {
                    if addr != 0 {
                        ptrs[i] = self.buf(c, addr, set, W)?;
                    }
                }
                let ts = self.opt_buf(c, a[4], 16, W)?;
                let mut sig = [0u64; 2];
                if a[5] != 0 {
                    let (Some(mask), Some(size)) =
                        (self.cpu.mem.read_u64(a[5]), self.cpu.mem.read_u64(a[5] + 8))
                    else {
                        return Err(Fault);
                    };
                    sig = [
                        if mask != 0 {
                            self.buf(c, mask, 8, R)?
                        } else {
                            0
                        },
                        size,
                    ];
                }
                let sigp = if a[5] != 0 { sig.as_ptr() as u64 } else { 0 };
                Val(host(sys, [a[0], ptrs[0], ptrs[1], ptrs[2], ts, sigp]))
            }
            Sysno::epoll_create
            | Sysno::epoll_create1
            | Sysno::eventfd
            | Sysno::eventfd2
            | Sysno::timerfd_create => Val(host(sys, [a[0], a[1], 0, 0, 0, 0])),
            Sysno::epoll_ctl => {
                let ev = self.opt_buf(c, a[3], 12, R)?;
                Val(host(sys, [a[0], a[1], a[2], ev, 0, 0]))
            }
            Sysno::epoll_wait => Val(host(
                sys,
                [a[0], self.buf(c, a[1], a[2] * 12, W)?, a[2], a[3], 0, 0],
            )),
            Sysno::epoll_pwait => {
                let mask = self.opt_buf(c, a[4], 8, R)?;
                Val(host(
                    sys,
                    [
                        a[0],
                        self.buf(c, a[1], a[2] * 12, W)?,
                        a[2],
                        a[3],
                        mask,
                        a[5],
                    ],
                ))
            }
            Sysno::timerfd_settime => {
                let old = self.opt_buf(c, a[3], 32, W)?;
                Val(host(
                    sys,
                    [a[0], a[1], self.buf(c, a[2], 32, R)?, old, 0, 0],
                ))
            }
            Sysno::timerfd_gettime => Val(host(sys, [a[0], self.buf(c, a[1], 32, W)?, 0, 0, 0, 0])),
            _ => return self.unsupported(c),
        })
    }

    /// True if a write to `fd` is dropped ([`Process::quiet_output`](crate::linux::state::Process::quiet_output)).
    fn quiet(&self, fd: u64) -> bool {
        self.process.quiet_output && (fd == 1 || fd == 2)
    }

    /// An address the host writes for a socket call: host pointers for
    /// `addr` (`*addrlen` bytes) and `addrlen`, or nulls for a null `addr`.
    fn sockaddr_out(&self, c: &mut Call, addr: u64, addrlen: u64) -> Result<(u64, u64), Fault> {
        if addr == 0 {
            return Ok((0, 0));
        }
        let len = self.cpu.mem.read_u32(addrlen).ok_or(Fault)?;
        Ok((
            self.buf(c, addr, u64::from(len), W)?,
            self.buf(c, addrlen, 4, W)?,
        ))
    }

    /// recvmsg, sendmsg: the guest's `msghdr` copied with host pointers
    /// (the address, each iovec's buffer, the control data); recvmsg's
    /// results (the lengths of the address and the control data, the
    /// flags) written back into the guest's.
    fn sys_msg(&mut self, c: &mut Call, sys: Sysno, a: [u64; 6]) -> Result<Ret, Fault> {
        let need = if sys == Sysno::recvmsg { W } else { R };
        let g = self.buf(c, a[1], 56, need | R)?;
        // SAFETY: `g` is a host pointer to the guest's 56-byte msghdr.
        let mut m: libc::msghdr = unsafe { std::ptr::read_unaligned(g as *const libc::msghdr) };
        let (name, namelen) = (m.msg_name as u64, u64::from(m.msg_namelen));
        m.msg_name = self.opt_buf(c, name, namelen, need)? as *mut libc::c_void;
        let n = m.msg_iovlen as u64;
        if n > 1024 {
            return Ok(Val(-EINVAL));
        }
        let iov_guest = m.msg_iov as u64;
        let mut iov: Vec<libc::iovec> = Vec::with_capacity(n as usize);
        for i in 0..n {
            let (Some(base), Some(len)) = (
                self.cpu.mem.read_u64(iov_guest + 16 * i),
                self.cpu.mem.read_u64(iov_guest + 16 * i + 8),
            ) else {
                return Err(Fault);
            };
            iov.push(libc::iovec {
                iov_base: self.buf(c, base, len, need)? as *mut libc::c_void,
                iov_len: len as usize,
            });
        }
        m.msg_iov = iov.as_mut_ptr();
        let control = m.msg_control as u64;
        m.msg_control =
            self.opt_buf(c, control, m.msg_controllen as u64, need)? as *mut libc::c_void;
        let r = host(
            sys,
            [a[0], &mut m as *mut libc::msghdr as u64, a[2], 0, 0, 0],
        );
        if sys == Sysno::recvmsg && r >= 0 {
            // SAFETY: as above; only the fields the kernel returns change.
            unsafe {
                let gm = g as *mut libc::msghdr;
                std::ptr::addr_of_mut!((*gm).msg_namelen).write_unaligned(m.msg_namelen);
                std::ptr::addr_of_mut!((*gm).msg_controllen).write_unaligned(m.msg_controllen);
                std::ptr::addr_of_mut!((*gm).msg_flags).write_unaligned(m.msg_flags);
            }
        }
        Ok(Val(r))
    }

    fn sys_iov(&mut self, sys: Sysno, a: [u64; 6]) -> Ret {
        let n = a[2];
        if n > 1024 {
            return Val(-EINVAL);
        }
        let mut iov: Vec<u64> = Vec::with_capacity(2 * n as usize);
        let need = if sys == Sysno::readv {
            prot::WRITE
        } else {
            prot::READ
        };
        for i in 0..n {
            let (Some(base), Some(len)) = (
                self.cpu.mem.read_u64(a[1] + 16 * i),
                self.cpu.mem.read_u64(a[1] + 16 * i + 8),
            ) else {
                return Val(-EFAULT);
            };
            let Some(p) = self.ptr(base, len, need) else {
                return Val(-EFAULT);
            };
            iov.push(p);
            iov.push(len);
        }
        if sys == Sysno::writev && self.quiet(a[0]) {
            return Val(iov.chunks(2).map(|c| c[1] as i64).sum());
        }
        Val(host(sys, [a[0], iov.as_ptr() as u64, n, 0, 0, 0]))
    }
}
