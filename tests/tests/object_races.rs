//! The object race detector (`--detector object`, docs/detectors.md) on the
//! manifest's guests that state an object verdict (`object_expect`): the
//! verdict holds under the default schedule and random ones, the reported
//! objects are exactly those allocated on the lines the guest marks
//! `OBJECT` (mapped with binutils' `addr2line`, independent of lard's DWARF
//! code), and FastTrack gives the LARD verdict on the same guests — where
//! the two detectors agree and where they differ by design. The statistics
//! (Tables 3-5) show the ownership incidents each guest was designed for.

use lard_detector_hw::event::{Event, EventKind, LowLevelSync, ObjectKind, ProgramEvent};
use lard_e2e::*;
use lard_emu::cmd::manifest::GuestRun;
use lard_emu::machine::Config;
use lard_emu::observe::observer::{AccessMode, Control, Observer};
use lard_emu::run::{Emulator, Outcome};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::rc::Rc;

fn object_runs() -> Vec<GuestRun> {
    let build = build_manifest_guests();
    let runs: Vec<GuestRun> =
        lard_emu::cmd::manifest::read(&root().join("guests/manifest.toml"), &build)
            .expect("manifest reads")
            .into_iter()
            .filter(|r| r.object_racy.is_some())
            .collect();
    assert!(
        runs.len() >= 12,
        "six object guests x two libcs: {}",
        runs.len()
    );
    runs
}

/// The line of `pc` in `source` (innermost inline frame), by `addr2line -i`.
fn line_of(bin: &Path, source: &str, pc: u64) -> i64 {
    let file = Path::new(source).file_name().unwrap().to_string_lossy();
    // Static-PIE guests run at the loader's bias.
    let elf = lard_emu::binary::elf::ElfFile::open(bin).unwrap();
    if elf.is_pie() {
        return line_of_file_address(bin, &file, pc - lard_emu::linux::loader::PIE_BASE);
    }
    line_of_file_address(bin, &file, pc)
}

fn line_of_file_address(bin: &Path, file: &str, pc: u64) -> i64 {
    let out = Command::new("addr2line")
        .args(["-i", "-e"])
        .arg(bin)
        .arg(format!("{pc:#x}"))
        .output()
        .expect("addr2line (binutils)");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.split(':').next().is_some_and(|f| f.ends_with(file)))
        .and_then(|l| l.rsplit(':').next())
        .and_then(|n| n.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{pc:#x}: no line in {file}: {text}"))
}

/// Every `"key":N` number in `json`, in order.
fn numbers(json: &str, key: &str) -> Vec<u64> {
    json.split(&format!("\"{key}\":"))
        .skip(1)
        .filter_map(|r| {
            r.split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|n| n.parse().ok())
        })
        .collect()
}

/// `"key":N` inside the `"stats"` object.
fn stat(json: &str, key: &str) -> u64 {
    let stats = json.split("\"stats\":").nth(1).expect("stats in the JSON");
    numbers(stats, key)[0]
}

fn run_json(r: &GuestRun, flags: &[&str]) -> String {
    let json = scratch_file("object-report");
    let j = json.to_string_lossy().to_string();
    let mut all = flags.to_vec();
    all.extend(["--report-json", &j]);
    let args: Vec<&str> = r.args.iter().map(String::as_str).collect();
    let l = lard_run(&all, &r.bin, &args);
    assert_eq!(
        stdout(&l),
        r.stdout,
        "{} {flags:?}: stdout; {}",
        r.label,
        stderr(&l)
    );
    assert_eq!(shell_status(&l), r.exit, "{} {flags:?}: status", r.label);
    let text = std::fs::read_to_string(&json).expect("report written");
    std::fs::remove_file(&json).unwrap();
    text
}

#[test]
fn object_verdicts_and_sites_match_the_manifest_and_fasttrack_gives_lards() {
    for r in &object_runs() {
        let want = r.object_racy.unwrap();
        let json = run_json(r, &["--detector", "object"]);
        let races = numbers(&json, "object_races")[0];
        assert_eq!(stat(&json, "object_races"), races);
        let dre = numbers(&json, "dre")[0];
        assert_eq!(dre > 0, want, "{}: object races {dre}", r.label);
        // Each reported object's allocation site is an OBJECT line; every
        // OBJECT line is reported.
        let sites: BTreeSet<i64> = numbers(&json, "site")
            .into_iter()
            // The site is the allocation call's return address.
            .map(|pc| line_of(&r.bin, &r.source, pc - 1))
            .collect();
        if !r.object_sites.is_empty() {
            assert_eq!(sites, r.object_sites, "{}: reported objects", r.label);
        }
        // Once per object.
        assert_eq!(dre as usize, numbers(&json, "site").len(), "{}", r.label);
        let ft = run_json(r, &["--detector", "fasttrack"]);
        assert_eq!(numbers(&ft, "dre")[0] > 0, r.racy, "{}: fasttrack", r.label);
        // Random schedules: same object verdict (C guests; the minivm
        // configurations already vary the interleaving).
        if r.libc == "glibc" && r.args.is_empty() {
            for seed in ["1", "2"] {
                let j = run_json(
                    r,
                    &["--detector", "object", "--sched", "random", "--seed", seed],
                );
                assert_eq!(numbers(&j, "dre")[0] > 0, want, "{} seed {seed}", r.label);
            }
        }
    }
}

#[test]
fn statistics_show_the_incidents_each_guest_is_built_around() {
    let runs = object_runs();
    let get = |name: &str| {
        let r = runs
            .iter()
            .find(|r| r.name == name && r.libc == "glibc")
            .unwrap();
        run_json(r, &["--detector", "object"])
    };
    // Hand-off: main owns the buffer, the worker takes it over (steal or
    // transfer), nothing becomes shared.
    let j = get("object_handoff");
    assert_eq!(stat(&j, "transfers") + stat(&j, "steals"), 1);
    assert_eq!(stat(&j, "revokes"), 0);
    assert_eq!(stat(&j, "lockset_ops"), 0);
    assert_eq!(stat(&j, "heap_objects"), 1);
    assert_eq!(stat(&j, "freed"), 1);
    // Inherit: main's first access finds the builder terminated.
    let j = get("object_inherit");
    assert!(stat(&j, "inherits") >= 1);
    assert_eq!(
        stat(&j, "transfers") + stat(&j, "steals") + stat(&j, "revokes"),
        0
    );
    // Read-only sharing: the table ends shared-read after lockset work.
    let j = get("object_read_shared");
    let finals = j.split("\"final_states\":").nth(1).unwrap();
    assert_eq!(numbers(finals, "shared-read")[0], 1);
    assert_eq!(numbers(finals, "conflict")[0], 0);
    assert!(stat(&j, "lockset_ops") > 0);
    // Two locks: 400 lock acquires by the workers; the object race names
    // both locks (one in the object's lockset, the other held).
    let j = get("object_two_locks");
    assert_eq!(stat(&j, "acquires"), 400);
    let held: Vec<&str> = ["dep_lock", "wd_lock"]
        .into_iter()
        .filter(|l| j.contains(&format!("\"data\":\"{l}+0x0\"")))
        .collect();
    assert_eq!(held.len(), 2, "both locks named: {j}");
}

/// Records the program and sync events an object observer receives.
struct Recorder {
    objects: bool,
    events: Rc<RefCell<Vec<Event>>>,
}

impl Observer for Recorder {
    fn access_mode(&self) -> AccessMode {
        AccessMode::Tracked
    }
    fn wants_objects(&self) -> bool {
        self.objects
    }
    fn event(&mut self, e: &Event) -> Control {
        if matches!(e.kind, EventKind::Program(_) | EventKind::Sync(_)) {
            self.events.borrow_mut().push(*e);
        }
        Control::Continue
    }
}

fn record(guest: &Path, objects: bool) -> Vec<Event> {
    let file = lard_emu::binary::elf::ElfFile::open(guest).unwrap();
    let events = Rc::new(RefCell::new(Vec::new()));
    let obs = Recorder {
        objects,
        events: events.clone(),
    };
    let name = guest.file_name().unwrap().as_encoded_bytes().to_vec();
    let mut emu = Emulator::new(&file, &[name], &[], Config::default(), Box::new(obs)).unwrap();
    assert_eq!(emu.run(), Outcome::Exited(0));
    let v = events.borrow().clone();
    v
}

#[test]
fn object_observers_get_static_objects_blocking_and_thread_ends_others_do_not() {
    let guest = build_manifest_guests().join("glibc/object_two_locks");
    let file = lard_emu::binary::elf::ElfFile::open(&guest).unwrap();
    let lock = file
        .symbols
        .iter()
        .find(|s| s.name == "dep_lock")
        .expect("dep_lock symbol");
    let with = record(&guest, true);
    let statics: Vec<(u64, u64)> = with
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Program(ProgramEvent::Alloc {
                addr,
                size,
                kind: ObjectKind::Static,
                ..
            }) => Some((addr, size)),
            _ => None,
        })
        .collect();
    assert!(
        statics.contains(&(lock.addr, lock.size)),
        "dep_lock is a static object"
    );
    let count =
        |evs: &[Event], p: &dyn Fn(&EventKind) -> bool| evs.iter().filter(|e| p(&e.kind)).count();
    let blocks = count(&with, &|k| {
        matches!(k, EventKind::Program(ProgramEvent::Block))
    });
    let wakes = count(&with, &|k| {
        matches!(k, EventKind::Program(ProgramEvent::Wake))
    });
    // main blocks at least in its joins; every block ends in a wake.
    assert!(blocks >= 1);
    assert_eq!(blocks, wakes);
    // Three kernel threads end (two workers, then main's exit_group is not
    // a thread exit): the workers' ends arrive without --observe-sync.
    let exits = count(&with, &|k| {
        matches!(k, EventKind::Sync(LowLevelSync::ThreadExit))
    });
    assert_eq!(exits, 2);
    assert_eq!(count(&with, &|k| matches!(k, EventKind::Sync(_))), exits);
    // Without wants_objects: none of these.
    let without = record(&guest, false);
    assert!(without.iter().all(|e| !matches!(
        e.kind,
        EventKind::Sync(_)
            | EventKind::Program(ProgramEvent::Block | ProgramEvent::Wake)
            | EventKind::Program(ProgramEvent::Alloc {
                kind: ObjectKind::Static,
                ..
            })
    )));
}
