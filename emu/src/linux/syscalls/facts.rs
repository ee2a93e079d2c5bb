//! What lard knows about each system call, in one table ([`facts`]):
//! which module makes it ([`Area`]; a call with none is unsupported),
//! whether it writes to a descriptor (the `SIGPIPE` rule), whether
//! `SA_RESTART` makes it again after a handler, and whether and how it may
//! wait on the host ([`crate::linux::host_wait`]). Also the calls' names.

use syscalls::Sysno;

/// The module of [`super`] that makes a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::linux) enum Area {
    /// `memory`: mappings and the heap.
    Memory,
    /// `files`: paths and descriptors.
    Files,
    /// `io`: reading, writing and waiting on descriptors.
    Io,
    /// `futex`.
    Futex,
    /// `time`: clocks and sleeps.
    Time,
    /// `threads`: thread creation and exit, thread attributes, scheduling.
    Threads,
    /// `processes`: fork, exec, wait, kill, process groups.
    Processes,
    /// `signals`: handlers, masks, timers.
    Signals,
    /// `system`: identity, limits, system information, randomness.
    System,
}

/// How a call may wait on the host, and so how it is made without
/// blocking the other guest threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::linux) enum HostWait {
    /// Until its descriptor (argument 0) is ready for `events`; not when
    /// argument `flags` (if any) holds `MSG_DONTWAIT`.
    Fd {
        /// The `poll` events the call waits for.
        events: i16,
        /// The argument holding the call's `MSG_*` flags.
        flags: Option<usize>,
    },
    /// Until descriptors are ready or a timeout in milliseconds (argument
    /// `arg`; negative: forever) passes. With `on_fd`, argument 0 is
    /// itself a descriptor to poll (epoll's).
    TimeoutMs {
        /// The argument holding the timeout.
        arg: usize,
        /// Whether argument 0 is a pollable descriptor.
        on_fd: bool,
    },
    /// Until descriptors are ready or the timeout argument `arg` points to
    /// (a `timespec`, a `timeval` when `micro`; 0: forever) passes.
    TimeoutPtr {
        /// The argument holding the pointer.
        arg: usize,
        /// Whether the timeout is a `timeval`.
        micro: bool,
    },
    /// For a child to change state, unless argument `arg` holds `WNOHANG`.
    Child {
        /// The argument holding the options.
        arg: usize,
    },
}

impl HostWait {
    /// Whether the call waits for descriptors with a timeout (`poll`,
    /// `select`, `epoll_wait` and their variants): a guest may rely on
    /// `SIGCHLD` to end such a wait.
    pub(in crate::linux) fn is_readiness(self) -> bool {
        matches!(self, Self::TimeoutMs { .. } | Self::TimeoutPtr { .. })
    }
}

/// The facts about one system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::linux) struct CallFacts {
    /// The module that makes it; `None`: unsupported (`-ENOSYS`).
    pub area: Option<Area>,
    /// It writes to a descriptor: `EPIPE` raises `SIGPIPE` in the guest.
    pub writes_fd: bool,
    /// The kernel makes it again after a handler with `SA_RESTART`
    /// (signal(7)); the others return `EINTR`.
    pub restartable: bool,
    /// How it may wait on the host, if it can.
    pub host_wait: Option<HostWait>,
}

/// An unsupported call.
const UNSUPPORTED: CallFacts = CallFacts {
    area: None,
    writes_fd: false,
    restartable: false,
    host_wait: None,
};

/// A call that the module of `area` makes.
const fn made_in(area: Area) -> CallFacts {
    CallFacts {
        area: Some(area),
        ..UNSUPPORTED
    }
}

impl CallFacts {
    const fn restarts(mut self) -> Self {
        self.restartable = true;
        self
    }

    const fn writes(mut self) -> Self {
        self.writes_fd = true;
        self
    }

    const fn waits(mut self, w: HostWait) -> Self {
        self.host_wait = Some(w);
        self
    }
}

const IN: HostWait = HostWait::Fd {
    events: libc::POLLIN,
    flags: None,
};
const OUT: HostWait = HostWait::Fd {
    events: libc::POLLOUT,
    flags: None,
};
const fn recv(flags: usize) -> HostWait {
    HostWait::Fd {
        events: libc::POLLIN,
        flags: Some(flags),
    }
}
const fn send(flags: usize) -> HostWait {
    HostWait::Fd {
        events: libc::POLLOUT,
        flags: Some(flags),
    }
}

/// The facts about system call `call`.
pub(in crate::linux) const fn facts(call: Sysno) -> CallFacts {
    use Area::*;
    use HostWait::{Child, TimeoutMs, TimeoutPtr};
    match call {
        Sysno::mmap
        | Sysno::mprotect
        | Sysno::munmap
        | Sysno::brk
        | Sysno::mremap
        | Sysno::madvise
        | Sysno::mincore => made_in(Memory),

        Sysno::open | Sysno::openat | Sysno::fcntl | Sysno::flock => made_in(Files).restarts(),
        Sysno::close
        | Sysno::close_range
        | Sysno::dup
        | Sysno::dup2
        | Sysno::dup3
        | Sysno::lseek
        | Sysno::fsync
        | Sysno::fdatasync
        | Sysno::ftruncate
        | Sysno::fallocate
        | Sysno::truncate
        | Sysno::fadvise64
        | Sysno::umask
        | Sysno::stat
        | Sysno::lstat
        | Sysno::fstat
        | Sysno::newfstatat
        | Sysno::statx
        | Sysno::statfs
        | Sysno::fstatfs
        | Sysno::access
        | Sysno::faccessat
        | Sysno::faccessat2
        | Sysno::getcwd
        | Sysno::chdir
        | Sysno::fchdir
        | Sysno::getdents64
        | Sysno::mkdir
        | Sysno::mkdirat
        | Sysno::rmdir
        | Sysno::unlink
        | Sysno::unlinkat
        | Sysno::rename
        | Sysno::renameat
        | Sysno::renameat2
        | Sysno::creat
        | Sysno::link
        | Sysno::linkat
        | Sysno::symlink
        | Sysno::symlinkat
        | Sysno::readlink
        | Sysno::readlinkat
        | Sysno::chmod
        | Sysno::fchmod
        | Sysno::fchmodat
        | Sysno::chown
        | Sysno::lchown
        | Sysno::fchown
        | Sysno::fchownat
        | Sysno::utimensat
        | Sysno::getxattr
        | Sysno::lgetxattr
        | Sysno::fgetxattr
        | Sysno::listxattr
        | Sysno::llistxattr
        | Sysno::flistxattr => made_in(Files),

        Sysno::read | Sysno::readv => made_in(Io).restarts().waits(IN),
        Sysno::write | Sysno::writev => made_in(Io).restarts().writes().waits(OUT),
        Sysno::pwrite64 => made_in(Io).restarts().writes(),
        Sysno::sendfile => made_in(Io).writes(),
        Sysno::pread64 | Sysno::ioctl | Sysno::connect => made_in(Io).restarts(),
        Sysno::poll => made_in(Io).waits(TimeoutMs {
            arg: 2,
            on_fd: false,
        }),
        Sysno::epoll_wait | Sysno::epoll_pwait => made_in(Io).waits(TimeoutMs {
            arg: 3,
            on_fd: true,
        }),
        Sysno::select => made_in(Io).waits(TimeoutPtr {
            arg: 4,
            micro: true,
        }),
        Sysno::pselect6 => made_in(Io).waits(TimeoutPtr {
            arg: 4,
            micro: false,
        }),
        Sysno::ppoll => made_in(Io).waits(TimeoutPtr {
            arg: 2,
            micro: false,
        }),
        Sysno::pipe
        | Sysno::pipe2
        | Sysno::epoll_create
        | Sysno::epoll_create1
        | Sysno::epoll_ctl
        | Sysno::eventfd
        | Sysno::eventfd2
        | Sysno::timerfd_create
        | Sysno::timerfd_settime
        | Sysno::timerfd_gettime
        | Sysno::socket
        | Sysno::socketpair
        | Sysno::getsockname
        | Sysno::getpeername
        | Sysno::bind
        | Sysno::listen
        | Sysno::shutdown
        | Sysno::setsockopt
        | Sysno::getsockopt => made_in(Io),
        Sysno::accept | Sysno::accept4 => made_in(Io).restarts().waits(IN),
        Sysno::recvfrom => made_in(Io).restarts().waits(recv(3)),
        Sysno::recvmsg => made_in(Io).restarts().waits(recv(2)),
        Sysno::sendto => made_in(Io).restarts().writes().waits(send(3)),
        Sysno::sendmsg => made_in(Io).restarts().writes().waits(send(2)),
        // Unsupported, but the host may make them wait.
        Sysno::preadv => UNSUPPORTED.restarts(),
        Sysno::pwritev => UNSUPPORTED.restarts().writes(),

        Sysno::futex => made_in(Futex),

        Sysno::nanosleep
        | Sysno::clock_nanosleep
        | Sysno::clock_gettime
        | Sysno::clock_getres
        | Sysno::gettimeofday
        | Sysno::time
        | Sysno::times => made_in(Time),

        Sysno::clone
        | Sysno::exit
        | Sysno::exit_group
        | Sysno::gettid
        | Sysno::set_tid_address
        | Sysno::set_robust_list
        | Sysno::get_robust_list
        | Sysno::rseq
        | Sysno::clone3
        | Sysno::membarrier
        | Sysno::arch_prctl
        | Sysno::prctl
        | Sysno::sched_yield
        | Sysno::sched_setaffinity
        | Sysno::sched_getaffinity
        | Sysno::getcpu
        | Sysno::unshare => made_in(Threads),

        Sysno::wait4 => made_in(Processes).restarts().waits(Child { arg: 2 }),
        Sysno::waitid => made_in(Processes).restarts().waits(Child { arg: 3 }),
        Sysno::fork
        | Sysno::vfork
        | Sysno::execve
        | Sysno::execveat
        | Sysno::kill
        | Sysno::getpid
        | Sysno::getppid
        | Sysno::setpgid
        | Sysno::getpgid
        | Sysno::getpgrp
        | Sysno::setsid
        | Sysno::getsid => made_in(Processes),

        Sysno::rt_sigaction
        | Sysno::rt_sigprocmask
        | Sysno::rt_sigpending
        | Sysno::rt_sigtimedwait
        | Sysno::rt_sigsuspend
        | Sysno::rt_sigreturn
        | Sysno::sigaltstack
        | Sysno::pause
        | Sysno::tkill
        | Sysno::tgkill
        | Sysno::alarm
        | Sysno::getitimer
        | Sysno::setitimer
        | Sysno::timer_create
        | Sysno::timer_settime
        | Sysno::timer_gettime
        | Sysno::timer_getoverrun
        | Sysno::timer_delete => made_in(Signals),

        Sysno::uname
        | Sysno::sysinfo
        | Sysno::getuid
        | Sysno::getgid
        | Sysno::geteuid
        | Sysno::getegid
        | Sysno::getgroups
        | Sysno::setresuid
        | Sysno::setresgid
        | Sysno::getresuid
        | Sysno::getresgid
        | Sysno::capget
        | Sysno::getrlimit
        | Sysno::prlimit64
        | Sysno::getrusage
        | Sysno::getrandom
        | Sysno::pkey_alloc => made_in(System),

        _ => UNSUPPORTED,
    }
}

/// The facts about the call numbered `nr` (a number with no call has
/// none).
pub(in crate::linux) fn facts_of(nr: u64) -> CallFacts {
    match usize::try_from(nr).ok().and_then(Sysno::new) {
        Some(call) => facts(call),
        None => UNSUPPORTED,
    }
}

/// The last call number lard names: the table of Linux 6.4.
const LAST_NAMED: i32 = 450;

/// The name of system call `nr`, or `"unknown"`. Calls of the Linux 6.4
/// table are named; later ones (number 451 on, and `uretprobe` and
/// `uprobe` in the gap at 335) are `"unknown"` as well.
pub fn name(nr: u64) -> &'static str {
    match usize::try_from(nr).ok().and_then(Sysno::new) {
        Some(Sysno::uretprobe | Sysno::uprobe) => "unknown",
        Some(call) if call.id() <= LAST_NAMED => call.name(),
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_kernel_table() {
        let cases = [
            (0, "read"),
            (56, "clone"),
            (57, "fork"),
            (59, "execve"),
            (85, "creat"),
            (262, "newfstatat"),
            (291, "epoll_create1"),
            (309, "getcpu"),
            (334, "rseq"),
            (335, "unknown"),
            (336, "unknown"),
            (387, "unknown"),
            (435, "clone3"),
            (450, "set_mempolicy_home_node"),
            (451, "unknown"),
            (100_000, "unknown"),
            (u64::MAX, "unknown"),
        ];
        for (nr, n) in cases {
            assert_eq!(name(nr), n, "{nr}");
        }
    }

    /// The calls with each fact, by number (the kernel's x86-64 table).
    #[test]
    fn facts_by_number() {
        let with = |f: fn(CallFacts) -> bool| -> Vec<u64> {
            (0..512).filter(|&nr| f(facts_of(nr))).collect()
        };
        let supported: [u64; 181] = [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
            24, 25, 27, 28, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49,
            50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 72, 73, 74, 75, 76, 77, 79, 80,
            81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 102,
            104, 107, 108, 109, 110, 111, 112, 115, 117, 118, 119, 120, 121, 124, 125, 127, 128,
            130, 131, 137, 138, 157, 158, 186, 191, 192, 193, 194, 195, 196, 200, 201, 202, 203,
            204, 213, 217, 218, 221, 222, 223, 224, 225, 226, 228, 229, 230, 231, 232, 233, 234,
            247, 257, 258, 260, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274,
            280, 281, 283, 284, 285, 286, 287, 288, 290, 291, 292, 293, 302, 309, 316, 318, 322,
            324, 330, 332, 334, 435, 436, 439,
        ];
        assert_eq!(with(|f| f.area.is_some()), supported);
        assert_eq!(with(|f| f.writes_fd), [1, 18, 20, 40, 44, 46, 296]);
        assert_eq!(
            with(|f| f.restartable),
            [
                0, 1, 2, 16, 17, 18, 19, 20, 42, 43, 44, 45, 46, 47, 61, 72, 73, 247, 257, 288,
                295, 296
            ]
        );
        assert_eq!(
            with(|f| f.host_wait.is_some()),
            [0, 1, 7, 19, 20, 23, 43, 44, 45, 46, 47, 61, 232, 247, 270, 271, 281, 288]
        );
        assert_eq!(
            with(|f| f.host_wait.is_some_and(HostWait::is_readiness)),
            [7, 23, 232, 270, 271, 281]
        );
    }
}
