// SPDX-License-Identifier: MIT OR Apache-2.0
//! Rust guest SDK for **LARDx86**, the x86-64 ISA extension of LARD
//! (low-level abstractable race detection).
//!
//! A program built with this crate runs on a LARDx86 CPU as a *language
//! implementation* in the sense of the LARD paper: the program's own data
//! accesses are **Tracked**, its own synchronization reaches the detector as
//! vector-clock updates (**WriteVC**), and everything the runtime does
//! internally (its locks, its allocations, `std`'s threads) stays invisible to
//! the detector. It implements the same semantics as the C SDK (`lard.h` +
//! `liblard.a`, see `docs/sdk.md`), in Rust idiom.
//!
//! On a CPU without LARD every op is a reserved NOP and the Tracked prefix is
//! an ignored segment override, so programs run unchanged (and
//! [`read_vc`] returns 0).
//!
//! | Module / item | What | Happens-before meaning |
//! |---|---|---|
//! | [`set_thread`], [`read_vc`], [`write_vc`], [`floor_vc`] | the raw ops Thread, ReadVC, WriteVC, FloorVC | WriteVC is the only way edges reach the detector |
//! | [`Tracked`] | plain data whose `load`/`store` are single Tracked `mov`s | checked and recorded; a race is a bug the detector reports |
//! | [`mem`] | ClearHistory / CopyHistory split at pages, [`mem::move_bytes`], [`mem::ClearOnFree`] | Rule 3 (reuse) and Rule 4 (movement); no edges |
//! | [`thread`] | `spawn` / `JoinHandle::join`, language thread ids | fork and join edges |
//! | [`sync`] | [`Mutex`], [`Barrier`], [`Volatile`] | release/acquire edges through vector clocks |
//!
//! # The raw ops
//!
//! ```
//! // Run language thread 7 on this kernel thread, then order it after
//! // everything thread 3 did up to its clock value 5.
//! lard::set_thread(7);
//! lard::write_vc(3, 5);
//! // Natively (no LARD) ReadVC leaves its zeroed destination alone.
//! assert_eq!(lard::read_vc(7), 0);
//! # lard::set_thread(lard::thread::current_id() as u64);
//! ```
//!
//! The raw ops bypass the runtime: a program using [`thread`] and [`sync`]
//! never needs them (and must not desynchronize the runtime's clocks with
//! them). They exist for runtimes built on top of this crate.
//!
//! # Design of the runtime
//!
//! * **Clock mirroring.** The runtime keeps one vector clock per language
//!   thread, per [`Mutex`], per [`Barrier`] phase and per [`Volatile`].
//!   The current language thread's software clock always equals the
//!   detector's clock for that identity: whenever the runtime changes an entry
//!   it issues WriteVC for that entry only (a join writes just the entries that
//!   grow). It never needs ReadVC. Clocks grow on demand: there is no fixed
//!   thread limit (the C SDK has 64).
//! * **Ids.** Language thread ids are dense and never reused: **0 is the main
//!   thread** (claimed by an `.init_array` constructor before `main`, which
//!   issues `Thread 0`), then 1, 2, ... for each [`thread::spawn`] or kernel
//!   thread adopted lazily (a thread not created by [`thread::spawn`] that
//!   uses the runtime gets a fresh id with clock own entry 1, others 0: no edge).
//! * **System code.** The runtime's own memory accesses are untracked and its
//!   own synchronization (`std::sync::Mutex`, `std::thread`) is never
//!   reported.
//!
//! # Caveats
//!
//! * A [`Tracked`] access is a plain `mov`: a race on it is *deliberate* in a
//!   race-detection test harness and is what the detector reports. Use it for
//!   word-sized, aligned data only.
//! * Memory that is freed and reused (heap blocks, but also the stacks of
//!   exited threads, which glibc caches) keeps its access histories unless
//!   they are cleared. Use [`mem::ClearOnFree`] as the global allocator when
//!   heap blocks hold Tracked data, and do not keep `Tracked` values on the
//!   stack of a thread that exits before the memory is reused.
#![warn(missing_docs)]

#[cfg(not(target_arch = "x86_64"))]
compile_error!("lard: LARDx86 is an extension of x86-64");

pub mod encoding;
pub mod mem;
pub mod sync;
pub mod thread;

mod clock;
#[cfg(test)]
mod shadow;
#[cfg(test)]
mod tests;
mod tracked;

pub use sync::{Barrier, BarrierWaitResult, Mutex, MutexGuard, Volatile};
pub use tracked::{Plain, Tracked};

/// The page size: a ClearHistory or CopyHistory region must lie within one
/// page of this size (the functions of [`mem`] split larger regions).
pub const PAGE_SIZE: usize = 4096;

/// Emits one LARDx86 op: the 9 bytes of `encoding::encode(...)`, given as a
/// `[u8; 9]` constant, followed by the register operands pinned to the
/// registers the constant was computed from.
macro_rules! lard_op {
    ($bytes:expr, $($operands:tt)*) => {
        core::arch::asm!(
            ".byte {b0}, {b1}, {b2}, {b3}, {b4}, {b5}, {b6}, {b7}, {b8}",
            b0 = const $bytes[0], b1 = const $bytes[1], b2 = const $bytes[2],
            b3 = const $bytes[3], b4 = const $bytes[4], b5 = const $bytes[5],
            b6 = const $bytes[6], b7 = const $bytes[7], b8 = const $bytes[8],
            $($operands)*
        )
    };
}

/// **Thread** `id`: the calling kernel thread now runs language thread `id`.
/// All its later Tracked accesses, ReadVC and WriteVC are attributed to `id`
/// (Rule 5). No edge. A fresh `id`'s detector clock is own entry 1, others 0.
///
/// Emitted as `lard.thread rdi` (`48 0f 1f bc 00 01 4c 52 44`).
///
/// ```
/// lard::set_thread(12);   // natively a NOP
/// # lard::set_thread(lard::thread::current_id() as u64);
/// ```
#[inline(always)]
pub fn set_thread(id: u64) {
    #[cfg(test)]
    shadow::on_thread(id);
    // SAFETY: a reserved NOP that touches no memory (a detector op on LARD).
    unsafe { lard_op!(encoding::THREAD_RDI, in("rdi") id, options(nostack, preserves_flags)) }
}

/// **ReadVC**: entry `tid` of the current language thread's detector clock.
/// No edge. Returns **0 on a CPU without LARD**: the destination register is
/// zeroed first and the NOP leaves it alone (on LARD hardware a thread's own
/// entry is at least 1, so `read_vc(own id) != 0` tests for LARD).
///
/// Emitted as `lard.readvc rax, rdi` (`48 0f 1f 84 07 02 4c 52 44`).
///
/// ```
/// let lard_hw = lard::read_vc(lard::thread::current_id() as u64) != 0;
/// assert!(!lard_hw); // doc tests run natively
/// ```
#[inline(always)]
pub fn read_vc(tid: u64) -> u64 {
    let mut v: u64 = 0;
    // SAFETY: a reserved NOP that touches no memory; on LARD it writes rax.
    unsafe {
        lard_op!(encoding::READVC_RAX_RDI, inout("rax") v, in("rdi") tid,
                 options(nostack, preserves_flags))
    }
    v
}

/// **WriteVC**: entry `tid` of the current language thread's detector clock
/// becomes `value`. After it, the current thread's accesses are ordered after
/// every access of `tid` made while `tid`'s own entry was `<= value`. This is
/// the only way happens-before edges reach the detector.
///
/// Emitted as `lard.writevc rdi, rsi` (`48 0f 1f bc 06 03 4c 52 44`).
///
/// ```
/// lard::write_vc(0, 3);   // natively a NOP
/// ```
#[inline(always)]
pub fn write_vc(tid: u64, value: u64) {
    #[cfg(test)]
    shadow::on_write_vc(tid, value);
    // SAFETY: a reserved NOP that touches no memory (a detector op on LARD).
    unsafe {
        lard_op!(encoding::WRITEVC_RDI_RSI, in("rdi") tid, in("rsi") value,
                 options(nostack, preserves_flags))
    }
}

/// **FloorVC**: entry `tid` of every clock is at least `value` from now on,
/// so a runtime may leave entries at or below it out of the clocks it keeps
/// (docs/lardx86.md, "Clock floors"). Returns `value`, or 0 when the CPU
/// keeps no floors (its detectors cannot apply them): the runtime must then
/// keep every entry. A CPU without LARD leaves the register alone, so this
/// returns `value` natively. This crate's own runtime raises none.
///
/// Emitted as `lard.floorvc rdi, rax` (`48 0f 1f bc 00 06 4c 52 44`).
///
/// ```
/// assert_eq!(lard::floor_vc(3, 5), 5); // natively a NOP
/// ```
#[inline(always)]
pub fn floor_vc(tid: u64, value: u64) -> u64 {
    let mut v = value;
    // SAFETY: a reserved NOP that touches no memory; on LARD it may write rax.
    unsafe {
        lard_op!(encoding::FLOORVC_RDI_RAX, in("rdi") tid, inout("rax") v,
                 options(nostack, preserves_flags))
    }
    v
}

pub(crate) use lard_op;
