//! LARDx86 ops and Tracked accesses reach the observer with their operands,
//! in program order, from the real emulator running a real guest.

use lard_detector_hw::event::{AccessKind, Event, EventKind, LardOp, ThreadKey};
use lard_e2e::*;
use lard_emu::binary::elf::ElfFile;
use lard_emu::machine::Config;
use lard_emu::observe::observer::{AccessMode, Control, Observer};
use lard_emu::run::{Emulator, Outcome};
use std::cell::RefCell;
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

#[test]
fn every_op_and_tracked_access_arrives_with_its_operands() {
    let guest = build_lard_ops();
    let file = ElfFile::open(&guest).unwrap();
    let buf = file
        .symbols
        .iter()
        .find(|s| s.name == "buf")
        .expect("symbol buf")
        .addr;
    let events = Rc::new(RefCell::new(Vec::new()));
    let mut emu = Emulator::new(
        &file,
        &[b"lard_ops".to_vec()],
        &[],
        Config::default(),
        Box::new(Recorder(events.clone())),
    )
    .unwrap();
    assert_eq!(emu.run(), Outcome::Exited(0));
    let got: Vec<EventKind> = events
        .borrow()
        .iter()
        .filter(|e| !matches!(e.kind, EventKind::ContextSwitch))
        .map(|e| e.kind)
        .collect();
    let [t, w, st, ld, cp, cl, rd] = got[..] else {
        panic!("unexpected events: {got:#?}")
    };
    assert_eq!(t, EventKind::Lard(LardOp::Thread { id: 7 }));
    assert_eq!(w, EventKind::Lard(LardOp::WriteVc { tid: 7, value: 5 }));
    let EventKind::Access(st) = st else {
        panic!("{st:?}")
    };
    assert_eq!(
        (st.addr, st.size, st.kind, st.tracked),
        (buf, 4, AccessKind::Write, true)
    );
    assert_eq!(st.origin.lard_key(), ThreadKey::Lang(7));
    let EventKind::Access(ld) = ld else {
        panic!("{ld:?}")
    };
    assert_eq!(
        (ld.addr, ld.size, ld.kind, ld.tracked),
        (buf, 4, AccessKind::Read, true)
    );
    assert_eq!(
        ld.pc,
        st.pc + 3,
        "the load follows the 3-byte tracked store"
    );
    assert_eq!(
        cp,
        EventKind::Lard(LardOp::CopyHistory {
            src: buf,
            dst: buf + 64,
            len: 16
        })
    );
    assert_eq!(
        cl,
        EventKind::Lard(LardOp::ClearHistory { addr: buf, len: 16 })
    );
    // ReadVC returns what WriteVC stored for this language thread.
    assert_eq!(rd, EventKind::Lard(LardOp::ReadVc { tid: 7, value: 5 }));
}

#[test]
fn the_demo_guest_sees_lard_hardware_only_under_the_emulator() {
    let guest = build_lard_ops();
    assert_eq!(stdout(&native(&guest, &[])), "lard ops: ok\n");
    let l = lard_run(&["--stats"], &guest, &[]);
    assert_eq!(stdout(&l), "lard ops: lard\n");
    let e = stderr(&l);
    for op in [
        "lard.thread 1",
        "lard.readvc 1",
        "lard.writevc 1",
        "lard.clearhistory 1",
        "lard.copyhistory 1",
    ] {
        assert!(e.contains(op), "{op}: {e}");
    }
    assert!(e.contains("tracked              1 reads, 1 writes"), "{e}");
}

#[test]
fn a_history_region_crossing_a_page_is_a_lard_fault() {
    // Assemble a guest whose ClearHistory crosses a page boundary.
    let dir = guest_dir();
    let src = dir.join("cross_page.S");
    std::fs::write(
        &src,
        ".include \"lardx86.inc\"\n.text\n.globl _start\n_start:\n mov $0x400ff8, %rdi\n mov $16, %rsi\n lard_clearhistory %rdi, %rsi\n mov $60, %eax\n xor %edi, %edi\n syscall\n",
    )
    .unwrap();
    let bin = dir.join("cross_page");
    let st = std::process::Command::new("gcc")
        .args(["-static", "-nostdlib", "-I"])
        .arg(root().join("guest-sdk/include"))
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success());
    // Natively the op is a NOP.
    assert_eq!(shell_status(&native(&bin, &[])), 0);
    let l = lard_run(&[], &bin, &[]);
    assert_eq!(shell_status(&l), 128 + 4, "SIGILL: {}", stderr(&l));
    let e = stderr(&l);
    assert!(
        e.contains("region-crosses-page") && e.contains("lard.clearhistory rdi, rsi"),
        "{e}"
    );
}

#[test]
fn a_data_race_exception_stops_before_the_racy_store_takes_effect() {
    use lard_emu::observe::detect::DetectorObserver;
    // issue2_system_sync: `first` stores 1 to x, then (after an unreported
    // runtime barrier) `second` stores 2 to x: a write-write race at the second store.
    let bin = build_manifest_guests().join("glibc/issue2_system_sync");
    let file = ElfFile::open(&bin).unwrap();
    let x = file
        .symbols
        .iter()
        .find(|s| s.name == "x")
        .expect("symbol x")
        .addr;
    let (obs, log) = DetectorObserver::software("fasttrack").unwrap();
    let mut emu = Emulator::new(
        &file,
        &[b"issue2_system_sync".to_vec()],
        &[],
        Config::default(),
        Box::new(obs.raise_on_race(true)),
    )
    .unwrap();
    let Outcome::ObserverStop { pc } = emu.run() else {
        panic!("no data-race exception")
    };
    assert_eq!(log.borrow().dre, 1);
    assert!(log.borrow().pcs.contains(&pc));
    // The racy store of 2 did not happen: memory still holds the first store's 1.
    assert_eq!(emu.machine().cpu.mem.read_u64(x), Some(1));
    // And the stopped thread's PC is the racy instruction itself.
    assert!(emu.describe(pc).contains("tracked mov qword ptr"));

    // The same guest under `lard run`: exit status 124, the report on stderr.
    let l = lard_run(&["--on-race", "exception"], &bin, &[]);
    assert_eq!(shell_status(&l), 124, "{}", stderr(&l));
    assert!(stderr(&l).contains("data-race exception") && stderr(&l).contains("write-write race"));
    assert_eq!(
        stdout(&l),
        "",
        "main never printed: the guest stopped at the race"
    );
    // --race-exit-code overrides the status of a run that reported races.
    let l = lard_run(&["--race-exit-code", "66"], &bin, &[]);
    assert_eq!((shell_status(&l), stdout(&l).as_str()), (66, "x = 2\n"));
}

#[test]
fn a_recorded_trace_replays_to_the_same_verdicts_without_emulation() {
    use lard_detector_hw::trace::read_trace;
    let bin = build_manifest_guests().join("glibc/issue4_memory_move");
    let trace = scratch_file("trace");
    let t = trace.to_string_lossy().to_string();
    let l = lard_run(&["--record-trace", &t, "--stats"], &bin, &[]);
    assert_eq!(shell_status(&l), 0, "{}", stderr(&l));
    let live: u64 = stderr(&l)
        .split("racy dynamic accesses (DRE): ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.parse().ok())
        .expect("DRE line");
    let events = read_trace(std::fs::File::open(&trace).unwrap()).expect("the trace reads back");
    assert!(events
        .iter()
        .any(|e| matches!(e.kind, EventKind::Lard(LardOp::CopyHistory { .. }))));
    let replayed = canonical_dre_of_trace(&trace);
    std::fs::remove_file(&trace).unwrap();
    assert_eq!(
        replayed, live,
        "the oracle on the recorded trace disagrees with the live run"
    );
    assert_eq!(
        live, 2,
        "issue4's two racy accesses (manifest ground truth)"
    );
}
