//! Binary mode (docs/binary-mode.md): programs built with plain gcc (no
//! LARDx86 code) are checked by default — program-code accesses, with
//! happens-before from intercepted pthread calls and program-code atomics,
//! heap blocks named from intercepted malloc. Ground truth is each guest's
//! design: the lines marked `RACE` in `guests/binary/*.c` are exactly the
//! lines reported (mapped with binutils' `addr2line`), and the output is
//! the native run's.

use lard_e2e::*;
use std::collections::BTreeSet;
use std::path::Path;

/// Runs `bin` under lard with `extra` options; checks stdout and status
/// against the native run; returns (stderr, report JSON).
fn run_checked(bin: &Path, extra: &[&str]) -> (String, String) {
    let n = native(bin, &[]);
    let expected = (stdout(&n), shell_status(&n));
    run_expecting(bin, extra, &expected, &stderr(&n))
}

/// Runs `bin` under lard with `extra` options; checks stdout and status
/// against `expected` (the native run's, or the program's design where a
/// manifest states it); returns (stderr, report JSON).
fn run_expecting(
    bin: &Path,
    extra: &[&str],
    expected: &(String, i32),
    native_err: &str,
) -> (String, String) {
    let json = scratch_file("binary-report");
    let j = json.to_string_lossy().to_string();
    let mut args = vec!["--report-json", j.as_str()];
    args.extend_from_slice(extra);
    let l = lard_run(&args, bin, &[]);
    let (out, status) = expected;
    let what = format!(
        "{}: lard's stderr:\n{}\nnative stderr:\n{native_err}",
        bin.display(),
        stderr(&l)
    );
    assert_eq!(&stdout(&l), out, "{what}");
    assert_eq!(shell_status(&l), *status, "{what}");
    let report = std::fs::read_to_string(&json).unwrap();
    (stderr(&l), report)
}

const GUESTS: [&str; 14] = [
    "binary/sync_free.c",
    "binary/racy_heap.c",
    "binary/atomics.c",
    "binary/stack_shared.c",
    "binary/atomic_objects.c",
    "binary/prune_kinds.c",
    "binary/text_data_island.c",
    "binary/atomic_mixed.c",
    "binary/libc_ranges.c",
    "binary/libc_ranges_locked.c",
    "binary/barrier_phases.c",
    "binary/atomic_locations.c",
    "binary/atomic_locations_racy.c",
    "binary/repeated_accesses.c",
];

/// The `dre` of the first detector in a report.
fn dre(json: &str) -> u64 {
    let tail = json.split("\"dre\":").nth(1).unwrap();
    tail.split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// The verdict is the design's, and static pruning changes nothing: the
/// same racy PCs and the same racy dynamic accesses with `--no-prune`.
fn check_verdicts(bin: &Path, rel: &str) {
    let (err, json) = run_checked(bin, &["--stats"]);
    assert!(err.contains("mode: binary"), "{rel}: header: {err}");
    assert!(err.contains("pruning (HardRace"), "{rel}: {err}");
    assert!(json.contains("\"mode\":\"binary\""), "{rel}: {json}");
    let got = source_lines(bin, rel, &racy_pcs(&json));
    assert_eq!(got, marked_lines(rel, "/* RACE */"), "{rel}: {err}");
    let (err_all, json_all) = run_checked(bin, &["--no-prune", "--stats"]);
    assert!(err_all.contains("pruning: off"), "{rel}: {err_all}");
    assert_eq!(
        racy_pcs(&json_all),
        racy_pcs(&json),
        "{rel}: pruning changed the racy PCs"
    );
    assert_eq!(dre(&json_all), dre(&json), "{rel}: pruning changed the DRE");
}

#[test]
fn plain_gcc_static_programs_get_the_verdicts_their_design_says() {
    for rel in GUESTS {
        check_verdicts(&build_c(rel, Libc::Glibc), rel);
    }
}

#[test]
fn plain_gcc_dynamic_programs_get_the_verdicts_their_design_says() {
    for rel in GUESTS {
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        let out = format!("binary_{stem}");
        check_verdicts(&build_c_dynamic(rel, &out, &[]), rel);
    }
}

/// An allocator linked into the executable under mimalloc's names
/// (guests/binary/mi_alloc.c) is allocation and system code: a block it
/// hands out again is quiet, and its mutex does not hide the racy twin's
/// race. Static and dynamic (PIE) builds.
#[test]
fn an_allocator_in_the_executable_is_allocation_and_system_code() {
    let alloc = root().join("guests/binary/mi_alloc.c");
    let alloc = alloc.to_string_lossy();
    for rel in ["binary/own_alloc.c", "binary/own_alloc_racy.c"] {
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        for (kind, extra) in [("dynamic", vec![]), ("static", vec!["-static"])] {
            let mut args = vec![alloc.as_ref()];
            args.extend(extra);
            let bin = build_c_dynamic(rel, &format!("binary_{stem}_{kind}"), &args);
            check_verdicts(&bin, rel);
        }
    }
}

#[test]
fn plain_gcc_openmp_programs_static_and_dynamic() {
    for rel in ["binary/omp_sync.c", "binary/omp_racy.c"] {
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        let dynamic = build_c_dynamic(rel, &format!("binary_{stem}"), &["-fopenmp"]);
        check_verdicts(&dynamic, rel);
        let fixed = build_c_dynamic(
            rel,
            &format!("binary_{stem}_static"),
            &["-fopenmp", "-static"],
        );
        check_verdicts(&fixed, rel);
    }
}

/// The (static, dynamic) counts of the pruning table row `name`.
fn pruning_row(stderr: &str, name: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.trim_start().starts_with(name))
        .unwrap_or_else(|| panic!("no pruning row {name}: {stderr}"));
    let nums: Vec<u64> = line[line.find(')').unwrap() + 1..]
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    (nums[0], nums[1])
}

/// Every analysis of docs/binary-mode.md fires on the guest designed for
/// it (static and dynamic builds): its read-only constants (§4.2) and its
/// write-then-reread slots (§4.3) are pruned, statically and at run time;
/// check_verdicts shows that nothing changed.
#[test]
fn every_pruning_analysis_fires_on_its_guest() {
    let rel = "binary/prune_kinds.c";
    let dynamic = build_c_dynamic(rel, "binary_prune_kinds", &[]);
    for bin in [build_c(rel, Libc::Glibc), dynamic] {
        let (err, _) = run_checked(&bin, &["--stats"]);
        for row in ["frame", "read-only data", "redundant"] {
            let (st, dy) = pruning_row(&err, row);
            assert!(st > 0 && dy > 0, "{row}: {st} static, {dy} dynamic\n{err}");
        }
        // 2000 iterations x 4 workers, each pruning a read of two
        // constants and a read and a write of its slot.
        assert!(pruning_row(&err, "read-only data").1 >= 16_000, "{err}");
        assert!(pruning_row(&err, "redundant").1 >= 16_000, "{err}");
    }
}

#[test]
fn races_on_heap_memory_name_the_block_and_its_allocation_site() {
    let rel = "binary/racy_heap.c";
    let bin = build_c(rel, Libc::Glibc);
    let (err, _) = run_checked(&bin, &[]);
    let alloc = marked_lines(rel, "/* ALLOC */");
    let line = alloc.first().unwrap();
    let want = "heap block of 64 bytes at offset 8, allocated by T0 at ";
    assert!(err.contains(want), "{err}");
    assert!(err.contains(&format!("racy_heap.c:{line}")), "{err}");
}

/// clang's DWARF 5 names global addresses by index (`DW_OP_addrx`): its
/// atomic objects are recognized too.
#[test]
fn clang_builds_get_the_same_verdicts() {
    for rel in ["binary/atomic_objects.c", "binary/atomics.c"] {
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        let bin = build_c_with("clang", rel, &format!("clang_{stem}"), &["-static"]);
        check_verdicts(&bin, rel);
    }
}

/// C++ atomics recognized from DWARF's inlined frames, with their memory
/// orders (docs/binary-mode.md, "Atomic operations from inlined frames"):
/// `g++ -O2 -g`, dynamically linked. A heap `std::atomic<bool>` published
/// with release/acquire orders its payload; a relaxed one orders nothing,
/// and a write after the release store races.
#[test]
fn cpp_atomics_from_inlined_frames_order_by_their_memory_order() {
    for rel in ["binary/atomic_inlined.cc", "binary/atomic_inlined_racy.cc"] {
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        check_verdicts(&build_c_with("g++", rel, &format!("gxx_{stem}"), &[]), rel);
    }
}

/// The report's mode line says when plain accesses were taken as
/// acquire/release (a binary cannot tell relaxed ones), and only then.
#[test]
fn the_mode_line_states_the_relaxed_limit_when_it_applied() {
    let note = "a relaxed atomic load or store orders as acquire/release";
    let (err, _) = run_checked(
        &build_c("binary/atomic_objects.c", Libc::Glibc),
        &["--stats"],
    );
    assert!(err.contains(note), "{err}");
    assert!(!err.contains(" 0 plain access(es)"), "{err}");
    let (err, _) = run_checked(&build_c("binary/racy_heap.c", Libc::Glibc), &["--stats"]);
    assert!(
        err.contains(" 0 plain access(es)") && !err.contains(note),
        "{err}"
    );
}

#[test]
fn lard_mode_is_kept_for_programs_with_lardx86_code_and_can_be_forced() {
    // With --mode lard a plain program has nothing Tracked: no race, and
    // the header says which mode ran.
    let bin = build_c("binary/racy_heap.c", Libc::Glibc);
    let (err, json) = run_checked(&bin, &["--mode", "lard", "--stats"]);
    assert!(err.contains("mode: LARD"), "{err}");
    assert!(racy_pcs(&json).is_empty(), "{err}");
}

#[test]
fn the_verdicts_do_not_depend_on_the_detector_or_the_schedule() {
    for rel in [
        "binary/sync_free.c",
        "binary/atomics.c",
        "binary/atomic_mixed.c",
        "binary/libc_ranges.c",
        "binary/barrier_phases.c",
        "binary/atomic_locations_racy.c",
    ] {
        let bin = build_c(rel, Libc::Glibc);
        let want = marked_lines(rel, "/* RACE */");
        for (det, seed) in [("canonical", "1"), ("fasttrack", "7"), ("lardish", "3")] {
            let (err, json) = run_checked(
                &bin,
                &["--detector", det, "--sched", "random", "--seed", seed],
            );
            let got = source_lines(&bin, rel, &racy_pcs(&json));
            assert_eq!(got, want, "{rel} {det} seed {seed}: {err}");
        }
    }
}

/// guests/cc (lard-cc's ground-truth C, C++ and OpenMP programs) built with
/// plain gcc/g++ `-g -static` and checked in binary mode against the
/// manifest, with and without static pruning (the same racy PCs and DRE).
/// The programs a binary cannot decide are listed with the
/// reason (docs/binary-mode.md); every other program must match its ground
/// truth exactly (verdict and racing lines), and the listed ones must still
/// behave as documented (a race-free one reported racy, a racy one
/// reported race-free), so a fix shows up here.
#[test]
fn guests_cc_built_with_plain_gcc_match_their_ground_truth() {
    check_guests_cc(&["-static"], "plain");
}

/// The same programs linked dynamically (libgomp, libstdc++ and glibc as
/// shared objects).
#[test]
fn guests_cc_built_with_plain_gcc_dynamic_match_their_ground_truth() {
    check_guests_cc(&[], "plain_dyn");
}

fn check_guests_cc(link: &[&str], prefix: &str) {
    // A plain-mov atomic load or store is relaxed or acquire/release only
    // in the source: atomic objects' plain accesses are taken as
    // acquire/release, so races ordered only by a relaxed flag are missed.
    // gcc's inline schedule(static) and simd loops call nothing per
    // iteration, and a static loop's bounds computation asks the thread
    // number like the program would: races between iterations, lanes or
    // later chunks that one thread ran are missed.
    // A plain read of a location other threads store to atomically is
    // taken as an atomic load.
    const UNDECIDABLE: [&str; 10] = [
        "cc_race_c11_relaxed",
        "cc_race_atomic_flag_read",
        "cc_race_omp_nowait_shapes",
        "cc_race_omp_atomic_relaxed",
        "cc_race_pt_detached",
        "cc_race_omp_static_iterations",
        "cc_race_omp_static_iterations_window",
        "cc_race_omp_static_then_dynamic",
        "cc_race_omp_simd_lanes",
        "cc_race_omp_simd_lanes_window",
    ];
    let manifest = root().join("guests/cc/manifest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let doc: toml::Value = toml::from_str(&text).unwrap();
    let runs = lard_emu::cmd::manifest::read(&manifest, &guest_dir().join("plain-cc")).unwrap();
    let mut failures = Vec::new();
    for g in doc["guest"].as_array().unwrap() {
        let name = g["name"].as_str().unwrap();
        let rel = g["source"].as_str().unwrap();
        let mut flags: Vec<&str> = g["cflags"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .filter(|f| !f.starts_with("--lard-"))
            .collect();
        flags.extend_from_slice(link);
        if rel.ends_with(".cc") {
            flags.push("-lstdc++");
        }
        let bin = build_c_dynamic(rel, &format!("{prefix}_{name}"), &flags);
        let r = runs
            .iter()
            .find(|r| r.name == name && r.libc == "glibc")
            .unwrap();
        // The output and status the program's design gives (the
        // manifest's; the lard-cc tests check the native runs against it).
        let expected = (r.stdout.clone(), r.exit);
        let (err, json) = run_expecting(&bin, &[], &expected, "");
        // Static pruning changes nothing here either (C++ exception
        // tables, OpenMP outlined bodies and tasks, atomics).
        let (_, json_all) = run_expecting(&bin, &["--no-prune"], &expected, "");
        if racy_pcs(&json_all) != racy_pcs(&json) || dre(&json_all) != dre(&json) {
            failures.push(format!("{name}: pruning changed the racy PCs or the DRE"));
        }
        let got = source_lines(&bin, rel, &racy_pcs(&json));
        match (UNDECIDABLE.contains(&name), r.check_lines(&got)) {
            (false, Err(e)) => failures.push(format!("{name}: {e}\n{err}")),
            (true, Ok(())) => failures.push(format!("{name}: now decided: update the list")),
            (true, Err(_)) => assert_eq!(r.racy, got.is_empty(), "{name}: {got:?} {err}"),
            (false, Ok(())) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A stripped dynamically linked executable (as distributions ship them)
/// is checked: its own code is program code. `-s` changes no instruction,
/// so the racy PCs are the `-g` build's, except where DWARF types named
/// plain-mov atomics (`atomic_objects.c`, left out: without DWARF those
/// accesses are plain, which the report says a `-g` build would add).
#[test]
fn stripped_dynamic_programs_are_checked_like_their_debug_builds() {
    for rel in GUESTS.iter().filter(|r| !r.ends_with("atomic_objects.c")) {
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        let debug = build_c_dynamic(rel, &format!("{stem}-debug"), &[]);
        let stripped = build_c_dynamic(rel, &format!("{stem}-stripped"), &["-s"]);
        let (_, json_g) = run_checked(&debug, &[]);
        let (err_s, json_s) = run_checked(&stripped, &[]);
        assert!(
            err_s.contains("the executable has no DWARF: its whole code is program code"),
            "{rel}: {err_s}"
        );
        assert_eq!(racy_pcs(&json_s), racy_pcs(&json_g), "{rel}: {err_s}");
        assert_eq!(dre(&json_s), dre(&json_g), "{rel}: {err_s}");
    }
}

/// gcc gives the single instruction of `load_balance` (`return balance;`)
/// three line rows, `{`, the statement and `}`, only the first two
/// statement starts: the report names the statement's line, as gdb does,
/// not the `}` that binutils' addr2line prints.
#[test]
fn an_access_is_reported_at_its_statement_line() {
    let rel = "cc/pthread/race_deep_stack.c";
    let bin = build_c_dynamic(rel, "binary_race_deep_stack", &[]);
    let marked = marked_lines(rel, "/* RACE */");
    let l = lard_run(&[], &bin, &[]);
    let err = stderr(&l);
    let reported: BTreeSet<i64> = err
        .lines()
        .filter_map(|x| x.trim().strip_prefix("#0 "))
        .filter_map(|x| x.rsplit_once("race_deep_stack.c:"))
        .filter_map(|(_, n)| n.split_whitespace().next()?.parse().ok())
        .collect();
    assert_eq!(reported, marked, "{err}");
}

/// Recursive task programs run exact in binary mode: every task of
/// `fib(n)` is a logical thread of its own (21,891 for n = 20), unordered
/// with every task of the other subtree. The race-free one reports nothing,
/// the one with an unprotected shared counter reports exactly its line.
#[test]
fn deep_task_recursion_is_checked_exactly() {
    for (rel, n) in [
        ("cc/limits/omp_fib_tasks.c", "20"),
        ("cc/openmp/race_omp_fib_tasks.c", "12"),
    ] {
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        let bin = build_c_dynamic(
            rel,
            &format!("fib_plain_{stem}"),
            &["-O1", "-fopenmp", "-static"],
        );
        let json = scratch_file("binary-fib");
        let j = json.to_string_lossy().to_string();
        let l = lard_run(&["--report-json", &j], &bin, &[n]);
        let want = if n == "20" {
            "fib(20) = 6765\n"
        } else {
            "fib(12) = 144\n"
        };
        assert_eq!(stdout(&l), want, "{rel}: {}", stderr(&l));
        assert_eq!(shell_status(&l), 0, "{rel}: {}", stderr(&l));
        let report = std::fs::read_to_string(&json).unwrap();
        let got = source_lines(&bin, rel, &racy_pcs(&report));
        assert_eq!(
            got,
            marked_lines(rel, "/* RACE */"),
            "{rel}: {}",
            stderr(&l)
        );
    }
}

/// Every race between two OpenMP units names them, in the text report and
/// in the JSON (`unit`, `prev_unit`): [`assert_units_named`] over plain gcc
/// builds of [`UNIT_GUESTS`].
#[test]
fn race_reports_name_the_openmp_units_that_raced() {
    for file in UNIT_GUESTS {
        let rel = format!("cc/openmp/{file}");
        let bin = build_c_dynamic(
            &rel,
            &format!("units_{file}"),
            &["-O1", "-fopenmp", "-static"],
        );
        let (err, json) = run_checked(&bin, &[]);
        assert_units_named(file, "/* RACE */", &err, &json);
    }
}

/// Once a barrier orders a pass's loop chunks before the next pass, the
/// next pass's chunks get their language-thread ids again: in
/// race_omp_for_passes.c (T0 and one worker, T1; four passes of four
/// chunks, then the racy loop of the same shape) the racing chunks hold
/// ids of the first pass's chunks, T2–T5 (without reuse they would be T18
/// and above). The race is reported at its line, and both chunks are named
/// by the loop that ran them, not by the pass that first held their ids.
#[test]
fn later_passes_reuse_the_ids_of_ordered_chunks() {
    let rel = "cc/openmp/race_omp_for_passes.c";
    let bin = build_c_dynamic(rel, "passes_plain", &["-O1", "-fopenmp", "-static"]);
    let (err, json) = run_checked(&bin, &[]);
    let marked = marked_lines(rel, "/* RACE */");
    assert_eq!(source_lines(&bin, rel, &racy_pcs(&json)), marked, "{err}");
    let loop_at = format!("race_omp_for_passes.c:{}", marked.first().unwrap() - 1);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let races = v["detectors"]["fasttrack"]["races"].as_array().unwrap();
    assert!(!races.is_empty(), "{err}");
    for r in races {
        for (t, u) in [("thread", "unit"), ("prev_thread", "prev_unit")] {
            let id: u64 = r[t].as_str().unwrap()[1..].parse().unwrap();
            assert!((2..=5).contains(&id), "{t} T{id}, not a reused id: {r}");
            let name = r[u].as_str().unwrap();
            assert!(
                name.starts_with("loop chunk [") && name.ends_with(&loop_at),
                "{u} {name:?}, not a chunk of the loop at {loop_at}"
            );
        }
    }
}

/// A task body whose first instruction is a loop head (`while (!flag);`
/// compiles to a jump back to the outlined body's entry) is entered once:
/// in race_omp_task_id_reuse.c task B spins until task C starts, and every
/// access B makes is B's. Task ids are reused once ordered: C, created
/// after A's taskgroup ended, gets A's id, and the race on `x`, between B
/// and A before C started, still names A (a plain build names a task by
/// its body's first line, the `RACE` line after each `TASK` mark).
#[test]
fn task_ids_are_reused_and_reports_name_their_holder() {
    let rel = "cc/openmp/race_omp_task_id_reuse.c";
    let bin = build_c_dynamic(rel, "task_id_reuse_plain", &["-O1", "-fopenmp", "-static"]);
    let (err, json) = run_checked(&bin, &[]);
    let races = marked_lines(rel, "/* RACE */");
    let body = |mark: &str| {
        let at = *marked_lines(rel, mark).first().unwrap();
        let line = races.iter().find(|&&l| l > at).unwrap();
        format!(
            "task at {}:{line}, ",
            root().join("guests").join(rel).display()
        )
    };
    let (a, b, c) = (
        body("/* TASK A */"),
        body("/* TASK B */"),
        body("/* TASK C */"),
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let races = v["detectors"]["fasttrack"]["races"].as_array().unwrap();
    let unit = |r: &serde_json::Value, k: &str| r[k].as_str().unwrap_or("").to_string();
    let mut a_thread = None;
    let mut c_thread = None;
    let mut lines = BTreeSet::new();
    for r in races {
        for f in ["frames", "prev_frames"] {
            lines.insert(r[f][0]["line"].as_i64().unwrap());
        }
        let (u, p) = (unit(r, "unit"), unit(r, "prev_unit"));
        assert!(
            [&a, &b, &c].iter().any(|t| u.starts_with(*t))
                && [&a, &b, &c].iter().any(|t| p.starts_with(*t)),
            "a race without both tasks named: {u:?} / {p:?}: {err}"
        );
        if r["data"] == "x+0x0" {
            assert!(
                u.starts_with(&b) && p.starts_with(&a),
                "{u:?} / {p:?}: {err}"
            );
            a_thread = r["prev_thread"].as_str().map(str::to_string);
        }
        for (k, t) in [("unit", "thread"), ("prev_unit", "prev_thread")] {
            if unit(r, k).starts_with(&c) {
                c_thread = r[t].as_str().map(str::to_string);
            }
        }
    }
    assert_eq!(
        lines,
        marked_lines(rel, "/* RACE */"),
        "both accesses' lines: {err}"
    );
    assert!(
        a_thread.is_some() && a_thread == c_thread,
        "A {a_thread:?}, C {c_thread:?}: {err}"
    );
}

/// The races of a report, everything each carries but its call stacks.
fn race_tuples(json: &str) -> Vec<String> {
    let keys = [
        "pc",
        "prev_pc",
        "addr",
        "kind",
        "thread",
        "prev_thread",
        "unit",
        "prev_unit",
        "count",
    ];
    race_fields(json, &keys)
}

/// Counting a thread's repeated accesses instead of delivering them
/// (docs/performance.md, "Repeated accesses") changes no report and no
/// count: every binary-mode guest, built as gcc builds by default (PIE,
/// dynamic), gives the same races, racy accesses and checked accesses with
/// `--no-repeat-filter`; the guest whose loops repeat their reads while a
/// thread races with them (repeated_accesses.c) has most of its accesses
/// counted as repeats, and none without the filter.
#[test]
fn repeated_accesses_counted_without_delivery_change_no_report() {
    for rel in GUESTS {
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        let bin = build_c_dynamic(rel, &format!("binary_{stem}"), &[]);
        let (err, with) = run_checked(&bin, &["--stats"]);
        let (err_off, without) = run_checked(&bin, &["--stats", "--no-repeat-filter"]);
        assert_eq!(race_tuples(&with), race_tuples(&without), "{rel}: {err}");
        assert_eq!(dre(&with), dre(&without), "{rel}: {err}");
        // The pruning table's `observed` row: static instructions, then
        // dynamic accesses, each with its percentage.
        let observed = |err: &str| -> Vec<u64> {
            let line = err.lines().find(|l| l.trim_start().starts_with("observed"));
            let words = line.unwrap_or_default().split_whitespace();
            words.filter_map(|w| w.parse().ok()).collect()
        };
        let checked = observed(&err);
        assert_eq!(checked.len(), 2, "{rel}: {err}");
        assert_eq!(checked, observed(&err_off), "{rel}: {err}");
        let repeats = |err: &str| {
            let line = err
                .lines()
                .find(|l| l.contains("counted without delivery:"))?;
            line.rsplit(' ').next()?.parse::<u64>().ok()
        };
        assert_eq!(repeats(&err_off), None, "{rel}: {err_off}");
        if rel == "binary/repeated_accesses.c" {
            let n = repeats(&err).unwrap_or(0);
            assert!(
                n * 3 > checked[1],
                "{rel}: {n} repeats of {} checked accesses: {err}",
                checked[1]
            );
            assert!(!race_tuples(&with).is_empty(), "{rel}: {err}");
        }
    }
}

/// Clock floors (docs/binary-mode-openmp.md) change no report: OpenMP programs
/// whose worksharing units and tasks run again and again, each run by
/// FastTrack and by the canonical detector with floors and with
/// `--no-clock-floors` (which writes every entry into every new clock),
/// give the same races, threads and units. Where a barrier follows a loop
/// or a taskloop that ran again, or a region follows a `parallel for`,
/// floors were raised; where a thread outside the team
/// never synchronizes with it (race_omp_team_and_pthread.c), the entries
/// it lacks get none, and its races with the chunks stay.
#[test]
fn clock_floors_change_no_report() {
    for (file, floors) in [
        ("race_omp_for_passes.c", true),
        ("omp_for_passes.c", true),
        ("omp_barrier.c", true),
        ("race_omp_task_id_reuse.c", true),
        ("omp_taskloop_passes.c", true),
        ("race_omp_parallel_for_passes.c", true),
        ("race_omp_team_and_pthread.c", false),
        ("race_omp_for_serial.c", false),
        ("race_omp_tasks.c", false),
        ("race_omp_sections.c", false),
        ("omp_taskgroup.c", false),
        ("race_omp_single_nowait.c", false),
    ] {
        let rel = format!("cc/openmp/{file}");
        let bin = build_c_dynamic(
            &rel,
            &format!("floors_{file}"),
            &["-O1", "-fopenmp", "-static"],
        );
        for det in ["fasttrack", "canonical"] {
            let (err, with) = run_checked(&bin, &["--detector", det, "--stats"]);
            let (_, without) = run_checked(&bin, &["--detector", det, "--no-clock-floors"]);
            assert_eq!(
                race_tuples(&with),
                race_tuples(&without),
                "{file}, {det}: {err}"
            );
            if floors {
                assert!(
                    err.contains("clock floor(s) raised"),
                    "{file}, {det}: {err}"
                );
            }
        }
    }
}

/// Joined pthreads' clock entries are floored once every live thread
/// holds their final value (docs/binary-mode.md, "Joined threads"), and
/// that changes no report: a pool that replaces its workers beside a
/// thread that never synchronizes with it (`race_pt_pool.c`), built as
/// users build (PIE, dynamic), gives the races its `RACE` lines say (both
/// accesses of each), and the same races, threads and counts with
/// `--no-clock-floors`, under FastTrack and the canonical detector; floors
/// were raised.
#[test]
fn joined_threads_floors_change_no_report() {
    let rel = "cc/pthread/race_pt_pool.c";
    let bin = build_c_dynamic(rel, "floors_race_pt_pool", &["-O1", "-pthread"]);
    for det in ["fasttrack", "canonical"] {
        let (err, with) = run_checked(&bin, &["--detector", det, "--stats"]);
        let (_, without) = run_checked(&bin, &["--detector", det, "--no-clock-floors"]);
        assert_eq!(race_tuples(&with), race_tuples(&without), "{det}: {err}");
        // Both accesses of each race: the racy PC's line and the earlier
        // access's.
        let mut got = source_lines(&bin, rel, &racy_pcs(&with));
        let v: serde_json::Value = serde_json::from_str(&with).unwrap();
        for r in v["detectors"][det]["races"].as_array().unwrap() {
            got.insert(r["prev_frames"][0]["line"].as_i64().unwrap());
        }
        assert_eq!(got, marked_lines(rel, "/* RACE */"), "{det}: {err}");
        assert!(err.contains("clock floor(s) raised"), "{det}: {err}");
    }
}

/// Memory a library function touches for its caller (guest-sdk/cc/ranges.def)
/// is checked as the caller's access at the call: each race of
/// `libc_ranges.c` pairs a call (`RACE`, checked by the verdict tests) with
/// the other thread's access (`OTHER`), in static and PIE builds alike.
#[test]
fn library_calls_race_at_their_line_with_the_other_threads_access() {
    let rel = "binary/libc_ranges.c";
    let want = marked_lines(rel, "/* OTHER */");
    for bin in [
        build_c(rel, Libc::Glibc),
        build_c_dynamic(rel, "binary_libc_ranges_pie", &[]),
    ] {
        let (err, json) = run_checked(&bin, &[]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let races = v["detectors"]["fasttrack"]["races"].as_array().unwrap();
        let prev: BTreeSet<i64> = races
            .iter()
            .map(|r| r["prev_frames"][0]["line"].as_i64().unwrap())
            .collect();
        assert_eq!(prev, want, "{}: {err}", bin.display());
        assert_eq!(races.len(), want.len(), "{err}");
    }
}
