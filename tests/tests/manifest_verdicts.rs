//! Every guest in guests/manifest.toml, built from source, runs natively and
//! under `lard run`, with the manifest's output and exit status, and the LARD
//! detector's verdict is exactly the manifest's: race-free, or races reported
//! on exactly the source lines the guest's design marks `RACE` (mapped from
//! the racy PCs with binutils' `addr2line -i`, an independent DWARF reader).
//! Canonical and LARDISH must give the same verdicts as FastTrack.

use lard_e2e::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use toml::Value;

struct Run {
    name: String,
    bin: std::path::PathBuf,
    source: String,
    args: Vec<String>,
    expect: String,
    race_lines: BTreeSet<i64>,
    any: bool,
    always: BTreeSet<i64>,
    stdout: String,
    exit: i32,
}

fn lines(v: Option<&Value>) -> BTreeSet<i64> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_integer).collect())
        .unwrap_or_default()
}

fn runs() -> Vec<Run> {
    let build = build_manifest_guests();
    let text = std::fs::read_to_string(root().join("guests/manifest.toml")).unwrap();
    let doc: Value = toml::from_str(&text).expect("manifest parses");
    let mut out = Vec::new();
    for g in doc["guest"].as_array().expect("[[guest]] tables") {
        let name = g["name"].as_str().unwrap().to_string();
        let libcs: Vec<&str> = g["libc"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let default = [Value::Table(toml::map::Map::new())];
        let configs = g
            .get("configs")
            .and_then(Value::as_array)
            .map_or(&default[..], |c| &c[..]);
        for libc in &libcs {
            for c in configs {
                let field = |k: &str| c.get(k).or_else(|| g.get(k));
                out.push(Run {
                    name: format!(
                        "{libc}/{name} {}",
                        c.get("id").and_then(Value::as_str).unwrap_or("")
                    ),
                    bin: build.join(libc).join(&name),
                    source: g["source"].as_str().unwrap().to_string(),
                    args: c
                        .get("args")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default(),
                    expect: field("expect").and_then(Value::as_str).unwrap().to_string(),
                    race_lines: lines(field("race_lines")),
                    any: field("race_lines_any")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    always: lines(field("race_lines_always")),
                    stdout: field("stdout").and_then(Value::as_str).unwrap().to_string(),
                    exit: field("exit").and_then(Value::as_integer).unwrap_or(0) as i32,
                });
            }
        }
    }
    out
}

/// The guest-source line of each PC: the innermost location in `source`
/// along the inline chain.
fn source_lines(bin: &Path, source: &str, pcs: &[u64]) -> BTreeSet<i64> {
    let file = Path::new(source)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    // Static-PIE guests (Rust's +crt-static) run at the loader's bias.
    let elf = lard_emu::elf::ElfFile::open(bin).unwrap();
    let bias = if elf.is_pie() {
        lard_emu::loader::PIE_BASE
    } else {
        0
    };
    let mut set = BTreeSet::new();
    for pc in pcs.iter().map(|pc| pc - bias) {
        let out = Command::new("addr2line")
            .arg("-i")
            .arg("-e")
            .arg(bin)
            .arg(format!("{pc:#x}"))
            .output()
            .expect("addr2line (binutils)");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| {
                l.split(':')
                    .next()
                    .is_some_and(|f| f.ends_with(&format!("/{file}")) || f == file)
            })
            .and_then(|l| l.rsplit(':').next())
            .and_then(|n| n.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{pc:#x} in {}: no line in {file}: {text}", bin.display()));
        set.insert(line);
    }
    set
}

fn racy_pcs(json: &str) -> Vec<u64> {
    let list = json
        .split("\"racy_pcs\":[")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap();
    list.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

fn verdict(r: &Run, detector: &str) -> (String, Vec<u64>) {
    let json = scratch_file(&format!("report-{detector}"));
    let j = json.to_string_lossy().to_string();
    let args: Vec<&str> = r.args.iter().map(String::as_str).collect();
    let l = lard_run(
        &["--detector", detector, "--report-json", &j],
        &r.bin,
        &args,
    );
    assert_eq!(
        stdout(&l),
        r.stdout,
        "{} ({detector}): stdout; stderr: {}",
        r.name,
        stderr(&l)
    );
    assert_eq!(
        shell_status(&l),
        r.exit,
        "{} ({detector}): status; stderr: {}",
        r.name,
        stderr(&l)
    );
    let text = std::fs::read_to_string(&json).unwrap();
    std::fs::remove_file(&json).unwrap();
    (text.clone(), racy_pcs(&text))
}

#[test]
fn every_manifest_guest_matches_its_ground_truth() {
    let runs = runs();
    assert!(runs.len() >= 20, "manifest too small: {}", runs.len());
    for r in &runs {
        let args: Vec<&str> = r.args.iter().map(String::as_str).collect();
        let n = native(&r.bin, &args);
        assert_eq!(stdout(&n), r.stdout, "{}: native stdout", r.name);
        assert_eq!(shell_status(&n), r.exit, "{}: native status", r.name);
        let (_, pcs) = verdict(r, "fasttrack");
        let got = source_lines(&r.bin, &r.source, &pcs);
        if r.expect == "race-free" {
            assert!(got.is_empty(), "{}: false races on lines {got:?}", r.name);
        } else if r.any {
            assert!(
                !got.is_empty() && got.is_subset(&r.race_lines),
                "{}: lines {got:?} vs {:?}",
                r.name,
                r.race_lines
            );
            assert!(
                r.always.is_subset(&got),
                "{}: lines {got:?} miss {:?}",
                r.name,
                r.always
            );
        } else {
            assert_eq!(got, r.race_lines, "{}: racy lines", r.name);
        }
    }
}

#[test]
fn canonical_and_lardish_agree_with_fasttrack_on_every_guest() {
    for r in runs().iter().filter(|r| r.name.starts_with("glibc/")) {
        let (_, ft) = verdict(r, "fasttrack");
        for d in ["canonical", "lardish"] {
            let (_, other) = verdict(r, d);
            assert_eq!(other, ft, "{}: {d} disagrees with fasttrack", r.name);
        }
    }
}
