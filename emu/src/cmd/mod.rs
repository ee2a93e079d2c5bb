//! The `lard` subcommands (`lard run` in [`run`]), the guest manifest
//! they read, and what they share: interrupts, `--jobs`, shell words and
//! progress bars.

pub mod accuracy;
pub mod adversarial;
pub mod campaign;
pub mod cargo;
pub mod cc_accuracy;
pub mod disasm;
pub mod exit;
pub mod explore;
pub mod go;
pub mod jumble;
pub mod manifest;
pub mod manpages;
pub mod pool;
pub mod report;
pub mod run;
pub mod toml_place;

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// A positive, finite number of seconds (fractions allowed): the value
/// of `--timeout`.
pub fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || v <= 0.0 || v > 1e9 {
        return Err(format!("`{s}`: seconds must be positive"));
    }
    Ok(std::time::Duration::from_secs_f64(v))
}

/// The first SIGINT or SIGTERM sets the returned flag to the signal number
/// instead of killing lard, so the run loop can stop the guest and still
/// report; a second one kills lard as usual. The handlers do not restart
/// an interrupted call: a host call the guest blocks in (a `read` of an
/// input that never comes) returns, and the run loop sees the flag (the
/// guest makes the call again if the run goes on, linux::syscalls).
pub fn interrupt_flag() -> Option<Arc<AtomicUsize>> {
    use signal_hook::flag;
    let which = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let registered = flag::register_conditional_default(sig, seen.clone())
            .and_then(|_| flag::register(sig, seen.clone()))
            .and_then(|_| flag::register_usize(sig, which.clone(), sig as usize));
        if let Err(e) = registered {
            log::warn!("cannot handle signal {sig}: {e}");
            return None;
        }
        // SAFETY: reads the action signal-hook installed and installs it
        // again without SA_RESTART (same handler, mask and other flags).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut sa) == 0 {
                sa.sa_flags &= !libc::SA_RESTART;
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    }
    Some(which)
}

/// `--jobs J` of a many-run command, or the host's cores without it.
pub fn jobs_or_cores(jobs: Option<u64>) -> usize {
    jobs.map_or_else(
        || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        |j| j as usize,
    )
}

/// `w` as one shell word (unchanged when it needs no quoting).
pub fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// The progress bar of a many-run command (`lard NAME`, `len` runs, a
/// message when `message` is given), on stderr; hidden unless `show`.
pub fn progress_bar(
    show: bool,
    name: &str,
    len: u64,
    message: Option<&str>,
) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(len);
    let msg = if message.is_some() { "{msg}, " } else { "" };
    b.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "lard {name} {{bar:40}} {{pos}}/{{len}} runs, {msg}{{elapsed}} (eta {{eta}})"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    if let Some(m) = message {
        b.set_message(m.to_string());
    }
    b
}
