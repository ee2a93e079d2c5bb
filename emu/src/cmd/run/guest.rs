//! What `lard run` was asked to run: the process identity, the option
//! paths made absolute, and the program found as `execvp` finds it (PATH,
//! `#!` interpreters), opened as an ELF file.

use super::args::RunArgs;
use super::RunError;
use crate::binary::elf::{ElfError, ElfFile};
use crate::linux::process::{self, Identity};
use std::ffi::OsString;
use std::path::PathBuf;

/// The program to run and what its `execve`s hand on.
pub(super) struct Guest {
    /// The program's path (a script's interpreter for a script).
    pub(super) program: PathBuf,
    /// The ELF file that runs (a script's interpreter for a script).
    pub(super) file: ElfFile,
    /// The guest's argv.
    pub(super) argv: Vec<Vec<u8>>,
    /// The `lard run` options a program the guest `execve`s inherits.
    pub(super) lard_options: Vec<OsString>,
    /// Where relative option paths were given.
    pub(super) options_dir: PathBuf,
}

/// `--process`: this process's identity (the root of a tree without it).
pub(super) fn identity(args: &RunArgs) -> Result<Identity, RunError> {
    match args.process.as_deref() {
        None => Ok(Identity::root()),
        Some(spec) => Identity::decode(spec)
            .ok_or_else(|| RunError::Usage(format!("--process {spec}: not a process identity"))),
    }
}

/// Makes every path lard writes or reads after the guest started
/// absolute (the guest's chdir is the process's), relative to where the
/// user gave it (`--options-dir` for the lard of an exec'd program);
/// returns that directory.
pub(super) fn absolute_paths(args: &mut RunArgs) -> PathBuf {
    let options_dir = args
        .options_dir
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("/"));
    for path in [
        &mut args.report_json,
        &mut args.sarif,
        &mut args.report_html,
        &mut args.hw_stats_json,
        &mut args.hw_profile,
        &mut args.stats_json,
        &mut args.record_trace,
        &mut args.sysroot,
        &mut args.hw_config,
    ]
    .into_iter()
    .flatten()
    .chain(args.suppressions.iter_mut())
    {
        if path.is_relative() {
            *path = options_dir.join(&*path);
        }
    }
    options_dir
}

/// `--suppressions`: the files read, each named in the report as the user
/// gave it (`shown`, before [`absolute_paths`]).
pub(super) fn suppressions(
    args: &RunArgs,
    shown: &[String],
) -> Result<crate::report::suppressions::Suppressions, RunError> {
    let files: Vec<(String, &std::path::Path)> = shown
        .iter()
        .cloned()
        .zip(args.suppressions.iter().map(PathBuf::as_path))
        .collect();
    crate::report::suppressions::Suppressions::load(&files).map_err(RunError::BadInput)
}

/// The report files' directories exist: a run is not made only to find
/// at its end that its report cannot be written.
pub(super) fn output_dirs(args: &RunArgs) -> Result<(), RunError> {
    let outputs = [
        ("--report-json", &args.report_json),
        ("--sarif", &args.sarif),
        ("--report-html", &args.report_html),
        ("--stats-json", &args.stats_json),
        ("--hw-stats-json", &args.hw_stats_json),
        ("--hw-profile", &args.hw_profile),
    ];
    for (option, path) in outputs {
        let Some(dir) = path.as_deref().and_then(|p| p.parent()) else {
            continue;
        };
        if !dir.is_dir() {
            return Err(RunError::BadInput(format!(
                "{option} {}: no directory {}",
                path.as_deref().unwrap_or(dir).display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

impl Guest {
    /// Finds and opens the program `args` names.
    pub(super) fn locate(args: &RunArgs, options_dir: PathBuf) -> Result<Guest, RunError> {
        let cmdline: Vec<OsString> = std::env::args_os().collect();
        let lard_options = {
            let tail = 1 + args.args.len();
            let opts = cmdline
                .get(2..cmdline.len().saturating_sub(tail))
                .unwrap_or(&[]);
            process::inherited_options(opts)
        };
        let mut argv: Vec<Vec<u8>> = vec![args
            .argv0
            .clone()
            .unwrap_or_else(|| args.guest.clone().into_os_string())
            .into_encoded_bytes()];
        argv.extend(args.args.iter().map(|a| a.as_encoded_bytes().to_vec()));
        let mut program = args.guest.clone();
        if !args.guest.as_os_str().as_encoded_bytes().contains(&b'/') {
            match process::find_in_path(args.guest.as_os_str(), std::env::var_os("PATH").as_deref())
            {
                Some(p) => program = p,
                None => {
                    return Err(RunError::NotFound(format!(
                        "{}: command not found in PATH",
                        args.guest.display()
                    )))
                }
            }
        }
        // As execve refuses them (the shell's status 126).
        if program.is_dir() {
            return Err(RunError::NotRunnable(format!(
                "{}: is a directory",
                args.guest.display()
            )));
        }
        if process::classify(&program) == Err(libc::EACCES) {
            return Err(RunError::NotRunnable(format!(
                "{}: permission denied (not executable)",
                args.guest.display()
            )));
        }
        if let Ok(process::Executable::Script { .. }) = process::classify(&program) {
            match process::resolve(&program, &argv) {
                Ok((interp, script_argv)) => {
                    program = interp;
                    argv = script_argv;
                }
                Err(e) => {
                    let e = std::io::Error::from_raw_os_error(e);
                    return Err(RunError::NotFound(format!(
                        "{}: cannot run its interpreter: {e}",
                        args.guest.display()
                    )));
                }
            }
        }
        let file = ElfFile::open(&program).map_err(|e| match e {
            ElfError::Io(..) => RunError::NotFound(e.to_string()),
            _ => RunError::NotRunnable(e.to_string()),
        })?;
        Ok(Guest {
            program,
            file,
            argv,
            lard_options,
            options_dir,
        })
    }
}
