//! A race in the format of Go's race detector (ThreadSanitizer's Go
//! runtime), which Go's tools and users read: `WARNING: DATA RACE`, the
//! later access, then `Previous …`, each with its goroutine and stack
//! (function, then `file:line` indented below it). Goroutines are named by
//! lard's language-thread numbers.

use super::callstack;
use super::detect::RacePair;
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
    s += "==================\n";
    s
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
