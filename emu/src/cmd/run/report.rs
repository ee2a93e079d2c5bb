//! The text of a `lard run`'s report: what ended the run and its exit
//! status, the per-process label, and the single write that emits it.

use super::{
    EXIT_DEADLOCK, EXIT_INTERNAL, EXIT_MAX_INSNS, EXIT_RACE_EXCEPTION, EXIT_TIMEOUT,
    EXIT_UNSUPPORTED_SYSCALL,
};
use crate::linux::process::Identity;
use crate::run::{Emulator, Outcome, StopReason};
use std::path::Path;

/// `text` with every line prefixed by the process's `==PID==` label, after
/// a first line naming the process.
pub(super) fn label(text: &str, identity: &Identity, argv: &[Vec<u8>]) -> String {
    let label = identity.label();
    let cmd: Vec<String> = argv
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let mut s = format!(
        "{label} process {} (parent {}): {}\n",
        identity.pid,
        identity.ppid,
        cmd.join(" ")
    );
    for line in text.lines() {
        s.push_str(&label);
        s.push(' ');
        s.push_str(line);
        s.push('\n');
    }
    s
}

/// Writes a report in one `write` (to `fd`, else stderr).
pub(super) fn emit(text: &str, fd: Option<i32>) {
    crate::linux::hostfd::write_report(text, fd);
}

/// Says what ended the run (in `out`) and returns lard's exit status.
pub(super) fn outcome(emu: &Emulator, outcome: &Outcome, guest: &Path, out: &mut String) -> u8 {
    use std::fmt::Write as _;
    let g = guest.display();
    match outcome {
        Outcome::Exited(code) => (*code & 0xff) as u8,
        Outcome::Signaled { signal, fault } => {
            if let Some(f) = fault {
                let t = &emu.machine().cpu.threads[emu.machine().cpu.cur];
                let addr = f
                    .addr
                    .map_or(String::new(), |a| format!(" at address {a:#x}"));
                let _ = writeln!(
                    out,
                    "lard: {g}: thread {}: {}{addr} (signal {signal}) at {}",
                    t.tid,
                    f.what,
                    emu.describe(f.pc)
                );
            } else {
                let _ = writeln!(out, "lard: {g}: killed by signal {signal}");
            }
            (128 + signal).clamp(0, 255) as u8
        }
        Outcome::Deadlock(report) => {
            let _ = writeln!(out, "lard: {g}: {report}");
            EXIT_DEADLOCK
        }
        Outcome::UnsupportedSyscall { nr, pc } => {
            let _ = writeln!(
                out,
                "lard: {g}: unsupported system call {nr} ({}) at {} (--strict-syscalls)",
                crate::linux::syscalls::name(*nr),
                emu.describe(*pc)
            );
            EXIT_UNSUPPORTED_SYSCALL
        }
        Outcome::Stopped(why) => {
            let insns = emu.machine().obs.stats.insns;
            match why {
                StopReason::MaxInsns(_) => {
                    let _ = writeln!(
                        out,
                        "lard: {g}: stopped by --max-insns after {insns} instructions"
                    );
                    EXIT_MAX_INSNS
                }
                StopReason::Timeout(t) => {
                    let _ = writeln!(
                        out,
                        "lard: {g}: stopped by --timeout {}s after {insns} instructions",
                        t.as_secs_f64()
                    );
                    EXIT_TIMEOUT
                }
                StopReason::Signal(sig) => {
                    let _ = writeln!(
                        out,
                        "lard: {g}: stopped by signal {sig} after {insns} instructions"
                    );
                    (128 + sig).clamp(0, 255) as u8
                }
            }
        }
        Outcome::Paused | Outcome::SignalStop { .. } => {
            let _ = writeln!(out, "lard: {g}: the run was left paused");
            EXIT_INTERNAL
        }
        Outcome::ObserverStop { pc } => {
            let t = &emu.machine().cpu.threads[emu.machine().cpu.cur];
            let _ = writeln!(
                    out,
                "lard: {g}: data-race exception in thread {}: the racy access did not take effect: {}",
                t.tid,
                emu.describe(*pc)
            );
            EXIT_RACE_EXCEPTION
        }
        Outcome::Exec(_) => 0,
    }
}
