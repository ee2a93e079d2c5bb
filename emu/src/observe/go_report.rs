//! A race in the format of Go's race detector (ThreadSanitizer's Go
//! runtime), which Go's tools and users read: `WARNING: DATA RACE`, the
//! later access, then `Previous …`, each with its goroutine and stack
//! (function, then `file:line` indented below it). Goroutines are named by
//! lard's language-thread numbers.

use super::callstack;
use super::detect::RacePair;
use crate::intercept::names::LangUnit;
use crate::machine::Machine;
use lard_detector_hw::event::ThreadKey;
use lard_detector_hw::RaceKind;
use std::fmt::Write;

/// The text of race `(pc, prev)`.
pub fn race(m: &Machine, (pc, prev): (u64, u64), p: &RacePair) -> String {
    let mut s = String::from("==================\nWARNING: DATA RACE\n");
    let access = if p.write { "Write" } else { "Read" };
    let _ = writeln!(
        s,
        "{access} at {:#018x} by {}:",
        p.addr,
        goroutine(p.thread)
    );
    s += &stack(m, pc);
    let previous = match p.kind {
        RaceKind::ReadWrite => "read",
        _ => "write",
    };
    let _ = writeln!(
        s,
        "\nPrevious {previous} at {:#018x} by {}:",
        p.addr,
        goroutine(p.prev_thread)
    );
    s += &stack(m, prev);
    // (Whether the earlier access's goroutine still runs is not known.)
    let both = [
        (p.thread, p.clock, " (running)"),
        (p.prev_thread, p.prev_clock, ""),
    ];
    for (t, clock, state) in both {
        if let Some(created) = creation(m, t, clock) {
            let _ = writeln!(s, "\n{}{state} created at:", capitalized(&goroutine(t)));
            s += &created;
        }
    }
    s += "==================\n";
    s
}

/// Where goroutine `t` (its holder at `clock`) was created: the go
/// statement's frames, then its creator's stack.
fn creation(m: &Machine, t: ThreadKey, clock: u64) -> Option<String> {
    let ThreadKey::Lang(id) = t else {
        return None;
    };
    let LangUnit::Goroutine {
        site,
        stack: caller,
    } = m.obs.lang_units.get(id, clock)?
    else {
        return None;
    };
    // Any address inside the call instruction has its line: the byte
    // before the return address is one.
    Some(stack(m, callstack::site(site.wrapping_sub(1), caller)))
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn goroutine(t: ThreadKey) -> String {
    match t {
        ThreadKey::Lang(id) => format!("goroutine {id}"),
        ThreadKey::Kernel(k) => format!("thread {k}"),
    }
}

/// Frames innermost first: `  function()` and `      file:line`.
fn stack(m: &Machine, site: u64) -> String {
    let (chains, _) = callstack::chains(m, site);
    let mut s = String::new();
    for f in chains.iter().flatten() {
        let func = f.function.as_deref().unwrap_or("??");
        let _ = writeln!(s, "  {func}()");
        match (&f.file, f.line) {
            (Some(file), Some(line)) => {
                let _ = writeln!(s, "      {file}:{line}");
            }
            _ => {
                let _ = writeln!(s, "      ??:0");
            }
        }
    }
    s
}
