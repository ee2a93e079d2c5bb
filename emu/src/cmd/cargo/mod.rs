//! `lard cargo`: Rust crates as LARD programs (docs/rust.md).
//!
//! `lard cargo build|test|run|… ARGS` is cargo with `lard-rustc` as
//! `RUSTC` and `lard-rustdoc` as `RUSTDOC` (rustc's ThreadSanitizer
//! instrumentation on the lard-cc runtime; the rustc and rustdoc they run
//! are the ones cargo would have run), with an explicit
//! `--target x86_64-unknown-linux-gnu` so that cargo builds build scripts
//! and proc-macros for the host, uninstrumented. `test`, `run` and `bench`
//! run what they build under `lard run --race-exit-code 66 OPTIONS` (the
//! target's runner; 66 is ThreadSanitizer's exit status), doctests
//! included. Other cargo subcommands run unchanged.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// `lard cargo` options.
#[derive(clap::Args, Debug)]
pub struct CargoArgs {
    /// An option for the `lard run` that `cargo test`, `run` and `bench`
    /// start the binaries with, one word each (`--run-option=--detector
    /// --run-option=lardish`).
    #[arg(long = "run-option", value_name = "OPT", allow_hyphen_values = true)]
    run_option: Vec<String>,
    /// The cargo subcommand and its arguments (`build --release`, `test`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    cargo: Vec<String>,
}

/// The target lard runs: the one `lard cargo` builds for unless told.
pub const TARGET: &str = "x86_64-unknown-linux-gnu";

/// Exit status of ThreadSanitizer (and of `lard run` under `lard cargo`)
/// when it reported races.
pub const RACE_EXIT: u8 = 66;

/// The cargo subcommands (and their aliases) that compile the crate's code.
const BUILDING: &[&str] = &[
    "build", "b", "check", "c", "test", "t", "run", "r", "bench", "rustc", "rustdoc", "doc", "d",
];
/// Those that run what they build.
const RUNNING: &[&str] = &["test", "t", "run", "r", "bench"];

/// `lard cargo`.
pub fn run(a: CargoArgs) -> ExitCode {
    let mut cmd = match prepare(&a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("lard cargo: {e}");
            return ExitCode::from(crate::cmd::exit::EXIT_NOT_FOUND);
        }
    };
    match cmd.status() {
        Ok(s) => ExitCode::from(s.code().map_or(1, |c| c.clamp(0, 255) as u8)),
        Err(e) => {
            eprintln!("lard cargo: cannot run cargo: {e}");
            ExitCode::from(crate::cmd::exit::EXIT_NOT_FOUND)
        }
    }
}

/// The cargo command to run.
fn prepare(a: &CargoArgs) -> Result<Command, String> {
    let cargo = std::env::var("LARD_CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(&cargo);
    let building = a
        .cargo
        .first()
        .is_some_and(|s| BUILDING.contains(&s.as_str()));
    if !building {
        cmd.args(&a.cargo);
        return Ok(cmd);
    }
    let lard = std::env::current_exe().map_err(|e| format!("cannot find lard itself: {e}"))?;
    let rustc = find_rustc(&lard)?;
    let rustdoc = rustc.with_file_name("lard-rustdoc");
    if !rustdoc.is_file() {
        return Err(format!(
            "{}: not found beside {} (install both with make install)",
            rustdoc.display(),
            rustc.display()
        ));
    }
    // lard-rustc and lard-rustdoc run the rustc and rustdoc cargo would.
    let compiler = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let doc = std::env::var_os("RUSTDOC").unwrap_or_else(|| "rustdoc".into());
    cmd.env("LARD_RUSTC_COMPILER", compiler)
        .env("LARD_RUSTDOC_COMPILER", doc)
        .env("RUSTC", &rustc)
        .env("RUSTDOC", &rustdoc);
    let target_set = std::env::var_os("CARGO_BUILD_TARGET").is_some();
    cmd.args(cargo_args(&a.cargo, &lard, &a.run_option, target_set));
    Ok(cmd)
}

/// `lard-rustc`: `$LARD_RUSTC`, else beside `lard` (both are in the bin/
/// of `make install`), else on `PATH`.
fn find_rustc(lard: &Path) -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("LARD_RUSTC") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("LARD_RUSTC={}: no such file", p.display()))
        };
    }
    let beside = lard.with_file_name("lard-rustc");
    if beside.is_file() {
        return Ok(beside);
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("lard-rustc"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            "cannot find lard-rustc beside lard or on PATH (make install puts it in \
             PREFIX/bin; or set LARD_RUSTC)"
                .to_string()
        })
}

/// The arguments of cargo for `lard cargo ARGS` with a building
/// subcommand: for a running one first `--config` naming `lard run
/// --race-exit-code 66 OPTIONS` as the target's runner, then the
/// subcommand, `--target x86_64-unknown-linux-gnu` unless the arguments
/// (or `CARGO_BUILD_TARGET`, `target_set`) choose one, and the arguments.
fn cargo_args(
    args: &[String],
    lard: &Path,
    run_options: &[String],
    target_set: bool,
) -> Vec<String> {
    let Some((sub, rest)) = args.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if RUNNING.contains(&sub.as_str()) {
        let mut words = vec![lard.display().to_string(), "run".into()];
        words.push("--race-exit-code".into());
        words.push(RACE_EXIT.to_string());
        words.extend(run_options.iter().cloned());
        let list: Vec<String> = words
            .iter()
            .map(|w| serde_json::Value::from(w.as_str()).to_string())
            .collect();
        out.push("--config".into());
        out.push(format!("target.{TARGET}.runner=[{}]", list.join(", ")));
    }
    out.push(sub.clone());
    // Only cargo's own arguments (before `--`) can choose a target.
    let own = rest.iter().take_while(|a| *a != "--");
    let chosen = own
        .into_iter()
        .any(|a| a == "--target" || a.starts_with("--target="));
    if !chosen && !target_set {
        out.push("--target".into());
        out.push(TARGET.into());
    }
    out.extend(rest.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str], target_set: bool) -> Vec<String> {
        cargo_args(
            &a.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            Path::new("/x/lard"),
            &["--detector".into(), "lardish".into()],
            target_set,
        )
    }

    #[test]
    fn cargo_arguments_by_subcommand() {
        let runner = r#"target.x86_64-unknown-linux-gnu.runner=["/x/lard", "run", "--race-exit-code", "66", "--detector", "lardish"]"#;
        let t = ["--target", TARGET];
        let table: &[(&[&str], bool, Vec<&str>)] = &[
            (
                &["build", "--release"],
                false,
                [&["build"][..], &t, &["--release"]].concat(),
            ),
            (&["b", "--target", "x"], false, vec!["b", "--target", "x"]),
            (&["check", "--target=x"], false, vec!["check", "--target=x"]),
            (&["build"], true, vec!["build"]),
            (
                &["test", "--", "--target"],
                false,
                [&["--config", runner, "test"][..], &t, &["--", "--target"]].concat(),
            ),
            (
                &["run", "--bin", "p", "--", "a b"],
                false,
                [
                    &["--config", runner, "run"][..],
                    &t,
                    &["--bin", "p", "--", "a b"],
                ]
                .concat(),
            ),
        ];
        for (input, target_set, want) in table {
            assert_eq!(args(input, *target_set), *want, "{input:?}");
        }
    }

    #[test]
    fn runner_words_are_toml_strings() {
        let a = cargo_args(
            &["test".to_string()],
            Path::new("/a b/\"q\"/lard"),
            &[],
            true,
        );
        assert_eq!(
            a[1],
            r#"target.x86_64-unknown-linux-gnu.runner=["/a b/\"q\"/lard", "run", "--race-exit-code", "66"]"#
        );
    }
}
