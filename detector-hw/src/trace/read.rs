//! Reading trace files, streaming ([`TraceReader`]).

use std::io::{self, Read};

use super::format::{
    TraceError, ACC_OWN_ORIGIN, ACC_OWN_PC, ACC_STACK, ACC_TRACKED, ACC_WRITE, HEADER, KIND_ACCESS,
    KIND_LARD, KIND_SYNC, MAX_RECORD, SUB_SHIFT, TAG_END, TAG_LTHREAD, TRACE_MAGIC, TRACE_VERSION,
};
use crate::event::{
    Access, AccessKind, Event, EventKind, LardOp, LockMode, LowLevelSync, ObjectKind, Origin,
    ProgramEvent,
};

/// Bytes the reader buffers.
const READ_BUFFER: usize = 64 << 10;

/// Reads a whole trace into memory.
pub fn read_trace(r: impl Read) -> Result<Vec<Event>, TraceError> {
    TraceReader::new(r)?.collect()
}

/// A bounds-checked little-endian cursor over one record.
struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    #[inline]
    fn bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        let s = self.b.get(self.i..self.i + N)?;
        self.i += N;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Some(out)
    }
    #[inline]
    fn u8(&mut self) -> Option<u8> {
        self.bytes::<1>().map(|b| b[0])
    }
    #[inline]
    fn u16(&mut self) -> Option<u16> {
        self.bytes().map(u16::from_le_bytes)
    }
    #[inline]
    fn u32(&mut self) -> Option<u32> {
        self.bytes().map(u32::from_le_bytes)
    }
    #[inline]
    fn u64(&mut self) -> Option<u64> {
        self.bytes().map(u64::from_le_bytes)
    }
}

/// Why one record did not decode.
enum Bad {
    /// The input ended inside it.
    Short,
    /// It is malformed.
    Corrupt(&'static str),
}

/// What one record holds.
enum Record {
    Event(Event),
    End(u64),
}

/// Decodes one record from the start of `b`; returns it and its length.
fn decode(b: &[u8]) -> Result<(Record, usize), Bad> {
    let mut c = Cursor { b, i: 0 };
    let short = || Bad::Short;
    let tag = c.u8().ok_or_else(short)?;
    if tag == TAG_END {
        let n = c.u64().ok_or_else(short)?;
        return Ok((Record::End(n), c.i));
    }
    let kind = tag & 3;
    let sub = tag >> SUB_SHIFT;
    let pc = c.u64().ok_or_else(short)?;
    let kthread = c.u32().ok_or_else(short)?;
    let core = c.u16().ok_or_else(short)?;
    let lthread = if tag & TAG_LTHREAD != 0 {
        Some(c.u64().ok_or_else(short)?)
    } else {
        None
    };
    let origin = Origin {
        kthread,
        lthread,
        core,
    };
    let kind = match kind {
        KIND_ACCESS => {
            let addr = c.u64().ok_or_else(short)?;
            let size = c.u32().ok_or_else(short)?;
            let apc = if sub & ACC_OWN_PC != 0 {
                c.u64().ok_or_else(short)?
            } else {
                pc
            };
            let aorigin = if sub & ACC_OWN_ORIGIN != 0 {
                let kthread = c.u32().ok_or_else(short)?;
                let core = c.u16().ok_or_else(short)?;
                let lthread = match c.u8().ok_or_else(short)? {
                    0 => None,
                    1 => Some(c.u64().ok_or_else(short)?),
                    _ => return Err(Bad::Corrupt("bad language-thread flag")),
                };
                Origin {
                    kthread,
                    lthread,
                    core,
                }
            } else {
                origin
            };
            EventKind::Access(Access {
                pc: apc,
                addr,
                size,
                kind: if sub & ACC_WRITE != 0 {
                    AccessKind::Write
                } else {
                    AccessKind::Read
                },
                tracked: sub & ACC_TRACKED != 0,
                stack: sub & ACC_STACK != 0,
                origin: aorigin,
            })
        }
        KIND_LARD => {
            let op = match sub {
                0 => LardOp::Thread {
                    id: c.u64().ok_or_else(short)?,
                },
                1 | 2 => {
                    let tid = c.u64().ok_or_else(short)?;
                    let value = c.u64().ok_or_else(short)?;
                    if sub == 1 {
                        LardOp::ReadVc { tid, value }
                    } else {
                        LardOp::WriteVc { tid, value }
                    }
                }
                3 => LardOp::ClearHistory {
                    addr: c.u64().ok_or_else(short)?,
                    len: c.u64().ok_or_else(short)?,
                },
                4 => LardOp::CopyHistory {
                    src: c.u64().ok_or_else(short)?,
                    dst: c.u64().ok_or_else(short)?,
                    len: c.u64().ok_or_else(short)?,
                },
                5 => LardOp::FloorVc {
                    tid: c.u64().ok_or_else(short)?,
                    value: c.u64().ok_or_else(short)?,
                },
                _ => return Err(Bad::Corrupt("unknown LARDx86 op")),
            };
            EventKind::Lard(op)
        }
        KIND_SYNC => {
            let s = match sub {
                0 => LowLevelSync::AtomicRmw {
                    addr: c.u64().ok_or_else(short)?,
                    size: c.u32().ok_or_else(short)?,
                },
                1 => LowLevelSync::FutexWake {
                    addr: c.u64().ok_or_else(short)?,
                },
                2 => LowLevelSync::FutexWaitDone {
                    addr: c.u64().ok_or_else(short)?,
                },
                3 => LowLevelSync::ThreadCreate {
                    child: c.u32().ok_or_else(short)?,
                },
                4 => LowLevelSync::ThreadExit,
                5 => LowLevelSync::ThreadJoin {
                    child: c.u32().ok_or_else(short)?,
                },
                _ => return Err(Bad::Corrupt("unknown low-level sync")),
            };
            EventKind::Sync(s)
        }
        _ => match sub {
            0 => EventKind::ContextSwitch,
            1 => {
                let addr = c.u64().ok_or_else(short)?;
                let size = c.u64().ok_or_else(short)?;
                let site = c.u64().ok_or_else(short)?;
                let kind = match c.u8().ok_or_else(short)? {
                    0 => ObjectKind::Heap,
                    1 => ObjectKind::Static,
                    _ => return Err(Bad::Corrupt("bad object kind")),
                };
                EventKind::Program(ProgramEvent::Alloc {
                    addr,
                    size,
                    site,
                    kind,
                })
            }
            2 => EventKind::Program(ProgramEvent::Free {
                addr: c.u64().ok_or_else(short)?,
            }),
            3 => {
                let lock = c.u64().ok_or_else(short)?;
                let mode = match c.u8().ok_or_else(short)? {
                    0 => LockMode::Exclusive,
                    1 => LockMode::Shared,
                    _ => return Err(Bad::Corrupt("bad lock mode")),
                };
                EventKind::Program(ProgramEvent::Acquire { lock, mode })
            }
            4 => EventKind::Program(ProgramEvent::Release {
                lock: c.u64().ok_or_else(short)?,
            }),
            5 => EventKind::Program(ProgramEvent::ThreadExit),
            6 => EventKind::Program(ProgramEvent::Block),
            7 => EventKind::Program(ProgramEvent::Wake),
            _ => return Err(Bad::Corrupt("unknown record tag")),
        },
    };
    Ok((Record::Event(Event { pc, origin, kind }), c.i))
}

/// Reads a trace file event by event (see [`crate::trace`] for the format).
///
/// It reads through its own 64 KiB buffer, so a raw `File` is fine. As an
/// iterator it yields `Ok(event)` per event and ends after the end record,
/// or after yielding one `Err`.
#[derive(Debug)]
pub struct TraceReader<R: Read> {
    src: R,
    buf: Box<[u8]>,
    /// Unconsumed bytes are `buf[pos..end]`.
    pos: usize,
    end: usize,
    /// Input offset of `buf[pos]`.
    offset: u64,
    events: u64,
    done: bool,
}

impl<R: Read> TraceReader<R> {
    /// Reads and checks the header of the trace on `src`.
    pub fn new(src: R) -> Result<TraceReader<R>, TraceError> {
        let mut r = TraceReader {
            src,
            buf: vec![0; READ_BUFFER].into_boxed_slice(),
            pos: 0,
            end: 0,
            offset: 0,
            events: 0,
            done: false,
        };
        r.fill(HEADER)?;
        let got = &r.buf[..r.end.min(HEADER)];
        let magic = &got[..got.len().min(TRACE_MAGIC.len())];
        if magic != &TRACE_MAGIC[..magic.len()] {
            return Err(TraceError::BadMagic);
        }
        if got.len() < HEADER {
            return Err(TraceError::Truncated {
                offset: got.len() as u64,
            });
        }
        let version = u32::from_le_bytes([got[8], got[9], got[10], got[11]]);
        if !(1..=TRACE_VERSION).contains(&version) {
            return Err(TraceError::UnsupportedVersion(version));
        }
        r.pos = HEADER;
        r.offset = HEADER as u64;
        Ok(r)
    }

    /// Events read so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Makes at least `n` bytes available in `buf[pos..end]` unless the
    /// input ends first.
    fn fill(&mut self, n: usize) -> io::Result<()> {
        if self.end - self.pos >= n {
            return Ok(());
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        while self.end < n {
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => break,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The next event, `Ok(None)` after the end record.
    pub fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if self.done {
            return Ok(None);
        }
        let r = self.next_record();
        if !matches!(r, Ok(Some(_))) {
            self.done = true;
        }
        r
    }

    fn next_record(&mut self) -> Result<Option<Event>, TraceError> {
        self.fill(MAX_RECORD)?;
        let avail = &self.buf[self.pos..self.end];
        let at = self.offset;
        match decode(avail) {
            Ok((Record::Event(e), n)) => {
                self.pos += n;
                self.offset += n as u64;
                self.events += 1;
                Ok(Some(e))
            }
            Ok((Record::End(count), n)) => {
                self.pos += n;
                self.offset += n as u64;
                if count != self.events {
                    return Err(TraceError::Corrupt {
                        offset: at,
                        reason: "end record's event count differs",
                    });
                }
                self.fill(1)?;
                if self.end > self.pos {
                    return Err(TraceError::Corrupt {
                        offset: self.offset,
                        reason: "data after the end record",
                    });
                }
                Ok(None)
            }
            Err(Bad::Short) => Err(TraceError::Truncated {
                offset: at + avail.len() as u64,
            }),
            Err(Bad::Corrupt(reason)) => Err(TraceError::Corrupt { offset: at, reason }),
        }
    }
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<Event, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_event().transpose()
    }
}
