//! What lard needs to know about a system call besides its
//! implementation, in one table ([`facts`]): whether it writes to a
//! descriptor (the `SIGPIPE` rule), whether `SA_RESTART` makes it again
//! after a handler, and whether and how it may wait on the host
//! ([`crate::linux::host_wait`]).

use syscalls::Sysno;

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
    /// It writes to a descriptor: `EPIPE` raises `SIGPIPE` in the guest.
    pub writes_fd: bool,
    /// The kernel makes it again after a handler with `SA_RESTART`
    /// (signal(7)); the others return `EINTR`.
    pub restartable: bool,
    /// How it may wait on the host, if it can.
    pub host_wait: Option<HostWait>,
}

/// A call with no particular facts.
const PLAIN: CallFacts = CallFacts {
    writes_fd: false,
    restartable: false,
    host_wait: None,
};

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
    use HostWait::{Child, TimeoutMs, TimeoutPtr};
    match call {
        Sysno::read | Sysno::readv => PLAIN.restarts().waits(IN),
        Sysno::write | Sysno::writev => PLAIN.restarts().writes().waits(OUT),
        Sysno::pwrite64 | Sysno::pwritev => PLAIN.restarts().writes(),
        Sysno::sendfile => PLAIN.writes(),
        Sysno::accept | Sysno::accept4 => PLAIN.restarts().waits(IN),
        Sysno::recvfrom => PLAIN.restarts().waits(recv(3)),
        Sysno::recvmsg => PLAIN.restarts().waits(recv(2)),
        Sysno::sendto => PLAIN.restarts().writes().waits(send(3)),
        Sysno::sendmsg => PLAIN.restarts().writes().waits(send(2)),
        Sysno::open
        | Sysno::openat
        | Sysno::ioctl
        | Sysno::pread64
        | Sysno::preadv
        | Sysno::connect
        | Sysno::fcntl
        | Sysno::flock => PLAIN.restarts(),
        Sysno::wait4 => PLAIN.restarts().waits(Child { arg: 2 }),
        Sysno::waitid => PLAIN.restarts().waits(Child { arg: 3 }),
        Sysno::poll => PLAIN.waits(TimeoutMs {
            arg: 2,
            on_fd: false,
        }),
        Sysno::epoll_wait | Sysno::epoll_pwait => PLAIN.waits(TimeoutMs {
            arg: 3,
            on_fd: true,
        }),
        Sysno::select => PLAIN.waits(TimeoutPtr {
            arg: 4,
            micro: true,
        }),
        Sysno::pselect6 => PLAIN.waits(TimeoutPtr {
            arg: 4,
            micro: false,
        }),
        Sysno::ppoll => PLAIN.waits(TimeoutPtr {
            arg: 2,
            micro: false,
        }),
        _ => PLAIN,
    }
}

/// The facts about the call numbered `nr` (a number with no call has
/// none).
pub(in crate::linux) fn facts_of(nr: u64) -> CallFacts {
    match usize::try_from(nr).ok().and_then(Sysno::new) {
        Some(call) => facts(call),
        None => PLAIN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls with each fact, by number (the kernel's x86-64 table).
    #[test]
    fn facts_by_number() {
        let with = |f: fn(CallFacts) -> bool| -> Vec<u64> {
            (0..512).filter(|&nr| f(facts_of(nr))).collect()
        };
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
