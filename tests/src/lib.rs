//! Helpers shared by the end-to-end tests: building guests from `guests/`
//! with the machine's compilers, and running them natively and under `lard`.
//!
//! Nothing is checked in as a binary: every guest is compiled by the test run
//! itself into `target/e2e-guests/`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("repository root")
}

/// Where tests put the guests they build.
pub fn guest_dir() -> PathBuf {
    let d = root().join("target/e2e-guests");
    std::fs::create_dir_all(&d).expect("create target/e2e-guests");
    d
}

/// A fresh scratch file path under `target/e2e-guests/` (unique across the
/// concurrently running tests of one binary and across binaries). The first
/// call of a test binary removes the scratch files of test processes that
/// no longer run, so they do not pile up over many test runs.
pub fn scratch_file(prefix: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    static SWEEP: std::sync::Once = std::sync::Once::new();
    SWEEP.call_once(remove_stale_scratch);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    guest_dir().join(format!("{prefix}-{}-{n}.json", std::process::id()))
}

/// The process id in a [`scratch_file`] name (`PREFIX-PID-N.EXT`, the
/// extension possibly changed by the caller), if `name` has that shape.
fn scratch_pid(name: &str) -> Option<u32> {
    let (stem, _ext) = name.rsplit_once('.')?;
    let mut fields = stem.rsplitn(3, '-');
    let n = fields.next()?;
    let pid = fields.next()?;
    let _prefix = fields.next().filter(|p| !p.is_empty())?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Removes the scratch files and directories whose process has exited.
fn remove_stale_scratch() {
    let Ok(entries) = std::fs::read_dir(guest_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(scratch_pid) else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let path = entry.path();
        // Races with another binary's sweep are harmless: one of them wins.
        let _ = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
    }
}

/// The `lard` binary of this build (built by `cargo test --workspace`, or
/// `cargo build --workspace --bins` as `make test` does first).
pub fn lard() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let bin = profile_dir.join("lard");
    assert!(
        bin.exists(),
        "{} not built: run `cargo build -p lard-emu` (make test does)",
        bin.display()
    );
    bin
}

/// A C library to build guests against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Libc {
    /// glibc, with `gcc -static`.
    Glibc,
    /// musl, with `musl-gcc -static`.
    Musl,
}

impl Libc {
    /// Both.
    pub const ALL: [Libc; 2] = [Libc::Glibc, Libc::Musl];

    fn cc(self) -> &'static str {
        match self {
            Libc::Glibc => "gcc",
            Libc::Musl => "musl-gcc",
        }
    }

    /// Directory name.
    pub fn name(self) -> &'static str {
        match self {
            Libc::Glibc => "glibc",
            Libc::Musl => "musl",
        }
    }
}

static BUILD_LOCK: Mutex<()> = Mutex::new(());

fn run_checked(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn fresh(out: &Path, src: &Path) -> bool {
    match (
        out.metadata().and_then(|m| m.modified()),
        src.metadata().and_then(|m| m.modified()),
    ) {
        (Ok(o), Ok(s)) => o >= s,
        _ => false,
    }
}

/// Runs `compile` (which must write its output to the path it is given) unless
/// `out` is newer than `src`; writes to a temporary name first so a half-built
/// file is never taken for a fresh one.
fn compile_cached(src: &Path, out: &Path, what: &str, compile: impl FnOnce(&Path) -> Command) {
    if !fresh(out, src) {
        let tmp = out.with_file_name(format!(
            ".{}.tmp",
            out.file_name().unwrap().to_string_lossy()
        ));
        run_checked(&mut compile(&tmp), what);
        std::fs::rename(&tmp, out).unwrap();
    }
}

/// Builds the C guest `guests/<rel>` statically against `libc`, with debug
/// info and libm (`-lm`, which links only what the guest calls).
pub fn build_c(rel: &str, libc: Libc) -> PathBuf {
    let _g = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let src = root().join("guests").join(rel);
    let dir = guest_dir().join(libc.name());
    std::fs::create_dir_all(&dir).unwrap();
    let name = Path::new(rel)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let out = dir.join(&name);
    compile_cached(&src, &out, &format!("{} {rel}", libc.cc()), |tmp| {
        let mut c = Command::new(libc.cc());
        c.args(["-static", "-O2", "-g", "-pthread", "-o"])
            .arg(tmp)
            .arg(&src)
            .arg("-lm");
        c
    });
    out
}

/// Builds the C source `guests/<rel>` with gcc as an ordinary dynamically
/// linked executable (or, with `-shared` among `args`, a shared object) named
/// `out` in the `dynamic` build directory: `gcc -O2 -g -pthread ARGS`.
pub fn build_c_dynamic(rel: &str, out: &str, args: &[&str]) -> PathBuf {
    build_c_with("gcc", rel, out, args)
}

/// As [`build_c_dynamic`] with the C compiler `cc` (`clang`, …):
/// `CC -O2 -g -pthread ARGS`.
pub fn build_c_with(cc: &str, rel: &str, out: &str, args: &[&str]) -> PathBuf {
    let _g = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let src = root().join("guests").join(rel);
    let dir = guest_dir().join("dynamic");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(out);
    compile_cached(&src, &out, &format!("{cc} {rel}"), |tmp| {
        let mut c = Command::new(cc);
        c.args(["-O2", "-g", "-pthread"])
            .arg(&src)
            .args(args)
            .arg("-o")
            .arg(tmp);
        c
    });
    out
}

/// Assembles the no-libc demo guest `guests/asm/lard_ops.S` with the SDK's macros.
pub fn build_lard_ops() -> PathBuf {
    build_asm("asm/lard_ops.S")
}

/// Assembles the no-libc guest `guests/<rel>` (a `.S` file; the SDK's
/// macros are on the include path).
pub fn build_asm(rel: &str) -> PathBuf {
    let _g = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let src = root().join("guests").join(rel);
    let name = Path::new(rel)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let out = guest_dir().join(&name);
    compile_cached(&src, &out, &format!("gcc {rel}"), |tmp| {
        let mut c = Command::new("gcc");
        c.args(["-static", "-nostdlib", "-I"])
            .arg(root().join("guest-sdk/include"))
            .arg("-o")
            .arg(tmp)
            .arg(&src);
        c
    });
    out
}

/// Builds a single-file Rust guest `guests/<rel>` as a static executable.
pub fn build_rust(rel: &str) -> PathBuf {
    let _g = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let src = root().join("guests").join(rel);
    let dir = guest_dir().join("rust");
    std::fs::create_dir_all(&dir).unwrap();
    let name = Path::new(rel)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let out = dir.join(&name);
    compile_cached(&src, &out, &format!("rustc {rel}"), |tmp| {
        let mut c = Command::new("rustc");
        c.args(["-O", "-g", "-C", "target-feature=+crt-static", "-o"])
            .arg(tmp)
            .arg(&src);
        c
    });
    out
}

/// Builds the Rust program `guests/<rel>` with plain `rustc -O -g` as a
/// user would (dynamically linked, PIE) into `out` in the `dynamic` build
/// directory.
pub fn build_rust_dynamic(rel: &str, out: &str) -> PathBuf {
    build_rust_dynamic_with(rel, out, &[])
}

/// [`build_rust_dynamic`] with more rustc arguments (`-C codegen-units=16`).
pub fn build_rust_dynamic_with(rel: &str, out: &str, args: &[&str]) -> PathBuf {
    let _g = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let src = root().join("guests").join(rel);
    let dir = guest_dir().join("dynamic");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(out);
    compile_cached(&src, &out, &format!("rustc {rel}"), |tmp| {
        let mut c = Command::new("rustc");
        c.args(["-O", "-g"]).args(args).arg("-o").arg(tmp).arg(&src);
        c
    });
    out
}

/// Builds the SDK and every manifest guest (`make -C guests`) once per test
/// binary; returns the build directory (`<dir>/<libc>/<name>`).
pub fn build_manifest_guests() -> PathBuf {
    static DONE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        let _g = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let build = guest_dir().join("manifest");
        run_checked(
            Command::new("make")
                .arg("-s")
                .arg("-C")
                .arg(root().join("guests"))
                .arg(format!("BUILD={}", build.display())),
            "make -C guests",
        );
        build
    })
    .clone()
}

/// Runs a program natively.
pub fn native(guest: &Path, args: &[&str]) -> Output {
    Command::new(guest)
        .args(args)
        .env("LARD_TEST_VAR", "from-the-test")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", guest.display()))
}

/// Runs `lard <lard_args…> <guest> <args…>`.
pub fn lard_run(lard_args: &[&str], guest: &Path, args: &[&str]) -> Output {
    Command::new(lard())
        .arg("run")
        .args(lard_args)
        .arg(guest)
        .args(args)
        .env("LARD_TEST_VAR", "from-the-test")
        .output()
        .expect("cannot run lard")
}

/// The exit status as a shell shows it: the code, or 128 + signal.
pub fn shell_status(o: &Output) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    o.status
        .code()
        .unwrap_or_else(|| 128 + o.status.signal().unwrap_or(0))
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The rest of the `--stats` line of `stderr` that starts (after its
/// indentation) with `prefix`; panics, showing `stderr`, when there is none.
pub fn stats_line<'a>(stderr: &'a str, prefix: &str) -> &'a str {
    stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in --stats:\n{stderr}"))
}

/// The first number of [`stats_line`]`(stderr, prefix)`.
pub fn stats_number(stderr: &str, prefix: &str) -> u64 {
    let line = stats_line(stderr, prefix);
    line.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no number after {prefix:?} in --stats:\n{stderr}"))
}

/// Asserts that a guest behaves the same natively and under `lard run`.
pub fn assert_parity(guest: &Path, args: &[&str]) -> Output {
    let n = native(guest, args);
    let l = lard_run(&[], guest, args);
    assert_eq!(
        stdout(&l),
        stdout(&n),
        "{}: stdout differs under lard (stderr: {})",
        guest.display(),
        stderr(&l)
    );
    assert_eq!(
        shell_status(&l),
        shell_status(&n),
        "{}: exit status differs; stderr: {}",
        guest.display(),
        stderr(&l)
    );
    l
}

/// Installs the SDK with lard-cc (`make -C guest-sdk install-cc`) once per
/// test binary into `target/e2e-guests/lard-cc/prefix`; returns the prefix
/// (`bin/lard-cc`, `bin/lard-c++`, `lib/…`).
pub fn lard_cc_prefix() -> PathBuf {
    static DONE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        let _g = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let dir = guest_dir().join("lard-cc");
        let prefix = dir.join("prefix");
        run_checked(
            Command::new("make")
                .arg("-s")
                .arg("-C")
                .arg(root().join("guest-sdk"))
                .arg("install-cc")
                .arg(format!("PREFIX={}", prefix.display()))
                .arg(format!("BUILD={}", dir.join("build").display()))
                .env_remove("MAKEFLAGS")
                .env_remove("MFLAGS")
                .env("CC", "gcc"),
            "make -C guest-sdk install-cc",
        );
        prefix
    })
    .clone()
}

/// Builds `guests/<rel>` with the installed `lard-cc` (C) or `lard-c++`
/// (`.cc`), `-g -static` plus `flags`, into `out`; rebuilt when the source
/// or the runtime is newer.
pub fn build_lard_cc(rel: &str, flags: &[&str], out: &Path, env: &[(&str, &str)]) {
    build_lard_cc_linked(rel, flags, out, env, true);
}

/// [`build_lard_cc`], linked `-static` or (`link_static` false) as an
/// ordinary dynamically linked executable (the interposing runtime,
/// docs/lard-cc.md).
pub fn build_lard_cc_linked(
    rel: &str,
    flags: &[&str],
    out: &Path,
    env: &[(&str, &str)],
    link_static: bool,
) {
    let prefix = lard_cc_prefix();
    let src = root().join("guests").join(rel);
    let driver = if rel.ends_with(".cc") {
        "lard-c++"
    } else {
        "lard-cc"
    };
    // The driver (its defaults), any runtime archive (instrumentation and
    // pthreads, OpenMP; static and interposing), the SDK's (the thread
    // identity both share) and the gcc plugin.
    const RUNTIME: [&str; 8] = [
        "bin/lard-cc",
        "lib/liblard.a",
        "lib/liblardcc.a",
        "lib/liblardcc_libc.a",
        "lib/liblardcc_omp.a",
        "lib/liblardcc_dyn.a",
        "lib/liblardcc_omp_dyn.a",
        "lib/lardcc_omp.so",
    ];
    let stale = !fresh(out, &src)
        || RUNTIME.iter().any(|a| {
            let part = prefix.join(a);
            part.exists() && !fresh(out, &part)
        });
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    if stale {
        let _ = std::fs::remove_file(out);
    }
    compile_cached(&src, out, &format!("{driver} {rel}"), |tmp| {
        let mut c = Command::new(prefix.join("bin").join(driver));
        c.arg("-g")
            .args(link_static.then_some("-static"))
            .args(flags)
            .arg(&src)
            .arg("-o")
            .arg(tmp);
        for (k, v) in env {
            c.env(k, v);
        }
        c
    });
}

/// Builds the Rust program `guests/<rel>` with the installed `lard-rustc`
/// (`-O -g`, edition 2021) into `out`; rebuilt when the source or the
/// runtime is newer.
pub fn build_lard_rustc(rel: &str, out: &Path) {
    let prefix = lard_cc_prefix();
    let src = root().join("guests").join(rel);
    let stale = !fresh(out, &src)
        || ["bin/lard-rustc", "lib/liblardcc_dyn.a", "lib/liblard.a"]
            .iter()
            .any(|a| !fresh(out, &prefix.join(a)));
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    if stale {
        let _ = std::fs::remove_file(out);
    }
    compile_cached(&src, out, &format!("lard-rustc {rel}"), |tmp| {
        let mut c = Command::new(prefix.join("bin").join("lard-rustc"));
        c.args(["-O", "-g", "--edition", "2021"])
            .arg(&src)
            .arg("-o")
            .arg(tmp);
        c
    });
}

/// The guest-source line of each PC: the innermost location in `source`
/// along the inline chain.
pub fn source_lines(bin: &Path, source: &str, pcs: &[u64]) -> BTreeSet<i64> {
    let file = Path::new(source)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    // Static-PIE guests (Rust's +crt-static) run at the loader's bias.
    let elf = lard_emu::binary::elf::ElfFile::open(bin).unwrap();
    let bias = if elf.is_pie() {
        lard_emu::linux::loader::PIE_BASE
    } else {
        0
    };
    let stmt_rows = statement_rows(bin, &file);
    let mut set = BTreeSet::new();
    for pc in pcs.iter().map(|pc| pc - bias) {
        // Several line rows at one address (gcc gives the load of
        // `return x;` at a function's entry the rows of `{`, `return x;`
        // and `}`): the last that starts a statement is the access's line,
        // as gdb takes it; binutils' addr2line takes the last row.
        if let Some(&line) = stmt_rows.get(&pc) {
            set.insert(line);
            continue;
        }
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

/// For each address of `bin` with more than one line-table row in `file`,
/// the line of its last row that starts a statement (`is_stmt`), from
/// `objdump --dwarf=decodedline` (rows: file, line, address, [view], [x]).
fn statement_rows(bin: &Path, file: &str) -> std::collections::BTreeMap<u64, i64> {
    let out = Command::new("objdump")
        .arg("--dwarf=decodedline")
        .arg(bin)
        .output()
        .expect("objdump (binutils)");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut rows: std::collections::BTreeMap<u64, Vec<(i64, bool)>> = Default::default();
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() < 3 || w[0] != file {
            continue;
        }
        let (Ok(line), Some(addr)) = (
            w[1].parse::<i64>(),
            w[2].strip_prefix("0x")
                .and_then(|a| u64::from_str_radix(a, 16).ok()),
        ) else {
            continue;
        };
        rows.entry(addr)
            .or_default()
            .push((line, w.last() == Some(&"x")));
    }
    rows.into_iter()
        .filter(|(_, r)| r.len() > 1)
        .filter_map(|(a, r)| r.iter().rev().find(|(_, stmt)| *stmt).map(|&(l, _)| (a, l)))
        .collect()
}

/// The races of a `--report-json` report, one line each: the detector's
/// name and the race's fields `keys` (JSON text), sorted.
pub fn race_fields(json: &str, keys: &[&str]) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut out: Vec<String> = v["detectors"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(d, r)| {
            r["races"].as_array().into_iter().flatten().map(move |r| {
                let fields: Vec<String> = keys.iter().map(|k| r[*k].to_string()).collect();
                format!("{d} {}", fields.join(" "))
            })
        })
        .collect();
    out.sort();
    out
}

/// The `racy_pcs` of a `--report-json` report.
pub fn racy_pcs(json: &str) -> Vec<u64> {
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

/// The data races the race report's summary line counts (`2 data races
/// in 1 location (x)`, or `no data races found in …`: 0).
pub fn summary_races(stderr: &str) -> u64 {
    for line in stderr.lines() {
        if line.starts_with("no data races found in ") {
            return 0;
        }
        let mut words = line.split_whitespace();
        if let (Some(n), Some("data"), Some("race" | "races"), Some("in")) =
            (words.next(), words.next(), words.next(), words.next())
        {
            if let Ok(n) = n.parse() {
                return n;
            }
        }
    }
    panic!("no summary line in lard's stderr:\n{stderr}")
}

/// The racy dynamic accesses (DRE) the canonical detector finds on a trace
/// recorded with `lard run --record-trace` (it must read back whole).
pub fn canonical_dre_of_trace(trace: &Path) -> u64 {
    use lard_detector_hw::{trace::read_trace, Canonical, Detector};
    let events = read_trace(std::fs::File::open(trace).expect("the trace file"))
        .expect("the trace reads back");
    let mut canonical = Canonical::new();
    events
        .iter()
        .filter(|e| canonical.event(e).is_some())
        .count() as u64
}

/// The 1-based line of the first line of `guests/<rel>` that contains
/// `marker` (ground truth written into a guest's source as a comment).
pub fn marker_line(rel: &str, marker: &str) -> usize {
    let text = std::fs::read_to_string(root().join("guests").join(rel))
        .unwrap_or_else(|e| panic!("guests/{rel}: {e}"));
    1 + text
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no `{marker}` in guests/{rel}"))
}

/// The source lines of guest `rel` (under guests/) that contain `mark`.
pub fn marked_lines(rel: &str, mark: &str) -> std::collections::BTreeSet<i64> {
    let text = std::fs::read_to_string(root().join("guests").join(rel)).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(mark))
        .map(|(i, _)| i as i64 + 1)
        .collect()
}

/// The OpenMP guests (guests/cc/openmp/) whose every race is between two
/// units of one kind: loop chunks, sections, explicit tasks, teams.
pub const UNIT_GUESTS: [&str; 4] = [
    "race_omp_for_serial.c",
    "race_omp_sections_serial.c",
    "race_omp_tasks.c",
    "race_omp_teams.c",
];

/// Every race of a run of [`UNIT_GUESTS`]' `file` (its stderr and report
/// JSON) names both units, in the text report and in the JSON (`unit`,
/// `prev_unit`), and they differ: loop chunks by their iterations (the
/// program's `schedule(dynamic, 4)` over 16 iterations), sections by
/// number, tasks by the line of their body's first instruction — the lines
/// marked `task_mark` (plain gcc starts the body with its statement, the
/// `RACE` line; a lard-cc build with the runtime's prologue, which has the
/// construct's line, `TASK`) — teams by number, however few kernel
/// threads ran them.
pub fn assert_units_named(file: &str, task_mark: &str, err: &str, json: &str) {
    type Check<'a> = &'a dyn Fn(&str, &str) -> bool;
    let chunk: Check = &|u, file| {
        ["[0, 4)", "[4, 8)", "[8, 12)", "[12, 16)"]
            .iter()
            .any(|c| u.starts_with(&format!("loop chunk {c} of the loop at ")))
            && u.contains(file)
    };
    let section: Check = &|u, file| {
        (u.starts_with("section 1 of the sections at ")
            || u.starts_with("section 2 of the sections at "))
            && u.contains(file)
    };
    let task_lines = marked_lines(&format!("cc/openmp/{file}"), task_mark);
    let task = |u: &str, file: &str| {
        task_lines
            .iter()
            .any(|l| u.starts_with("task at ") && u.contains(&format!("{file}:{l}, created at ")))
    };
    let team: Check = &|u, file| {
        (0..3).any(|n| u.starts_with(&format!("team {n} of the teams at "))) && u.contains(file)
    };
    let check: Check = match UNIT_GUESTS.iter().position(|g| *g == file) {
        Some(0) => chunk,
        Some(1) => section,
        Some(2) => &task,
        Some(3) => team,
        _ => panic!("{file} is not one of UNIT_GUESTS"),
    };
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let races: Vec<&serde_json::Value> = v["detectors"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|d| d.get("races"))
        .flat_map(|r| r.as_array().unwrap())
        .collect();
    assert!(!races.is_empty(), "{file}: no race: {err}");
    for r in races {
        let (u, p) = (r["unit"].as_str(), r["prev_unit"].as_str());
        let (Some(u), Some(p)) = (u, p) else {
            panic!("{file}: a race without its units: {r}");
        };
        assert!(check(u, file) && check(p, file), "{file}: {u:?} / {p:?}");
        assert_ne!(u, p, "{file}: one unit raced with itself");
        assert!(
            err.contains(&format!(": {u}\n")) && err.contains(&format!(": {p}\n")),
            "{file}: the text report names the units: {err}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::scratch_pid;

    #[test]
    fn scratch_names_give_their_process_id() {
        for (name, pid) in [
            ("binary-report-27573-12.json", Some(27573)),
            ("racy-glibc-3-1-27573-0.json", Some(27573)),
            ("closes-fds-41-7.d", Some(41)),
            ("lardish-ref-minivm_jacobi-9-2.trace", Some(9)),
            ("pigz-29505", None),
            ("debuglink-29505", None),
            ("-5-6.json", None),
            ("report-x-6.json", None),
            ("cross_page.S", None),
            ("racy_counter", None),
        ] {
            assert_eq!(scratch_pid(name), pid, "{name}");
        }
    }
}
