//! `lard run --sched pct` and `lard explore` end to end, on guests whose
//! bugs need a particular interleaving (guests/explore/, ground truth in
//! their header comments): an atomicity violation that crashes
//! (lazy_init.c), a lost wake-up that deadlocks (lost_wakeup.c) and a race
//! on a path that runs only under a preemption (busy_path.c).

use lard_e2e::*;
use std::path::PathBuf;

fn guest(name: &str) -> PathBuf {
    build_c(&format!("explore/{name}.c"), Libc::Glibc)
}

/// Each guest, the output of a run that misses its bug.
const GUESTS: [(&str, &str); 3] = [
    ("lazy_init", "sum=9920\n"),
    ("lost_wakeup", "value=42\n"),
    ("busy_path", "total=2000\n"),
];

#[test]
fn the_default_schedule_misses_every_bug() {
    for (name, out) in GUESTS {
        let g = guest(name);
        let o = lard_run(&["--stats"], &g, &[]);
        assert_eq!(shell_status(&o), 0, "{name}: {}", stderr(&o));
        assert_eq!(stdout(&o), out, "{name}");
        let err = stderr(&o);
        // Two workers compete: the run has scheduling steps.
        assert!(stats_number(&err, "scheduling steps") > 0, "{name}: {err}");
        if name != "lazy_init" {
            assert!(
                err.contains("racy dynamic accesses (DRE): 0,"),
                "{name}: {err}"
            );
        }
    }
}

#[test]
fn a_single_thread_takes_no_scheduling_steps() {
    let g = build_c("plain/hello.c", Libc::Glibc);
    for sched in ["rr", "pct"] {
        let o = lard_run(&["--stats", "--sched", sched], &g, &[]);
        assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
        assert_eq!(stats_number(&stderr(&o), "scheduling steps"), 0);
    }
}

#[test]
fn pct_options_need_the_pct_scheduler() {
    let g = build_c("plain/hello.c", Libc::Glibc);
    for opts in [
        &["--pct-depth", "2"][..],
        &["--sched", "random", "--pct-steps", "10"],
    ] {
        let o = lard_run(opts, &g, &[]);
        assert_eq!(shell_status(&o), 2, "{opts:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    let o = lard_run(&["--sched", "pct", "--pct-depth", "0"], &g, &[]);
    assert_eq!(shell_status(&o), 2);
}

/// `lard run --sched pct` with seeds 1..=N: the seeds whose run ended
/// with `status`.
fn pct_seeds(name: &str, depth: u32, steps: u64, runs: u64, status: i32) -> Vec<u64> {
    let g = guest(name);
    (1..=runs)
        .filter(|s| {
            let (d, k, s) = (depth.to_string(), steps.to_string(), s.to_string());
            let args = [
                "--detector",
                "none",
                "--sched",
                "pct",
                "--pct-depth",
                &d,
                "--pct-steps",
                &k,
                "--quantum",
                "20",
                "--seed",
                &s,
            ];
            shell_status(&lard_run(&args, &g, &[])) == status
        })
        .collect()
}

#[test]
fn pct_schedules_crash_the_lazy_initialisation_and_replay() {
    let hits = pct_seeds("lazy_init", 2, 1000, 40, 139);
    assert!(!hits.is_empty(), "no PCT schedule of 40 crashed");
    assert!(hits.len() < 40, "every PCT schedule crashed");
    // The same seed is the same schedule.
    assert_eq!(pct_seeds("lazy_init", 2, 1000, 40, 139), hits);
}

/// `lard explore OPTS -- GUEST` with a JSON report: the process output and
/// the parsed report.
fn explore(opts: &[&str], g: &std::path::Path) -> (std::process::Output, serde_json::Value) {
    let json = scratch_file("explore.json");
    let o = std::process::Command::new(lard())
        .arg("explore")
        .args(opts)
        .arg("--report-json")
        .arg(&json)
        .arg("--")
        .arg(g)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_default();
    let _ = std::fs::remove_file(&json);
    let v = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    (o, v)
}

/// The findings of `kind` in an explore report.
fn findings<'a>(v: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    v["findings"]
        .as_array()
        .map(|a| a.iter().filter(|f| f["kind"] == kind).collect())
        .unwrap_or_default()
}

/// Runs a finding's replay command (printed for a shell) and returns its
/// output.
fn replay(f: &serde_json::Value) -> std::process::Output {
    let cmd = f["command"].as_str().unwrap();
    std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .output()
        .unwrap()
}

#[test]
fn explore_finds_the_crash_and_its_command_replays_it() {
    let g = guest("lazy_init");
    let (o, v) = explore(&["--runs", "40", "--jobs", "2"], &g);
    assert_eq!(shell_status(&o), 1, "{}", stderr(&o));
    let crashes = findings(&v, "crash");
    assert_eq!(crashes.len(), 1, "{v}");
    // The design's crash: a null `table` dereferenced in `worker`.
    assert!(
        crashes[0]["detail"].as_str().unwrap().contains("<worker+"),
        "{v}"
    );
    let r = replay(crashes[0]);
    assert_eq!(shell_status(&r), 139, "{}", stderr(&r));
    // The first run is the default schedule, which misses the bug.
    assert_eq!(v["first_run"]["exit"], 0);
    assert_eq!(v["completed"], 40);
    let text = stdout(&o);
    assert!(text.contains("replay: "), "{text}");
}

#[test]
fn explore_finds_the_lost_wakeup_deadlock() {
    let g = guest("lost_wakeup");
    let (o, v) = explore(&["--runs", "80"], &g);
    assert_eq!(shell_status(&o), 1, "{}", stderr(&o));
    let d = findings(&v, "deadlock");
    assert!(!d.is_empty(), "{v}");
    let r = replay(d[0]);
    assert_eq!(shell_status(&r), 122, "{}", stderr(&r));
}

#[test]
fn explore_finds_the_race_on_the_busy_path_only_with_its_lines() {
    let g = guest("busy_path");
    let (o, v) = explore(&["--runs", "40", "--random"], &g);
    assert_eq!(shell_status(&o), 1, "{}", stderr(&o));
    assert_eq!(v["strategy"], "random");
    let races = findings(&v, "race");
    assert!(!races.is_empty(), "{v}");
    let read = marker_line("explore/busy_path.c", "busy path: unlocked read");
    let write = marker_line("explore/busy_path.c", "written under the lock");
    for r in &races {
        let d = r["detail"].as_str().unwrap();
        assert!(d.contains(&format!("busy_path.c:{read}")), "{d}");
        assert!(d.contains(&format!("busy_path.c:{write}")), "{d}");
    }
    let r = replay(races[0]);
    assert_eq!(shell_status(&r), 0);
    let e = stderr(&r);
    assert!(summary_races(&e) > 0, "{e}");
}

#[test]
fn until_first_stops_at_the_first_finding() {
    let g = guest("lazy_init");
    let (o, v) = explore(&["--runs", "400", "--jobs", "1", "--until", "first"], &g);
    assert_eq!(shell_status(&o), 1, "{}", stderr(&o));
    let first = v["first_finding"].as_u64().unwrap();
    assert_eq!(v["completed"].as_u64().unwrap(), first, "{v}");
    assert!(first < 400);
}

#[test]
fn a_correct_program_explores_clean() {
    let g = build_c("plain/mutex_counter.c", Libc::Glibc);
    let (o, v) = explore(&["--runs", "20"], &g);
    assert_eq!(shell_status(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert_eq!(v["clean"], 20, "{v}");
    assert!(v["findings"].as_array().unwrap().is_empty());
}

#[test]
fn explore_of_a_missing_program_is_one_line_and_127() {
    let o = std::process::Command::new(lard())
        .args(["explore", "--runs", "2", "--", "/nonexistent/prog"])
        .output()
        .unwrap();
    assert_eq!(shell_status(&o), 127, "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}

#[test]
fn an_interrupted_exploration_reports_what_it_found() {
    let g = guest("lazy_init");
    let json = scratch_file("explore-int.json");
    let child = std::process::Command::new(lard())
        .args([
            "explore",
            "--runs",
            "100000",
            "--jobs",
            "2",
            "--report-json",
        ])
        .arg(&json)
        .arg("--")
        .arg(&g)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    // SAFETY: kill(2) on a child this test started and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(shell_status(&o), 130, "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    assert_eq!(v["interrupted"], true);
    let done = v["completed"].as_u64().unwrap();
    assert!(done > 0 && done < 100000, "{v}");
    // Four seconds of PCT schedules crash the lazy initialisation.
    assert!(!findings(&v, "crash").is_empty(), "{v}");
}

#[test]
fn run_options_reach_every_run_and_its_replay() {
    let g = guest("busy_path");
    let (o, v) = explore(
        &[
            "--runs",
            "30",
            "--run-option=--detector",
            "--run-option=lardish",
        ],
        &g,
    );
    assert_eq!(shell_status(&o), 1, "{}", stderr(&o));
    assert!(
        v["first_run"]["command"]
            .as_str()
            .unwrap()
            .contains(" --detector lardish "),
        "{v}"
    );
    let races = findings(&v, "race");
    assert!(!races.is_empty(), "{v}");
    let r = replay(races[0]);
    // The replay is a LARDISH run that finds the race again.
    let e = stderr(&r);
    assert!(e.contains("== lard races (lardish) =="), "{e}");
    assert!(summary_races(&e) > 0, "{e}");
    // Options explore sets itself are refused in one line.
    let bad = std::process::Command::new(lard())
        .args(["explore", "--run-option=--seed", "--run-option=3", "--"])
        .arg(&g)
        .output()
        .unwrap();
    assert_eq!(shell_status(&bad), 2);
    assert_eq!(stderr(&bad).lines().count(), 1, "{}", stderr(&bad));
}

/// The report lines a schedule decides: exit status, output, scheduling
/// steps and the race summary.
fn schedule_outcome(g: &std::path::Path, seed: u64, padding: usize) -> String {
    let seed = seed.to_string();
    let o = std::process::Command::new(lard())
        .args(["run", "--stats", "--sched", "pct", "--pct-depth", "2"])
        .args(["--pct-steps", "1500", "--quantum", "20", "--seed", &seed])
        .arg(g)
        .env("LARD_TEST_PADDING", "x".repeat(padding))
        .output()
        .unwrap();
    let e = stderr(&o);
    let dre = e.lines().find(|l| l.starts_with("racy dynamic accesses"));
    format!(
        "{} {:?} steps={} {dre:?}",
        shell_status(&o),
        stdout(&o),
        stats_number(&e, "scheduling steps")
    )
}

#[test]
fn a_schedule_does_not_depend_on_the_environment() {
    // The environment's length changes how many blocks the start-up runs
    // alone; the interleaving of the workers must not change with it (a
    // replay command run from another shell gives the same schedule).
    let static_ = guest("busy_path");
    let pie = build_c_dynamic("explore/busy_path.c", "busy_path_pie", &[]);
    for g in [static_, pie] {
        for seed in 1..=4 {
            let first = schedule_outcome(&g, seed, 0);
            for padding in [1, 7, 33, 100] {
                assert_eq!(
                    schedule_outcome(&g, seed, padding),
                    first,
                    "{} seed {seed}, {padding} bytes more environment",
                    g.display()
                );
            }
        }
    }
}

#[test]
fn races_of_the_first_run_are_findings_with_their_replay_command() {
    // Three racy PC pairs, in every schedule (guests/plain/gdb_two_races.c:
    // no synchronization orders the two workers' updates).
    let g = build_c_with("gcc", "plain/gdb_two_races.c", "two_races", &["-O0"]);
    let (o, v) = explore(&["--runs", "4"], &g);
    assert_eq!(shell_status(&o), 1, "{}", stderr(&o));
    let races = findings(&v, "race");
    assert_eq!(races.len(), 3, "{v}");
    let first_command = v["first_run"]["command"].as_str().unwrap();
    for r in &races {
        assert_eq!(r["run"], 0, "{v}");
        assert_eq!(r["runs"], 5, "seen in the first run and the 4 others: {v}");
        assert_eq!(r["command"], first_command, "{v}");
    }
    assert_eq!(v["races"], 3, "{v}");
    let text = stdout(&o);
    assert!(
        text.contains("finding 1: race in the first run, 5 run(s)"),
        "{text}"
    );
    assert!(
        text.contains("races: 3 distinct racy PC pair(s) in all runs, 3 in the first run"),
        "{text}"
    );
    assert!(text.contains("first finding in the first run;"), "{text}");
    // The replay command reproduces them.
    let r = replay(races[0]);
    assert_eq!(shell_status(&r), 0, "{}", stderr(&r));
    assert!(stderr(&r).contains("race 3:"), "{}", stderr(&r));
}

#[test]
fn a_run_option_lard_rejects_is_refused_before_any_run() {
    let g = guest("busy_path");
    for (word, named) in [
        ("--run-option=--detecter", "'--detecter'"),
        ("--run-option=--on-race=sometimes", "'sometimes'"),
        ("--run-option=--detectors=nope", "'nope'"),
    ] {
        let o = std::process::Command::new(lard())
            .args(["explore", "--runs", "2", word, "--"])
            .arg(&g)
            .output()
            .unwrap();
        assert_eq!(shell_status(&o), 2, "{word}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(
            e.starts_with("lard: --run-option: ") && e.contains(named),
            "{e}"
        );
        assert_eq!(stdout(&o), "", "a run was made");
    }
    // Options that pass on their own but that lard run refuses together
    // when it starts: the first run says why.
    let o = std::process::Command::new(lard())
        .args([
            "explore",
            "--runs",
            "2",
            "--run-option=--adversarial=sc",
            "--run-option=--observe=all",
            "--",
        ])
        .arg(&g)
        .output()
        .unwrap();
    assert_eq!(shell_status(&o), 2, "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("the first run failed (exit status 2): --adversarial needs Tracked observation"),
        "{e}"
    );
}
