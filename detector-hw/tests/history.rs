//! `Detector::history`: what FastTrack shows of a byte's access history is
//! what a later access of it is checked against — the last write and the
//! reads since, each with identity, clock and PC.

use lard_detector_hw::event::{Access, AccessKind, Origin, ThreadKey};
use lard_detector_hw::{Detector, FastTrack, Remembered};

fn access(d: &mut FastTrack, thread: u32, kind: AccessKind, addr: u64, size: u32, pc: u64) {
    let a = Access {
        pc,
        addr,
        size,
        kind,
        tracked: true,
        stack: false,
        origin: Origin {
            kthread: thread,
            lthread: Some(u64::from(thread)),
            core: 0,
        },
    };
    d.access(&a);
}

fn rem(thread: u64, pc: u64, write: bool) -> (ThreadKey, u64, bool) {
    (ThreadKey::Lang(thread), pc, write)
}

fn shown(d: &FastTrack, addr: u64) -> Vec<(ThreadKey, u64, bool)> {
    let h: Vec<Remembered> = d.history(addr).expect("FastTrack keeps a history");
    h.iter().map(|r| (r.thread, r.pc, r.write)).collect()
}

#[test]
fn fasttrack_shows_the_last_write_and_the_reads_since() {
    let mut d = FastTrack::new();
    assert!(shown(&d, 0x1000).is_empty(), "no history yet");
    access(&mut d, 1, AccessKind::Write, 0x1000, 8, 0x401000);
    assert_eq!(shown(&d, 0x1003), [rem(1, 0x401000, true)]);
    // One reader: an exclusive read epoch; two: a read vector clock.
    access(&mut d, 2, AccessKind::Read, 0x1000, 4, 0x402000);
    assert_eq!(
        shown(&d, 0x1000),
        [rem(1, 0x401000, true), rem(2, 0x402000, false)]
    );
    access(&mut d, 3, AccessKind::Read, 0x1000, 4, 0x403000);
    let mut h = shown(&d, 0x1002);
    h.sort();
    assert_eq!(
        h,
        [
            rem(1, 0x401000, true),
            rem(2, 0x402000, false),
            rem(3, 0x403000, false)
        ]
    );
    // Bytes the reads did not touch keep only the write.
    assert_eq!(shown(&d, 0x1006), [rem(1, 0x401000, true)]);
    // A new write replaces the write and the reads.
    access(&mut d, 2, AccessKind::Write, 0x1000, 8, 0x404000);
    assert_eq!(shown(&d, 0x1000), [rem(2, 0x404000, true)]);
    assert!(shown(&d, 0x2000).is_empty());
}
