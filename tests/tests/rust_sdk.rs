//! The Rust guest SDK (`guest-sdk/rust`, crate `lard`) is its own workspace,
//! outside the emulator's: these tests run its unit and doc tests and build
//! its documentation with warnings denied, so that `make test` covers it.
//!
//! Cargo runs here inside `cargo test`: the child uses its own target dir
//! (`target/rust-sdk`, so it never waits for the outer build's lock) and
//! none of the outer cargo's or the caller's `CARGO_*`/`RUST*FLAGS`/make
//! variables (which could redirect its target dir, change its target or
//! flags, or hand it a jobserver it cannot use).

use lard_e2e::*;
use std::process::{Command, Output};

/// `cargo <sub> --manifest-path guest-sdk/rust/Cargo.toml --target-dir target/rust-sdk --locked`.
fn cargo(sub: &str) -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy();
        if (k.starts_with("CARGO_") && k != "CARGO_HOME")
            || matches!(
                &*k,
                "RUSTFLAGS" | "RUSTDOCFLAGS" | "MAKEFLAGS" | "MFLAGS" | "MAKELEVEL"
            )
        {
            cmd.env_remove(&*k);
        }
    }
    cmd.arg(sub)
        .arg("--manifest-path")
        .arg(root().join("guest-sdk/rust/Cargo.toml"))
        .arg("--target-dir")
        .arg(root().join("target/rust-sdk"))
        .arg("--locked");
    cmd
}

fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run cargo: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        stdout(&out),
        stderr(&out)
    );
    out
}

#[test]
fn rust_sdk_unit_and_doc_tests_pass() {
    let out = run(&mut cargo("test"), "cargo test (guest-sdk/rust)");
    let text = stdout(&out);
    // Guard against a run that silently ran nothing: the unit tests and the
    // doc tests both ran and passed something.
    let passed: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("test result: ok. "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(
        passed.len() >= 2 && passed.iter().all(|&n| n > 0),
        "expected unit and doc tests to run:\n{text}{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("Doc-tests lard"),
        "no doc tests ran:\n{}",
        stderr(&out)
    );
}

#[test]
fn rust_sdk_docs_build_without_warnings() {
    run(
        cargo("doc")
            .arg("--no-deps")
            .env("RUSTDOCFLAGS", "-D warnings"),
        "cargo doc --no-deps (guest-sdk/rust, RUSTDOCFLAGS=-D warnings)",
    );
    assert!(root().join("target/rust-sdk/doc/lard/index.html").is_file());
}
