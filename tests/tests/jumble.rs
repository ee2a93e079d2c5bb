//! Adversarial memory end to end: `lard run --adversarial` on a lost-update
//! guest, and `lard jumble` on every manifest guest with a `jumble` verdict
//! (ground truth from the guests' design, guests/manifest.toml): the
//! program's verdict, the per-location verdicts the manifest names, and
//! that the baselines (`none`, `sc`) never misbehave.

use lard_e2e::*;
use std::process::Command;

fn checksum_guest() -> std::path::PathBuf {
    build_manifest_guests().join("glibc/jumble_checksum")
}

#[test]
fn oldest_loses_the_update_sc_does_not() {
    let g = checksum_guest();
    for (h, status, out) in [
        ("sc", 0, "checksum ok\n"),
        ("oldest", 1, "checksum FAILED\n"),
    ] {
        // By symbol, and by default (the racy PCs of a first FastTrack pass).
        for at in [Some("checksum"), None] {
            let mut args = vec!["--adversarial", h];
            if let Some(at) = at {
                args.extend(["--adversarial-at", at]);
            }
            let o = lard_run(&args, &g, &[]);
            assert_eq!(shell_status(&o), status, "{h} {at:?}: {}", stderr(&o));
            assert_eq!(stdout(&o), out, "{h} {at:?}");
            let err = stderr(&o);
            assert!(
                err.contains(&format!("== lard adversarial memory ({h}) ==")),
                "{err}"
            );
            if h == "oldest" {
                assert!(!err.contains("stale values returned: 0"), "{err}");
            }
        }
    }
}

#[test]
fn bad_adversarial_options_get_one_line_errors() {
    let g = checksum_guest();
    let o = lard_run(
        &["--adversarial", "oldest", "--adversarial-at", "nosuch"],
        &g,
        &[],
    );
    assert_eq!(shell_status(&o), 1);
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("no symbol `nosuch`"));
    let o = lard_run(&["--adversarial", "newest"], &g, &[]);
    assert_eq!(shell_status(&o), 2);
    let o = lard_run(&["--adversarial-at", "checksum"], &g, &[]);
    assert_eq!(shell_status(&o), 2, "--adversarial-at needs --adversarial");
    let o = Command::new(lard())
        .args(["jumble", "--heuristics", "oldest,bogus", "--"])
        .arg(&g)
        .output()
        .unwrap();
    assert_eq!(shell_status(&o), 2);
}

fn line_of(location: &serde_json::Value) -> i64 {
    location["line"]
        .as_str()
        .and_then(|l| l.rsplit(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(-1)
}

#[test]
fn jumble_verdicts_match_the_manifest() {
    let build = build_manifest_guests();
    let text = std::fs::read_to_string(root().join("guests/manifest.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for g in manifest["guest"].as_array().unwrap() {
        let Some(expected) = g.get("jumble").and_then(|v| v.as_str()) else {
            continue;
        };
        let name = g["name"].as_str().unwrap();
        let lines = |k: &str| -> Vec<i64> {
            g.get(k)
                .and_then(|v| v.as_array())
                .map(|a| a.iter().filter_map(|x| x.as_integer()).collect())
                .unwrap_or_default()
        };
        let args: Vec<String> = g
            .get("jumble_args")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let json = scratch_file(&format!("jumble-{name}"));
        let o = Command::new(lard())
            .args(["jumble", "--runs", "2", "--no-progress", "--report-json"])
            .arg(&json)
            .arg("--")
            .arg(build.join("glibc").join(name))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(shell_status(&o), 0, "{name}: {}", stderr(&o));
        let table = stdout(&o);
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        checked += 1;
        if r["verdict"] != expected {
            failures.push(format!(
                "{name}: verdict {} expected {expected}\n{table}",
                r["verdict"]
            ));
        }
        for base in ["none", "sc"] {
            let c = &r["heuristics"][base];
            if c["runs"].as_u64().unwrap_or(0) == 0 || c["erroneous"] != 0 || c["qos"] != 0 {
                failures.push(format!("{name}: baseline {base} misbehaved: {c}\n{table}"));
            }
        }
        let locations = r["locations"].as_array().unwrap();
        if locations.is_empty() {
            failures.push(format!("{name}: no racy location"));
        }
        for (k, want) in [
            ("jumble_destructive_lines", "destructive"),
            ("jumble_benign_lines", "benign"),
        ] {
            for line in lines(k) {
                match locations.iter().find(|l| line_of(l) == line) {
                    Some(l) if l["verdict"] == want => {}
                    Some(l) => failures.push(format!(
                        "{name}: line {line}: {} expected {want}\n{table}",
                        l["verdict"]
                    )),
                    None => failures.push(format!("{name}: no location at line {line}\n{table}")),
                }
            }
        }
    }
    assert!(checked >= 7, "only {checked} jumble guests in the manifest");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn untracked_code_sees_memory_as_it_is() {
    let g = build_manifest_guests().join("glibc/jumble_untracked_view");
    let o = lard_run(
        &["--adversarial", "oldest", "--adversarial-at", "x"],
        &g,
        &[],
    );
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "tracked read stale: yes\nuntracked read always real: yes\n",
        "{}",
        stderr(&o)
    );
    // Without adversarial memory the Tracked reads see the real value too.
    let o = lard_run(&[], &g, &[]);
    assert_eq!(
        stdout(&o),
        "tracked read stale: no\nuntracked read always real: yes\n"
    );
}

/// `lard jumble --out DIR` keeps its runs as a campaign: DIR has the
/// campaign file and one result per run, a second jumble with the same DIR
/// makes no run and prints the same table, and `lard campaign collect DIR`
/// draws JUMBLE's Figure 9 from the results. Ground truth from the
/// checksum guest's design: plain memory and `sc` never lose the update,
/// `oldest` always does.
#[test]
fn jumble_keeps_its_runs_as_a_campaign_that_collects_into_figure_9() {
    let g = checksum_guest();
    let dir = scratch_file("jumble-campaign");
    let jumble = || {
        Command::new(lard())
            .args([
                "jumble",
                "--runs",
                "3",
                "--no-progress",
                "--heuristics",
                "oldest",
                "--out",
            ])
            .arg(&dir)
            .arg("--")
            .arg(&g)
            .output()
            .unwrap()
    };
    let first = jumble();
    assert_eq!(shell_status(&first), 0, "{}", stderr(&first));
    let results = |d: &std::path::Path| {
        std::fs::read_dir(d)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .map(|e| (e.file_name(), e.metadata().unwrap().modified().unwrap()))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let made = results(&dir);
    // One racy location x (none, sc, oldest) x 3 seeds.
    assert_eq!(made.len(), 9, "{}", stdout(&first));
    assert!(dir.join("campaign.toml").is_file());
    let second = jumble();
    // The same table (the reference run's wall time aside).
    let table = |o: &std::process::Output| {
        stdout(o)
            .lines()
            .filter(|l| !l.starts_with("reference:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(table(&second), table(&first));
    assert_eq!(results(&dir), made, "the second jumble made runs again");
    let c = Command::new(lard())
        .args(["campaign", "collect"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(shell_status(&c), 0, "{}", stderr(&c));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let misbehaved = |conf: &str| {
        summary["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["configuration"] == conf)
            .map(|c| c["misbehaved"].clone())
    };
    assert_eq!(misbehaved("adversarial=none"), Some(0.into()), "{summary}");
    assert_eq!(misbehaved("adversarial=sc"), Some(0.into()), "{summary}");
    assert_eq!(
        misbehaved("adversarial=oldest"),
        Some(3.into()),
        "{summary}"
    );
    let svg = std::fs::read_to_string(dir.join("behaviour.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("adversarial=oldest"));
    let _ = std::fs::remove_dir_all(&dir);
}
