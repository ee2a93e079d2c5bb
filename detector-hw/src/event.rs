//! The event model: everything race-relevant that the emulator's CPU reports.
//!
//! This module is the contract between the emulator (`lard-emu`) and every
//! detector. It has no dependency on the emulator, so detectors can be driven
//! by synthetic traces in tests and benchmarks. The vocabulary follows the LARD
//! paper (§4.1): *tracked* accesses, *vector clocks* read and written with
//! ReadVC/WriteVC, *access histories* cleared and copied with
//! ClearHistory/CopyHistory, and language-level *thread identity* set with
//! Thread.

use std::fmt;

/// A kernel (low-level) thread id, as the emulated Linux kernel numbers it.
pub type KernelThreadId = u32;

/// A language-level thread id, as a runtime names it with the Thread op.
pub type LangThreadId = u64;

/// A simulated core number (`0..cores`).
pub type CoreId = u16;

/// The identity under which a detector attributes accesses and vector clocks.
///
/// A kernel thread that has not yet issued a Thread op acts under its kernel
/// identity; after `Thread id` it acts as `Lang(id)`. The two name spaces are
/// kept apart so that language id 7 and kernel thread 7 never alias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ThreadKey {
    /// A kernel thread that runs no declared language-level thread.
    Kernel(KernelThreadId),
    /// A language-level thread declared with the Thread op.
    Lang(LangThreadId),
}

impl fmt::Display for ThreadKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThreadKey::Kernel(k) => write!(f, "K{k}"),
            ThreadKey::Lang(l) => write!(f, "T{l}"),
        }
    }
}

/// Whether an access reads or writes memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// A load.
    Read,
    /// A store.
    Write,
}

/// Who the event came from: the kernel thread, the language thread it runs
/// (if it declared one with the Thread op) and the simulated core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The kernel thread that executed the instruction.
    pub kthread: KernelThreadId,
    /// The language-level thread last declared on this kernel thread, if any.
    pub lthread: Option<LangThreadId>,
    /// The simulated core the kernel thread runs on.
    pub core: CoreId,
}

impl Origin {
    /// The identity LARD uses: the language thread if declared, else the kernel thread.
    pub fn lard_key(&self) -> ThreadKey {
        match self.lthread {
            Some(l) => ThreadKey::Lang(l),
            None => ThreadKey::Kernel(self.kthread),
        }
    }

    /// The identity a detector that ignores the Thread op uses.
    pub fn kernel_key(&self) -> ThreadKey {
        ThreadKey::Kernel(self.kthread)
    }
}

/// One data memory access made by one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    /// Address of the instruction the access is attributed to. Detectors
    /// keep it as an opaque word beside the access history and hand it back
    /// in [`PriorAccess`](crate::race::PriorAccess); the emulator may carry
    /// a call-stack id in its bits above 47 (x86-64 user addresses have 47),
    /// which detectors never interpret.
    pub pc: u64,
    /// First byte accessed.
    pub addr: u64,
    /// Number of bytes accessed (1 to 64).
    pub size: u32,
    /// Read or write.
    pub kind: AccessKind,
    /// True when the instruction carried the Tracked prefix.
    pub tracked: bool,
    /// True when the address lies in a thread's stack (see docs/events.md).
    pub stack: bool,
    /// Who made the access.
    pub origin: Origin,
}

/// Synchronization that the hardware can observe below the language level.
///
/// LARD ignores these; detectors that "track all synchronization" (the
/// accuracy analysis' AllSync and Naïve variants) turn them into
/// happens-before edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LowLevelSync {
    /// A lock-prefixed read-modify-write or an `xchg` with memory on `addr`.
    AtomicRmw {
        /// Address of the atomic location.
        addr: u64,
        /// Size in bytes.
        size: u32,
    },
    /// A successful `futex` wake on `addr` (before the woken threads run).
    FutexWake {
        /// The futex word.
        addr: u64,
    },
    /// A thread returned from a `futex` wait on `addr` because it was woken.
    FutexWaitDone {
        /// The futex word.
        addr: u64,
    },
    /// The current thread created kernel thread `child` (clone).
    ThreadCreate {
        /// The new kernel thread.
        child: KernelThreadId,
    },
    /// The current thread is about to exit.
    ThreadExit,
    /// The current thread observed that kernel thread `child` exited
    /// (its CLONE_CHILD_CLEARTID futex wake), i.e. a join.
    ThreadJoin {
        /// The kernel thread that exited.
        child: KernelThreadId,
    },
}

/// A LARDx86 operation other than Tracked, with its operand values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LardOp {
    /// `Thread id`: this kernel thread now runs language thread `id`.
    Thread {
        /// The language-level thread id.
        id: LangThreadId,
    },
    /// `ReadVC dst, tid`: read entry `tid` of the current thread's vector
    /// clock. `value` is what the detector returned into `dst`.
    ReadVc {
        /// The entry read.
        tid: LangThreadId,
        /// The value returned.
        value: u64,
    },
    /// `WriteVC tid, value`: set entry `tid` of the current thread's clock.
    WriteVc {
        /// The entry written.
        tid: LangThreadId,
        /// The new clock value.
        value: u64,
    },
    /// `ClearHistory addr, len`: discard access histories of `[addr, addr+len)`.
    ClearHistory {
        /// First byte.
        addr: u64,
        /// Length in bytes.
        len: u64,
    },
    /// `CopyHistory src, dst, len`: copy histories of `[src, src+len)` onto `[dst, dst+len)`.
    CopyHistory {
        /// Source region.
        src: u64,
        /// Destination region.
        dst: u64,
        /// Length in bytes.
        len: u64,
    },
    /// A clock floor (docs/lardx86.md, "Clock floors"; issued by binary
    /// mode's runtime, no LARDx86 encoding): entry `tid` of every
    /// identity's clock is at least `value` from now on. Every clock that
    /// can still run holds it already, and a clock made later starts with
    /// it, so a runtime need not write it into every new clock.
    FloorVc {
        /// The entry (an ended language thread's id).
        tid: LangThreadId,
        /// Its floor.
        value: u64,
    },
}

/// A lock's identity: the address of the lock object (a `pthread_mutex_t`,
/// the SDK's mutex, a named OpenMP critical's lock, a minivm monitor, ...).
pub type LockId = u64;

/// How a lock is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LockMode {
    /// Held by one thread (a mutex, a write-locked rwlock, a spin lock).
    Exclusive,
    /// Held together with other readers (a read-locked rwlock).
    Shared,
}

/// Where an object's extent comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// A heap block (malloc family, `new`, `lard_malloc`, a managed object).
    Heap,
    /// A static object (a global or static variable, one per symbol).
    Static,
}

/// Program-level facts that LARDx86 does not carry: object extents, lock
/// identities and the end of language-level threads (docs/events.md).
///
/// They come from the program's libraries, whichever way lard learns of
/// them — the SDK's and the lard-cc runtime's `lard_note_*` calls, or
/// interception of library functions (malloc, pthread_mutex_lock, ...) —
/// behind this one type, so a detector does not care which. Exact (LARD)
/// detectors ignore them: happens-before comes from ReadVC/WriteVC only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProgramEvent {
    /// An object now occupies `[addr, addr + size)`.
    Alloc {
        /// First byte.
        addr: u64,
        /// Size in bytes.
        size: u64,
        /// PC of the allocation site in the program (0 when unknown).
        site: u64,
        /// Heap block or static object.
        kind: ObjectKind,
    },
    /// The heap block starting at `addr` is gone.
    Free {
        /// First byte of the block.
        addr: u64,
    },
    /// The current thread now holds `lock`.
    Acquire {
        /// The lock.
        lock: LockId,
        /// Exclusive or shared.
        mode: LockMode,
    },
    /// The current thread no longer holds `lock`.
    Release {
        /// The lock.
        lock: LockId,
    },
    /// The current language-level thread has terminated (kernel threads
    /// report their end as [`LowLevelSync::ThreadExit`]).
    ThreadExit,
    /// The current thread blocks (waits for a lock, a condition, a join).
    Block,
    /// The current thread runs again after [`ProgramEvent::Block`].
    Wake,
}

/// Everything the emulator reports, in program order per the global schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A data memory access.
    Access(Access),
    /// A LARDx86 operation (not Tracked, which marks accesses instead).
    Lard(LardOp),
    /// Low-level synchronization visible to hardware.
    Sync(LowLevelSync),
    /// A context switch: the core now runs this origin's thread.
    ContextSwitch,
    /// A program-level fact (allocation, lock, thread end).
    Program(ProgramEvent),
}

/// One event with the instruction and thread it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// Address of the instruction (or of the `syscall`) that caused the event.
    pub pc: u64,
    /// Who caused it.
    pub origin: Origin,
    /// What happened.
    pub kind: EventKind,
}
