//! The Linux process at work: the run loop's and the hooks' entries into
//! the kernel ([`crate::linux::kernel::Kernel`]), each made on a view of
//! the machine that holds what the kernel may touch, and the
//! [`Notice`]s it made acted on when it returns — through the same
//! notification points as the loader's (`lifecycle.rs`, `mapping.rs`).

use super::Machine;
use crate::linux::kernel::{ForkHooks, Kernel, Notice};
use crate::linux::signals::{Delivery, FaultInfo};
use crate::observe::observer::Observer;
use lard_detector_hw::event::LowLevelSync;
use log::warn;
use std::time::Duration;

impl ForkHooks for Box<dyn Observer> {
    fn prepare_fork(&mut self) -> Result<(), String> {
        Observer::prepare_fork(&mut **self)
    }

    fn forked(&mut self, child: bool) {
        Observer::forked(&mut **self, child);
    }
}

impl Machine {
    /// Runs `f` on the kernel's view of the machine, then acts on what it
    /// noticed, in order.
    fn kernel<R>(&mut self, f: impl FnOnce(&mut Kernel<'_>) -> R) -> R {
        let mut k = Kernel {
            cpu: &mut self.cpu,
            process: &mut self.process,
            config: &mut self.config,
            objects: &self.obs.objects,
            fork: &mut self.obs.observer,
            syscalls: self.obs.stats.syscalls,
            insns: self.obs.stats.insns,
            notices: Vec::new(),
        };
        let r = f(&mut k);
        let notices = k.notices;
        for n in notices {
            self.notice(n);
        }
        r
    }

    /// Acts on one notice of the kernel.
    fn notice(&mut self, n: Notice) {
        match n {
            Notice::ThreadCreated { child, stack, pc } => self.thread_created(child, stack, pc),
            Notice::ThreadExiting { pc } => self.thread_exiting(pc),
            Notice::ThreadBlocking => self.thread_blocking(),
            Notice::ThreadWoken {
                thread,
                futex,
                ret,
                pc,
            } => self.thread_woken(thread, futex, ret, pc),
            Notice::FutexWake { addr, pc } => self.emit_sync(pc, LowLevelSync::FutexWake { addr }),
            Notice::ObjectLoaded(o) => {
                self.obs.objects.add(*o);
            }
            Notice::Unmapped { start, len } => self.unmapped(start, len),
            Notice::CodeMapped { start, len } => {
                if self.code_mapped(start, len).is_err() {
                    warn!("could not hook LARDx86 sites in new code at {start:#x}");
                }
            }
        }
    }

    /// Emulates the system call the current thread is executing.
    pub fn syscall(&mut self) {
        self.obs.stats.syscalls += 1;
        self.kernel(|k| k.syscall());
    }

    /// Wakes threads whose timed wait expired at the current virtual time.
    pub fn expire_timeouts(&mut self) {
        self.kernel(|k| k.expire_timeouts());
    }

    /// Between quanta: routes signals to threads
    /// ([`Kernel::route_signals`]).
    pub fn route_signals(&mut self) -> Delivery {
        self.kernel(|k| k.route_signals())
    }

    /// Delivers one signal the current thread has to take
    /// ([`Kernel::deliver_pending`]).
    pub fn deliver_pending(&mut self) -> Delivery {
        self.kernel(|k| k.deliver_pending())
    }

    /// The signal the current thread is about to take, if it runs a
    /// handler or ends the process ([`Kernel::signal_to_take`]).
    pub fn signal_to_take(&mut self) -> Option<i32> {
        self.kernel(|k| k.signal_to_take())
    }

    /// Drops `sig`, pending for thread `i` ([`Kernel::discard_signal`]).
    pub fn discard_signal(&mut self, i: usize, sig: i32) {
        self.kernel(|k| k.discard_signal(i, sig));
    }

    /// Delivers a fault of the current thread to the guest's handler, if
    /// it has one ([`Kernel::deliver_fault`]).
    pub fn deliver_fault(&mut self, f: FaultInfo) -> bool {
        self.kernel(|k| k.deliver_fault(f))
    }

    /// Finishes an `rt_sigreturn` once the CPU has stopped
    /// ([`Kernel::finish_sigreturn`]).
    pub fn finish_sigreturn(&mut self) -> bool {
        self.kernel(|k| k.finish_sigreturn())
    }

    /// The earliest timer deadline, if a timer is armed.
    pub fn next_timer_deadline(&self) -> Option<u64> {
        self.process.next_timer_deadline()
    }

    /// Whether some thread waits on the host.
    pub fn has_host_waits(&self) -> bool {
        crate::linux::host_wait::has_host_waits(&self.cpu.threads)
    }

    /// Lets threads whose host waits are over run ([`Kernel::poll_host`]).
    pub fn poll_host(&mut self, timeout: Option<Duration>) {
        self.kernel(|k| k.poll_host(timeout));
    }
}
