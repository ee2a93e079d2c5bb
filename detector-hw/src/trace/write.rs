//! Writing trace files: one record per event ([`TraceWriter`]).

use std::io::{self, Write};

use super::format::{
    ACC_OWN_ORIGIN, ACC_OWN_PC, ACC_STACK, ACC_TRACKED, ACC_WRITE, KIND_ACCESS, KIND_LARD,
    KIND_OTHER, KIND_SYNC, MAX_RECORD, SUB_SHIFT, TAG_END, TAG_LTHREAD, TRACE_MAGIC, TRACE_VERSION,
};
use crate::event::{
    AccessKind, Event, EventKind, LardOp, LockMode, LowLevelSync, ObjectKind, ProgramEvent,
};

/// Bytes the writer buffers before writing to its sink.
const WRITE_BUFFER: usize = 64 << 10;

/// Appends the encoding of `e` (at most [`MAX_RECORD`] bytes) to `out`.
fn encode(e: &Event, out: &mut Vec<u8>) {
    let (kind, sub) = match &e.kind {
        EventKind::Access(a) => {
            let mut f = 0;
            if a.kind == AccessKind::Write {
                f |= ACC_WRITE;
            }
            if a.tracked {
                f |= ACC_TRACKED;
            }
            if a.stack {
                f |= ACC_STACK;
            }
            if a.pc != e.pc {
                f |= ACC_OWN_PC;
            }
            if a.origin != e.origin {
                f |= ACC_OWN_ORIGIN;
            }
            (KIND_ACCESS, f)
        }
        EventKind::Lard(op) => (
            KIND_LARD,
            match op {
                LardOp::Thread { .. } => 0,
                LardOp::ReadVc { .. } => 1,
                LardOp::WriteVc { .. } => 2,
                LardOp::ClearHistory { .. } => 3,
                LardOp::CopyHistory { .. } => 4,
                LardOp::FloorVc { .. } => 5,
            },
        ),
        EventKind::Sync(s) => (
            KIND_SYNC,
            match s {
                LowLevelSync::AtomicRmw { .. } => 0,
                LowLevelSync::FutexWake { .. } => 1,
                LowLevelSync::FutexWaitDone { .. } => 2,
                LowLevelSync::ThreadCreate { .. } => 3,
                LowLevelSync::ThreadExit => 4,
                LowLevelSync::ThreadJoin { .. } => 5,
            },
        ),
        EventKind::ContextSwitch => (KIND_OTHER, 0),
        EventKind::Program(p) => (
            KIND_OTHER,
            match p {
                ProgramEvent::Alloc { .. } => 1,
                ProgramEvent::Free { .. } => 2,
                ProgramEvent::Acquire { .. } => 3,
                ProgramEvent::Release { .. } => 4,
                ProgramEvent::ThreadExit => 5,
                ProgramEvent::Block => 6,
                ProgramEvent::Wake => 7,
            },
        ),
    };
    let lt = if e.origin.lthread.is_some() {
        TAG_LTHREAD
    } else {
        0
    };
    out.push(kind | lt | (sub << SUB_SHIFT));
    out.extend_from_slice(&e.pc.to_le_bytes());
    out.extend_from_slice(&e.origin.kthread.to_le_bytes());
    out.extend_from_slice(&e.origin.core.to_le_bytes());
    if let Some(l) = e.origin.lthread {
        out.extend_from_slice(&l.to_le_bytes());
    }
    let mut u64s = |vs: &[u64]| {
        for v in vs {
            out.extend_from_slice(&v.to_le_bytes());
        }
    };
    match &e.kind {
        EventKind::Access(a) => {
            u64s(&[a.addr]);
            out.extend_from_slice(&a.size.to_le_bytes());
            if a.pc != e.pc {
                out.extend_from_slice(&a.pc.to_le_bytes());
            }
            if a.origin != e.origin {
                out.extend_from_slice(&a.origin.kthread.to_le_bytes());
                out.extend_from_slice(&a.origin.core.to_le_bytes());
                match a.origin.lthread {
                    Some(l) => {
                        out.push(1);
                        out.extend_from_slice(&l.to_le_bytes());
                    }
                    None => out.push(0),
                }
            }
        }
        EventKind::Lard(op) => match *op {
            LardOp::Thread { id } => u64s(&[id]),
            LardOp::ReadVc { tid, value }
            | LardOp::WriteVc { tid, value }
            | LardOp::FloorVc { tid, value } => u64s(&[tid, value]),
            LardOp::ClearHistory { addr, len } => u64s(&[addr, len]),
            LardOp::CopyHistory { src, dst, len } => u64s(&[src, dst, len]),
        },
        EventKind::Sync(s) => match *s {
            LowLevelSync::AtomicRmw { addr, size } => {
                u64s(&[addr]);
                out.extend_from_slice(&size.to_le_bytes());
            }
            LowLevelSync::FutexWake { addr } | LowLevelSync::FutexWaitDone { addr } => {
                u64s(&[addr])
            }
            LowLevelSync::ThreadCreate { child } | LowLevelSync::ThreadJoin { child } => {
                out.extend_from_slice(&child.to_le_bytes())
            }
            LowLevelSync::ThreadExit => {}
        },
        EventKind::ContextSwitch => {}
        EventKind::Program(p) => match *p {
            ProgramEvent::Alloc {
                addr,
                size,
                site,
                kind,
            } => {
                u64s(&[addr, size, site]);
                out.push(match kind {
                    ObjectKind::Heap => 0,
                    ObjectKind::Static => 1,
                });
            }
            ProgramEvent::Free { addr } | ProgramEvent::Release { lock: addr } => u64s(&[addr]),
            ProgramEvent::Acquire { lock, mode } => {
                u64s(&[lock]);
                out.push(match mode {
                    LockMode::Exclusive => 0,
                    LockMode::Shared => 1,
                });
            }
            ProgramEvent::ThreadExit | ProgramEvent::Block | ProgramEvent::Wake => {}
        },
    }
}

/// Streams events into a trace file (see [`crate::trace`] for the format).
///
/// Records are buffered internally (no `BufWriter` needed) and written to
/// the sink in 64 KiB chunks; [`TraceWriter::finish`] writes the end record
/// and flushes. A writer dropped without `finish` writes nothing more: the
/// file then reads as its complete records followed by
/// [`TraceError::Truncated`](super::TraceError::Truncated).
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    sink: W,
    /// Encoded records not yet written to `sink`.
    pub(super) buf: Vec<u8>,
    events: u64,
}

impl<W: Write> TraceWriter<W> {
    /// Starts a trace on `sink` (the header goes out with the first chunk).
    pub fn new(sink: W) -> TraceWriter<W> {
        let mut buf = Vec::with_capacity(WRITE_BUFFER + MAX_RECORD);
        buf.extend_from_slice(&TRACE_MAGIC);
        buf.extend_from_slice(&TRACE_VERSION.to_le_bytes());
        TraceWriter {
            sink,
            buf,
            events: 0,
        }
    }

    /// Appends one event.
    #[inline]
    pub fn push(&mut self, e: &Event) -> io::Result<()> {
        encode(e, &mut self.buf);
        self.events += 1;
        if self.buf.len() >= WRITE_BUFFER {
            self.sink.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Events pushed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Writes the end record, flushes and returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.buf.push(TAG_END);
        self.buf.extend_from_slice(&self.events.to_le_bytes());
        self.sink.write_all(&self.buf)?;
        self.buf.clear();
        self.sink.flush()?;
        Ok(self.sink)
    }
}

/// Writes `events` as a complete trace file to `w`.
pub fn write_trace(w: &mut impl Write, events: &[Event]) -> io::Result<()> {
    let mut tw = TraceWriter::new(w);
    for e in events {
        tw.push(e)?;
    }
    tw.finish()?;
    Ok(())
}
