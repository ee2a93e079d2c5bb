//! Drives our FastTrack detector through one check path at a time, so that
//! callgrind can count the instructions each path executes. This is how the
//! shared FastTrack cost of the LARDISH cost models (`docs/lardish.md`,
//! "The FastTrack cost") is measured; `bench/ft_cost.py` runs every scenario
//! under callgrind and derives the constants.
//!
//! ```text
//! cargo build --release -p lard-detector-hw --example ft_cost
//! valgrind --tool=callgrind --toggle-collect='*measured*' \
//!     target/release/examples/ft_cost SCENARIO [ROUNDS]
//! ```
//!
//! Only calls of `measured_access` / `measured_lard` are counted
//! (`--toggle-collect`); the setup that brings each cell into the state the
//! path needs runs through `setup_access` / `setup_lard`. Every measured
//! access is checked to take exactly the intended path
//! ([`FastTrack::last_work`]); the program exits with status 1 otherwise and
//! prints `SCENARIO measured=N` (calls counted) on success. `list` prints the
//! scenario names.

use std::hint::black_box;
use std::process::ExitCode;

use lard_detector_hw::event::{Access, AccessKind, LardOp, Origin};
use lard_detector_hw::{Detector, FastTrack, FtPath, FtWork, Granularity};

const SCENARIOS: [&str; 19] = [
    "read1",
    "read8",
    "read8split",
    "read8typesafe",
    "read_exclusive",
    "read_share",
    "read_shared2",
    "read_shared8",
    "write1",
    "write8",
    "write4split",
    "write_shared2",
    "write_shared8",
    "clear64",
    "clear1024",
    "copy64",
    "copy1024",
    "write_vc",
    "read_vc",
];

const BASE: u64 = 0x10_0000;

fn origin(t: u64) -> Origin {
    Origin {
        kthread: t as u32 + 1,
        lthread: Some(t),
        core: t as u16,
    }
}

fn access(t: u64, addr: u64, size: u32, kind: AccessKind) -> Access {
    Access {
        pc: 0x401000 + t,
        addr,
        size,
        kind,
        tracked: true,
        stack: false,
        origin: origin(t),
    }
}

// The measured and setup functions differ (the counter) so that the
// compiler cannot fold them into one symbol.
#[inline(never)]
fn measured_access(d: &mut FastTrack, a: &Access, n: &mut u64) {
    black_box(d.access(black_box(a)));
    *n += 1;
}

#[inline(never)]
fn setup_access(d: &mut FastTrack, a: &Access) {
    black_box(d.access(black_box(a)));
}

#[inline(never)]
fn measured_lard(d: &mut FastTrack, t: u64, op: &LardOp, n: &mut u64) {
    d.lard(&origin(t), black_box(op));
    *n += 1;
}

#[inline(never)]
fn setup_lard(d: &mut FastTrack, t: u64, op: &LardOp) {
    d.lard(&origin(t), black_box(op));
}

/// Makes every access of thread `b` happen before thread `a`'s later ones.
fn knows(d: &mut FastTrack, a: u64, b: u64) {
    setup_lard(
        d,
        a,
        &LardOp::WriteVc {
            tid: b,
            value: 1 << 40,
        },
    );
}

/// Runs `scenario` for `rounds` rounds; returns the measured calls, or an
/// error naming the first access that took another path.
fn run(scenario: &str, rounds: u64) -> Result<u64, String> {
    let mut d = if scenario.ends_with("typesafe") {
        FastTrack::with_granularity(Granularity::TypeSafe)
    } else {
        FastTrack::new()
    };
    let mut n = 0u64;
    // `cells` bytes' cells on `path`, in `units` shadow cells visited
    // (`entries` read vector clock entries per cell).
    let expect = |d: &FastTrack, path: FtPath, cells: u32, units: u32, entries: u32| {
        let mut w = FtWork::default();
        w.cells[path as usize] = cells;
        w.units[path as usize] = units;
        w.shared_entries = entries * cells;
        w.unit_entries = entries * units;
        if *d.last_work() != w {
            return Err(format!(
                "{scenario}: expected {cells} x {path:?} in {units} cells ({entries} entries \
                 each), got {:?}",
                d.last_work()
            ));
        }
        Ok(())
    };
    use AccessKind::{Read, Write};
    match scenario {
        "read1" | "read8" | "write1" | "write8" => {
            let size = if scenario.ends_with('8') { 8 } else { 1 };
            let (kind, path) = if scenario.starts_with("read") {
                (Read, FtPath::ReadSameEpoch)
            } else {
                (Write, FtPath::Write)
            };
            // A fresh granule: one 8-byte unit, one cell visited.
            let a = access(0, BASE, size, kind);
            setup_access(&mut d, &a);
            for _ in 0..rounds {
                measured_access(&mut d, &a, &mut n);
                expect(&d, path, size, 1, 0)?;
            }
        }
        "read8typesafe" => {
            // Type-safe granularity (the LARDISH default): an aligned
            // 8-byte access is one history unit, its first byte's cell, in
            // a granule split into 1-byte units; a check of the per-access
            // part against read1.
            let a = access(0, BASE + 8, 8, Read);
            setup_access(&mut d, &a);
            for _ in 0..rounds {
                measured_access(&mut d, &a, &mut n);
                expect(&d, FtPath::ReadSameEpoch, 1, 1, 0)?;
            }
        }
        "read8split" | "write4split" => {
            // A granule split into 1-byte units (a 1-byte access first),
            // then accessed wider: one cell visited per byte (a read never
            // merges units; a write merges them only when it covers the
            // whole granule, so the write covers 4 bytes).
            let (kind, path, size) = if scenario.starts_with("read") {
                (Read, FtPath::ReadSameEpoch, 8)
            } else {
                (Write, FtPath::Write, 4)
            };
            setup_access(&mut d, &access(0, BASE, 1, kind));
            let a = access(0, BASE, size, kind);
            setup_access(&mut d, &a);
            for _ in 0..rounds {
                measured_access(&mut d, &a, &mut n);
                expect(&d, path, size, size, 0)?;
            }
        }
        "read_exclusive" => {
            knows(&mut d, 0, 1);
            knows(&mut d, 1, 0);
            setup_access(&mut d, &access(0, BASE, 1, Read));
            for i in 0..rounds {
                measured_access(&mut d, &access((i + 1) % 2, BASE, 1, Read), &mut n);
                expect(&d, FtPath::ReadExclusive, 1, 1, 0)?;
            }
        }
        "read_share" => {
            for i in 0..rounds {
                let x = BASE + i;
                setup_access(&mut d, &access(1, x, 1, Read));
                measured_access(&mut d, &access(2, x, 1, Read), &mut n);
                expect(&d, FtPath::ReadShare, 1, 1, 0)?;
            }
        }
        "read_shared2" | "read_shared8" => {
            let k: u64 = if scenario.ends_with('8') { 8 } else { 2 };
            for t in 1..=k {
                setup_access(&mut d, &access(t, BASE, 1, Read));
            }
            for i in 0..rounds {
                let t = 1 + i % k;
                measured_access(&mut d, &access(t, BASE, 1, Read), &mut n);
                expect(&d, FtPath::ReadShared, 1, 1, t as u32)?;
            }
        }
        "write_shared2" | "write_shared8" => {
            let k: u64 = if scenario.ends_with('8') { 8 } else { 2 };
            for t in 1..=k {
                knows(&mut d, 0, t);
            }
            for i in 0..rounds {
                let x = BASE + i;
                for t in 1..=k {
                    setup_access(&mut d, &access(t, x, 1, Read));
                }
                measured_access(&mut d, &access(0, x, 1, Write), &mut n);
                expect(&d, FtPath::WriteShared, 1, 1, k as u32)?;
            }
        }
        "clear64" | "clear1024" | "copy64" | "copy1024" => {
            let len: u64 = if scenario.ends_with("1024") { 1024 } else { 64 };
            for i in 0..rounds {
                for off in (0..2 * len).step_by(8) {
                    setup_access(&mut d, &access(0, BASE + off, 8, Write));
                }
                let op = if scenario.starts_with("clear") {
                    LardOp::ClearHistory {
                        addr: BASE + (i % 2) * len,
                        len,
                    }
                } else {
                    LardOp::CopyHistory {
                        src: BASE + (i % 2) * len,
                        dst: BASE + ((i + 1) % 2) * len,
                        len,
                    }
                };
                measured_lard(&mut d, 0, &op, &mut n);
            }
        }
        "write_vc" | "read_vc" => {
            for i in 0..rounds {
                let op = if scenario == "write_vc" {
                    LardOp::WriteVc {
                        tid: 1 + i % 4,
                        value: i,
                    }
                } else {
                    LardOp::ReadVc {
                        tid: 1 + i % 4,
                        value: 0,
                    }
                };
                measured_lard(&mut d, 0, &op, &mut n);
            }
        }
        _ => return Err(format!("unknown scenario `{scenario}` (try `list`)")),
    }
    Ok(n)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(scenario) = args.first() else {
        eprintln!("usage: ft_cost SCENARIO|list [ROUNDS]");
        return ExitCode::from(2);
    };
    if scenario == "list" {
        println!("{}", SCENARIOS.join(" "));
        return ExitCode::SUCCESS;
    }
    let rounds = match args.get(1).map(|r| r.parse::<u64>()) {
        None => 2000,
        Some(Ok(r)) if r > 0 => r,
        Some(_) => {
            eprintln!("ft_cost: ROUNDS must be a positive integer");
            return ExitCode::from(2);
        }
    };
    match run(scenario, rounds) {
        Ok(n) => {
            println!("{scenario} measured={n}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ft_cost: {e}");
            ExitCode::from(1)
        }
    }
}
