//! Every guest in guests/manifest.toml, built from source, runs natively and
//! under `lard run`, with the manifest's output and exit status, and the LARD
//! detector's verdict is exactly the manifest's: race-free, or races reported
//! on exactly the source lines the guest's design marks `RACE` (mapped from
//! the racy PCs with binutils' `addr2line -i`, an independent DWARF reader).
//! Canonical and LARDISH must give the same verdicts as FastTrack.

use lard_e2e::*;
use lard_emu::cmd::manifest::GuestRun;

/// The manifest's runs (guest × libc × configuration), read by the same
/// parser `lard accuracy` uses; the checks below do not use lard's DWARF code.
fn runs() -> Vec<GuestRun> {
    let build = build_manifest_guests();
    lard_emu::cmd::manifest::read(&root().join("guests/manifest.toml"), &build)
        .expect("manifest reads")
}

fn verdict(r: &GuestRun, detector: &str) -> (String, Vec<u64>) {
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
        r.label,
        stderr(&l)
    );
    assert_eq!(
        shell_status(&l),
        r.exit,
        "{} ({detector}): status; stderr: {}",
        r.label,
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
        assert_eq!(stdout(&n), r.stdout, "{}: native stdout", r.label);
        assert_eq!(shell_status(&n), r.exit, "{}: native status", r.label);
        let (_, pcs) = verdict(r, "fasttrack");
        let got = source_lines(&r.bin, &r.source, &pcs);
        if let Err(e) = r.check_lines(&got) {
            panic!("{}: {e}", r.label);
        }
    }
}

#[test]
fn canonical_and_lardish_agree_with_fasttrack_on_every_guest() {
    for r in runs().iter().filter(|r| r.label.starts_with("glibc/")) {
        let (_, ft) = verdict(r, "fasttrack");
        for d in ["canonical", "lardish"] {
            let (_, other) = verdict(r, d);
            assert_eq!(other, ft, "{}: {d} disagrees with fasttrack", r.label);
        }
    }
}
