//! `lard go`: Go programs as LARD programs (docs/go.md).
//!
//! `lard go build|test|run|install ARGS` is `go … -race ARGS` with lard's
//! race runtime (guest-sdk/go/) in place of ThreadSanitizer's: Go's
//! compiler already reports every language-level access and
//! synchronization to its race runtime, and lard's turns them into
//! LARDx86. The Go installation is not changed: the command runs the
//! installed `go` with GOROOT set to a tree of links to it
//! ([`goroot::shadow`]) whose race runtime is lard's
//! ([`runtime::object`]), and links externally (the runtime keeps
//! thread-local state, which Go's internal linker cannot place).
//! `test` and `run` start the binaries under `lard run` (`-exec`), with
//! `--race-exit-code 66` as Go's detector exits and the `--run-option`s.

mod goroot;
mod runtime;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// `lard go` options.
#[derive(clap::Args, Debug)]
pub struct GoArgs {
    /// An option for the `lard run` that `go test` and `go run` start the
    /// binaries with, one word each (`--run-option=--detector
    /// --run-option=lardish`).
    #[arg(long = "run-option", value_name = "OPT", allow_hyphen_values = true)]
    run_option: Vec<String>,
    /// The go subcommand and its arguments (`build ./...`, `test -v .`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    go: Vec<String>,
}

/// Why `lard go` could not run go.
#[derive(Debug)]
pub enum GoError {
    /// The go command is missing or failed to say where Go is installed.
    NoGo(String),
    /// A file or directory of the cache could not be written.
    Io(PathBuf, std::io::Error),
    /// The C compiler or linker failed to build the runtime.
    Tool(String, String),
    /// No cache directory ($LARD_CACHE_DIR, $XDG_CACHE_HOME, $HOME).
    NoCache,
    /// The cache did not hold what was just put there.
    Cache(PathBuf),
}

impl std::fmt::Display for GoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GoError::NoGo(why) => {
                write!(f, "cannot run go ({why}); install Go (Debian: golang-go)")
            }
            GoError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            GoError::Tool(t, why) => write!(f, "building the race runtime: {t}: {why}"),
            GoError::NoCache => write!(f, "no cache directory: set LARD_CACHE_DIR or HOME"),
            GoError::Cache(p) => write!(f, "{}: not written", p.display()),
        }
    }
}

/// The go subcommands that build with the race runtime.
const BUILDING: &[&str] = &["build", "install", "run", "test"];
/// Those that run what they build.
const RUNNING: &[&str] = &["run", "test"];

/// Exit status of Go's race detector when it reported races.
pub const GO_RACE_EXIT: u8 = 66;

/// `lard go`.
pub fn run(a: GoArgs) -> ExitCode {
    match prepare(&a) {
        Ok(mut cmd) => match cmd.status() {
            Ok(s) => ExitCode::from(s.code().map_or(1, |c| c.clamp(0, 255) as u8)),
            Err(e) => {
                eprintln!("lard go: cannot run go: {e}");
                ExitCode::from(crate::cmd::exit::EXIT_NOT_FOUND)
            }
        },
        Err(e) => {
            eprintln!("lard go: {e}");
            let code = match e {
                GoError::NoGo(_) => crate::cmd::exit::EXIT_NOT_FOUND,
                _ => crate::cmd::exit::EXIT_INTERNAL,
            };
            ExitCode::from(code)
        }
    }
}

/// The go command to run.
fn prepare(a: &GoArgs) -> Result<Command, GoError> {
    let go = std::env::var("LARD_GO").unwrap_or_else(|_| "go".into());
    let goroot = go_env(&go, "GOROOT")?;
    let cc = go_env(&go, "CC").unwrap_or_else(|_| "gcc".into());
    let syso = runtime::object(&cc)?;
    let shadow = goroot::shadow(Path::new(&goroot), &syso)?;
    let lard = std::env::current_exe().map_err(|e| GoError::NoGo(e.to_string()))?;
    let mut cmd = Command::new(&go);
    cmd.env("GOROOT", &shadow);
    // File names in the binaries' tables name the installed tree, not
    // lard's links to it.
    cmd.env("GOROOT_FINAL", &goroot);
    cmd.args(go_args(&a.go, &lard, &a.run_option));
    Ok(cmd)
}

/// `go env NAME`.
fn go_env(go: &str, name: &str) -> Result<String, GoError> {
    let out = Command::new(go)
        .args(["env", name])
        .output()
        .map_err(|e| GoError::NoGo(format!("{go}: {e}")))?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || v.is_empty() {
        return Err(GoError::NoGo(format!("`{go} env {name}` gave nothing")));
    }
    Ok(v)
}

/// The arguments of go for `lard go ARGS`: after a building subcommand,
/// `-race`, external linking merged into the program's `-ldflags`, and for
/// a running one `-exec 'lard run --race-exit-code 66 OPTIONS'`.
fn go_args(args: &[String], lard: &Path, run_options: &[String]) -> Vec<String> {
    let Some((sub, rest)) = args.split_first() else {
        return Vec::new();
    };
    if !BUILDING.contains(&sub.as_str()) {
        return args.to_vec();
    }
    let mut rest = rest.to_vec();
    let mut own = vec![sub.clone()];
    let is_flag = |a: &String, name: &str| {
        let a = a.strip_prefix('-').unwrap_or(a);
        let a = a.strip_prefix('-').unwrap_or(a);
        a == name || a.starts_with(&format!("{name}="))
    };
    if !rest.iter().any(|a| is_flag(a, "race")) {
        own.push("-race".into());
    }
    // `go run` and `go test` strip their binaries (-s -w): a report
    // needs the symbols and the DWARF lines.
    let running = RUNNING.contains(&sub.as_str());
    let link = if running {
        "-linkmode=external -s=false -w=false"
    } else {
        "-linkmode=external"
    };
    match rest.iter().position(|a| is_flag(a, "ldflags")) {
        Some(i) if rest[i].contains('=') => rest[i].push_str(&format!(" {link}")),
        Some(i) if i + 1 < rest.len() => rest[i + 1].push_str(&format!(" {link}")),
        _ => own.push(format!("-ldflags={link}")),
    }
    if running && !rest.iter().any(|a| is_flag(a, "exec")) {
        let mut words = vec![lard.display().to_string(), "run".into()];
        words.push("--race-exit-code".into());
        words.push(GO_RACE_EXIT.to_string());
        words.extend(run_options.iter().cloned());
        own.push("-exec".into());
        own.push(words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "));
    }
    own.extend(rest);
    own
}

/// A word of go's `-exec` (split by go as a shell would, quotes kept
/// simple): single-quoted when it holds a space or a quote.
fn quote(w: &str) -> String {
    if w.is_empty() || w.contains([' ', '\t', '\'', '"']) {
        format!("'{}'", w.replace('\'', "'\\''"))
    } else {
        w.to_string()
    }
}

/// Where `lard go` keeps the runtime and GOROOT it builds:
/// `$LARD_CACHE_DIR`, else `$XDG_CACHE_HOME/lard`, else `~/.cache/lard`.
fn cache_dir() -> Result<PathBuf, GoError> {
    let dir = if let Some(d) = std::env::var_os("LARD_CACHE_DIR") {
        PathBuf::from(d)
    } else if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        PathBuf::from(d).join("lard")
    } else if let Some(h) = std::env::var_os("HOME") {
        PathBuf::from(h).join(".cache").join("lard")
    } else {
        return Err(GoError::NoCache);
    };
    std::fs::create_dir_all(&dir).map_err(|e| GoError::Io(dir.clone(), e))?;
    Ok(dir)
}

/// FNV-1a: a name for cached contents that is the same in every build of
/// lard.
fn stable_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        go_args(
            &a.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            Path::new("/x/lard"),
            &["--detector".into(), "lardish".into()],
        )
    }

    const RUN_LINK: &str = "-ldflags=-linkmode=external -s=false -w=false";

    #[test]
    fn go_arguments_by_subcommand() {
        let exec = "/x/lard run --race-exit-code 66 --detector lardish";
        let table: &[(&[&str], &[&str])] = &[
            (&["version"], &["version"]),
            (&["env", "GOROOT"], &["env", "GOROOT"]),
            (
                &["build", "-o", "p", "."],
                &[
                    "build",
                    "-race",
                    "-ldflags=-linkmode=external",
                    "-o",
                    "p",
                    ".",
                ],
            ),
            (
                &["build", "-race", "-ldflags=-s", "."],
                &["build", "-race", "-ldflags=-s -linkmode=external", "."],
            ),
            (
                &["build", "-ldflags", "-X a=b", "."],
                &[
                    "build",
                    "-race",
                    "-ldflags",
                    "-X a=b -linkmode=external",
                    ".",
                ],
            ),
            (
                &["test", "-v", "./..."],
                &["test", "-race", RUN_LINK, "-exec", exec, "-v", "./..."],
            ),
            (
                &["run", "-exec", "x", "."],
                &["run", "-race", RUN_LINK, "-exec", "x", "."],
            ),
        ];
        for (input, want) in table {
            assert_eq!(args(input), *want, "{input:?}");
        }
    }

    #[test]
    fn exec_words_with_spaces_are_quoted() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("plain"), "plain");
    }

    #[test]
    fn the_cache_names_are_stable() {
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
