//! The `execve` hand-off: the process that ran the guest becomes a new
//! lard running the new program with the same options (or the program
//! itself, natively, with `--trace-children no`).

use super::args::TraceChildren;
use super::guest::Guest;
use crate::linux::hostfd::StderrCopy;
use crate::linux::process::{self, ExecRequest, Identity};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};

/// Replaces this process by the program `req` names; returns the message
/// of an exec that failed, with stderr restored.
pub(super) fn hand_off(
    req: &ExecRequest,
    guest: &Guest,
    identity: &Identity,
    trace_children: TraceChildren,
    stderr_copy: StderrCopy,
    log_fd: &AtomicI32,
) -> String {
    let err = match trace_children {
        TraceChildren::Yes => {
            // This very binary, even if its file was replaced or removed
            // since it started (lard rebuilt or reinstalled during a long
            // run): its path would name another file, or none.
            let me = PathBuf::from("/proc/self/exe");
            process::exec_lard(
                &me,
                &guest.lard_options,
                identity,
                stderr_copy.fd(),
                &guest.options_dir,
                req,
            )
        }
        TraceChildren::No => process::exec_native(req),
    };
    log_fd.store(2, Ordering::Relaxed);
    stderr_copy.restore();
    format!("cannot execute {}: {err}", req.path.display())
}
