//! lard-cc end to end: every program of guests/cc/manifest.toml is built by
//! this test with the installed `lard-cc`/`lard-c++` (ThreadSanitizer
//! instrumentation + the LARDx86 runtime), runs natively with the expected
//! output, and under `lard run` reports exactly its ground truth: nothing for
//! race-free programs, only races on its RACE lines (mapped from the racy
//! PCs with binutils' addr2line) for racy ones — with the default schedule
//! and with a random one.  Also: every instrumentation entry point gcc 12 and
//! clang 14 can emit links, with both compilers.

use lard_e2e::*;
use lard_emu::cmd::manifest::GuestRun;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn build_dir() -> PathBuf {
    guest_dir().join("lard-cc").join("guests")
}

/// The manifest's runs, each program built with lard-cc.
fn runs() -> Vec<GuestRun> {
    let manifest = root().join("guests/cc/manifest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let doc: toml::Value = toml::from_str(&text).unwrap();
    // The static builds (the manifest's glibc-dynamic entries are plain gcc
    // builds; dynamically linked lard-cc builds are checked by
    // dynamically_linked_lard_cc_builds_match_their_ground_truth).
    let runs: Vec<GuestRun> = lard_emu::cmd::manifest::read(&manifest, &build_dir())
        .expect("manifest reads")
        .into_iter()
        .filter(|r| r.libc != lard_emu::cmd::manifest::DYNAMIC)
        .collect();
    for g in doc["guest"].as_array().unwrap() {
        let name = g["name"].as_str().unwrap();
        let flags: Vec<&str> = g["cflags"].as_str().unwrap().split_whitespace().collect();
        let out = build_dir().join("glibc").join(name);
        build_lard_cc(g["source"].as_str().unwrap(), &flags, &out, &[]);
    }
    runs
}

/// [`check`] under the default schedule and one random schedule: the
/// failures.
fn check_schedules(r: &GuestRun) -> Vec<String> {
    [&[][..], &["--sched", "random", "--seed", "7"][..]]
        .into_iter()
        .filter_map(|args| check(r, args).err())
        .collect()
}

/// Fails with every failure listed.
fn assert_no_failures(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn check(r: &GuestRun, lard_args: &[&str]) -> Result<(), String> {
    let json = scratch_file("lard-cc");
    let j = json.to_string_lossy().to_string();
    let mut args = lard_args.to_vec();
    args.extend(["--report-json", &j]);
    let l = lard_run(&args, &r.bin, &[]);
    let what = format!("{} {lard_args:?}", r.label);
    if stdout(&l) != r.stdout || shell_status(&l) != r.exit {
        return Err(format!(
            "{what}: output {:?} status {}; stderr {}",
            stdout(&l),
            shell_status(&l),
            stderr(&l)
        ));
    }
    let text = std::fs::read_to_string(&json).map_err(|e| format!("{what}: {e}"))?;
    let _ = std::fs::remove_file(&json);
    let got = source_lines(&r.bin, &r.source, &racy_pcs(&text));
    r.check_lines(&got)
        .map_err(|e| format!("{what}: {e}\n{}", stderr(&l)))
}

#[test]
fn every_lard_cc_program_matches_its_ground_truth() {
    let runs = runs();
    assert!(runs.len() >= 40, "at least 40 programs: {}", runs.len());
    let racy = runs.iter().filter(|r| r.racy).count();
    assert!(
        racy * 2 >= runs.len() - 10 && racy * 2 <= runs.len() + 10,
        "about half racy"
    );
    let mut failures = Vec::new();
    for r in &runs {
        let n = native(&r.bin, &[]);
        assert_eq!(stdout(&n), r.stdout, "{}: native stdout", r.label);
        assert_eq!(shell_status(&n), r.exit, "{}: native status", r.label);
        failures.extend(check_schedules(r));
    }
    assert_no_failures(&failures);
}

/// Dynamically linked lard-cc builds get the manifest's verdicts under
/// `lard run`, line by line, like the static builds: the shared libstdc++,
/// libgomp and libc call pthread_create, condition variables, malloc and
/// free themselves, and those calls reach the runtime only through its
/// interposition (docs/lard-cc.md, "Static and dynamic builds"). The subset:
/// C++ threads, mutexes and condition variables (libstdc++.so), heap reuse
/// by C++ objects, OpenMP tasks and taskgroups (libgomp.so's threads and
/// task allocations), loop chunks and teams (libgomp.so's `GOMP_loop_*`
/// and `GOMP_teams_reg` interposed), OpenMP atomics and flushes with
/// memory-order clauses, pthreads, racy and race-free.
#[test]
fn dynamically_linked_lard_cc_builds_match_their_ground_truth() {
    const SUBSET: [&str; 12] = [
        "cc_omp_atomic_orders",
        "cc_cpp_mutex",
        "cc_cpp_objects",
        "cc_race_cpp_threads",
        "cc_omp_tasks",
        "cc_omp_taskgroup",
        "cc_race_omp_task_shared",
        "cc_omp_for_private",
        "cc_race_omp_for_serial",
        "cc_race_omp_teams",
        "cc_pt_cond",
        "cc_race_deep_stack",
    ];
    let manifest = root().join("guests/cc/manifest.toml");
    let doc: toml::Value = toml::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    let dir = build_dir().join("dynamic");
    let runs: Vec<GuestRun> = lard_emu::cmd::manifest::read(&manifest, &dir)
        .expect("manifest reads")
        .into_iter()
        .filter(|r| r.libc != lard_emu::cmd::manifest::DYNAMIC && SUBSET.contains(&r.name.as_str()))
        .collect();
    assert_eq!(
        runs.len(),
        SUBSET.len(),
        "every subset program is in the manifest"
    );
    let mut failures = Vec::new();
    for r in &runs {
        let g = doc["guest"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"].as_str() == Some(r.name.as_str()))
            .unwrap();
        let flags: Vec<&str> = g["cflags"].as_str().unwrap().split_whitespace().collect();
        build_lard_cc_linked(&r.source, &flags, &r.bin, &[], false);
        let elf = lard_emu::binary::elf::ElfFile::open(&r.bin).unwrap();
        assert!(elf.interp.is_some(), "{}: not dynamically linked", r.label);
        let n = native(&r.bin, &[]);
        assert_eq!(stdout(&n), r.stdout, "{}: native stdout", r.label);
        failures.extend(check_schedules(r));
    }
    assert_no_failures(&failures);
}

/// Builds guests/cc/openmp/`file` with lard-cc and runs it under `lard
/// run`; checks its output against the native run's; returns (stderr,
/// report JSON).
fn run_openmp_guest(file: &str) -> (String, String) {
    run_openmp_guest_with(file, &[])
}

/// [`run_openmp_guest`] with more lard-cc flags.
fn run_openmp_guest_with(file: &str, flags: &[&str]) -> (String, String) {
    let rel = format!("cc/openmp/{file}");
    let out = build_dir().join("units").join(file.trim_end_matches(".c"));
    let mut all = vec!["-O1", "-fopenmp"];
    all.extend_from_slice(flags);
    build_lard_cc(&rel, &all, &out, &[]);
    let json = scratch_file("lard-cc-units");
    let j = json.to_string_lossy().to_string();
    let n = native(&out, &[]);
    let l = lard_run(&["--report-json", &j], &out, &[]);
    assert_eq!(stdout(&l), stdout(&n), "{file}: {}", stderr(&l));
    let report = std::fs::read_to_string(&json).unwrap();
    let _ = std::fs::remove_file(&json);
    (stderr(&l), report)
}

/// A lard-cc build's race reports name the OpenMP units that raced, as
/// binary mode's do ([`assert_units_named`]): the runtime notes each unit
/// it starts (`lardcc_note_unit`). It reuses language thread ids, so a
/// report picks an id's holder by the clock of the racing access's epoch:
/// in race_omp_task_id_reuse.c task C gets the id of task A, which raced
/// with task B before C started, and the race on `x` still names A.
#[test]
fn race_reports_name_the_openmp_units_that_raced() {
    for file in UNIT_GUESTS {
        let (err, report) = run_openmp_guest(file);
        assert_units_named(file, "/* TASK */", &err, &report);
    }
    let file = "race_omp_task_id_reuse.c";
    let (err, report) = run_openmp_guest(file);
    let line = |mark: &str| {
        let l = marked_lines(&format!("cc/openmp/{file}"), mark);
        assert_eq!(l.len(), 1, "{mark}");
        format!(
            "task at {}:{}, ",
            root().join("guests/cc/openmp").join(file).display(),
            l.first().unwrap()
        )
    };
    let (a, b) = (line("/* TASK A */"), line("/* TASK B */"));
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    let on_x: Vec<&serde_json::Value> = v["detectors"]["fasttrack"]["races"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["data"] == "x+0x0")
        .collect();
    assert!(!on_x.is_empty(), "no race on x: {err}");
    for r in on_x {
        let (u, p) = (
            r["unit"].as_str().unwrap_or(""),
            r["prev_unit"].as_str().unwrap_or(""),
        );
        assert!(
            u.starts_with(&b) && p.starts_with(&a),
            "{u:?} / {p:?}: {err}"
        );
    }
}

/// With `--lard-omp-iterations` a race between two iterations of a
/// `schedule(static)` loop names them: in race_omp_static_iterations.c
/// iterations 2 and 5 of the first loop write `out[2]` (its index table
/// says so), and the chunks from 0 and from 8 of the second (`static, 4`)
/// write `outc[1]`; a team of two ran each pair on one thread.
#[test]
fn race_reports_name_the_static_loop_iterations_that_raced() {
    let file = "race_omp_static_iterations.c";
    let (err, report) = run_openmp_guest_with(file, &["--lard-omp-iterations"]);
    let src = root().join("guests/cc/openmp").join(file);
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    let races = v["detectors"]["fasttrack"]["races"].as_array().unwrap();
    let cases = [
        ("out+0x8", "iteration 5 of", "iteration 2 of"),
        (
            "outc+0x4",
            "chunk of 4 iterations from 8 of",
            "chunk of 4 iterations from 0 of",
        ),
    ];
    for (data, unit, prev) in cases {
        let on: Vec<&serde_json::Value> = races.iter().filter(|r| r["data"] == data).collect();
        assert!(!on.is_empty(), "no race on {data}: {err}");
        for r in on {
            let (u, p) = (
                r["unit"].as_str().unwrap_or(""),
                r["prev_unit"].as_str().unwrap_or(""),
            );
            let at = format!(" the static loop at {}:", src.display());
            assert!(
                u.starts_with(unit) && p.starts_with(prev) && u.contains(&at),
                "{data}: {u:?} / {p:?}: {err}"
            );
        }
    }
}

/// Runs `bin` under `lard run` with a JSON report (checking its output
/// against the native run's); returns the run, the report and the source
/// lines of both accesses of every FastTrack race.
fn run_for_race_lines(bin: &Path, scratch: &str) -> (Output, serde_json::Value, BTreeSet<i64>) {
    let json = scratch_file(scratch);
    let l = lard_run(&["--report-json", json.to_str().unwrap()], bin, &[]);
    assert_eq!(stdout(&l), stdout(&native(bin, &[])), "{}", bin.display());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let lines = v["detectors"]["fasttrack"]["races"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| [&r["frames"][0], &r["prev_frames"][0]])
        .map(|f| f["line"].as_i64().unwrap())
        .collect();
    (l, v, lines)
}

/// How a lard-cc build runs the iterations of a static loop: by default
/// in a window of 61 logical threads per thread, so race_omp_window.c's
/// races one iteration apart (iterations 222 and 223, in one thread's
/// share) are reported and named, but not the one 122 iterations apart (a
/// multiple of the window); with `--lard-omp-iterations` (every iteration
/// its own) both; with `--lard-omp-iterations=off` (the thread's implicit
/// task runs them) neither.
#[test]
fn static_loop_iterations_run_in_a_window_by_default() {
    let file = "race_omp_window.c";
    let rel = format!("cc/openmp/{file}");
    let src = root().join("guests").join(&rel);
    let near = marked_lines(&rel, "RACE near");
    let far = marked_lines(&rel, "RACE far");
    let both: BTreeSet<i64> = near.union(&far).copied().collect();
    for (name, flags, want) in [
        ("default", &[][..], near.clone()),
        ("all", &["--lard-omp-iterations"][..], both),
        ("off", &["--lard-omp-iterations=off"][..], BTreeSet::new()),
    ] {
        let out = build_dir().join("window").join(name);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let mut all = vec!["-O1", "-fopenmp"];
        all.extend_from_slice(flags);
        build_lard_cc(&rel, &all, &out, &[]);
        let (l, v, lines) = run_for_race_lines(&out, "lard-cc-window");
        assert_eq!(lines, want, "{name}: {}", stderr(&l));
        let races = v["detectors"]["fasttrack"]["races"].as_array().unwrap();
        if name == "default" {
            let at = format!(" of the static loop at {}:", src.display());
            let r = &races[0];
            let (u, p) = (
                r["unit"].as_str().unwrap(),
                r["prev_unit"].as_str().unwrap(),
            );
            assert!(
                u.starts_with("iteration 223") && p.starts_with("iteration 222") && u.contains(&at),
                "{u:?} / {p:?}"
            );
        }
    }
}

/// The count of LARD op `op` in a `--stats` stderr (0 if none ran).
fn op_count(stats: &str, op: &str) -> u64 {
    stats
        .lines()
        .find(|l| l.starts_with("LARD ops"))
        .and_then(|l| {
            l.split(", ")
                .find_map(|p| p.trim_start_matches("LARD ops").trim().strip_prefix(op))
        })
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// The racing pairs of a report: (pc, prev_pc, kind) of every detector's
/// races, sorted, each once.
fn racing_pairs(json: &str) -> Vec<String> {
    let mut out = race_fields(json, &["pc", "prev_pc", "kind"]);
    out.dedup();
    out
}

/// Clock floors in the lard-cc runtime (docs/lard-cc-openmp.md, "Clock floors")
/// bound the clocks and change no race. Each program runs with floors and
/// with `--no-clock-floors` (FloorVC then answers 0 and the runtime keeps
/// every entry) under FastTrack and the canonical detector: the same
/// output as natively, the same racing instruction pairs (the runtime runs
/// other instructions either way, so the schedule and the ids its threads
/// get may differ). Where worksharing units run again and again, floors
/// are raised and the runtime installs fewer clock entries; where a
/// pthread outside the team runs beside it (race_omp_team_and_pthread.c),
/// no floor is raised, since that thread never holds the units' entries.
#[test]
fn clock_floors_bound_the_clocks_and_change_no_race() {
    let iters = &["--lard-omp-iterations"][..];
    for (file, flags, floors) in [
        ("race_omp_for_passes.c", &[][..], true),
        ("omp_for_passes.c", &[][..], true),
        ("race_omp_parallel_for_passes.c", iters, true),
        ("omp_taskloop_passes.c", &[][..], true),
        ("omp_static_iterations.c", iters, true),
        ("race_omp_static_iterations.c", iters, true),
        ("race_omp_team_and_pthread.c", &[][..], false),
        ("race_omp_task_id_reuse.c", &[][..], true),
        ("race_omp_tasks.c", &[][..], true),
        ("race_omp_simd_lanes.c", iters, true),
        ("race_omp_task_before_lanes.c", iters, true),
    ] {
        let rel = format!("cc/openmp/{file}");
        let name = format!(
            "{}{}",
            file.trim_end_matches(".c"),
            if flags.is_empty() { "" } else { "_it" }
        );
        let out = build_dir().join("floors").join(name);
        let mut all = vec!["-O1", "-fopenmp"];
        all.extend_from_slice(flags);
        build_lard_cc(&rel, &all, &out, &[]);
        let n = native(&out, &[]);
        for det in ["fasttrack", "canonical"] {
            let mut got = Vec::new();
            for extra in [&[][..], &["--no-clock-floors"][..]] {
                let json = scratch_file("lard-cc-floors");
                let j = json.to_string_lossy().to_string();
                let mut args = vec!["--detector", det, "--stats", "--report-json", &j];
                args.extend_from_slice(extra);
                let l = lard_run(&args, &out, &[]);
                assert_eq!(
                    stdout(&l),
                    stdout(&n),
                    "{file} {det} {extra:?}: {}",
                    stderr(&l)
                );
                let report = std::fs::read_to_string(&json).unwrap();
                let _ = std::fs::remove_file(&json);
                got.push((stderr(&l), racing_pairs(&report)));
            }
            let ((with, pairs), (without, pairs_without)) = (&got[0], &got[1]);
            assert_eq!(pairs, pairs_without, "{file} {det}: {with}\n{without}");
            let raised = op_count(with, "lard.floorvc");
            assert!(
                op_count(without, "lard.floorvc") <= 1,
                "{file} {det}: {without}"
            );
            if floors {
                let (w, wo) = (
                    op_count(with, "lard.writevc"),
                    op_count(without, "lard.writevc"),
                );
                assert!(raised > 1, "{file} {det}: no floor raised: {with}");
                assert!(
                    w <= wo,
                    "{file} {det}: {w} WriteVC with floors, {wo} without"
                );
            } else {
                assert_eq!(raised, 0, "{file} {det}: {with}");
            }
        }
    }
}

/// Recursive task programs run exact however many tasks are unordered with
/// each other (fib(n) has one language thread per task, and every task of
/// one subtree is concurrent with every task of the other: the runtime's
/// clocks are sparse, docs/lard-cc.md). Natively it runs like its plain
/// build; under `lard run` fib(14) (1,219 tasks) reports no race.
#[test]
fn deep_task_recursion_runs_natively_and_exactly_under_lard() {
    let rel = "cc/limits/omp_fib_tasks.c";
    let out = build_dir().join("limits").join("omp_fib_tasks");
    build_lard_cc(rel, &["-O1", "-fopenmp"], &out, &[]);
    for threads in ["4", "1"] {
        let o = Command::new(&out)
            .arg("20")
            .env("OMP_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert_eq!(
            stdout(&o),
            "fib(20) = 6765\n",
            "native fib, {threads} threads: {}",
            stderr(&o)
        );
        assert!(o.status.success(), "native fib");
    }
    let l = lard_run(&[], &out, &["14"]);
    assert_eq!(stdout(&l), "fib(14) = 377\n", "{}", stderr(&l));
    assert_eq!(shell_status(&l), 0, "{}", stderr(&l));
    assert!(summary_races(&stderr(&l)) == 0, "{}", stderr(&l));
}

/// A race two calls deep in both threads (guests/cc/pthread/race_deep_stack.c):
/// both accesses of the report carry the program's call stack, recorded by
/// the runtime at `__tsan_func_entry/exit` — the earlier access's stack as
/// it was when that access happened. Every frame's function and line must be
/// the source's RACE and CALL markers, innermost first, in the JSON and the
/// text report, with each stack under its own thread, whichever access
/// comes first (schedules) and under every detector.
#[test]
fn race_reports_carry_both_call_stacks() {
    let rel = "cc/pthread/race_deep_stack.c";
    let line_of = |marker: &str| marker_line(rel, marker);
    let writer = vec![
        (
            "store_balance".to_string(),
            line_of("balance = v; /* RACE */"),
        ),
        ("deposit".to_string(), line_of("/* CALL deposit */")),
        ("writer".to_string(), line_of("/* CALL writer */")),
    ];
    let reader = vec![
        (
            "load_balance".to_string(),
            line_of("return balance; /* RACE */"),
        ),
        ("audit".to_string(), line_of("/* CALL audit */")),
        ("main".to_string(), line_of("/* CALL main */")),
    ];
    let out = build_dir().join("stacks").join("race_deep_stack");
    build_lard_cc(rel, &["-O1", "-pthread"], &out, &[]);
    let runs: [&[&str]; 5] = [
        &[],
        &["--sched", "random", "--seed", "1"],
        &["--sched", "random", "--seed", "11"],
        &["--detector", "canonical"],
        &["--detector", "lardish"],
    ];
    let mut firsts = std::collections::BTreeSet::new();
    for extra in runs {
        let json = scratch_file("stacks");
        let j = json.to_string_lossy().to_string();
        let mut args = extra.to_vec();
        args.extend(["--report-json", &j]);
        let l = lard_run(&args, &out, &[]);
        assert_eq!(stdout(&l), "balance 42 ok 1\n", "{extra:?}: {}", stderr(&l));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let _ = std::fs::remove_file(&json);
        let det = doc["detectors"]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap();
        let races = det["races"].as_array().unwrap();
        assert_eq!(races.len(), 1, "{extra:?}: one race: {races:?}");
        let r = &races[0];
        let stack = |key: &str| -> Vec<(String, usize)> {
            r[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    assert!(
                        f["file"].as_str().unwrap().ends_with("race_deep_stack.c"),
                        "{extra:?}: frame outside the program: {f}"
                    );
                    (
                        f["function"].as_str().unwrap().to_string(),
                        f["line"].as_u64().unwrap() as usize,
                    )
                })
                .collect()
        };
        let (now, before) = (stack("frames"), stack("prev_frames"));
        let main_thread = "T0";
        if now == writer {
            assert_eq!(before, reader, "{extra:?}: the earlier access's stack");
            assert_ne!(r["thread"], main_thread, "{extra:?}");
            assert_eq!(r["prev_thread"], main_thread, "{extra:?}");
        } else {
            assert_eq!(now, reader, "{extra:?}: the later access's stack");
            assert_eq!(before, writer, "{extra:?}: the earlier access's stack");
            assert_eq!(r["thread"], main_thread, "{extra:?}");
        }
        firsts.insert(now[0].0.clone());
        // The text report: both stacks, numbered ThreadSanitizer-style.
        let text = stderr(&l);
        for (i, (f, line)) in writer.iter().chain(reader.iter()).enumerate() {
            let want = format!("#{} {f} ", i % 3);
            let at = format!("race_deep_stack.c:{line}\n");
            assert!(
                text.lines()
                    .any(|t| t.contains(&want) && format!("{t}\n").contains(&at)),
                "{extra:?}: no `{want}... {at}` in\n{text}"
            );
        }
    }
    // (Seed 11 makes the main thread's load the later access today.)
    eprintln!("later accesses seen: {firsts:?}");
}

/// Every `__tsan_*` function gcc 12 (cc1's builtins) or clang 14
/// (ThreadSanitizer pass) can call.
fn entry_points() -> Vec<String> {
    let mut v: Vec<String> = [
        "__tsan_init",
        "__tsan_func_entry",
        "__tsan_func_exit",
        "__tsan_vptr_update",
        "__tsan_vptr_read",
        "__tsan_read_range",
        "__tsan_write_range",
        "__tsan_atomic_thread_fence",
        "__tsan_atomic_signal_fence",
        "__tsan_ignore_thread_begin",
        "__tsan_ignore_thread_end",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for n in [1, 2, 4, 8, 16] {
        for k in [
            "read",
            "write",
            "unaligned_read",
            "unaligned_write",
            "volatile_read",
            "volatile_write",
            "unaligned_volatile_read",
            "unaligned_volatile_write",
            "read_write",
            "unaligned_read_write",
        ] {
            v.push(format!("__tsan_{k}{n}"));
        }
    }
    for n in [8, 16, 32, 64, 128] {
        for op in [
            "load",
            "store",
            "exchange",
            "fetch_add",
            "fetch_sub",
            "fetch_and",
            "fetch_or",
            "fetch_xor",
            "fetch_nand",
            "compare_exchange_strong",
            "compare_exchange_weak",
            "compare_exchange_val",
        ] {
            v.push(format!("__tsan_atomic{n}_{op}"));
        }
    }
    v
}

#[test]
fn every_instrumentation_entry_point_links_with_gcc_and_clang() {
    let dir = guest_dir().join("lard-cc").join("abi");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("every_entry_point.c");
    let mut text = String::from("#include <stdio.h>\n");
    for e in entry_points() {
        text += &format!("extern char {e}[];\n");
    }
    text += "int main(void)\n{\n    unsigned long x = 0;\n";
    for e in entry_points() {
        text += &format!("    x += (unsigned long){e} != 0;\n");
    }
    text += "    printf(\"%lu\\n\", x);\n    return 0;\n}\n";
    std::fs::write(&src, text).unwrap();
    let prefix = lard_cc_prefix();
    for cc in ["gcc", "clang"] {
        let out = dir.join(format!("every_entry_point-{cc}"));
        let o = Command::new(prefix.join("bin/lard-cc"))
            .env("LARD_CC", cc)
            .args(["-O1", "-static"])
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{cc}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let n = native(&out, &[]);
        assert_eq!(stdout(&n), format!("{}\n", entry_points().len()), "{cc}");
    }
}

#[test]
fn gcc_and_clang_builds_agree_on_pthread_programs() {
    // clang 14's instrumentation (no OpenMP: clang's OpenMP calls libomp).
    for name in [
        "pthread/race_pt_counter.c",
        "pthread/pt_mutex.c",
        "atomic/c11_release_acquire.c",
        "atomic/race_c11_relaxed.c",
    ] {
        let stem = name.rsplit('/').next().unwrap().trim_end_matches(".c");
        let out = build_dir().join("clang").join(stem);
        build_lard_cc(
            &format!("cc/{name}"),
            &["-O2", "-pthread"],
            &out,
            &[("LARD_CC", "clang")],
        );
        let l = lard_run(&[], &out, &[]);
        let racy = stderr(&l).contains("race 1:");
        assert_eq!(
            racy,
            stem.starts_with("race_"),
            "{name} (clang): {}",
            stderr(&l)
        );
    }
}

#[test]
fn lard_cc_rejects_openmp_with_clang_and_explains_itself() {
    let prefix = lard_cc_prefix();
    let o = Command::new(prefix.join("bin/lard-cc"))
        .env("LARD_CC", "clang")
        .args(["-fopenmp", "-c", "x.c"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("-fopenmp needs gcc"));
    let h = Command::new(prefix.join("bin/lard-cc"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(h.status.success() && stdout(&h).contains("usage: lard-cc"));
}

/// pigz 2.8 (a real pthread program nobody wrote for lard: thread pool,
/// condition variables, a job queue) built with lard-cc compresses like the
/// plain build and reports no race. The source is an input kept outside the
/// repository (/work/shared/bench-programs, or LARD_PIGZ_TAR); without it
/// the test says so and passes.
#[test]
fn pigz_built_with_lard_cc_reports_no_race() {
    let tar = std::env::var("LARD_PIGZ_TAR")
        .unwrap_or_else(|_| "/work/shared/bench-programs/pigz-2.8.tar.gz".into());
    if !Path::new(&tar).is_file() {
        eprintln!("pigz source {tar} not present: nothing to check");
        return;
    }
    let dir = guest_dir().join("lard-cc").join("pigz");
    let bin = dir.join("pigz-2.8/pigz");
    let prefix = lard_cc_prefix();
    if !bin.exists() || !fresh_against(&bin, &prefix.join("lib/liblardcc.a")) {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ok = Command::new("tar")
            .args(["xzf", &tar, "-C"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(ok.success(), "tar xzf {tar}");
        let o = Command::new("make")
            .arg("-s")
            .arg("-C")
            .arg(dir.join("pigz-2.8"))
            .arg(format!("CC={}", prefix.join("bin/lard-cc").display()))
            .args(["CFLAGS=-O2 -g", "LDFLAGS=-static", "pigz"])
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "pigz build: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // 256 KiB of a binary: several blocks, so all four compressing threads work.
    let input = dir.join("input.bin");
    let data = std::fs::read(lard()).unwrap();
    std::fs::write(&input, &data[..256 * 1024]).unwrap();
    let inp = input.to_string_lossy().to_string();
    let args = ["-p", "4", "-b", "32", "-c", inp.as_str()];
    let n = native(&bin, &args);
    assert!(n.status.success());
    for extra in [&[][..], &["--sched", "random", "--seed", "3"][..]] {
        let l = lard_run(extra, &bin, &args);
        assert_eq!(shell_status(&l), 0, "{extra:?}: {}", stderr(&l));
        assert!(
            l.stdout == n.stdout,
            "{extra:?}: compressed output differs from native"
        );
        assert!(summary_races(&stderr(&l)) == 0, "{extra:?}: {}", stderr(&l));
    }
}

fn fresh_against(out: &Path, dep: &Path) -> bool {
    match (
        out.metadata().and_then(|m| m.modified()),
        dep.metadata().and_then(|m| m.modified()),
    ) {
        (Ok(o), Ok(d)) => o >= d,
        _ => false,
    }
}

/// A thread deeper than the 128 frames the runtime records
/// (guests/cc/limits/deep_recursion_race.c: 200 recursive calls): the
/// report shows the racing access's own frame, one line saying that calls
/// were not recorded, then recorded callers, and the outermost frames are
/// the thread function's call into the recursion.
#[test]
fn calls_deeper_than_the_recorded_frames_show_a_gap() {
    let rel = "cc/limits/deep_recursion_race.c";
    let line_of = |marker: &str| marker_line(rel, marker);
    let out = build_dir().join("limits").join("deep_recursion_race");
    // -O0: gcc's tail-recursion pass would turn the recursion into a loop.
    build_lard_cc(rel, &["-O0", "-pthread"], &out, &[]);
    let l = lard_run(&[], &out, &[]);
    assert_eq!(stdout(&l), "depth 200\n", "{}", stderr(&l));
    let text = stderr(&l);
    // `#n function /path/deep_recursion_race.c:line`.
    let frame = |t: &str, f: &str, line: usize| {
        t.contains(&format!(" {f} ")) && t.ends_with(&format!("/deep_recursion_race.c:{line}"))
    };
    let (race, call, worker) = (
        line_of("depth_reached = 200; /* RACE */"),
        line_of("/* CALL descend */"),
        line_of("/* CALL worker */"),
    );
    let gap = lard_emu::observe::callstack::GAP_TEXT;
    let stack: Vec<&str> = text
        .lines()
        .map(str::trim)
        .skip_while(|t| !(t.starts_with("#0 ") && frame(t, "descend", race)))
        .take_while(|t| t.starts_with('#'))
        .collect();
    assert!(!stack.is_empty(), "no stack of the write in\n{text}");
    assert_eq!(stack.get(1).map(|t| &t[3..]), Some(gap), "{stack:#?}");
    assert!(
        stack[2..stack.len() - 1]
            .iter()
            .all(|t| frame(t, "descend", call)),
        "recorded callers are the recursion: {stack:#?}"
    );
    assert!(frame(stack.last().unwrap(), "worker", worker), "{stack:#?}");
    // 128 recorded frames: the gap line stands for the rest.
    assert_eq!(stack.len(), 2 + 127, "{stack:#?}");
}

/// `lard cc-accuracy` is a campaign: its runs land as result files beside
/// the campaign file it writes, `lard campaign run` on that file finds every
/// run already made (the same run names), and `lard campaign collect`
/// scores the same runs. Ground truth: the manifest (one racy and one
/// race-free `sections` program; sections are logical threads, so the race
/// is found on every seed; the other racy program's sections are
/// unordered however they run).
#[test]
fn cc_accuracy_runs_as_a_campaign_and_collects() {
    let prefix = lard_cc_prefix();
    let build = scratch_file("cc-accuracy");
    let o = Command::new(lard())
        .args([
            "cc-accuracy",
            "--seeds",
            "2",
            "--jobs",
            "2",
            "--only",
            "omp_sections",
        ])
        .arg("--manifest")
        .arg(root().join("guests/cc/manifest.toml"))
        .arg("--lard-cc")
        .arg(prefix.join("bin/lard-cc"))
        .arg("--build")
        .arg(&build)
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(shell_status(&o), 0, "{out}{}", stderr(&o));
    assert!(out.contains("4 programs x 2 seed(s) = 8 runs"), "{out}");
    assert!(out.contains("TP 4 FP 0 FN 0 TN 4"), "{out}");
    let file = build.join("cc-accuracy.toml");
    let results = build.join("cc-accuracy.results");
    let made = std::fs::read_dir(&results)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    let again = Command::new(lard())
        .args(["campaign", "run"])
        .arg(&file)
        .arg("--out")
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(shell_status(&again), 0, "{}", stderr(&again));
    assert!(
        stdout(&again).contains(&format!("{made} run(s), {made} already done, 0 made")),
        "{}",
        stdout(&again)
    );
    let c = Command::new(lard())
        .args(["campaign", "collect"])
        .arg(&results)
        .output()
        .unwrap();
    assert_eq!(shell_status(&c), 0, "{}", stderr(&c));
    assert!(
        stdout(&c).contains("precision 1.000, recall 1.000 (TP 4, FP 0, FN 0, TN 4)"),
        "{}",
        stdout(&c)
    );
    let _ = std::fs::remove_dir_all(&build);
}

/// A lard-cc program that also starts language threads through liblard's
/// own API: a `lard_spawn` thread, and a green thread (`lard_lang_new`,
/// `lard_lang_switch`) on the main kernel thread. liblard and the lard-cc
/// runtime share one thread identity (docs/sdk.md, "Ids"), so those
/// threads and the program's pthread get distinct ids, and their
/// unordered writes to `x` are one race between two threads; nothing else
/// races (the joins order both spawned threads before `main`'s read; the
/// green thread's write is unordered with `main`, which does not read `x`
/// again). Static and dynamic builds.
#[test]
fn liblard_threads_in_a_lard_cc_program_get_their_own_ids() {
    const SPAWN: &str = r#"#include <lard.h>
#include <pthread.h>
#include <stdio.h>

int x;

static void *by_pthread(void *arg)
{
    x = 1; /* RACE */
    return arg;
}

static void *by_liblard(void *arg)
{
    x = 2; /* RACE */
    return arg;
}

int main(void)
{
    pthread_t p;
    lard_thread_t l;
    pthread_create(&p, NULL, by_pthread, NULL);
    lard_spawn(&l, by_liblard, NULL);
    pthread_join(p, NULL);
    lard_join(l, NULL);
    printf("%d\n", x != 0);
    return 0;
}
"#;
    const GREEN: &str = r#"#include <lard.h>
#include <pthread.h>
#include <stdio.h>

int x;

static void *by_pthread(void *arg)
{
    x = 1; /* RACE */
    return arg;
}

int main(void)
{
    pthread_t p;
    uint32_t self = lard_self(), green = lard_lang_new();
    pthread_create(&p, NULL, by_pthread, NULL);
    lard_lang_switch(green);
    x = 2; /* RACE */
    lard_lang_switch(self);
    pthread_join(p, NULL);
    puts("1");
    return 0;
}
"#;
    let prefix = lard_cc_prefix();
    let dir = guest_dir().join("lard-cc").join("identity");
    std::fs::create_dir_all(&dir).unwrap();
    let include = format!("-I{}", prefix.join("include").display());
    for (name, text, link, flags) in [
        ("spawn", SPAWN, "static", &["-static"][..]),
        ("spawn", SPAWN, "dynamic", &[][..]),
        ("green", GREEN, "static", &["-static"][..]),
        ("green", GREEN, "dynamic", &[][..]),
    ] {
        let label = format!("{name} {link}");
        let src = dir.join(format!("{name}.c"));
        std::fs::write(&src, text).unwrap();
        let out = dir.join(format!("{name}-{link}"));
        let o = Command::new(prefix.join("bin/lard-cc"))
            .args(["-g", "-O1", &include])
            .args(flags)
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{label}: {}", stderr(&o));
        assert_eq!(stdout(&native(&out, &[])), "1\n", "{label}: native");
        let json = scratch_file("lard-cc-identity");
        let j = json.to_string_lossy().to_string();
        let l = lard_run(&["--report-json", &j], &out, &[]);
        assert_eq!(stdout(&l), "1\n", "{label}: {}", stderr(&l));
        assert_eq!(shell_status(&l), 0, "{label}: {}", stderr(&l));
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let _ = std::fs::remove_file(&json);
        let races: Vec<_> = report["detectors"]["fasttrack"]["races"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let line = |k: &str| r[k][0]["line"].as_i64().unwrap();
                let mut lines = [line("frames"), line("prev_frames")];
                lines.sort();
                let threads = [&r["thread"], &r["prev_thread"]].map(|t| t.to_string());
                (lines, threads[0] != threads[1])
            })
            .collect();
        let marked: Vec<i64> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("/* RACE */"))
            .map(|(i, _)| i as i64 + 1)
            .collect();
        assert_eq!(
            races,
            [([marked[0], marked[1]], true)],
            "{label}: {}",
            stderr(&l)
        );
    }
}

/// The lard-cc runtime and liblard adopt a kernel thread once: a lard-cc
/// program starts with one Thread op and one WriteVC of the main thread's
/// own entry, static or dynamic.
#[test]
fn a_lard_cc_program_adopts_its_main_thread_once() {
    let prefix = lard_cc_prefix();
    let dir = guest_dir().join("lard-cc").join("identity");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("hello.c");
    std::fs::write(&src, "int main(void)\n{\n    return 0;\n}\n").unwrap();
    for (link, flags) in [("static", &["-static"][..]), ("dynamic", &[][..])] {
        let out = dir.join(format!("hello-{link}"));
        let o = Command::new(prefix.join("bin/lard-cc"))
            .arg("-g")
            .args(flags)
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{link}: {}", stderr(&o));
        let l = lard_run(&["--stats"], &out, &[]);
        assert_eq!(shell_status(&l), 0, "{link}: {}", stderr(&l));
        assert_eq!(
            op_count(&stderr(&l), "lard.thread"),
            1,
            "{link}: {}",
            stderr(&l)
        );
    }
}

/// Memory a library function touches for the program (memcpy's source,
/// strlen's string, read's buffer: guest-sdk/cc/ranges.def, the table
/// binary mode uses) is checked as the caller's Tracked accesses at the
/// call: each race of libc_ranges.c pairs a call (`RACE`) with the other
/// thread's access (`OTHER`), static and dynamic; its locked twin has none.
#[test]
fn library_calls_are_checked_as_the_callers_accesses() {
    let cases = [
        ("binary/libc_ranges.c", true),
        ("binary/libc_ranges.c", false),
        ("binary/libc_ranges_locked.c", true),
        ("binary/libc_ranges_locked.c", false),
    ];
    for (rel, link_static) in cases {
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        let kind = if link_static { "static" } else { "dynamic" };
        let out = build_dir().join("libc").join(format!("{stem}-{kind}"));
        build_lard_cc_linked(rel, &["-O2", "-pthread"], &out, &[], link_static);
        let json = scratch_file("libc-ranges");
        let l = lard_run(&["--report-json", json.to_str().unwrap()], &out, &[]);
        assert_eq!(stdout(&l), stdout(&native(&out, &[])), "{rel} {kind}");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let races = v["detectors"]["fasttrack"]["races"].as_array().unwrap();
        let line = |r: &serde_json::Value, side: &str| r[side][0]["line"].as_i64().unwrap();
        let calls: BTreeSet<i64> = races.iter().map(|r| line(r, "frames")).collect();
        let others: BTreeSet<i64> = races.iter().map(|r| line(r, "prev_frames")).collect();
        // The racy twin's marks; the locked twin (an #include of it) has none.
        let (want_calls, want_others) = if rel.ends_with("locked.c") {
            (BTreeSet::new(), BTreeSet::new())
        } else {
            (
                marked_lines(rel, "/* RACE */"),
                marked_lines(rel, "/* OTHER */"),
            )
        };
        assert_eq!(calls, want_calls, "{rel} {kind}: {}", stderr(&l));
        assert_eq!(others, want_others, "{rel} {kind}: {}", stderr(&l));
    }
}

/// rustc's ThreadSanitizer instrumentation (`-Zsanitizer=thread`, which
/// turns copies into `__tsan_memcpy` calls) links with lard's runtime in
/// place of the bundled one: a `static mut` race is reported on its line,
/// and a Release/Acquire flag with spawn and join orders what it should.
/// (std's own Mutex, Condvar and channels are not instrumented: not
/// covered here.)
#[test]
fn rustc_instrumentation_runs_on_lards_runtime() {
    let lib = lard_cc_prefix().join("lib");
    let arg = |a: &str| format!("link-arg={a}");
    for (rel, racy) in [
        ("rust-tsan/static_race.rs", true),
        ("rust-tsan/flag_free.rs", false),
    ] {
        let src = root().join("guests").join(rel);
        let stem = Path::new(rel).file_stem().unwrap().to_string_lossy();
        let out = build_dir().join("rust").join(stem.as_ref());
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let mut c = Command::new("rustc");
        c.env("RUSTC_BOOTSTRAP", "1")
            .args(["-O", "-g", "-Zsanitizer=thread", "-Zexternal-clangrt"])
            .args(["-Cunsafe-allow-abi-mismatch=sanitizer"])
            .args(["--target", "x86_64-unknown-linux-gnu"]);
        for a in [
            "-Wl,--whole-archive".to_string(),
            lib.join("liblardcc_dyn.a").display().to_string(),
            lib.join("liblard.a").display().to_string(),
            "-Wl,--no-whole-archive".to_string(),
            lib.join("liblardcc_libc.a").display().to_string(),
            format!(
                "-Wl,--dynamic-list={}",
                lib.join("lardcc-dyn.list").display()
            ),
            "-ldl".to_string(),
        ] {
            c.arg("-C").arg(arg(&a));
        }
        let built = c.arg(&src).arg("-o").arg(&out).output().expect("rustc");
        assert!(built.status.success(), "{rel}: {}", stderr(&built));
        let (l, _, lines) = run_for_race_lines(&out, "rust-tsan");
        let want = if racy {
            marked_lines(rel, "// RACE")
        } else {
            BTreeSet::new()
        };
        assert_eq!(lines, want, "{rel}: {}", stderr(&l));
    }
}

/// The runtime's clocks (guest-sdk/cc/clock.c and its happens-before
/// primitives, core.c) against plain vector clocks under random operations
/// (guests/cc/runtime/clocks_differential.c, several seeds): after every
/// operation the clocks it touched, and the detector's copy of the current
/// thread's clock (ReadVC), read as the plain clocks do. The operations
/// repeat a thread's use of one object, where the runtime skips the joins
/// and copies that cannot change anything, and end threads whose ids later
/// forks reuse.
#[test]
fn runtime_clocks_match_plain_vector_clocks_under_random_operations() {
    let prefix = lard_cc_prefix();
    let dir = build_dir().join("runtime");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("clocks_differential");
    let sdk = root().join("guest-sdk");
    let o = Command::new("gcc")
        .args(["-O1", "-g", "-static", "-I"])
        .arg(sdk.join("cc"))
        .arg("-I")
        .arg(sdk.join("include"))
        .arg(root().join("guests/cc/runtime/clocks_differential.c"))
        .arg(prefix.join("lib/liblardcc.a"))
        .arg(prefix.join("lib/liblard.a"))
        .args(["-pthread", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "gcc: {}", stderr(&o));
    for seed in ["1", "2", "3", "4", "5", "6"] {
        let l = lard_run(&[], &out, &[seed, "4000", "100"]);
        assert_eq!(
            shell_status(&l),
            0,
            "seed {seed}: {}{}",
            stdout(&l),
            stderr(&l)
        );
        let out = stdout(&l);
        assert!(
            out.starts_with("clocks agree: 4000 operations, 100 threads"),
            "seed {seed}: {out}"
        );
        assert!(!out.contains("ids reused 0)"), "seed {seed}: {out}");
    }
}
