//! The trace file format's constants and read errors; [`crate::trace`]
//! specifies the layout.

use std::fmt;
use std::io;

/// The first 8 bytes of a trace file.
pub const TRACE_MAGIC: [u8; 8] = *b"LARDTRC\0";

/// The trace format version this crate writes and reads.
pub const TRACE_VERSION: u32 = 2;

pub(super) const KIND_ACCESS: u8 = 0;
pub(super) const KIND_LARD: u8 = 1;
pub(super) const KIND_SYNC: u8 = 2;
pub(super) const KIND_OTHER: u8 = 3;
pub(super) const TAG_LTHREAD: u8 = 1 << 2;
pub(super) const SUB_SHIFT: u32 = 3;
pub(super) const SUB_END: u8 = 31;
/// The tag byte of the end record.
pub(super) const TAG_END: u8 = KIND_OTHER | (SUB_END << SUB_SHIFT);
pub(super) const ACC_WRITE: u8 = 1;
pub(super) const ACC_TRACKED: u8 = 2;
pub(super) const ACC_STACK: u8 = 4;
pub(super) const ACC_OWN_PC: u8 = 8;
pub(super) const ACC_OWN_ORIGIN: u8 = 16;
/// Bytes of the header: magic and version.
pub(super) const HEADER: usize = 12;
/// Largest record: an access with its own pc and origin, both with a
/// language thread (tag, common fields, addr/size, pc, origin).
pub(super) const MAX_RECORD: usize = 1 + 22 + 12 + 8 + 15;

/// Why a trace could not be read.
#[derive(Debug)]
pub enum TraceError {
    /// The underlying reader failed.
    Io(io::Error),
    /// The input does not start with [`TRACE_MAGIC`].
    BadMagic,
    /// The format version is not [`TRACE_VERSION`].
    UnsupportedVersion(u32),
    /// The input ended inside the header or a record, or before the end
    /// record.
    Truncated {
        /// Bytes read (the length of the input).
        offset: u64,
    },
    /// A record does not parse, or the end record is wrong.
    Corrupt {
        /// Offset of the offending record.
        offset: u64,
        /// What is wrong.
        reason: &'static str,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io(e) => write!(f, "trace I/O error: {e}"),
            TraceError::BadMagic => write!(f, "not a LARD trace (bad magic)"),
            TraceError::UnsupportedVersion(v) => write!(
                f,
                "unsupported trace version {v} (this reader supports {TRACE_VERSION})"
            ),
            TraceError::Truncated { offset } => {
                write!(f, "trace truncated after {offset} bytes")
            }
            TraceError::Corrupt { offset, reason } => {
                write!(f, "corrupt trace at byte {offset}: {reason}")
            }
        }
    }
}

impl std::error::Error for TraceError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TraceError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for TraceError {
    fn from(e: io::Error) -> TraceError {
        TraceError::Io(e)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::event::{
        Access, AccessKind, Event, EventKind, LardOp, LockMode, LowLevelSync, ObjectKind, Origin,
        ProgramEvent,
    };
    use crate::rng::SplitMix64;
    use crate::trace::{
        random_trace, read_trace, write_trace, TraceParams, TraceReader, TraceWriter,
    };

    /// Every event kind, with and without a language thread, and accesses
    /// whose pc/origin differ from the event's.
    fn every_kind() -> Vec<Event> {
        let o = Origin {
            kthread: 3,
            lthread: Some(u64::MAX - 1),
            core: 7,
        };
        let k = Origin {
            kthread: u32::MAX,
            lthread: None,
            core: u16::MAX,
        };
        let access = |kind, tracked, stack, pc, origin| {
            EventKind::Access(Access {
                pc,
                addr: 0xdead_beef_0000_0001,
                size: 16,
                kind,
                tracked,
                stack,
                origin,
            })
        };
        let kinds = vec![
            access(AccessKind::Read, true, false, 0x40_0000, o),
            access(AccessKind::Write, false, true, 0x40_0000, o),
            access(AccessKind::Write, true, true, 5, k),
            access(AccessKind::Read, false, false, 0x40_0000, k),
            EventKind::Lard(LardOp::Thread { id: 9 }),
            EventKind::Lard(LardOp::ReadVc { tid: 1, value: 2 }),
            EventKind::Lard(LardOp::WriteVc {
                tid: 3,
                value: u64::MAX,
            }),
            EventKind::Lard(LardOp::ClearHistory { addr: 4, len: 5 }),
            EventKind::Lard(LardOp::CopyHistory {
                src: 6,
                dst: 7,
                len: 8,
            }),
            EventKind::Lard(LardOp::FloorVc { tid: 9, value: 10 }),
            EventKind::Sync(LowLevelSync::AtomicRmw { addr: 1, size: 8 }),
            EventKind::Sync(LowLevelSync::FutexWake { addr: 2 }),
            EventKind::Sync(LowLevelSync::FutexWaitDone { addr: 3 }),
            EventKind::Sync(LowLevelSync::ThreadCreate { child: 4 }),
            EventKind::Sync(LowLevelSync::ThreadExit),
            EventKind::Sync(LowLevelSync::ThreadJoin { child: 5 }),
            EventKind::ContextSwitch,
            EventKind::Program(ProgramEvent::Alloc {
                addr: u64::MAX,
                size: 64,
                site: 0x40_1234,
                kind: ObjectKind::Heap,
            }),
            EventKind::Program(ProgramEvent::Alloc {
                addr: 0x4b_c340,
                size: 8,
                site: 0,
                kind: ObjectKind::Static,
            }),
            EventKind::Program(ProgramEvent::Free { addr: 9 }),
            EventKind::Program(ProgramEvent::Acquire {
                lock: 10,
                mode: LockMode::Exclusive,
            }),
            EventKind::Program(ProgramEvent::Acquire {
                lock: 11,
                mode: LockMode::Shared,
            }),
            EventKind::Program(ProgramEvent::Release { lock: 12 }),
            EventKind::Program(ProgramEvent::ThreadExit),
            EventKind::Program(ProgramEvent::Block),
            EventKind::Program(ProgramEvent::Wake),
        ];
        let mut out = Vec::new();
        for origin in [o, k] {
            for kind in &kinds {
                out.push(Event {
                    pc: 0x40_0000,
                    origin,
                    kind: *kind,
                });
            }
        }
        out
    }

    fn encoded(events: &[Event]) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_trace(&mut bytes, events).unwrap();
        bytes
    }

    #[test]
    fn trace_file_round_trip() {
        let mut events = every_kind();
        events.extend(random_trace(
            3,
            &TraceParams {
                events: 20_000,
                ..TraceParams::default()
            },
        ));
        let bytes = encoded(&events);
        assert_eq!(&bytes[..8], b"LARDTRC\0");
        assert_eq!(read_trace(&bytes[..]).unwrap(), events);
        // Byte-at-a-time input (short reads) and the streaming API.
        struct Dribble<'a>(&'a [u8]);
        impl Read for Dribble<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                match (self.0.split_first(), buf.first_mut()) {
                    (Some((b, rest)), Some(out)) => {
                        *out = *b;
                        self.0 = rest;
                        Ok(1)
                    }
                    _ => Ok(0),
                }
            }
        }
        let mut r = TraceReader::new(Dribble(&bytes)).unwrap();
        let mut n = 0;
        while let Some(e) = r.next_event().unwrap() {
            assert_eq!(e, events[n]);
            n += 1;
        }
        assert_eq!(n, events.len());
        assert_eq!(r.events(), n as u64);
        assert!(r.next().is_none());
        // The empty trace.
        assert_eq!(read_trace(&encoded(&[])[..]).unwrap(), vec![]);
        // The writer streams; pushes equal write_trace.
        let mut w = TraceWriter::new(Vec::new());
        for e in &events {
            w.push(e).unwrap();
        }
        assert_eq!(w.events(), events.len() as u64);
        assert_eq!(w.finish().unwrap(), bytes);
    }

    #[test]
    fn truncated_traces_are_errors() {
        let events = every_kind();
        let bytes = encoded(&events);
        for cut in 0..bytes.len() {
            let mut got = 0usize;
            let mut err = None;
            match TraceReader::new(&bytes[..cut]) {
                Err(e) => err = Some(e),
                Ok(r) => {
                    for x in r {
                        match x {
                            Ok(e) => {
                                assert_eq!(e, events[got], "cut {cut}");
                                got += 1;
                            }
                            Err(e) => err = Some(e),
                        }
                    }
                }
            }
            match err {
                Some(TraceError::Truncated { offset }) => assert_eq!(offset, cut as u64),
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        // A writer dropped without finish: complete events, then Truncated.
        let mut w = TraceWriter::new(Vec::new());
        for e in &events {
            w.push(e).unwrap();
        }
        let unfinished = w.buf.clone();
        let all: Vec<_> = TraceReader::new(&unfinished[..]).unwrap().collect();
        assert_eq!(all.len(), events.len() + 1);
        assert!(matches!(
            all.last(),
            Some(Err(TraceError::Truncated { .. }))
        ));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(matches!(
            TraceReader::new(&b"ELF\x7f not a trace"[..]),
            Err(TraceError::BadMagic)
        ));
        assert!(matches!(
            TraceReader::new(&b"LARX"[..]),
            Err(TraceError::BadMagic)
        ));
        for v in [0, TRACE_VERSION + 1] {
            let mut bad = TRACE_MAGIC.to_vec();
            bad.extend_from_slice(&v.to_le_bytes());
            assert!(matches!(
                TraceReader::new(&bad[..]),
                Err(TraceError::UnsupportedVersion(w)) if w == v
            ));
        }
        let good = encoded(&every_kind());
        // Bytes after the end record, a wrong count, unknown tags.
        let mut extra = good.clone();
        extra.push(0);
        assert!(matches!(
            read_trace(&extra[..]),
            Err(TraceError::Corrupt { .. })
        ));
        let mut count = good.clone();
        let n = count.len();
        count[n - 8] ^= 1;
        assert!(matches!(
            read_trace(&count[..]),
            Err(TraceError::Corrupt { .. })
        ));
        let mut header = TRACE_MAGIC.to_vec();
        header.extend_from_slice(&TRACE_VERSION.to_le_bytes());
        for tag in [
            KIND_LARD | 7 << SUB_SHIFT,
            KIND_SYNC | 6 << SUB_SHIFT,
            KIND_OTHER | 8 << SUB_SHIFT,
        ] {
            let mut bad = header.clone();
            bad.push(tag);
            bad.extend_from_slice(&[0; 64]);
            assert!(
                matches!(read_trace(&bad[..]), Err(TraceError::Corrupt { .. })),
                "tag {tag:#x}"
            );
        }
        // Random bytes after a valid header, and random flips of a valid
        // trace: any result but a panic; every error displays.
        let mut rng = SplitMix64::new(42);
        for round in 0..2_000 {
            let mut input = if round % 2 == 0 {
                let mut v = header.clone();
                let len = rng.below(300) as usize;
                v.extend((0..len).map(|_| rng.next_u64() as u8));
                v
            } else {
                let mut v = good.clone();
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(v.len() as u64) as usize;
                    v[i] = rng.next_u64() as u8;
                }
                v
            };
            if round % 7 == 0 {
                input.truncate(rng.below(input.len() as u64 + 1) as usize);
            }
            if let Err(e) = read_trace(&input[..]) {
                assert!(!e.to_string().is_empty());
            }
        }
    }

    #[test]
    fn version_1_files_still_read() {
        // Version 1 had no program events; its records are unchanged.
        let events: Vec<Event> = every_kind()
            .into_iter()
            .filter(|e| !matches!(e.kind, EventKind::Program(_)))
            .collect();
        let mut bytes = encoded(&events);
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(read_trace(&bytes[..]).unwrap(), events);
        bytes[8..12].copy_from_slice(&(TRACE_VERSION + 1).to_le_bytes());
        assert!(matches!(
            read_trace(&bytes[..]),
            Err(TraceError::UnsupportedVersion(_))
        ));
    }
}
