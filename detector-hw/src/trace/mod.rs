//! Seeded random multithreaded traces for differential tests, the hardware
//! model and benchmarks.
//!
//! [`random_trace`] plays a small language runtime: several language threads
//! multiplexed on fewer kernel threads (Thread ops), lock acquire/release
//! expressed through ReadVC/WriteVC sequences ([`SyncModel`]), tracked and
//! untracked accesses of sizes 1/2/4/8/16 at random alignments in a small
//! address range (so that accesses conflict), ClearHistory/CopyHistory inside
//! one 4 KiB page, and ignored low-level synchronization and context
//! switches. The same seed and parameters always give the same trace.
//!
//! # Trace files
//!
//! Recorded event streams (`lard run --record-trace FILE`, or
//! [`write_trace`]) use a compact little-endian binary format, written by
//! [`TraceWriter`] and read back, streaming, by [`TraceReader`]:
//!
//! * header: the 8 bytes [`TRACE_MAGIC`] (`"LARDTRC\0"`), then the format
//!   version [`TRACE_VERSION`] (2) as a `u32` (version 1 files, which
//!   have no program events, read the same);
//! * one record per event: a tag byte, then fixed-width little-endian
//!   fields. Tag bits 0–1 give the event kind (0 access, 1 LARDx86 op,
//!   2 low-level sync, 3 other), bit 2 says that the origin has a language
//!   thread, bits 3–7 are the kind's sub-tag. Every record continues with
//!   `pc: u64, kthread: u32, core: u16` and, if bit 2 is set,
//!   `lthread: u64`. Then:
//!   * access: the sub-tag bits are `write`, `tracked`, `stack`, "own pc"
//!     and "own origin"; fields `addr: u64, size: u32`, then the access's
//!     pc (`u64`) and origin (`kthread: u32, core: u16, has_lthread: u8,
//!     [lthread: u64]`) only if they differ from the event's (the emulator
//!     reports them equal, so they are normally omitted);
//!   * LARDx86 op, sub-tag 0 `Thread {id}`, 1 `ReadVc {tid, value}`,
//!     2 `WriteVc {tid, value}`, 3 `ClearHistory {addr, len}`,
//!     4 `CopyHistory {src, dst, len}` (all `u64`);
//!   * sync, sub-tag 0 `AtomicRmw {addr: u64, size: u32}`,
//!     1 `FutexWake {addr: u64}`, 2 `FutexWaitDone {addr: u64}`,
//!     3 `ThreadCreate {child: u32}`, 4 `ThreadExit`,
//!     5 `ThreadJoin {child: u32}`;
//!   * other, sub-tag 0: `ContextSwitch` (no fields); sub-tags 1–7 are
//!     program events (version 2): 1 `Alloc {addr: u64, size: u64,
//!     site: u64, kind: u8}` (kind 0 heap, 1 static), 2 `Free {addr: u64}`,
//!     3 `Acquire {lock: u64, mode: u8}` (mode 0 exclusive, 1 shared),
//!     4 `Release {lock: u64}`, 5 `ThreadExit`, 6 `Block`, 7 `Wake`.
//! * the end record: tag byte `0xFB` (kind 3, sub-tag 31) and the number of
//!   events as a `u64`, then end of input.
//!
//! An access record is 27 bytes (35 with a language thread). Reading never
//! panics: a file without its end record (a writer that was not
//! [`finish`](TraceWriter::finish)ed, a cut file) yields its complete
//! events and then [`TraceError::Truncated`]; a record that does not parse,
//! a wrong event count or bytes after the end record give
//! [`TraceError::Corrupt`]; a foreign file gives [`TraceError::BadMagic`].
//!
//! The parts: [`SyncModel`] (the runtime's lock model, `sync_model.rs`),
//! [`random_trace`] (the generator, `generate.rs`) and the file format
//! (`format.rs` for its constants and errors, `write.rs` and `read.rs`).

mod format;
mod generate;
mod read;
mod sync_model;
mod write;

pub use crate::rng::SplitMix64;
pub use format::{TraceError, TRACE_MAGIC, TRACE_VERSION};
pub use generate::{random_trace, TraceParams, ACCESS_SIZES};
pub use read::{read_trace, TraceReader};
pub use sync_model::SyncModel;
pub use write::{write_trace, TraceWriter};
