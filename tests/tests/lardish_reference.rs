//! The optimized LARDISH model against its straightforward reference
//! (`Lardish::reference`: every speed-up switched off), on traces recorded
//! from real guests under the real emulator: every report and every
//! statistic (the complete `--hw-stats` JSON: counts, causes, cycles per
//! mechanism, occupancy samples) must be identical, on the RADISH baseline
//! machine and on two small ones (tiny caches, a 4-entry clock table and
//! asynchronous checks; 3 cores with expanded metadata and 32-byte lines)
//! chosen to exercise metadata evictions and epoch rollovers; the small
//! ones also with byte metadata instead of the default type-safe items.
//! Every report of every event also equals the canonical detector's (so
//! the verdict of each access is exact in both granularities, also on the
//! guests that access the same bytes at mixed widths, where type-safe
//! metadata must fall back to bytes).
//!
//! The reference is computed in the same run from the same trace, so the
//! ground truth is the unoptimized model's design, not the output under
//! test. The trace is tied to the run it came from: the statistics the
//! emulator's own (optimized) model printed with `--hw-stats-json` equal
//! the replay's (all those that do not depend on the instruction counts
//! `lard run` adds at exit), and the verdict equals the manifest's.

use lard_detector_hw::event::Event;
use lard_detector_hw::lardish::{CacheGeom, HwConfig, Lardish, MdGranularity};
use lard_detector_hw::trace::read_trace;
use lard_detector_hw::{Canonical, Detector};
use lard_e2e::{build_manifest_guests, lard_run, scratch_file, stderr};

/// Machines: the baseline, and small ones with many evictions.
fn machines() -> Vec<(&'static str, HwConfig)> {
    let tiny = HwConfig {
        l1: CacheGeom {
            size: 1024,
            ways: 2,
            latency: 1,
        },
        l2: CacheGeom {
            size: 4096,
            ways: 4,
            latency: 10,
        },
        l3: CacheGeom {
            size: 16384,
            ways: 4,
            latency: 35,
        },
        ..HwConfig::default()
    };
    let small = [
        HwConfig {
            clock_table_entries: 4,
            async_cores: 2,
            sample_every: 500,
            ..tiny.clone()
        },
        HwConfig {
            cores: 3,
            compact_metadata: false,
            line_bytes: 32,
            ..tiny
        },
    ];
    let byte = |cfg: &HwConfig| HwConfig {
        granularity: MdGranularity::Byte,
        ..cfg.clone()
    };
    vec![
        ("baseline", HwConfig::default()),
        ("tiny, 4-entry clock table, 2 async cores", small[0].clone()),
        (
            "3 cores, expanded metadata, 32-byte lines",
            small[1].clone(),
        ),
        (
            "byte metadata, tiny, 4-entry clock table, 2 async cores",
            byte(&small[0]),
        ),
        (
            "byte metadata, 3 cores, expanded metadata, 32-byte lines",
            byte(&small[1]),
        ),
    ]
}

/// `HwStats` JSON fields that `lard run` changes at exit by adding each
/// thread's retired instructions (the trace does not carry them).
const INSTRUCTION_DEPENDENT: [&str; 8] = [
    "instructions",
    "cycles_no_detection",
    "cycles_lardish",
    "cycles_fasttrack",
    "lardish_cycles_by_mechanism",
    "per_kilo_instruction",
    "sw_check_causes_per_kilo_instruction",
    "hw_check_causes_per_kilo_instruction",
];

fn replay(trace: &[Event], mut d: Lardish, mut reference: Lardish, what: &str) -> Lardish {
    let mut canonical = Canonical::new();
    for (i, e) in trace.iter().enumerate() {
        let report = d.event(e);
        assert_eq!(
            report,
            reference.event(e),
            "{what}: reports differ at event {i}: {e:?}"
        );
        assert_eq!(
            report,
            canonical.event(e),
            "{what}: report differs from the canonical detector's at event {i}: {e:?}"
        );
    }
    assert_eq!(
        d.stats().to_json(),
        reference.stats().to_json(),
        "{what}: statistics differ"
    );
    assert_eq!(d.stats(), reference.stats(), "{what}: statistics differ");
    d
}

/// Records `guest args` under `lard run --detector lardish`, then checks
/// the optimized model against the reference on every machine.
fn check(guest: &str, args: &[&str], expect_racy: bool) {
    check_widths(guest, args, expect_racy, false);
}

/// [`check`]; with `mixed`, the guest accesses bytes at other widths than
/// they were first accessed at, so type-safe metadata must meet
/// granularity conflicts (and byte metadata none).
fn check_widths(guest: &str, args: &[&str], expect_racy: bool, mixed: bool) {
    let bin = build_manifest_guests().join("glibc").join(guest);
    let trace_path = scratch_file(&format!("lardish-ref-{guest}")).with_extension("trace");
    let json_path = scratch_file(&format!("lardish-ref-{guest}"));
    let out = lard_run(
        &[
            "--detector",
            "lardish",
            "--hw-stats-json",
            json_path.to_str().unwrap(),
            "--record-trace",
            trace_path.to_str().unwrap(),
        ],
        &bin,
        args,
    );
    assert!(
        out.status.success(),
        "{guest}: lard run failed: {}",
        stderr(&out)
    );
    let trace = read_trace(std::fs::File::open(&trace_path).expect("trace")).expect("read trace");
    let live: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("hw stats json"))
            .expect("hw stats json parses");
    let _ = std::fs::remove_file(&trace_path);
    let _ = std::fs::remove_file(&json_path);
    assert!(trace.len() > 1000, "{guest}: only {} events", trace.len());
    for (name, cfg) in machines() {
        let what = format!("{guest} on {name}");
        let mut d = replay(
            &trace,
            Lardish::new(cfg.clone()),
            Lardish::reference(cfg.clone()),
            &what,
        );
        let s = d.stats();
        assert_eq!(
            s.racy > 0,
            expect_racy,
            "{what}: verdict is not the manifest's"
        );
        assert_eq!(s.permission_violations, 0, "{what}");
        match cfg.granularity {
            MdGranularity::Byte => assert_eq!(s.granularity_conflicts, 0, "{what}"),
            MdGranularity::TypeSafe if mixed => {
                assert!(
                    s.granularity_conflicts > 0,
                    "{what}: no granularity conflict"
                )
            }
            MdGranularity::TypeSafe => {}
        }
        if name == "baseline" {
            let replayed: serde_json::Value =
                serde_json::from_str(&s.to_json()).expect("replay json parses");
            let (live, replayed) = (live.as_object().unwrap(), replayed.as_object().unwrap());
            for (k, v) in replayed {
                if !INSTRUCTION_DEPENDENT.contains(&k.as_str()) {
                    assert_eq!(live.get(k), Some(v), "{guest}: `{k}` of lard run vs replay");
                }
            }
        }
    }
}

#[test]
fn blackscholes_like() {
    check("blackscholes_like", &[], false);
}

#[test]
fn fluidanimate_like() {
    check("fluidanimate_like", &["2", "2"], false);
}

#[test]
fn streamcluster_like() {
    check("streamcluster_like", &["64", "2"], false);
}

#[test]
fn swaptions_like() {
    check("swaptions_like", &["8", "8"], false);
}

#[test]
fn minivm_jacobi() {
    check("minivm_jacobi", &[], false);
}

#[test]
fn minivm_prodcons_semispace_m_n() {
    check(
        "minivm_prodcons",
        &["--gc=semispace", "--threads=m:n", "--kthreads=2"],
        false,
    );
}

#[test]
fn racy_counter() {
    check("racy_counter", &[], true);
}

#[test]
fn mixed_width_clean() {
    check_widths("mixed_width_clean", &[], false, true);
}

#[test]
fn mixed_width_racy() {
    check_widths("mixed_width_racy", &[], true, true);
}
