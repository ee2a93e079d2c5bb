//! The installed C guest SDK, as an outside program sees it:
//! `make -C guest-sdk install` must produce a header, a library and `lard.pc`
//! that `guests/sdk-consumer/consumer.c` builds against with nothing but
//! `pkg-config --cflags --libs lard` (+ `-static`), with gcc, clang and
//! musl-gcc (against a musl build of the SDK) and as C++ with g++ and
//! clang++; the program must behave as natively under `lard run`, race-free,
//! and its `-DRACY` twin must be flagged.  Also runs the SDK's own header
//! check (`make -C guest-sdk check`: C99 and C++ compile tests, encodings).
//!
//! Everything is built under `target/sdk-install/`.

use lard_e2e::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// consumer.c's output, natively and under `lard run`, with or without RACY.
const EXPECTED: &str = "thread 0: sum = 32640\n\
                        thread 1: sum = 65280\n\
                        thread 2: sum = 97920\n\
                        thread 3: sum = 130560\n\
                        total = 326400 (main is language thread 0)\n";

/// Where this test file builds and installs.
fn work() -> PathBuf {
    let d = root().join("target/sdk-install");
    std::fs::create_dir_all(&d).expect("create target/sdk-install");
    d
}

fn check_output(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        stdout(out),
        stderr(out)
    );
}

fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    check_output(&out, what);
    out
}

/// `make -C guest-sdk <args>`, insulated from an enclosing `make test`
/// (jobserver, flags) and from the caller's install/compile variables.
fn sdk_make(args: &[String]) -> Output {
    let mut cmd = Command::new("make");
    cmd.arg("-s")
        .arg("-C")
        .arg(root().join("guest-sdk"))
        .args(args);
    for v in [
        "MAKEFLAGS",
        "MFLAGS",
        "MAKELEVEL",
        "MAKEOVERRIDES",
        "DESTDIR",
        "CFLAGS",
        "CPPFLAGS",
        "LDFLAGS",
    ] {
        cmd.env_remove(v);
    }
    run(&mut cmd, &format!("make -C guest-sdk {}", args.join(" ")))
}

/// An SDK build to install: the library compiled with gcc (glibc) or
/// musl-gcc (musl); the header is the same.
#[derive(Clone, Copy, Debug)]
enum Sdk {
    Glibc,
    Musl,
}

/// Runs `make -C guest-sdk install` for `sdk` once per test binary into a
/// fresh prefix; returns the prefix.
fn install(sdk: Sdk) -> &'static Path {
    static GLIBC: OnceLock<PathBuf> = OnceLock::new();
    static MUSL: OnceLock<PathBuf> = OnceLock::new();
    let (cell, name, cc) = match sdk {
        Sdk::Glibc => (&GLIBC, "glibc", "gcc"),
        Sdk::Musl => (&MUSL, "musl", "musl-gcc"),
    };
    cell.get_or_init(|| {
        let prefix = work().join(name).join("prefix");
        let build = work().join(name).join("build");
        if prefix.exists() {
            std::fs::remove_dir_all(&prefix).expect("remove the old prefix");
        }
        sdk_make(&[
            "install".into(),
            format!("PREFIX={}", prefix.display()),
            format!("BUILD={}", build.display()),
            format!("CC={cc}"),
        ]);
        prefix
    })
}

/// `pkg-config <args> lard` against the installation at `prefix` only.
fn pkg_config(prefix: &Path, args: &[&str]) -> String {
    let out = run(
        Command::new("pkg-config")
            .args(args)
            .arg("lard")
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
            .env_remove("PKG_CONFIG_SYSROOT_DIR")
            .env_remove("PKG_CONFIG_ALLOW_SYSTEM_CFLAGS")
            .env_remove("PKG_CONFIG_ALLOW_SYSTEM_LIBS"),
        &format!("pkg-config {} lard", args.join(" ")),
    );
    stdout(&out).trim().to_string()
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, d: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut v = Vec::new();
    walk(dir, dir, &mut v);
    v.sort();
    v
}

/// Builds consumer.c (C, or C++ with `-x c++`) with `cc`, taking include and
/// library flags ONLY from `pkg-config --cflags --libs lard`.
fn build_consumer(cc: &str, sdk: Sdk, extra: &[&str], name: &str) -> PathBuf {
    let prefix = install(sdk);
    let flags = pkg_config(prefix, &["--cflags", "--libs"]);
    let dir = work().join("consumers");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(name);
    let mut cmd = Command::new(cc);
    cmd.args(["-static", "-O2", "-g", "-Wall", "-Wextra", "-Werror"])
        .args(extra)
        .arg("-o")
        .arg(&out)
        .arg(root().join("guests/sdk-consumer/consumer.c"))
        .args(flags.split_whitespace());
    run(
        &mut cmd,
        &format!("{cc} {} consumer.c {flags}", extra.join(" ")),
    );
    out
}

/// The race-free consumer and its RACY twin, built with `cc` against `sdk`:
/// the expected output natively, the same under lard (default detector),
/// zero races, and races on `last` for the twin.
fn consumer_under_lard(cc: &str, sdk: Sdk) {
    for racy in [false, true] {
        let name = format!("consumer-{cc}{}", if racy { "-racy" } else { "" });
        let bin = build_consumer(cc, sdk, if racy { &["-DRACY"] } else { &[] }, &name);
        let n = native(&bin, &[]);
        assert_eq!(
            (stdout(&n).as_str(), shell_status(&n)),
            (EXPECTED, 0),
            "{name} natively; stderr: {}",
            stderr(&n)
        );
        let l = assert_parity(&bin, &[]);
        let err = stderr(&l);
        if racy {
            assert!(
                summary_races(&err) > 0,
                "{name}: the race on `last` was missed:\n{err}"
            );
            assert!(
                err.contains("<last+0x0>"),
                "{name}: a race reported elsewhere than on `last`:\n{err}"
            );
        } else {
            assert_eq!(summary_races(&err), 0, "{name}: races reported:\n{err}");
        }
    }
}

#[test]
fn make_install_produces_header_library_and_pkg_config_file() {
    let prefix = install(Sdk::Glibc);
    assert_eq!(
        files_under(prefix),
        [
            "include/lard.h",
            "include/lardx86.inc",
            "lib/liblard.a",
            "lib/pkgconfig/lard.pc",
        ],
        "installed files under {}",
        prefix.display()
    );
    for h in ["lard.h", "lardx86.inc"] {
        assert_eq!(
            std::fs::read(prefix.join("include").join(h)).unwrap(),
            std::fs::read(root().join("guest-sdk/include").join(h)).unwrap(),
            "installed {h} differs from guest-sdk/include/{h}"
        );
    }
    assert_eq!(pkg_config(prefix, &["--modversion"]), "0.1.0");
    assert_eq!(
        pkg_config(prefix, &["--cflags"]),
        format!("-I{}/include", prefix.display())
    );
    assert_eq!(
        pkg_config(prefix, &["--libs"]),
        format!("-L{}/lib -llard -lpthread", prefix.display())
    );
}

#[test]
fn make_install_honours_destdir_and_records_prefix() {
    // Staged install (packagers): files under DESTDIR/PREFIX, lard.pc names
    // PREFIX.  Same BUILD as the plain install: lard.pc must not go stale.
    let stage = work().join("destdir");
    if stage.exists() {
        std::fs::remove_dir_all(&stage).unwrap();
    }
    install(Sdk::Glibc);
    sdk_make(&[
        "install".into(),
        "PREFIX=/opt/lard".into(),
        format!("DESTDIR={}", stage.display()),
        format!("BUILD={}", work().join("glibc/build").display()),
        "CC=gcc".into(),
    ]);
    let prefix = stage.join("opt/lard");
    assert_eq!(files_under(&prefix).len(), 4, "{:?}", files_under(&stage));
    let pc = std::fs::read_to_string(prefix.join("lib/pkgconfig/lard.pc")).unwrap();
    assert!(pc.starts_with("prefix=/opt/lard\n"), "lard.pc:\n{pc}");
}

#[test]
fn consumer_built_with_gcc_via_pkg_config_runs_under_lard() {
    consumer_under_lard("gcc", Sdk::Glibc);
}

#[test]
fn consumer_built_with_clang_via_pkg_config_runs_under_lard() {
    consumer_under_lard("clang", Sdk::Glibc);
}

#[test]
fn consumer_built_with_musl_gcc_via_pkg_config_runs_under_lard() {
    consumer_under_lard("musl-gcc", Sdk::Musl);
}

#[test]
fn consumer_compiled_as_cxx_links_against_the_installed_library() {
    // The runtime's declarations must have C linkage in C++.
    for cxx in ["g++", "clang++"] {
        let bin = build_consumer(cxx, Sdk::Glibc, &["-x", "c++"], &format!("consumer-{cxx}"));
        let n = native(&bin, &[]);
        assert_eq!(
            (stdout(&n).as_str(), shell_status(&n)),
            (EXPECTED, 0),
            "{cxx}: stderr: {}",
            stderr(&n)
        );
    }
}

/// `make -C guest-sdk check`: lard.h compiles as C99 (CC) and C++11 (CXX),
/// -O0 and -O2, AT&T and Intel syntax, and emits exactly lardx86.inc's bytes.
fn header_check(cc: &str, cxx: &str) {
    let out = sdk_make(&[
        "check".into(),
        format!("BUILD={}", work().join(format!("check-{cc}")).display()),
        format!("CC={cc}"),
        format!("CXX={cxx}"),
    ]);
    assert!(
        stdout(&out).contains("lard.h encodings match lardx86.inc: 1552 ops"),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn header_check_with_gcc_and_gxx() {
    header_check("gcc", "g++");
}

#[test]
fn header_check_with_clang_and_clangxx() {
    header_check("clang", "clang++");
}
