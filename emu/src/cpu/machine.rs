//! The emulated machine: one unicorn CPU multiplexed deterministically over
//! the guest's threads, the LARDx86 units, and the run loop.
//!
//! Hooks are raw `extern "C"` callbacks whose user data is the boxed
//! [`Machine`]; they run on the emulation thread while `uc_emu_start` is
//! active, and are the only code that touches the machine during that time.
//! Observation is decided when code is translated ([`Machine::observes`],
//! unicorn patch 0004): observed accesses and instruction calls (LARD
//! sites, intercepted entries) reach the machine without unicorn's hook
//! lists or its per-access PC recovery.

use crate::binary::objects::{ObjectId, ObjectRegistry};
use crate::cpu::adversary::Adversary;
use crate::cpu::code::{AddrMap, CodeMap, MemInsn, Site};
use crate::cpu::memory::Memory;
use crate::cpu::sched::{SchedPolicy, Scheduler};
use crate::cpu::stacks::StackMap;
use crate::cpu::uc::{observe, AccessBuffer, Clock, Context, Reg, UcError, UcRef};
use crate::cpu::vclock::VcFile;
use crate::intercept::counted::{self, PrunedCounts};
use crate::intercept::names::{LangUnits, UnitNote};
use crate::intercept::{CallArgs, InterceptTable};
use crate::linux::process::{ExecRequest, Identity};
use crate::observe::callstack;
use crate::observe::observer::{AccessBatch, AccessMode, AccessRecord, Control, Observer};
use crate::observe::stats::{AccessTally, Stats};
use iced_x86::{OpAccess, Register};
use lard_detector_hw::adversarial::AdversarialConfig;
use lard_detector_hw::clock::Endings;
use lard_detector_hw::event::{
    Access, AccessKind, Event, EventKind, LardOp as EvOp, LowLevelSync, ObjectKind, Origin,
    ProgramEvent,
};
use lard_isa_ext::{check_region, LardFault, LardOp};
use std::collections::HashSet;
use std::ffi::c_void;
use unicorn_engine_sys as sys;

/// Process id the guest sees; the main thread's tid is the same.
pub const GUEST_PID: u32 = 4000;

// A buffered entry's info is an AccessRecord's bits (Machine::deliver_buffered).
const _: () = {
    assert!(AccessRecord::SIZE == observe::SIZE_MASK as u64);
    assert!(AccessRecord::WRITE == observe::WRITE as u64);
    assert!(AccessRecord::TRACKED == (Observe::TRACKED as u64) << observe::TAG_SHIFT);
    assert!(AccessRecord::STACK & (observe::HELPER as u64 | 0xffff_0000) == 0);
};

/// Entries the access buffer holds before a block entry flushes it (24
/// bytes each: 96 KiB, the order of a host L2's share, small enough that
/// the entries are still cached when the emulator reads them).
const ACCESS_BUFFER_ENTRIES: usize = 4096;
// A batch (at most the buffer's capacity) fits one AccessTally.
const _: () = assert!((ACCESS_BUFFER_ENTRIES + super::uc::BUFFER_SLACK) as u64 <= AccessTally::MAX);

/// From this many Tracked sites in the scanned code on, their accesses are
/// made inside the observation call ([`Observe::in_helper`]): at ~120 bytes
/// of translated code per site in the inline form, 8,192 sites fill a 1 MB
/// L2 (this host's; docs/performance.md, "Tracked sites in one call"). Below it,
/// the inline form is ~2 ns per access cheaper — and lard-cc programs, whose
/// Tracked accesses are in a few dozen runtime stubs, stay there.
pub const IN_HELPER_SITES: usize = 8192;

/// What translated code does at one guest instruction, decided when the
/// instruction is translated ([`Machine::observes`]; unicorn patch 0004).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Observe {
    /// Call the emulator before the instruction ([`Machine::call_at`]:
    /// LARD sites, intercepted entries, return addresses).
    pub call: bool,
    /// Deliver each of its memory accesses, before it happens.
    pub mem: bool,
    /// What its accesses are ([`Observe::TRACKED`], ...), handed back with each.
    pub tag: u16,
    /// With `mem`: append the accesses to the access buffer (delivered
    /// after they happened, [`Machine::flush_accesses`]) instead of calling
    /// the emulator before each.
    pub buffered: bool,
    /// With `mem`: each access is made inside its observation call rather
    /// than by translated code (unicorn patch 0009). That keeps ~60 bytes of
    /// inline TLB lookup per access out of the translated code, so that a
    /// program with 100,000 Tracked sites runs them from the host caches
    /// about as fast as one with 10; it costs ~2 ns per access
    /// where the code fits anyway. Chosen for Tracked sites once there are
    /// [`IN_HELPER_SITES`]; not for `--observe all` or binary mode, where it
    /// made pigz slower (docs/performance.md, "Tracked sites in one call").
    pub in_helper: bool,
    /// With `mem`: the accesses only add 1 to a counter, inline (unicorn
    /// patch 0011; the slot is the tag's high byte): binary mode's pruned
    /// instructions whose accesses need nothing else
    /// ([`BinaryRuntime::counted_slot`](crate::intercept::runtime::BinaryRuntime::counted_slot)).
    pub count: bool,
    /// The instruction adds 1 to a counter before it runs, inline (unicorn
    /// patch 0011; the slot is the tag's high byte): binary mode's system
    /// code atomic instructions, whose instruction call would only count
    /// a sync event ([`Machine::counted_atomic`]).
    pub count_insn: bool,
}

impl Observe {
    /// Accesses are Tracked (LARD), or program code's (binary mode: checked
    /// unless `BinaryRuntime::observe_checked` prunes them).
    pub const TRACKED: u16 = 1;
    /// A Tracked site delivered under `--observe tracked`: reported under
    /// [`Machine::attributed_pc`] (with [`Observe::TRACKED`]).
    pub const SITE: u16 = 8;
    /// Binary mode, with [`Observe::TRACKED`]: a program-code instruction
    /// static pruning kept (decided at translation, as pruning is fixed
    /// when the code's object is loaded), so its accesses are checked
    /// without looking the PC up in the pruning table again
    /// ([`BinaryRuntime::observe_unpruned`](crate::intercept::runtime::BinaryRuntime::observe_unpruned)).
    pub const UNPRUNED: u16 = 2;

    /// The flags unicorn's decision callback returns.
    #[inline]
    pub fn flags(self) -> u32 {
        let mut f = u32::from(self.tag) << observe::TAG_SHIFT;
        if self.call {
            f |= observe::INSN_CALL;
        }
        if self.mem {
            f |= observe::MEM;
            if self.in_helper {
                f |= observe::IN_HELPER;
            }
            if self.count {
                f |= observe::COUNT;
            }
        }
        if self.count_insn {
            f |= observe::INSN_COUNT;
        }
        if self.buffered {
            f |= observe::BUFFERED;
        }
        f
    }
}

/// What the instruction call at a PC does ([`Machine::call_at`]): bits.
pub mod call {
    /// A LARD site, or the instruction after a Tracked site that settles
    /// adversarial memory.
    pub const SITE: u8 = 1;
    /// The entry of an intercepted function.
    pub const INTERCEPT: u8 = 2;
    /// The return address of an intercepted call (binary mode).
    pub const RETURN: u8 = 4;
}

/// What a blocked thread waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A futex word, with the FUTEX_WAIT_BITSET mask and an optional deadline
    /// in virtual nanoseconds.
    Futex {
        /// Guest address of the futex word.
        addr: u64,
        /// Wake mask.
        bitset: u32,
        /// Virtual-time deadline.
        deadline: Option<u64>,
        /// FIFO order among waiters.
        seq: u64,
    },
    /// `pause` or `rt_sigsuspend`: until a signal is delivered.
    Signal,
    /// `rt_sigtimedwait`: until a signal of `set` is pending (taken instead
    /// of delivered), another signal is delivered, or the deadline.
    SigWait {
        /// The signals waited for.
        set: u64,
        /// Where the taken signal's `siginfo` goes (0: nowhere).
        info: u64,
        /// The thread's mask before the call (the kernel unblocks `set`
        /// while it waits).
        mask: u64,
        /// Virtual-time deadline (the call then fails with `EAGAIN`).
        deadline: Option<u64>,
    },
    /// A sleep until a virtual-time deadline.
    Sleep {
        /// Virtual-time deadline.
        deadline: u64,
    },
    /// A system call waiting for a host descriptor to be ready; made again
    /// when it is (docs/processes.md, linux::host_wait).
    Io {
        /// The descriptor.
        fd: i32,
        /// `poll` events.
        events: i16,
        /// Virtual-time deadline (the call then returns 0).
        deadline: Option<u64>,
    },
    /// A system call that would wait on the host and cannot be polled
    /// (`select`, `wait4`): made again every few milliseconds.
    Retry {
        /// Virtual-time deadline.
        deadline: Option<u64>,
        /// What the call returns at the deadline (0, or `-ETIMEDOUT` for a
        /// futex).
        expired: i64,
    },
}

/// Scheduling state of a guest thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// Ready to run.
    Runnable,
    /// Blocked in a system call.
    Blocked(Wait),
    /// Gone.
    Exited,
}

impl ThreadState {
    /// The state in a few words, for `monitor threads` and gdb's thread
    /// list.
    pub fn describe(&self) -> String {
        match *self {
            ThreadState::Runnable => "runnable".into(),
            ThreadState::Exited => "exited".into(),
            ThreadState::Blocked(Wait::Futex { addr, .. }) => format!("futex wait on {addr:#x}"),
            ThreadState::Blocked(Wait::Sleep { .. }) => "sleeping".into(),
            ThreadState::Blocked(Wait::Signal | Wait::SigWait { .. }) => {
                "waits for a signal".into()
            }
            ThreadState::Blocked(Wait::Io { fd, .. }) => format!("waits on descriptor {fd}"),
            ThreadState::Blocked(Wait::Retry { .. }) => "waits on the host".into(),
        }
    }
}

/// One guest thread.
pub struct Thread {
    /// Kernel thread id.
    pub tid: u32,
    /// Saved registers while not running.
    pub ctx: Context,
    /// Scheduling state.
    pub state: ThreadState,
    /// CLONE_CHILD_CLEARTID / set_tid_address word.
    pub clear_child_tid: u64,
    /// The language thread declared with the Thread op, if any.
    pub lthread: Option<u64>,
    /// Simulated core.
    pub core: u16,
    /// Instructions retired.
    pub insns: u64,
    /// The thread that created it (for the join event), if any.
    pub parent: Option<u32>,
    /// The deadline of a host wait whose call is being made again
    /// (linux::host_wait): the new call keeps it.
    pub restart_deadline: Option<u64>,
    /// `ctx` was changed while the thread waited (a wake's return value, a
    /// restarted call's RIP): the run loop loads it into the CPU even if
    /// the CPU still holds this thread's registers.
    pub ctx_changed: bool,
    /// Its name (`prctl(PR_SET_NAME)`, the kernel's `comm`): NUL-padded,
    /// at most 15 bytes; a new thread starts with its creator's.
    pub name: [u8; 16],
    /// Its signal mask and the signals sent to it (linux::signals).
    pub sig: crate::linux::signals::ThreadSignals,
}

/// A thread name (`comm`) from `bytes`: the first 15, NUL-padded.
pub fn thread_name(bytes: &[u8]) -> [u8; 16] {
    let mut n = [0u8; 16];
    let len = bytes
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(bytes.len())
        .min(15);
    n[..len].copy_from_slice(&bytes[..len]);
    n
}

/// Why `uc_emu_start` returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The quantum expired.
    Preempt,
    /// The current thread blocked in a system call.
    Blocked,
    /// The current thread exited.
    ThreadExit,
    /// The process exited with this status.
    ExitGroup(i32),
    /// The process was killed by a signal (e.g. abort → SIGABRT).
    Killed(i32),
    /// A fault at this PC.
    Fault(GuestFault),
    /// An unknown system call under --strict-syscalls.
    StrictSyscall(u64),
    /// An observer asked to stop before the instruction at this PC.
    ObserverStop(u64),
    /// The instruction limit (`--max-insns`) was reached.
    InsnLimit,
    /// The process called `execve` of a runnable program: lard hands it
    /// over to a new lard ([`crate::linux::process`]).
    Exec(Box<ExecRequest>),
    /// A debugger stopped the running thread before the instruction at its
    /// RIP (`lard run --gdb`, emu/src/gdb/); the run can resume.
    Debug,
}

/// A guest fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GuestFault {
    /// Signal a kernel would deliver.
    pub signal: i32,
    /// Faulting instruction.
    pub pc: u64,
    /// Faulting data address, for memory faults.
    pub addr: Option<u64>,
    /// What happened, in words.
    pub what: String,
}

/// Emulator configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Scheduler PRNG seed (also seeds AT_RANDOM and getrandom).
    pub seed: u64,
    /// Scheduling policy.
    pub sched: SchedPolicy,
    /// Quantum in basic blocks.
    pub quantum: u64,
    /// Number of simulated cores.
    pub cores: u16,
    /// Stop on unknown system calls instead of returning ENOSYS.
    pub strict_syscalls: bool,
    /// `--sysroot`: where the guest's absolute paths are looked up first.
    pub sysroot: Option<std::path::PathBuf>,
    /// Adversarial memory for Tracked reads (`--adversarial`), if on.
    pub adversarial: Option<AdversarialConfig>,
    /// LARD or binary mode (docs/binary-mode.md).
    pub mode: RunMode,
    /// `--program-code` patterns: functions (and, with dynamic loading,
    /// objects) that are program code besides the executable's own.
    pub program_code: Vec<String>,
    /// Binary mode: prune accesses that cannot race (`--no-prune` clears it).
    pub prune: bool,
    /// Binary mode: raise clock floors where the observer applies them
    /// (`--no-clock-floors` clears it; intercept/runtime/floors.rs).
    pub clock_floors: bool,
    /// Translated code addresses guest memory below the direct window's end
    /// as host memory (`--no-direct-memory` clears it; cpu/memory.rs).
    pub direct_memory: bool,
    /// Host descriptors lard owns while the guest runs (its stderr copy, the
    /// trace file): the guest can neither close nor replace them
    /// ([`crate::linux::hostfd`]).
    pub host_fds: Vec<i32>,
    /// This process's place in its process tree (pids the guest sees).
    pub process: Identity,
    /// Whether programs the guest `execve`s run under lard too
    /// (`--trace-children`); when not, they run natively.
    pub trace_children: bool,
    /// Binary mode: check no access while the process has one thread
    /// (for detectors whose verdicts depend on happens-before only).
    pub skip_single_threaded: bool,
    /// CLOCK_REALTIME at the guest's start, in nanoseconds since the epoch
    /// (`--realtime-start`; `None`: the host's time when the run starts).
    pub realtime_start: Option<u64>,
    /// The first thread's signal mask when the lard of an `execve` was
    /// told it (`None`: the mask lard inherited on the host, as for a
    /// program the user started).
    pub sigmask: Option<u64>,
}

/// Which race-detection mode a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RunMode {
    /// LARD when the executable carries LARDx86 code, else binary.
    #[default]
    Auto,
    /// LARD: Tracked accesses and LARDx86 ops only.
    Lard,
    /// Binary: program-code accesses, intercepted library calls.
    Binary,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            seed: 0,
            sched: SchedPolicy::RoundRobin,
            quantum: 1000,
            cores: 8,
            strict_syscalls: false,
            sysroot: None,
            adversarial: None,
            mode: RunMode::Auto,
            program_code: Vec::new(),
            prune: true,
            clock_floors: true,
            direct_memory: true,
            host_fds: Vec::new(),
            process: Identity::root(),
            trace_children: true,
            skip_single_threaded: false,
            realtime_start: None,
            sigmask: None,
        }
    }
}

/// The whole machine state, shared with the hooks.
pub struct Machine {
    /// The CPU.
    pub uc: UcRef,
    /// Guest memory.
    pub mem: Memory,
    /// All threads ever created (exited ones stay, for statistics).
    pub threads: Vec<Thread>,
    /// Index of the running thread.
    pub cur: usize,
    /// Scheduler.
    pub sched: Scheduler,
    /// LARD sites and block sizes.
    pub code: CodeMap,
    /// Architectural vector clocks (ReadVC/WriteVC state).
    pub vc: VcFile,
    /// Identities that ended and still run on their kernel thread: their
    /// architectural clocks go as the detectors' do (`Endings`).
    pub endings: Endings,
    /// Where events go.
    pub observer: Box<dyn Observer>,
    /// Access mode the observer asked for.
    pub mode: AccessMode,
    /// Whether low-level synchronization is reported.
    pub report_sync: bool,
    /// Whether static objects and Block/Wake are reported
    /// ([`Observer::wants_objects`](crate::observe::observer::Observer::wants_objects)).
    pub report_objects: bool,
    /// The observer applies clock floors (`Observer::accepts_floors`):
    /// binary mode's runtime may raise them.
    pub floors: bool,
    /// Counters.
    pub stats: Stats,
    /// Why emulation stopped, set by hooks.
    pub stop: Option<Stop>,
    /// Virtual time in nanoseconds (1 ns per instruction plus sleeps).
    pub vtime: u64,
    /// Instruction count and quantum, kept by translated code.
    pub clock: Clock,
    /// `clock.insns()` when the counters below last caught up with it.
    pub clock_seen: u64,
    /// Every ELF object mapped into the guest: symbols, lines and data
    /// naming for reports and messages (docs/dynamic.md).
    pub objects: ObjectRegistry,
    /// Stack mappings of all threads.
    pub stacks: StackMap,
    /// Unknown system calls already warned about.
    pub warned: HashSet<u64>,
    /// Configuration.
    pub config: Config,
    /// Next kernel thread id.
    pub next_tid: u32,
    /// Sequence number for futex FIFO order.
    pub futex_seq: u64,
    /// Last invalid memory access (address, kind) seen by the fault hook.
    pub bad_access: Option<(u64, &'static str)>,
    /// Signal dispositions set by the guest (`struct k_sigaction`, by
    /// signal number); faults are delivered to handlers (linux::signals).
    pub sigactions: Vec<[u8; 32]>,
    /// Alternate signal stacks and the signal frames being handled.
    pub signals: crate::linux::signals::SignalState,
    /// Host wall-clock time at start (for CLOCK_REALTIME).
    pub realtime_base: u64,
    /// Absolute path of the guest executable (for /proc/self/exe).
    pub exe_path: Vec<u8>,
    /// Status of the last thread that exited (the process status if it was the last).
    pub last_exit_status: i32,
    /// Load bias of the executable (non-zero for static-PIE).
    pub load_bias: u64,
    /// Intercepted guest functions (program events).
    pub intercepts: InterceptTable,
    /// What each OpenMP language thread ran (task, section, loop chunk,
    /// team), for reports: binary mode's runtime and the lard-cc runtime's
    /// `lardcc_note_unit` fill it.
    pub lang_units: LangUnits,
    /// Adversarial memory (`None` when off: no extra hooks, no cost).
    pub adversary: Option<Box<Adversary>>,
    /// Stop once this many instructions have retired (`--max-insns`;
    /// `u64::MAX` when unlimited).
    pub insn_limit: u64,
    /// The executable's `lard_caller_pc` section `[start, end)` (empty if none):
    /// Tracked accesses there are attributed to their caller's call site.
    pub caller_pc_range: (u64, u64),
    /// The lard-cc runtime's call-stack table (`lardcc_stack_nodes`), 0 if
    /// the executable has none: then the stubs of `caller_pc_range` hand the
    /// current call-stack id over in `%ecx` (observe::callstack).
    pub call_stacks: u64,
    /// Binary mode (program without LARDx86 code), when it runs.
    pub binary: Option<Box<crate::intercept::runtime::BinaryRuntime>>,
    /// PCs with an instruction call, and what it does ([`call`] bits).
    pub calls: AddrMap<u8>,
    /// Rounds of retried host waits since the start (the retry interval
    /// grows after the first few).
    pub host_retry_rounds: u32,
    /// Buffered observation (unicorn patch 0008), when on: `--observe all`
    /// in LARD mode for an observer that never stops on an access
    /// ([`Machine::install_hooks`]).
    pub access_buffer: Option<AccessBuffer>,
    /// Writes to fds 1 and 2 succeed without output: a replay under
    /// `lard run --gdb` re-executing what the guest already wrote
    /// (emu/src/gdb/replay.rs).
    pub quiet_output: bool,
}

impl Machine {
    /// The origin of events from the running thread.
    #[inline]
    pub fn origin(&self) -> Origin {
        let t = &self.threads[self.cur];
        Origin {
            kthread: t.tid,
            lthread: t.lthread,
            core: t.core,
        }
    }

    /// Credits the instructions translated code has counted since the last
    /// call to the running thread, the statistics and virtual time. Called
    /// where they are read: at system calls and when `uc_emu_start` returns
    /// (threads switch only then).
    #[inline]
    pub fn sync_clock(&mut self) {
        if let Some(c) = self.binary.as_mut().and_then(|rt| rt.counted.as_mut()) {
            self.stats.sync_events += c.take_atomics();
        }
        let now = self.clock.insns();
        let n = now - self.clock_seen;
        self.clock_seen = now;
        self.threads[self.cur].insns += n;
        self.stats.insns += n;
        self.vtime += n;
    }

    /// Why translated code stopped by itself, if it did: the instruction
    /// limit (checked first, at block granularity: the run stops at the
    /// first block entry at or past it) or the end of the quantum.
    pub fn clock_stop(&self) -> Option<Stop> {
        if self.stats.insns >= self.insn_limit {
            Some(Stop::InsnLimit)
        } else if self.clock.blocks_left() <= 0 {
            Some(Stop::Preempt)
        } else {
            None
        }
    }

    /// Delivers an event; records the stop if the observer asks for one.
    #[inline]
    pub fn emit(&mut self, pc: u64, kind: EventKind) -> Control {
        debug_assert!(self.no_buffered_accesses());
        let e = Event {
            pc,
            origin: self.origin(),
            kind,
        };
        self.note_endings(&e);
        let c = self.observer.event(&e);
        if c == Control::Stop && self.stop.is_none() {
            self.stop = Some(Stop::ObserverStop(pc));
            self.uc.set_reg(Reg::RIP, pc);
            self.uc.stop();
        }
        c
    }

    /// Delivers an access from translated code's access callback; on
    /// `Stop` asks unicorn to stop, and the caller leaves the CPU loop with
    /// the state restored to the instruction's start (patch 0004), so RIP is
    /// not written here (the callback must not write registers).
    #[inline]
    fn emit_access(&mut self, pc: u64, a: Access) -> Control {
        let c = self.observer.access(pc, &a);
        if c == Control::Stop {
            if self.stop.is_none() {
                self.stop = Some(Stop::ObserverStop(pc));
            }
            self.uc.stop();
        }
        c
    }

    /// What translated code does at `pc` — the one per-PC decision every
    /// observation mechanism goes through (unicorn asks once per
    /// translation; [`Machine::call_at`] and the mapping paths flush
    /// translations whose decision changes):
    /// * an instruction call where [`Machine::call_at`] registered one;
    /// * every access under `--observe all` in LARD mode, Tracked ones tagged;
    /// * binary mode: program-code accesses (not an atomic's own, which are
    ///   sync), pruned or not (`observe_checked` consults `pruning.pcs` and
    ///   counts them); other code's accesses only for an observer that asked
    ///   for every access.
    pub fn observes(&self, pc: u64) -> Observe {
        let call = self.calls.contains_key(&pc);
        if self.mode == AccessMode::Tracked && self.binary.is_none() && self.adversary.is_none() {
            // (Adversarial memory acts before a Tracked instruction, from
            // its instruction call, which then delivers its accesses.)
            let tracked = self.code.is_tracked(pc);
            return Observe {
                call,
                mem: tracked,
                tag: if tracked {
                    Observe::TRACKED | Observe::SITE
                } else {
                    0
                },
                buffered: false,
                in_helper: self.code.tracked_sites() >= IN_HELPER_SITES,
                ..Observe::default()
            };
        }
        if self.mode != AccessMode::All {
            return Observe {
                call,
                ..Observe::default()
            };
        }
        let Some(rt) = &self.binary else {
            let tracked = self.code.is_tracked(pc);
            return Observe {
                call,
                mem: true,
                tag: if tracked { Observe::TRACKED } else { 0 },
                buffered: self.access_buffer.is_some(),
                ..Observe::default()
            };
        };
        let atomic = matches!(self.code.site(pc).map(|s| &**s), Some(Site::Atomic(_)));
        let program = !atomic && rt.program.contains(pc);
        let all = rt.observer_mode == AccessMode::All;
        if atomic && self.counted_atomic(pc) {
            return Observe {
                call: false,
                mem: all,
                tag: (counted::ATOMICS as u16) << 8,
                count_insn: true,
                ..Observe::default()
            };
        }
        if let Some(slot) = rt.counted_slot(pc).filter(|_| program) {
            return Observe {
                call,
                mem: true,
                // (A C helper's access still calls on_access, which sees a
                // program-code access as before.)
                tag: Observe::TRACKED | (slot as u16) << 8,
                count: true,
                ..Observe::default()
            };
        }
        let tag = match program {
            true if rt.is_pruned(pc) => Observe::TRACKED,
            true => Observe::TRACKED | Observe::UNPRUNED,
            false => 0,
        };
        Observe {
            call,
            mem: program || all,
            tag,
            ..Observe::default()
        }
    }

    /// True when the atomic instruction at `pc` is translated counted
    /// instead of with its instruction call: binary mode, no observer of
    /// low-level sync, no adversarial memory, system code (program code's
    /// atomics are synchronization), no other instruction call there, and
    /// exactly one written memory operand whose address the call could
    /// compute — the call would then only add 1 to the sync events.
    pub fn counted_atomic(&self, pc: u64) -> bool {
        let Some(rt) = &self.binary else {
            return false;
        };
        if rt.counted.is_none()
            || self.report_sync
            || self.adversary.is_some()
            || self.calls.get(&pc) != Some(&call::SITE)
            || rt.program.contains(pc)
        {
            return false;
        }
        let Some(Site::Atomic(i)) = self.code.site(pc).map(|s| &**s) else {
            return false;
        };
        let plain = |r: Register| {
            r == Register::None
                || r == Register::RIP
                || r == Register::EIP
                || lard_isa_ext::Gpr::from_iced(r.full_register()).is_some()
        };
        let writes = i.mem.iter().filter(|m| {
            matches!(
                m.access(),
                OpAccess::Write
                    | OpAccess::CondWrite
                    | OpAccess::ReadWrite
                    | OpAccess::ReadCondWrite
            )
        });
        !i.rep_string
            && writes.clone().count() == 1
            && writes
                .into_iter()
                .all(|m| plain(m.base()) && plain(m.index()))
            && i.mem.iter().all(|m| plain(m.base()) && plain(m.index()))
    }

    /// Registers an instruction call (`what`, [`call`] bits) at `pc` and
    /// drops translations that were made without it.
    pub fn call_at(&mut self, pc: u64, what: u8) {
        let e = self.calls.entry(pc).or_insert(0);
        if *e & what != what {
            *e |= what;
            self.uc.remove_cache(pc, pc + 1);
        }
    }

    /// Reports every sized data symbol of ELF object `id` as a static object
    /// (`Alloc {kind: Static}`, site 0), in address order, from the current
    /// thread (for the executable: the main thread before its first
    /// instruction). Only for observers that
    /// [`want objects`](Observer::wants_objects).
    pub fn emit_static_objects(&mut self, id: ObjectId) {
        let objects: Vec<(u64, u64)> = self
            .objects
            .get(id)
            .symbols()
            .map(|s| {
                s.objects()
                    .iter()
                    .filter(|s| s.size > 0)
                    .map(|s| (s.addr, s.size))
                    .collect()
            })
            .unwrap_or_default();
        for (addr, size) in objects {
            self.stats.program_events += 1;
            self.emit(
                0,
                EventKind::Program(ProgramEvent::Alloc {
                    addr,
                    size,
                    site: 0,
                    kind: ObjectKind::Static,
                }),
            );
        }
    }

    /// Delivers an event from another thread than the running one (a
    /// thread being created).
    pub fn emit_as(&mut self, origin: Origin, pc: u64, kind: EventKind) {
        debug_assert!(self.no_buffered_accesses());
        let e = Event { pc, origin, kind };
        self.note_endings(&e);
        self.observer.event(&e);
    }

    /// An identity's end, and the Thread op after which its architectural
    /// clock goes (the rule the detectors apply to theirs).
    #[inline]
    fn note_endings(&mut self, e: &Event) {
        match e.kind {
            EventKind::Program(ProgramEvent::ThreadExit) => self.endings.ended(&e.origin),
            EventKind::Lard(EvOp::Thread { .. }) => {
                if let Some(gone) = self.endings.switched(&e.origin) {
                    self.vc.retire(gone);
                }
            }
            _ => {}
        }
    }

    /// Delivers a low-level synchronization event if the observer wants them.
    pub fn emit_sync(&mut self, pc: u64, s: LowLevelSync) {
        self.stats.sync_events += 1;
        // Kernel threads' ends are object-level facts too (ownership is
        // inherited from a terminated owner).
        let thread_end = self.report_objects && s == LowLevelSync::ThreadExit;
        if self.report_sync || thread_end {
            self.emit(pc, EventKind::Sync(s));
        }
    }

    /// True when `addr` lies in some thread's stack mapping.
    #[inline]
    pub fn is_stack(&self, addr: u64) -> bool {
        self.stacks.is_stack(addr)
    }

    /// True when no buffered access waits for delivery (every event must
    /// come after the accesses made before it).
    pub fn no_buffered_accesses(&self) -> bool {
        self.access_buffer
            .as_ref()
            .is_none_or(AccessBuffer::is_empty)
    }

    /// Delivers the buffered accesses (unicorn patch 0008), oldest first, as
    /// `on_access` delivers an access of `--observe all` in LARD mode, and
    /// empties the buffer. Called first by every callback from translated
    /// code and after every `uc_emu_start`, so accesses and other events
    /// reach the observer in program order, all from the thread that made
    /// them (threads switch only between runs of `uc_emu_start`).
    #[inline]
    pub fn flush_accesses(&mut self) {
        if self.no_buffered_accesses() {
            return;
        }
        self.deliver_buffered();
    }

    #[inline(never)]
    fn deliver_buffered(&mut self) {
        let Some(mut buf) = self.access_buffer.take() else {
            return;
        };
        // Translated code wrote the access callback's info: the record's
        // bits but the stack flag (the layouts agree, asserted above; a
        // buffered decision's tag is 0 or TRACKED), which the batch adds
        // while the observer reads it.
        debug_assert!(buf.records_mut().iter().all(|r| r.bits
            & !(AccessRecord::SIZE | AccessRecord::WRITE | AccessRecord::TRACKED)
            == 0));
        let mut batch = AccessBatch::new(self.origin(), buf.records_mut(), &self.stacks);
        // (The observer never stops on an access: install_hooks.)
        self.observer.accesses(&mut batch);
        let counts = batch.counts();
        self.stats.count_accesses(&counts);
        buf.clear();
        self.access_buffer = Some(buf);
    }

    /// The PC a Tracked access at `pc` is reported under. Accesses in the
    /// `lard_caller_pc` section (leaf stubs such as lard-cc's `__tsan_read4`,
    /// which never move rsp) belong to the program line that called the stub:
    /// the `call` instruction before the return address at `[rsp]`
    /// (docs/lard-cc.md, "Where a report points"), with the program's call
    /// stack id when the runtime records call stacks (a site,
    /// observe::callstack).
    #[inline(always)]
    pub fn attributed_pc(&self, pc: u64) -> u64 {
        let (lo, hi) = self.caller_pc_range;
        if pc < lo || pc >= hi {
            return pc;
        }
        self.caller_of_stub(pc)
    }

    /// [`Machine::attributed_pc`] inside the `lard_caller_pc` section (out
    /// of line: the range test above is on every Tracked access's path).
    #[inline(never)]
    fn caller_of_stub(&self, pc: u64) -> u64 {
        let Some(ret) = self.mem.read_u64(self.uc.reg(Reg::RSP)) else {
            return pc;
        };
        // call rel32 (e8, 5 bytes) or call [rip+disp32] (ff 15, 6 bytes).
        let at = |a: u64| self.mem.slice(a, 1).map(|b| b[0]);
        let call = if at(ret.wrapping_sub(5)) == Some(0xe8) {
            ret - 5
        } else if at(ret.wrapping_sub(6)) == Some(0xff) && at(ret.wrapping_sub(5)) == Some(0x15) {
            ret - 6
        } else {
            ret.wrapping_sub(1)
        };
        if self.call_stacks == 0 {
            return call;
        }
        callstack::site(call, self.uc.reg(Reg::RCX) as u32)
    }

    /// Records the mapping containing `sp` as a stack.
    pub fn add_stack(&mut self, sp: u64) {
        if let Some((s, len)) = self.mem.region_of(sp.saturating_sub(1)) {
            self.stacks.add(s, s + len);
        }
    }

    /// Stops emulation with a guest fault.
    pub fn fault(&mut self, f: GuestFault) {
        if self.stop.is_none() {
            self.stop = Some(Stop::Fault(f));
        }
        self.uc.stop();
    }

    /// Registers instruction calls for newly found LARD sites.
    pub fn hook_sites(&mut self, sites: &[(u64, std::rc::Rc<Site>)]) -> Result<(), UcError> {
        for (pc, site) in sites {
            let wanted = match &**site {
                Site::Op(_) | Site::Fault(_) => true,
                Site::Tracked(i) => {
                    // Trigger PCs of adversarial memory get their settle
                    // hook now; other Tracked sites when they first matter.
                    if self
                        .adversary
                        .as_ref()
                        .is_some_and(|a| a.memory.triggers().pcs().binary_search(pc).is_ok())
                    {
                        self.hook_settle(*pc, pc + i.insn.len() as u64)?;
                    }
                    // Without adversarial memory, Tracked accesses are
                    // delivered by translated code ([`Machine::observes`]).
                    self.adversary.is_some()
                }
                Site::Atomic(_) => self.report_sync || self.binary.is_some(),
            };
            if wanted {
                self.call_at(*pc, call::SITE);
            }
        }
        Ok(())
    }

    /// Registers instruction calls on the entries of intercepted functions
    /// (`pcs`, from `self.intercepts`).
    pub fn hook_intercepts(&mut self, pcs: &[u64]) -> Result<(), UcError> {
        for &pc in pcs {
            self.call_at(pc, call::INTERCEPT);
        }
        Ok(())
    }

    /// The notification point for an ELF object's code: `[start, start+len)`
    /// of object `id` was just mapped executable (by the loader, by ld.so's
    /// `mmap`, or by `mprotect`). Every mechanism that acts on an object's
    /// code when it appears runs from here: the LARD-site scan (from the
    /// object's function starts), the hooks on the object's intercepted
    /// functions (found by symbol) and, for observers that want objects,
    /// its static objects (when its code first appears).
    pub fn object_mapped(&mut self, id: ObjectId, start: u64, len: u64) -> Result<(), UcError> {
        let first = self.objects.get(id).exec.is_empty();
        self.objects.add_exec(id, start, len);
        if first && self.report_objects {
            self.emit_static_objects(id);
        }
        let ranges = self.objects.get(id).functions().to_vec();
        self.scan_code(start, len, &ranges)?;
        let mut new = match self.objects.get(id).symbols() {
            Some(symbols) => self.intercepts.add_from_symbols(symbols),
            None => Vec::new(),
        };
        if self.binary.is_some() {
            new.extend(self.binary_object_mapped(id, start, len));
        }
        // The range's decisions (sites, program code, pruning) are made.
        self.uc.remove_cache(start, start + len);
        self.hook_intercepts(&new)
    }

    /// Executable memory `[start, start+len)` appeared (mmap, mprotect):
    /// [`Machine::object_mapped`] if it belongs to an object, else a plain
    /// scan for LARD sites (JIT code, anonymous executable memory).
    pub fn code_mapped(&mut self, start: u64, len: u64) -> Result<(), UcError> {
        match self.objects.id_at(start) {
            Some(id) => self.object_mapped(id, start, len),
            None => {
                self.scan_code(start, len, &[])?;
                self.uc.remove_cache(start, start + len);
                Ok(())
            }
        }
    }

    /// Hooks `next`, the instruction after the Tracked site at `pc`, so that
    /// adversarial memory settles right after the site executes
    /// (emu/src/cpu/adversary.rs). Once per site.
    pub fn hook_settle(&mut self, pc: u64, next: u64) -> Result<(), UcError> {
        let Some(adv) = self.adversary.as_deref_mut() else {
            return Ok(());
        };
        if adv.settle_hooked.insert(pc) {
            self.call_at(next, call::SITE);
        }
        Ok(())
    }

    /// Scans an executable range for LARD sites and hooks them.
    pub fn scan_code(
        &mut self,
        start: u64,
        len: u64,
        fn_ranges: &[(u64, u64)],
    ) -> Result<(), UcError> {
        let Some(bytes) = self.mem.slice(start, len).map(|b| b.to_vec()) else {
            return Ok(());
        };
        let found = self.code.scan(&bytes, start, fn_ranges);
        self.hook_sites(&found)
    }

    /// Executes the LARD op at `pc`.
    fn lard_op(&mut self, pc: u64, op: LardOp) {
        let reg = |g: lard_isa_ext::Gpr| self.uc.reg(gpr_reg(g));
        let ev = match op {
            LardOp::Thread { id } => {
                let id = reg(id);
                self.threads[self.cur].lthread = Some(id);
                EvOp::Thread { id }
            }
            LardOp::ReadVc { dst, tid } => {
                let tid = reg(tid);
                let value = self.vc.read(self.origin().lard_key(), tid);
                self.uc.set_reg(gpr_reg(dst), value);
                EvOp::ReadVc { tid, value }
            }
            LardOp::WriteVc { tid, value } => {
                let (tid, value) = (reg(tid), reg(value));
                self.vc.write(self.origin().lard_key(), tid, value);
                EvOp::WriteVc { tid, value }
            }
            LardOp::ClearHistory { addr, len } => {
                let (addr, len) = (reg(addr), reg(len));
                if let Err(f) = check_region(addr, len) {
                    return self.lard_fault(pc, f);
                }
                EvOp::ClearHistory { addr, len }
            }
            LardOp::CopyHistory { src, dst, len } => {
                let (src, dst, len) = (reg(src), reg(dst), reg(len));
                if let Err(f) = check_region(src, len).and(check_region(dst, len)) {
                    return self.lard_fault(pc, f);
                }
                EvOp::CopyHistory { src, dst, len }
            }
            LardOp::FloorVc { tid, value: out } => {
                let (tid, value) = (reg(tid), reg(out));
                if !self.floors {
                    // No floor is kept: the runtime must keep every entry.
                    self.uc.set_reg(gpr_reg(out), 0);
                    self.stats.count_op(op.kind());
                    return;
                }
                self.vc.raise_floor(tid, value);
                EvOp::FloorVc { tid, value }
            }
        };
        self.stats.count_op(op.kind());
        if self.emit(pc, EventKind::Lard(ev)) == Control::Continue {
            self.adversarial_lard(&ev);
        }
        if let EvOp::FloorVc { tid, value } = ev {
            self.prune_unit_names(tid, value);
        }
    }

    /// Forgets the names of the OpenMP units that ran as language thread
    /// `tid` entirely at or below its new floor `value` (`LangUnits::prune`),
    /// but for those a race found so far names; after the floor's event,
    /// which delivered every earlier access to the detectors.
    pub(crate) fn prune_unit_names(&mut self, tid: u64, value: u64) {
        let pinned = self
            .observer
            .race_clocks(lard_detector_hw::event::ThreadKey::Lang(tid));
        self.lang_units.prune(tid, value, &pinned);
    }

    fn lard_fault(&mut self, pc: u64, f: LardFault) {
        self.fault(GuestFault {
            signal: libc::SIGILL,
            pc,
            addr: None,
            what: format!("LARD fault ({}): {f}", f.name()),
        });
        // Do not execute the faulting instruction.
        self.uc.set_reg(Reg::RIP, pc);
    }

    /// Delivers the accesses a Tracked (or atomic) instruction is about to make.
    fn instruction_accesses(&mut self, pc: u64, site: &MemInsn, tracked: bool) {
        let uc = self.uc;
        // A rep-prefixed string instruction with rcx = 0 makes no access.
        if site.rep_string && uc.reg(Reg::RCX) == 0 {
            return;
        }
        // Each operand is delivered as soon as its address is known: an
        // x86 address depends on registers only, which delivering an event
        // never changes, so this equals computing every address first —
        // without collecting them (no allocation on the per-access path).
        let origin = self.origin();
        let at = if tracked { self.attributed_pc(pc) } else { pc };
        for m in &site.mem {
            let size = m.memory_size().size() as u32;
            let Some(addr) = m.virtual_address(0, |r, _, _| iced_reg_value(uc, r)) else {
                continue;
            };
            let kinds: &[AccessKind] = match m.access() {
                OpAccess::Read | OpAccess::CondRead => &[AccessKind::Read],
                OpAccess::Write | OpAccess::CondWrite => &[AccessKind::Write],
                OpAccess::ReadWrite | OpAccess::ReadCondWrite => {
                    &[AccessKind::Read, AccessKind::Write]
                }
                _ => &[],
            };
            for &kind in kinds {
                if tracked {
                    self.stats.count_access(true, false, kind);
                    let a = Access {
                        pc: at,
                        addr,
                        size: size.max(1),
                        kind,
                        tracked: true,
                        stack: self.is_stack(addr),
                        origin,
                    };
                    // (With adversarial memory on, Tracked sites are hooked
                    // even when the observer wants no accesses.)
                    if self.mode == AccessMode::Tracked
                        && self.emit(pc, EventKind::Access(a)) == Control::Stop
                    {
                        return;
                    }
                    if self.adversary.is_some() {
                        self.adversarial_access(pc, site, addr, u64::from(size.max(1)), kind);
                    }
                } else if kind == AccessKind::Write {
                    self.emit_sync(pc, LowLevelSync::AtomicRmw { addr, size });
                    if self.binary.as_ref().is_some_and(|b| b.program.contains(pc)) {
                        self.binary_atomic(pc, addr, size.max(1));
                    }
                }
            }
        }
    }
}

/// The unicorn register for a LARD operand.
pub fn gpr_reg(g: lard_isa_ext::Gpr) -> Reg {
    const REGS: [Reg; 16] = [
        Reg::RAX,
        Reg::RCX,
        Reg::RDX,
        Reg::RBX,
        Reg::RSP,
        Reg::RBP,
        Reg::RSI,
        Reg::RDI,
        Reg::R8,
        Reg::R9,
        Reg::R10,
        Reg::R11,
        Reg::R12,
        Reg::R13,
        Reg::R14,
        Reg::R15,
    ];
    REGS[g.number() as usize]
}

/// Register values for iced-x86's effective-address computation.
fn iced_reg_value(uc: UcRef, r: Register) -> Option<u64> {
    let full = r.full_register();
    let v = match full {
        Register::FS => return Some(uc.reg(Reg::FS_BASE)),
        Register::GS => return Some(uc.reg(Reg::GS_BASE)),
        Register::ES | Register::CS | Register::SS | Register::DS => return Some(0),
        Register::RIP => uc.reg(Reg::RIP),
        _ => {
            let g = lard_isa_ext::Gpr::from_iced(full)?;
            uc.reg(gpr_reg(g))
        }
    };
    Some(match r.size() {
        4 => v & 0xffff_ffff,
        2 => v & 0xffff,
        _ => v,
    })
}

/// Recovers the machine from hook user data.
///
/// # Safety
/// `data` must be the pointer registered with the hook (a live, boxed Machine
/// that no other reference is using while emulation runs).
#[inline]
unsafe fn machine<'a>(data: *mut c_void) -> &'a mut Machine {
    &mut *(data as *mut Machine)
}

/// The instruction call at `pc` (patch 0004's `UC_LARD_INSN_CALL`, in
/// place of one code hook per PC): runs what [`Machine::call_at`]
/// registered there, in the order the code hooks ran (sites are found
/// before their object's intercepted entries are), each skipped once one
/// before it asked to stop (as unicorn's hook loop did).
unsafe extern "C" fn on_insn(data: *mut c_void, pc: u64) {
    let m = machine(data);
    m.flush_accesses();
    let Some(&what) = m.calls.get(&pc) else {
        return;
    };
    if what & call::SITE != 0 {
        on_site(m, pc);
    }
    if what & call::INTERCEPT != 0 && m.stop.is_none() {
        on_intercept(m, pc);
    }
    if what & call::RETURN != 0 && m.stop.is_none() {
        m.binary_return_call(pc);
    }
}

/// Decision callback of translate-time observation (see [`Machine::observes`]).
unsafe extern "C" fn on_decide(data: *mut c_void, pc: u64) -> u32 {
    machine(data).observes(pc).flags()
}

/// A LARD site (or the instruction after a Tracked one, to settle
/// adversarial memory).
fn on_site(m: &mut Machine, pc: u64) {
    if m.adversary.as_ref().is_some_and(|a| a.has_pending()) {
        m.settle_adversarial();
    }
    if m.stop.is_some() {
        return;
    }
    let Some(site) = m.code.site(pc).cloned() else {
        return;
    };
    match &*site {
        Site::Op(op) => m.lard_op(pc, *op),
        // In binary mode the memory hook reports program accesses.
        Site::Tracked(_) if m.binary.is_some() => {}
        Site::Tracked(i) => m.instruction_accesses(pc, i, true),
        Site::Atomic(i) => m.instruction_accesses(pc, i, false),
        Site::Fault(f) => m.lard_fault(pc, *f),
    }
}

/// The entry of an intercepted function: the call becomes a program event.
fn on_intercept(m: &mut Machine, pc: u64) {
    if m.stop.is_some() {
        return;
    }
    let Some(what) = m.intercepts.at(pc) else {
        if m.binary.is_some() {
            m.binary_entry(pc);
        }
        return;
    };
    let uc = m.uc;
    let call = CallArgs {
        args: [uc.reg(Reg::RDI), uc.reg(Reg::RSI), uc.reg(Reg::RDX)],
        ret: m.mem.read_u64(uc.reg(Reg::RSP)).unwrap_or(0),
    };
    match what.event(&call) {
        Some(e) => {
            m.stats.program_events += 1;
            m.emit(call.ret, EventKind::Program(e));
        }
        None => {
            let mem = &m.mem;
            if let Some(n) = UnitNote::read(|a| mem.read_u64(a), call.args[0]) {
                m.lang_units.insert(n.id, n.clock, n.unit);
            }
        }
    }
}

/// Access callback of translate-time observation: an access of an
/// instruction [`Machine::observes`] said to observe, about to happen;
/// `pc` is the instruction's (a translation-time constant: RIP is never
/// read here), `info` its size, kind and decision tag. Non-zero stops
/// before the access (memory unchanged).
unsafe extern "C" fn on_access(data: *mut c_void, addr: u64, pc: u64, info: u32) -> i32 {
    let m = machine(data);
    // (A C helper's access of a buffered instruction comes here.)
    m.flush_accesses();
    let kind = if info & observe::WRITE != 0 {
        AccessKind::Write
    } else {
        AccessKind::Read
    };
    let tag = (info >> observe::TAG_SHIFT) as u16;
    let tracked = tag & Observe::TRACKED != 0;
    let stack = m.is_stack(addr);
    let size = info & observe::SIZE_MASK;
    if tag & Observe::SITE != 0 {
        // As Machine::instruction_accesses delivered it from the site's
        // code hook (and counts it: Tracked, never as stack).
        m.stats.count_access(true, false, kind);
        let a = Access {
            pc: m.attributed_pc(pc),
            addr,
            size,
            kind,
            tracked: true,
            stack,
            origin: m.origin(),
        };
        return i32::from(m.emit_access(pc, a) == Control::Stop);
    }
    let cur = m.cur;
    let mut tracked = tracked;
    if let Some(rt) = &mut m.binary {
        // Binary mode: program code is checked (delivered as tracked)
        // unless observe_checked says otherwise (static pruning, writes to
        // read-only segments); system code is not — and neither is
        // delivered unless the observer asked for every access. An
        // atomic's own accesses are sync (its instruction is no program
        // code to Machine::observes), and so are plain accesses of objects
        // DWARF types as atomic.
        let mut plain_atomic = false;
        if tracked {
            if rt.atomic_objects.contains(addr) {
                plain_atomic = true;
                tracked = false;
            } else if rt.single_threaded {
                rt.single_threaded_accesses += 1;
                tracked = false;
            } else if tag & Observe::UNPRUNED != 0 {
                tracked = rt.observe_unpruned(addr, kind);
            } else {
                tracked = rt.observe_checked(pc, addr, kind);
            }
            if stack {
                rt.note_stack(cur, addr);
            }
        }
        let all = rt.observer_mode == AccessMode::All;
        if plain_atomic {
            m.binary_plain_atomic(pc, addr, kind);
        }
        if !tracked && !all {
            return 0;
        }
    }
    m.stats.count_access(tracked, stack, kind);
    let a = Access {
        pc,
        addr,
        size,
        kind,
        tracked,
        stack,
        origin: m.origin(),
    };
    i32::from(m.emit_access(pc, a) == Control::Stop)
}

/// The access buffer passed its limit at a block entry (patch 0008).
unsafe extern "C" fn on_flush(data: *mut c_void) {
    machine(data).flush_accesses();
}

/// Hook for accesses to unmapped or protected memory: records the address.
unsafe extern "C" fn on_bad_mem(
    _uc: *mut sys::uc_engine,
    kind: sys::MemType,
    addr: u64,
    _size: i32,
    _value: i64,
    data: *mut c_void,
) -> bool {
    let m = machine(data);
    let what = match kind {
        sys::MemType::READ_UNMAPPED => "read of unmapped memory",
        sys::MemType::WRITE_UNMAPPED => "write to unmapped memory",
        sys::MemType::FETCH_UNMAPPED => "execution of unmapped memory",
        sys::MemType::WRITE_PROT => "write to read-only memory",
        sys::MemType::READ_PROT => "read of unreadable memory",
        sys::MemType::FETCH_PROT => "execution of non-executable memory",
        _ => "invalid memory access",
    };
    m.bad_access = Some((addr, what));
    false
}

/// Invalid-instruction hook.
unsafe extern "C" fn on_invalid(_uc: *mut sys::uc_engine, data: *mut c_void) -> bool {
    let m = machine(data);
    m.flush_accesses();
    let pc = m.uc.reg(Reg::RIP);
    m.fault(GuestFault {
        signal: libc::SIGILL,
        pc,
        addr: None,
        what: "invalid instruction".into(),
    });
    false
}

/// `syscall` hook.
unsafe extern "C" fn on_syscall(_uc: *mut sys::uc_engine, data: *mut c_void) {
    let m = machine(data);
    m.flush_accesses();
    m.sync_clock();
    m.syscall();
}

impl Machine {
    /// Installs the always-present hooks.
    pub fn install_hooks(&mut self) -> Result<(), UcError> {
        let data = self as *mut Machine as *mut c_void;
        let uc = self.uc;
        // SAFETY: the Machine is boxed (stable address) and outlives the
        // engine's runs; the callbacks match the hook types.
        unsafe {
            uc.hook_syscall(on_syscall, data)?;
            uc.hook_invalid(on_invalid, data)?;
            // Not a data-access hook: it costs nothing on successful accesses.
            uc.hook_bad_mem(on_bad_mem, data)?;
            uc.observe(on_decide, on_access, on_insn, data);
            // Pruned instructions are counted inline where that is all
            // their accesses do (binary mode, pruning on, an observer of
            // program code only).
            if let Some(rt) = self.binary.as_mut() {
                rt.counted = Some(PrunedCounts::new(uc));
            }
            // Accesses are delivered after they happen: only when nothing
            // stops before one, and only where on_access's general path
            // would deliver them (LARD mode, every access, no adversarial
            // memory acting around Tracked accesses).
            if self.mode == AccessMode::All
                && self.binary.is_none()
                && self.adversary.is_none()
                && !self.observer.stops_on_access()
            {
                self.access_buffer = Some(AccessBuffer::new(uc, on_flush, ACCESS_BUFFER_ENTRIES));
            }
        }
        Ok(())
    }
}
