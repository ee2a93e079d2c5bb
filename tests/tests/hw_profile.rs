//! `lard run --detector lardish --hw-profile FILE`: the LARDISH model's
//! instruction-level profile (docs/lardish.md, "Instruction profile"), on
//! guests/plain/hot_line.c built as users build (gcc's defaults: PIE,
//! dynamic). Ground truth: the run's own `--hw-stats-json` figures for the
//! totals, and the program's design (the line marked HOT makes nearly
//! every checked access) for where the cost goes.

use lard_e2e::*;
use serde_json::Value;

/// The counters a profile row and its totals carry.
const COUNTERS: [&str; 7] = [
    "events",
    "hw_checks",
    "sw_checks",
    "md_evictions",
    "rollovers",
    "history_ops",
    "cycles",
];

fn number(v: &Value, k: &str) -> i64 {
    v[k].as_i64()
        .unwrap_or_else(|| panic!("{k} is not a number in {v}"))
}

#[test]
fn rows_sum_to_the_run_s_figures_and_the_top_row_is_the_hot_line() {
    let g = build_c_dynamic("plain/hot_line.c", "hot_line", &[]);
    let native = std::process::Command::new(&g).output().unwrap();
    let profile = scratch_file("hw-profile");
    let stats = scratch_file("hw-stats");
    let o = lard_run(
        &[
            "--detector",
            "lardish",
            "--hw-profile",
            profile.to_str().unwrap(),
            "--hw-stats-json",
            stats.to_str().unwrap(),
        ],
        &g,
        &[],
    );
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), String::from_utf8_lossy(&native.stdout));
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let t = &p["totals"];
    // The totals are the run's figures.
    for k in [
        "events",
        "hw_checks",
        "sw_checks",
        "md_evictions",
        "rollovers",
    ] {
        assert_eq!(number(t, k), number(&s, k), "{k}");
    }
    assert_eq!(
        number(t, "history_ops"),
        number(&s, "clear_ops") + number(&s, "copy_ops")
    );
    assert_eq!(
        number(t, "cycles"),
        number(&s, "cycles_lardish") - number(&s, "cycles_no_detection")
    );
    assert!(number(t, "cycles") > 0);
    // The rows sum to the totals, cause by cause too.
    let rows = p["instructions"].as_array().unwrap();
    for k in COUNTERS {
        let sum: i64 = rows.iter().map(|r| number(r, k)).sum();
        assert_eq!(sum, number(t, k), "{k}");
    }
    for (cause, n) in t["sw_causes"].as_object().unwrap() {
        let sum: i64 = rows.iter().map(|r| number(&r["sw_causes"], cause)).sum();
        assert_eq!(sum, n.as_i64().unwrap(), "{cause}");
    }
    // Costliest first, and the costliest is the program's hot line.
    assert!(rows
        .windows(2)
        .all(|w| number(&w[0], "cycles") >= number(&w[1], "cycles")));
    let src = std::fs::read_to_string(root().join("guests/plain/hot_line.c")).unwrap();
    let hot = src.lines().position(|l| l.contains("/* HOT */")).unwrap() as i64 + 1;
    let top = &rows[0];
    assert!(
        top["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("hot_line.c")),
        "{top}"
    );
    assert_eq!(top["function"], "work", "{top}");
    assert_eq!(number(top, "line"), hot, "{top}");
}

#[test]
fn a_profile_needs_the_lardish_model() {
    let g = build_c_dynamic("plain/hot_line.c", "hot_line", &[]);
    let profile = scratch_file("hw-profile");
    for opts in [&[][..], &["--detector", "fasttrack"]] {
        let mut args = opts.to_vec();
        args.extend(["--hw-profile", profile.to_str().unwrap()]);
        let o = lard_run(&args, &g, &[]);
        assert_eq!(shell_status(&o), 2, "{opts:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("--hw-profile needs --detector lardish"),
            "{err}"
        );
        assert!(!profile.exists());
    }
}
