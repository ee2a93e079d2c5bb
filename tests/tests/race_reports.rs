//! The race report as a team uses it every day (docs/cli.md): suppressions
//! of races already looked at, in binary mode and in lard-cc builds, and
//! through `lard explore`'s runs; SARIF for CI tools, validated against
//! the SARIF 2.1.0 schema by ajv (both from the npm registry, installed
//! into target/sarif-validator on first use; tests/tools/sarif_validate.js);
//! the HTML report rendered by headless Chromium; the README's example.
//!
//! Ground truth: guests/plain/two_races.c races on two lines, marked
//! `RACE1` (in count(), on `hits`) and `RACE2` (in note(), on `last`).

use lard_e2e::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const GUEST: &str = "plain/two_races.c";

/// The guest as gcc builds it by default (PIE, dynamically linked).
fn plain() -> PathBuf {
    build_c_dynamic(GUEST, "reports_two_races", &[])
}

/// The guest built with lard-cc.
fn lard_cc_build() -> PathBuf {
    let out = guest_dir().join("lard-cc").join("reports_two_races");
    build_lard_cc(GUEST, &["-O1"], &out, &[]);
    out
}

/// Lines marked `/* MARK */` in the guest.
fn marked(mark: &str) -> BTreeSet<i64> {
    marked_lines(GUEST, &format!("/* {mark} */"))
}

/// A scratch file holding `text`.
fn file_with(prefix: &str, text: &str) -> PathBuf {
    let p = scratch_file(prefix).with_extension("supp");
    std::fs::write(&p, text).unwrap();
    p
}

/// `lard run OPTS --report-json J GUEST`: its output and the report.
fn run(opts: &[&str], guest: &Path) -> (Output, serde_json::Value) {
    let json = scratch_file("race-reports");
    let mut all: Vec<&str> = opts.to_vec();
    all.extend(["--report-json", json.to_str().unwrap()]);
    let o = lard_run(&all, guest, &[]);
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no report ({e}):\n{}", stderr(&o)));
    (o, serde_json::from_str(&text).unwrap())
}

/// The guest's lines of both accesses of every reported race.
fn race_lines(json: &serde_json::Value) -> BTreeSet<i64> {
    let mut out = BTreeSet::new();
    for r in json["detectors"]["fasttrack"]["races"].as_array().unwrap() {
        for key in ["frames", "prev_frames"] {
            for f in r[key].as_array().unwrap() {
                if f["file"]
                    .as_str()
                    .is_some_and(|p| p.ends_with("two_races.c"))
                {
                    out.insert(f["line"].as_i64().unwrap());
                    break;
                }
            }
        }
    }
    out
}

/// The number of distinct races the report lists.
fn race_count(json: &serde_json::Value) -> usize {
    json["detectors"]["fasttrack"]["races"]
        .as_array()
        .unwrap()
        .len()
}

/// `N race(s) suppressed by FILE` in the text, as N.
fn suppressed_count(err: &str, file: &Path) -> Option<usize> {
    let tail = format!(" suppressed by {}", file.display());
    err.lines()
        .find_map(|l| l.strip_suffix(&tail))
        .map(|n| n.split_whitespace().next().unwrap().parse().unwrap())
}

/// Suppressing one of two races reports the other and keeps the race exit
/// status; suppressing both exits 0 and says how many were suppressed.
fn one_then_both(guest: &Path) {
    let (o, all) = run(&["--race-exit-code", "66"], guest);
    assert_eq!(shell_status(&o), 66, "{}", stderr(&o));
    let both: BTreeSet<i64> = marked("RACE1").union(&marked("RACE2")).copied().collect();
    assert_eq!(race_lines(&all), both, "{}", stderr(&o));

    let note = file_with(
        "supp-note",
        "# last is written by every worker\nrace:note\n",
    );
    let (o, one) = run(
        &[
            "--race-exit-code",
            "66",
            "--suppressions",
            note.to_str().unwrap(),
        ],
        guest,
    );
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 66, "{err}");
    assert_eq!(race_lines(&one), marked("RACE1"), "{err}");
    let hidden = race_count(&all) - race_count(&one);
    assert!(hidden >= 1);
    assert_eq!(suppressed_count(&err, &note), Some(hidden), "{err}");

    // By function in one file, by the global's name in another.
    let count = file_with("supp-count", "race:^count$\n");
    let last = file_with("supp-last", "race:last\n");
    let (o, none) = run(
        &[
            "--race-exit-code",
            "66",
            "--suppressions",
            count.to_str().unwrap(),
            "--suppressions",
            last.to_str().unwrap(),
        ],
        guest,
    );
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 0, "{err}");
    assert_eq!(race_count(&none), 0, "{err}");
    assert_eq!(none["detectors"]["fasttrack"]["dre"], 0, "{err}");
    assert_eq!(
        suppressed_count(&err, &count).unwrap() + suppressed_count(&err, &last).unwrap(),
        race_count(&all),
        "{err}"
    );
}

#[test]
fn suppressions_hide_the_races_they_name_in_binary_mode() {
    one_then_both(&plain());
}

#[test]
fn suppressions_hide_the_races_they_name_in_a_lard_cc_build() {
    one_then_both(&lard_cc_build());
}

#[test]
fn generated_suppressions_suppress_every_race_they_were_made_for() {
    let g = plain();
    let o = lard_run(&["--gen-suppressions"], &g, &[]);
    let err = stderr(&o);
    let entries: String = err
        .lines()
        .skip_while(|l| !l.contains("--gen-suppressions"))
        .skip(1)
        .take_while(|l| l.starts_with('#') || l.starts_with("race:"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(entries.contains("race:^count$"), "{err}");
    assert!(entries.contains("race:^note$"), "{err}");
    let f = file_with("supp-gen", &entries);
    let (o, json) = run(
        &[
            "--race-exit-code",
            "66",
            "--suppressions",
            f.to_str().unwrap(),
        ],
        &g,
    );
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    assert_eq!(race_count(&json), 0);
}

#[test]
fn a_bad_suppressions_file_is_one_line_naming_file_and_line() {
    let g = plain();
    let bad = file_with("supp-bad", "# ok so far\nrace:count\nrcae:note\n");
    let o = lard_run(&["--suppressions", bad.to_str().unwrap()], &g, &[]);
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("lard: {}:3: ", bad.display())),
        "{err}"
    );
    assert!(stdout(&o).is_empty(), "the guest ran: {}", stdout(&o));

    let missing = guest_dir().join("no-such.supp");
    let o = lard_run(&["--suppressions", missing.to_str().unwrap()], &g, &[]);
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
}

#[test]
fn explore_runs_take_the_suppressions() {
    let g = plain();
    let both = file_with("supp-explore", "race:count\nrace:note\n");
    let explore = |extra: &[&str]| {
        Command::new(lard())
            .args(["explore", "--runs", "2", "--jobs", "1", "--no-progress"])
            .args(extra)
            .arg("--")
            .arg(&g)
            .output()
            .unwrap()
    };
    let o = explore(&[]);
    assert_eq!(
        shell_status(&o),
        1,
        "the races are findings:\n{}",
        stderr(&o)
    );
    let opt = format!("--run-option=--suppressions={}", both.display());
    let o = explore(&[&opt]);
    assert_eq!(shell_status(&o), 0, "{}{}", stdout(&o), stderr(&o));
}

#[test]
fn a_suppressed_race_raises_no_data_race_exception() {
    let count = file_with("supp-exc", "race:count\n");
    let o = lard_run(
        &[
            "--on-race",
            "exception",
            "--suppressions",
            count.to_str().unwrap(),
        ],
        &plain(),
        &[],
    );
    let err = stderr(&o);
    assert_eq!(shell_status(&o), 124, "{err}");
    let stop = err
        .lines()
        .find(|l| l.contains("data-race exception"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(stop.contains("<note"), "{err}");
}

/// The npm prefix with ajv and the SARIF 2.1.0 schema, installed once.
fn sarif_validator() -> PathBuf {
    static DONE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        let dir = root().join("target/sarif-validator");
        let schema =
            dir.join("node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");
        if !schema.exists() || !dir.join("node_modules/ajv/package.json").exists() {
            std::fs::create_dir_all(&dir).unwrap();
            let o = Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--prefix",
                ])
                .arg(&dir)
                .args(["@microsoft/jest-sarif@1.0.0-beta.0", "ajv@6.12.6"])
                .output()
                .expect("npm (Node.js's package manager) is needed to validate SARIF");
            assert!(o.status.success(), "npm install failed:\n{}", stderr(&o));
        }
        dir
    })
    .clone()
}

/// Whether the SARIF 2.1.0 schema accepts `file`, and ajv's words.
fn sarif_valid(file: &Path) -> (bool, String) {
    let o = Command::new("node")
        .arg(root().join("tests/tools/sarif_validate.js"))
        .arg(sarif_validator())
        .arg(file)
        .output()
        .expect("node");
    (o.status.success(), stdout(&o) + &stderr(&o))
}

/// The line of a SARIF location.
fn sarif_line(loc: &serde_json::Value) -> i64 {
    loc["physicalLocation"]["region"]["startLine"]
        .as_i64()
        .unwrap_or_else(|| panic!("no line: {loc}"))
}

/// `--sarif` of a run of `guest`: valid SARIF 2.1.0, one result per race
/// of the JSON report, the racing access as location and the earlier as
/// related location on the racy lines, both stacks as thread flows.
fn sarif_of(guest: &Path) {
    let sarif = scratch_file("race-reports").with_extension("sarif");
    let (o, json) = run(&["--sarif", sarif.to_str().unwrap()], guest);
    let err = stderr(&o);
    let (ok, why) = sarif_valid(&sarif);
    assert!(ok, "{why}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(doc["version"], "2.1.0");
    let run = &doc["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "lard");
    let version = stdout(&Command::new(lard()).arg("--version").output().unwrap());
    assert!(
        version.contains(run["tool"]["driver"]["version"].as_str().unwrap()),
        "{version}"
    );
    assert!(run["invocations"][0]["commandLine"]
        .as_str()
        .unwrap()
        .contains("--sarif"));
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), race_count(&json), "{err}");
    let rules: Vec<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let mut lines = BTreeSet::new();
    for r in results {
        assert!(rules.contains(&r["ruleId"].as_str().unwrap()), "{r}");
        lines.insert(sarif_line(&r["locations"][0]));
        lines.insert(sarif_line(&r["relatedLocations"][0]));
        let flows = r["codeFlows"][0]["threadFlows"].as_array().unwrap();
        assert_eq!(flows.len(), 2, "{r}");
        for (flow, loc) in flows
            .iter()
            .zip([&r["locations"][0], &r["relatedLocations"][0]])
        {
            // Outermost frame first: the innermost, last, is the access.
            let last = flow["locations"].as_array().unwrap().last().unwrap();
            assert_eq!(sarif_line(&last["location"]), sarif_line(loc), "{r}");
        }
    }
    let both: BTreeSet<i64> = marked("RACE1").union(&marked("RACE2")).copied().collect();
    assert_eq!(lines, both, "{err}");
    // The validator does reject what the schema does not allow.
    let mut broken = doc.clone();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    let bad = scratch_file("race-reports-broken").with_extension("sarif");
    std::fs::write(&bad, broken.to_string()).unwrap();
    let (ok, why) = sarif_valid(&bad);
    assert!(!ok, "{why}");
}

#[test]
fn sarif_is_valid_and_carries_both_racy_lines_in_binary_mode() {
    sarif_of(&plain());
}

#[test]
fn sarif_is_valid_and_carries_both_racy_lines_in_a_lard_cc_build() {
    sarif_of(&lard_cc_build());
}

/// The README's example (its first `console` block): each `$`
/// command run in a directory holding the guests it names, its output
/// (stdout, then stderr) exactly the lines the README shows after it, the
/// directory read as the README's `/tmp/demo`.
#[test]
fn the_readme_example_is_what_lard_prints() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block = readme
        .split("```console\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a console block in README.md");
    let dir = scratch_file("readme").with_extension("d");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["racy_sum.c", "mutex_counter.c"] {
        std::fs::copy(root().join("guests/plain").join(name), dir.join(name)).unwrap();
    }
    let path = format!(
        "{}:{}",
        lard().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut commands = 0;
    let mut lines = block.lines().peekable();
    while let Some(line) = lines.next() {
        let cmd = line.strip_prefix("$ ").expect("a command line");
        let mut want = String::new();
        while let Some(l) = lines.next_if(|l| !l.starts_with("$ ")) {
            want += l;
            want.push('\n');
        }
        let o = Command::new("timeout")
            .args(["120", "sh", "-c", cmd])
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .unwrap();
        let got = (stdout(&o) + &stderr(&o)).replace(&dir.display().to_string(), "/tmp/demo");
        assert_eq!(got, want, "README: `{cmd}`");
        commands += 1;
    }
    assert_eq!(commands, 4);
}

/// The DOM headless Chromium renders from `page` (its scripts run).
fn rendered_dom(page: &Path) -> String {
    let profile = scratch_file("chromium-profile").with_extension("d");
    let o = Command::new("timeout")
        .arg("120")
        .arg("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium (Debian's, make prereqs installs it)");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(o.status.success(), "chromium: {}", stderr(&o));
    stdout(&o)
}

/// The text of the `<mark>`ed (racy) source lines of a page.
fn marked_source(dom: &str) -> Vec<String> {
    dom.split("<mark>")
        .skip(1)
        .filter_map(|m| m.split("</mark>").next())
        .map(|m| m.to_string())
        .collect()
}

#[test]
fn the_html_report_renders_every_race_with_its_source_in_chromium() {
    let page = scratch_file("race-reports").with_extension("html");
    let (o, json) = run(&["--report-html", page.to_str().unwrap()], &plain());
    let dom = rendered_dom(&page);
    // The page's script ran: its table of contents lists every race.
    let races = race_count(&json);
    assert!(
        dom.contains(&format!("id=\"toc\" data-races=\"{races}\"")),
        "{dom}"
    );
    assert_eq!(dom.matches("<section class=\"race\"").count(), races);
    assert_eq!(dom.matches("<li><a href=\"#race-").count(), races);
    // Both racy lines, in both accesses' stacks, with their source.
    let marks = marked_source(&dom);
    for mark in ["RACE1", "RACE2"] {
        let line = *marked(mark).first().unwrap();
        assert!(
            marks
                .iter()
                .any(|m| m.trim_start().starts_with(&format!("{line} "))
                    && m.contains(&format!("/* {mark} */"))),
            "{mark}: {marks:?}"
        );
    }
    assert!(dom.contains(&summary_line(&stderr(&o))), "{dom}");
    assert!(dom.contains("<h2>Threads</h2>"), "{dom}");
}

#[test]
fn the_html_report_shows_the_heap_block_and_its_allocation_site() {
    let rel = "binary/racy_heap.c";
    let page = scratch_file("race-reports-heap").with_extension("html");
    let o = lard_run(
        &["--report-html", page.to_str().unwrap()],
        &build_c_dynamic(rel, "reports_racy_heap", &[]),
        &[],
    );
    assert_eq!(shell_status(&o), 0, "{}", stderr(&o));
    let dom = rendered_dom(&page);
    let heap = dom
        .split("<p class=\"heap\">")
        .nth(1)
        .unwrap_or_else(|| panic!("no heap block: {dom}"));
    assert!(heap.starts_with("heap block of 64 bytes"), "{heap}");
    let alloc = *marked_lines(rel, "/* ALLOC */").first().unwrap();
    let site = heap.split("</ol>").next().unwrap();
    assert!(
        marked_source(site)
            .iter()
            .any(|m| m.trim_start().starts_with(&format!("{alloc} "))),
        "{site}"
    );
    let racy = *marked_lines(rel, "/* RACE */").first().unwrap();
    assert!(
        marked_source(&dom)
            .iter()
            .any(|m| m.trim_start().starts_with(&format!("{racy} "))),
        "{dom}"
    );
}

/// The summary sentence of a text report (its last line before the
/// figures).
fn summary_line(err: &str) -> String {
    err.lines()
        .find(|l| l.contains(" data race") || l.starts_with("no data races found"))
        .unwrap_or_else(|| panic!("no summary: {err}"))
        .to_string()
}

/// What the `/* NAME VAR of FUNCTION */` and `/* NAME VAR thread-local */`
/// comments of guest `rel` say a report calls its racy locations: the
/// beginning of the name, and its end (`declared at DIR/FILE:LINE`, the
/// line of the comment, which is the declaration's).
fn named_locations(rel: &str) -> Vec<(String, String)> {
    let src = std::fs::read_to_string(root().join("guests").join(rel)).unwrap();
    let file = Path::new(rel).file_name().unwrap().to_string_lossy();
    src.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let name = l.split_once("/* NAME ")?.1.split_once(" */")?.0;
            let start = match name.split_once(" of ") {
                Some((var, function)) => format!("{var}, local variable of {function} "),
                None => {
                    let var = name.strip_suffix(" thread-local").unwrap();
                    format!("{var}, thread-local variable of kernel thread ")
                }
            };
            Some((start, format!("/{}:{}", file, i + 1)))
        })
        .collect()
}

/// The `data` of every race the JSON report lists.
fn race_data(json: &serde_json::Value) -> Vec<String> {
    json["detectors"]["fasttrack"]["races"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["data"].as_str().unwrap().to_string())
        .collect()
}

/// Each NAME comment of `rel` names a race of `guest`'s report, and no
/// race is on a bare `[stack]`.
fn names_its_locals(rel: &str, guest: &Path) {
    let want = named_locations(rel);
    assert!(!want.is_empty());
    let (o, json) = run(&[], guest);
    let data = race_data(&json);
    for (start, end) in &want {
        assert!(
            data.iter().any(|d| d.starts_with(start.as_str())
                && d.contains(" declared at ")
                && d.ends_with(end.as_str())),
            "no race on `{start}…{end}` in {data:?}\n{}",
            stderr(&o)
        );
    }
    assert!(!data.iter().any(|d| d == "[stack]"), "{data:?}");
}

/// A race on a local variable (an array element, a structure's member, an
/// OpenMP program's shared local) or a thread-local one is reported on the
/// variable — name, function, declaration — in binary mode at -O2 and -O0,
/// with gcc and clang, and in lard-cc builds.
#[test]
fn races_on_local_and_thread_local_variables_name_the_variables() {
    let rel = "plain/races_on_locals.c";
    names_its_locals(rel, &build_c_dynamic(rel, "reports_locals", &[]));
    names_its_locals(rel, &build_c_dynamic(rel, "reports_locals_O0", &["-O0"]));
    names_its_locals(
        rel,
        &build_c_with("clang", rel, "reports_locals_clang", &[]),
    );
    let out = guest_dir().join("lard-cc").join("reports_locals");
    build_lard_cc(rel, &["-O1"], &out, &[]);
    names_its_locals(rel, &out);

    let omp = "cc/openmp/race_omp_sum.c";
    names_its_locals(omp, &build_c_dynamic(omp, "reports_omp_sum", &["-fopenmp"]));
    let out = guest_dir().join("lard-cc").join("reports_omp_sum");
    build_lard_cc(omp, &["-O1", "-fopenmp"], &out, &[]);
    names_its_locals(omp, &out);
}
