//! Reading, writing and waiting on descriptors, passed to the host:
//! `read`, `write` and their vector forms, `ioctl`, `poll`, `select`,
//! `epoll`, pipes, sockets, `eventfd`, `timerfd`. A replay under `--gdb`
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
            // bind, listen (a server's socket: accepting waits in the host
            // and is not made)
            Sysno::socket => Val(host(sys, [a[0], a[1], a[2], 0, 0, 0])),
            Sysno::connect | Sysno::bind => Val(host(
                sys,
                [a[0], self.buf(c, a[1], a[2], R)?, a[2], 0, 0, 0],
            )),
            Sysno::listen => Val(host(sys, [a[0], a[1], 0, 0, 0, 0])),
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
