//! `monitor` commands: what lard knows that gdb's protocol has no packet
//! for (the race report, thread states, the command line that replays the
//! run).

use super::target::LardTarget;
use super::Session;
use crate::cpu::machine::{ThreadState, Wait};
use crate::cpu::uc::Reg;
use crate::run::{describe_pc, Emulator, Outcome};
use std::fmt::Write as _;

/// The help text.
const HELP: &str = "\
lard monitor commands:
  monitor race              the race report so far
  monitor history ADDR [LEN] the detector's access history of ADDR (LEN bytes, default 1)
  monitor threads           every guest thread: state, PC, instructions
  monitor seed              the command line that replays this run
  monitor help              this text";

/// Runs one monitor command; the answer is text for gdb's console.
pub fn command(t: &mut LardTarget<'_>, cmd: &str) -> String {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    match words.as_slice() {
        [] | ["help"] => HELP.into(),
        ["race"] | ["races"] => match &t.session.race_text {
            Some(f) => {
                let s = f(t.emu.machine());
                if s.trim().is_empty() {
                    "no races so far".into()
                } else {
                    s
                }
            }
            None => "no race detector in this run".into(),
        },
        ["threads"] => threads(t.emu),
        ["seed"] => t.session.replay_command.clone(),
        ["history", rest @ ..] => match parse_range(rest) {
            Ok((addr, len)) => match &t.session.history {
                Some(f) => f(t.emu.machine(), addr, len),
                None => "no access history in this run (the detector keeps none)".into(),
            },
            Err(e) => format!("monitor history: {e}"),
        },
        [other, ..] => format!("unknown monitor command `{other}` (monitor help lists them)"),
    }
}

/// `ADDR [LEN]`: numbers in C syntax (0x.., decimal).
fn parse_range(words: &[&str]) -> Result<(u64, u64), String> {
    let num = |s: &str| -> Result<u64, String> {
        let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16),
            None => s.parse(),
        };
        r.map_err(|_| format!("`{s}` is not a number"))
    };
    match words {
        [a] => Ok((num(a)?, 1)),
        [a, l] => Ok((num(a)?, num(l)?.max(1))),
        _ => Err("usage: monitor history ADDR [LEN]".into()),
    }
}

/// `monitor threads`.
fn threads(emu: &Emulator) -> String {
    let m = emu.machine();
    let mut s = String::new();
    for (i, t) in m.threads.iter().enumerate() {
        let state = match t.state {
            ThreadState::Runnable => "runnable".to_string(),
            ThreadState::Exited => "exited".into(),
            ThreadState::Blocked(Wait::Futex { addr, .. }) => format!("futex wait on {addr:#x}"),
            ThreadState::Blocked(Wait::Sleep { .. }) => "sleeping".into(),
        };
        let cur = if i == m.cur { "*" } else { " " };
        let lang = t
            .lthread
            .map_or(String::new(), |l| format!(" (language thread {l})"));
        let _ = write!(
            s,
            "{cur} thread {}{lang}: {state}, {} instructions",
            t.tid, t.insns
        );
        if t.state != ThreadState::Exited {
            let _ = write!(s, ", at {}", describe_pc(m, t.ctx.reg(Reg::RIP)));
        }
        s.push('\n');
    }
    s
}

/// What ended the run, in one line, for a run that ends at a stop gdb
/// can inspect (not an exit).
pub fn ending(emu: &Emulator, out: &Outcome, _session: &Session) -> Option<String> {
    let m = emu.machine();
    let tid = m.threads[m.cur].tid;
    Some(match out {
        Outcome::ObserverStop { pc } => format!(
            "data-race exception in thread {tid}: the racy access did not take effect: {} (monitor race shows the report)",
            describe_pc(m, *pc)
        ),
        Outcome::Signaled {
            signal,
            fault: Some(f),
        } => format!(
            "thread {tid}: {} (signal {signal}) at {}",
            f.what,
            describe_pc(m, f.pc)
        ),
        Outcome::Signaled { signal, .. } => format!("killed by signal {signal}"),
        Outcome::Deadlock(report) => report.clone(),
        Outcome::UnsupportedSyscall { nr, pc } => {
            format!("unsupported system call {nr} at {}", describe_pc(m, *pc))
        }
        Outcome::Stopped(why) => format!("stopped: {why:?}"),
        Outcome::Exited(_) | Outcome::Paused => return None,
    })
}
