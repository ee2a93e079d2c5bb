//! Program events (docs/events.md): the SDK's allocator, mutex and threads
//! report object extents, lock identities and thread ends through the
//! `lard_note_*` functions, which the real emulator intercepts while running
//! real guests. Expected counts come from the guests' design.

use lard_detector_hw::event::{Event, EventKind, LockMode, ObjectKind, ProgramEvent, ThreadKey};
use lard_e2e::*;
use lard_emu::binary::elf::ElfFile;
use lard_emu::machine::Config;
use lard_emu::observe::observer::{AccessMode, Control, Observer};
use lard_emu::run::{Emulator, Outcome};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

struct Recorder(Rc<RefCell<Vec<Event>>>);

impl Observer for Recorder {
    fn access_mode(&self) -> AccessMode {
        AccessMode::Tracked
    }
    fn event(&mut self, e: &Event) -> Control {
        self.0.borrow_mut().push(*e);
        Control::Continue
    }
}

/// Runs `guest` under the emulator; returns its program events and its ELF.
fn program_events(guest: &Path, seed: u64) -> (Vec<Event>, ElfFile) {
    let file = ElfFile::open(guest).unwrap();
    let events = Rc::new(RefCell::new(Vec::new()));
    let config = Config {
        seed,
        sched: lard_emu::cpu::sched::SchedPolicy::Random,
        ..Config::default()
    };
    let name = guest.file_name().unwrap().as_encoded_bytes().to_vec();
    let mut emu = Emulator::new(
        &file,
        &[name],
        &[],
        config,
        Box::new(Recorder(events.clone())),
    )
    .unwrap();
    assert_eq!(emu.run(), Outcome::Exited(0));
    let program = events
        .borrow()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Program(_)))
        .copied()
        .collect();
    (program, file)
}

fn symbol(file: &ElfFile, name: &str) -> (u64, u64) {
    let s = file
        .symbols
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("symbol {name}"));
    (s.addr, s.size)
}

#[test]
fn sdk_mutex_reports_its_identity_and_mutual_exclusion() {
    let guest = build_manifest_guests().join("glibc/locked_counter");
    let (lock, _) = {
        let file = ElfFile::open(&guest).unwrap();
        symbol(&file, "lock")
    };
    for seed in [0, 1, 2] {
        let (events, file) = program_events(&guest, seed);
        let (locker, locker_len) = symbol(&file, "lard_mutex_lock");
        // Four threads × 500 iterations, each a lock/unlock pair on `lock`.
        let mut holder: Option<ThreadKey> = None;
        let (mut acquires, mut exits) = (0, 0);
        for e in &events {
            match e.kind {
                EventKind::Program(ProgramEvent::Acquire { lock: l, mode }) => {
                    assert_eq!((l, mode), (lock, LockMode::Exclusive));
                    assert_eq!(holder, None, "two holders at once (seed {seed})");
                    holder = Some(e.origin.lard_key());
                    acquires += 1;
                    assert!(
                        (locker..locker + locker_len).contains(&e.pc),
                        "the event's PC is the note call in the SDK's lock: {:#x}",
                        e.pc
                    );
                }
                EventKind::Program(ProgramEvent::Release { lock: l }) => {
                    assert_eq!(l, lock);
                    assert_eq!(holder, Some(e.origin.lard_key()), "released by its holder");
                    holder = None;
                }
                EventKind::Program(ProgramEvent::ThreadExit) => exits += 1,
                other => panic!("unexpected program event {other:?}"),
            }
        }
        assert_eq!((acquires, exits, holder), (2000, 4, None), "seed {seed}");
    }
}

#[test]
fn sdk_allocator_reports_blocks_with_their_sites() {
    // Two threads each allocate one `struct rec` (two u64) and free it.
    let guest = build_manifest_guests().join("glibc/issue3_memory_reuse");
    let (events, file) = program_events(&guest, 0);
    let mut live: HashMap<u64, u64> = HashMap::new();
    let (mut allocs, mut frees) = (0, 0);
    let owners = [symbol(&file, "old_owner"), symbol(&file, "new_owner")];
    for e in &events {
        match e.kind {
            EventKind::Program(ProgramEvent::Alloc {
                addr,
                size,
                site,
                kind,
            }) => {
                assert_eq!((size, kind), (16, ObjectKind::Heap));
                assert!(
                    owners.iter().any(|&(f, n)| (f..f + n).contains(&site)),
                    "allocation site {site:#x} is the caller of lard_malloc"
                );
                assert!(live.insert(addr, size).is_none(), "block allocated twice");
                allocs += 1;
            }
            EventKind::Program(ProgramEvent::Free { addr }) => {
                assert!(live.remove(&addr).is_some(), "free of a live block");
                frees += 1;
            }
            EventKind::Program(ProgramEvent::ThreadExit) => {}
            other => panic!("unexpected program event {other:?}"),
        }
    }
    assert_eq!((allocs, frees), (2, 2));
    assert!(live.is_empty());
}
