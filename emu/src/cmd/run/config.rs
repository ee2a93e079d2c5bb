//! The machine's [`Config`] from `lard run`'s options: the scheduler, the
//! detection mode, the process, and adversarial memory with its monitored
//! locations (`--adversarial-at`, or a first FastTrack pass re-spelling
//! the run's scheduling options).

use super::args::{DetectorArg, ModeArg, ObserveArg, RunArgs, SchedArg, TraceChildren};
use super::guest::Guest;
use super::{RunError, PCT_DEPTH, PCT_STEPS};
use crate::cmd::adversarial;
use crate::cpu::sched::SchedPolicy;
use crate::linux::process::Identity;
use crate::machine::{Config, RunMode};
use lard_detector_hw::adversarial::AdversarialConfig;
use std::path::PathBuf;

/// The configuration of a run of `guest` as process `process`.
pub(super) fn config(args: &RunArgs, guest: &Guest, process: Identity) -> Result<Config, RunError> {
    let adversarial = adversarial_config(args, guest)?;
    let sched = sched_policy(args)?;
    let variants = args.detectors.is_some();
    Ok(Config {
        seed: args.seed,
        sched,
        quantum: args.quantum,
        cores: args.cores,
        strict_syscalls: args.strict_syscalls,
        sysroot: args.sysroot.clone(),
        adversarial,
        mode: match args.mode {
            // Without a detector nothing is checked: binary mode only on request.
            ModeArg::Auto if args.detector == DetectorArg::None && !variants => RunMode::Lard,
            ModeArg::Auto => RunMode::Auto,
            ModeArg::Lard => RunMode::Lard,
            ModeArg::Binary => RunMode::Binary,
        },
        program_code: args.program_code.clone(),
        prune: !args.no_prune,
        clock_floors: !args.no_clock_floors,
        direct_memory: !args.no_direct_memory,
        repeat_filter: !args.no_repeat_filter,
        host_fds: Vec::new(),
        report_fd: None,
        process,
        trace_children: args.trace_children == TraceChildren::Yes,
        // Accesses before a process's first thread cannot race: the
        // happens-before detectors need not see them (not the object
        // detector, whose ownership states do; not LARDISH, whose
        // statistics count every access; not the variants).
        skip_single_threaded: !variants
            && matches!(
                args.detector,
                DetectorArg::Fasttrack | DetectorArg::Canonical
            ),
        realtime_start: args.realtime_start,
        sigmask: args.sigmask,
        // (Read by the caller: `--suppressions` errors are its.)
        suppressions: Default::default(),
    })
}

/// `--sysroot` names a directory.
pub(super) fn check_sysroot(args: &RunArgs) -> Result<(), RunError> {
    match &args.sysroot {
        Some(root) if !root.is_dir() => Err(RunError::NotFound(format!(
            "--sysroot {}: not a directory",
            root.display()
        ))),
        _ => Ok(()),
    }
}

/// `--adversarial`: the heuristic and the locations it monitors.
fn adversarial_config(
    args: &RunArgs,
    guest: &Guest,
) -> Result<Option<AdversarialConfig>, RunError> {
    let h = match args.adversarial.and_then(|a| a.0) {
        None => return Ok(None),
        Some(_) if matches!(args.observe, ObserveArg::All) => {
            return Err(RunError::Usage(
                "--adversarial needs Tracked observation (not --observe all)".into(),
            ));
        }
        Some(h) => h,
    };
    let triggers = match &args.adversarial_at {
        Some(spec) => adversarial::parse_targets(&guest.file, spec),
        None => {
            let me = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("lard"));
            adversarial::first_fasttrack_pass(
                &me,
                &scheduling_words(args),
                &guest.program,
                &args
                    .args
                    .iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect::<Vec<_>>(),
            )
        }
    }
    .map_err(RunError::BadInput)?;
    Ok(Some(AdversarialConfig {
        heuristic: h,
        seed: args.seed,
        capacity: args.write_buffer as usize,
        triggers,
    }))
}

/// The run's scheduling options as `lard run` words: the first FastTrack
/// pass schedules as the adversarial run does.
fn scheduling_words(args: &RunArgs) -> Vec<String> {
    let mut words: Vec<String> = [
        "--seed".to_string(),
        args.seed.to_string(),
        "--sched".into(),
        args.sched.name().into(),
        "--quantum".into(),
        args.quantum.to_string(),
        "--cores".into(),
        args.cores.to_string(),
    ]
    .into();
    for (name, v) in [
        ("--pct-depth", args.pct_depth.map(u64::from)),
        ("--pct-steps", args.pct_steps),
    ] {
        if let Some(v) = v {
            words.extend([name.to_string(), v.to_string()]);
        }
    }
    words
}

/// `--sched` and its PCT options.
pub(super) fn sched_policy(args: &RunArgs) -> Result<SchedPolicy, RunError> {
    Ok(match args.sched {
        SchedArg::Rr | SchedArg::Random if args.pct_depth.is_some() || args.pct_steps.is_some() => {
            return Err(RunError::Usage(
                "--pct-depth and --pct-steps need --sched pct".into(),
            ));
        }
        SchedArg::Rr => SchedPolicy::RoundRobin,
        SchedArg::Random => SchedPolicy::Random,
        SchedArg::Pct => SchedPolicy::Pct {
            depth: args.pct_depth.unwrap_or(PCT_DEPTH),
            steps: args.pct_steps.unwrap_or(PCT_STEPS),
        },
    })
}
