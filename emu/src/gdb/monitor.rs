//! `monitor` commands: what lard knows that gdb's protocol has no packet
//! for (the race report, thread states, the command line that replays the
//! run).

use super::target::LardTarget;
use super::MonitorData;
use crate::cpu::uc::Reg;
use crate::machine::{Machine, ThreadState};
use crate::observe::detect;
use crate::run::{Emulator, Outcome};
use lard_detector_hw::event::ThreadKey;
use lard_detector_hw::Remembered;
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
        ["race"] | ["races"] => match &t.facts.race_text {
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
        ["seed"] => t.facts.replay_command.clone(),
        ["history", rest @ ..] => match parse_range(t.emu.machine(), rest) {
            Ok((addr, len)) => history(t.emu.machine(), addr, len),
            Err(e) => format!("monitor history: {e}"),
        },
        [other, ..] => format!("unknown monitor command `{other}` (monitor help lists them)"),
    }
}

/// A number in C syntax (`0x..`, decimal).
fn number(s: &str) -> Result<u64, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("`{s}` is neither a number nor a data symbol"))
}

/// `ADDR [LEN]`: ADDR a number, or a data symbol (`x`, `&x`, `x+8`),
/// whose size is the default LEN; LEN a number (default 1).
fn parse_range(m: &Machine, words: &[&str]) -> Result<(u64, u64), String> {
    let (a, len) = match words {
        [a] => (*a, None),
        [a, l] => (*a, Some(number(l)?.max(1))),
        _ => return Err("usage: monitor history ADDR [LEN]".into()),
    };
    let a = a.trim_start_matches('&');
    let (name, off) = match a.split_once('+') {
        Some((n, o)) => (n, number(o)?),
        None => (a, 0),
    };
    if let Ok(addr) = number(name) {
        return Ok((addr + off, len.unwrap_or(1)));
    }
    let sym = m
        .obs
        .objects
        .all()
        .iter()
        .filter_map(|o| o.symbols())
        .flat_map(|s| s.objects().iter())
        .find(|s| s.name == name)
        .ok_or_else(|| format!("`{name}` is neither a number nor a data symbol"))?;
    Ok((sym.addr + off, len.unwrap_or(sym.size.max(1))))
}

/// `monitor history`: per stretch of bytes with the same history, the last
/// write and the reads, with thread, clock, PC, instruction and call stack.
fn history(m: &Machine, addr: u64, len: u64) -> String {
    let len = len.min(4096);
    let mut s = String::new();
    let mut start = addr;
    let mut prev: Option<Vec<Remembered>> = None;
    for a in addr..=addr + len {
        let h = if a < addr + len {
            match m.obs.observer.history(a) {
                Some(h) => Some(h),
                None => return "no access history in this run (the detector keeps none: use --detector fasttrack)".into(),
            }
        } else {
            None
        };
        if a > addr && h != prev {
            let p = prev.take().unwrap_or_default();
            let _ = writeln!(
                s,
                "{start:#x} <{}> ({} byte(s)):",
                detect::data_name(m, start),
                a - start
            );
            if p.is_empty() {
                s += "  no accesses since the history began (or was cleared)\n";
            }
            for r in &p {
                let _ = writeln!(
                    s,
                    "  {} by thread {}{} at clock {}\n    at {}{}",
                    if r.write { "last write" } else { "read" },
                    r.thread,
                    kernel_of(m, r.thread),
                    r.clock,
                    m.describe_pc(r.pc),
                    detect::frames_text(m, r.pc)
                );
            }
            start = a;
        }
        prev = h;
    }
    s
}

/// ` (kernel N)` for an identity, when a live or exited thread has it.
fn kernel_of(m: &Machine, key: ThreadKey) -> String {
    let tid = match key {
        ThreadKey::Kernel(k) => Some(k),
        ThreadKey::Lang(l) => m
            .cpu
            .threads
            .iter()
            .find(|t| t.lthread == Some(l))
            .map(|t| t.tid),
    };
    tid.map_or(String::new(), |t| format!(" (kernel {t})"))
}

/// `monitor threads`.
fn threads(emu: &Emulator) -> String {
    let m = emu.machine();
    let mut s = String::new();
    for (i, t) in m.cpu.threads.iter().enumerate() {
        let state = t.state.describe();
        let cur = if i == m.cpu.cur { "*" } else { " " };
        let lang = t
            .lthread
            .map_or(String::new(), |l| format!(" (language thread {l})"));
        let _ = write!(
            s,
            "{cur} thread {}{lang}: {state}, {} instructions",
            t.tid, t.insns
        );
        if t.state != ThreadState::Exited {
            let _ = write!(s, ", at {}", m.describe_pc(t.ctx.reg(Reg::RIP)));
        }
        s.push('\n');
    }
    s
}

/// What ended the run, in one line, for a run that ends at a stop gdb
/// can inspect (not an exit).
pub fn ending(emu: &Emulator, out: &Outcome, _facts: &MonitorData) -> Option<String> {
    let m = emu.machine();
    let tid = m.cpu.threads[m.cpu.cur].tid;
    Some(match out {
        Outcome::ObserverStop { pc } => format!(
            "data-race exception in thread {tid}: the racy access has not taken effect: {} (monitor race shows the report; continue or stepi executes it)",
            m.describe_pc(*pc)
        ),
        Outcome::Signaled {
            signal,
            fault: Some(f),
        } => format!(
            "thread {tid}: {} (signal {signal}) at {}",
            f.what,
            m.describe_pc(f.pc)
        ),
        Outcome::Signaled { signal, .. } => format!("killed by signal {signal}"),
        Outcome::Deadlock(report) => report.clone(),
        Outcome::UnsupportedSyscall { nr, pc } => {
            format!("unsupported system call {nr} at {}", m.describe_pc(*pc))
        }
        Outcome::Stopped(why) => format!("stopped: {why:?}"),
        Outcome::Exited(_) | Outcome::Paused | Outcome::SignalStop { .. } | Outcome::Exec(_) => {
            return None
        }
    })
}
