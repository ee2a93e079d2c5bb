//! What a run reports about its races besides the detector's log: the
//! races left once `--suppressions` have removed the ones a team has
//! looked at ([`reported`], the one view every report is made from: the
//! text, the JSON, SARIF, the exit status, Go's race reports), the
//! entries `--gen-suppressions` prints, and SARIF for CI tools.
//!
//! * `suppressions.rs`: the suppression files and their patterns;
//! * `sarif.rs`: the races as a SARIF 2.1.0 log;
//! * `html.rs`: the races as one self-contained HTML page.

pub mod html;
pub mod hw_profile;
pub mod sarif;
pub mod suppressions;

use crate::binary::objects::ObjectKind;
use crate::machine::Machine;
use crate::observe::callstack;
use crate::observe::detect::{kind_name, RaceLog};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The names a race is matched by: what a `race:` or `called_from_lib:`
/// pattern is compared with.
#[derive(Clone, Debug, Default)]
pub struct RaceNames {
    /// The functions and source files of both accesses' stacks, and the
    /// name of the global the race is on.
    pub names: Vec<String>,
    /// The loaded libraries (not the executable) a PC of either stack lies
    /// in: file name and path.
    pub libraries: Vec<String>,
    /// The executable, when a PC of either stack lies in it: file name and
    /// path.
    pub executable: Vec<String>,
}

impl RaceNames {
    /// The names of the race between sites `sites` (the later access's,
    /// the earlier one's) on data address `addr`.
    pub fn of(m: &Machine, sites: (u64, u64), addr: u64) -> RaceNames {
        let mut out = RaceNames::default();
        for site in [sites.0, sites.1] {
            let (chains, _) = callstack::chains(m, site);
            for f in chains.iter().flatten() {
                out.names.extend(f.function.clone());
                out.names.extend(f.file.clone());
            }
            let (callers, _) = callstack::callers(m, callstack::id(site));
            let pcs = std::iter::once(callstack::pc(site))
                .chain(callers.into_iter().map(|r| r.wrapping_sub(1)));
            for pc in pcs {
                if let Some((sym, _)) = m.obs.objects.function(pc) {
                    out.names.push(sym.name.clone());
                }
                if let Some(o) = m.obs.objects.at(pc) {
                    let list = match o.kind {
                        ObjectKind::Executable => &mut out.executable,
                        _ => &mut out.libraries,
                    };
                    list.push(o.short_name().to_string());
                    list.push(o.name.clone());
                }
            }
        }
        if let Some((sym, _)) = m.obs.objects.object(addr) {
            out.names.push(sym.name.clone());
        }
        for list in [&mut out.names, &mut out.libraries, &mut out.executable] {
            list.sort();
            list.dedup();
        }
        out
    }
}

/// Races one suppressions file removed from a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppressed {
    /// The file, as the user named it.
    pub file: String,
    /// Distinct races (pairs of racing instructions, or of call stacks).
    pub races: u64,
}

/// The races a run reports: a detector's log less its suppressed races.
pub struct Reported {
    /// The races reported.
    pub log: RaceLog,
    /// The files that suppressed races, in the order given.
    pub suppressed: Vec<Suppressed>,
}

impl Reported {
    /// The report's lines about suppressed races (`2 races suppressed by
    /// FILE`), one per file that suppressed some.
    pub fn suppressed_text(&self) -> String {
        let mut s = String::new();
        for x in &self.suppressed {
            let _ = writeln!(
                s,
                "{} suppressed by {}",
                plural(x.races, "race", "races"),
                x.file
            );
        }
        s
    }
}

/// `1 race`, `2 races`.
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The races of `log` that this run reports: those no `--suppressions`
/// entry matches.
pub fn reported(log: &RaceLog, m: &Machine) -> Reported {
    let supp = &m.config.suppressions;
    if supp.is_empty() || log.pairs.is_empty() {
        return Reported {
            log: log.clone(),
            suppressed: Vec::new(),
        };
    }
    let mut dropped = BTreeSet::new();
    let mut counts = vec![0u64; supp.len()];
    for (key, p) in &log.pairs {
        if let Some(i) = supp.file_of(&RaceNames::of(m, *key, p.addr)) {
            dropped.insert(*key);
            counts[i] += 1;
        }
    }
    let suppressed = counts
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, &n)| Suppressed {
            file: supp.name(i).to_string(),
            races: n,
        })
        .collect();
    Reported {
        log: log.without(&dropped),
        suppressed,
    }
}

/// `--gen-suppressions`: one entry per race of `log`, each after a comment
/// naming the race, that suppresses it by the function of its later
/// access (else of its earlier one, else the global it is on).
pub fn suppression_entries(log: &RaceLog, m: &Machine) -> String {
    let mut s = String::new();
    if log.pairs.is_empty() {
        return s;
    }
    s += "== suppressions (--gen-suppressions) ==\n";
    for (i, ((site, prev), p)) in log.pairs.iter().enumerate() {
        let function = |site: u64| {
            let (chains, _) = callstack::chains(m, site);
            chains
                .first()
                .and_then(|c| c.first())
                .and_then(|f| f.function.clone())
                .or_else(|| {
                    m.obs
                        .objects
                        .function(callstack::pc(site))
                        .map(|(sym, _)| sym.name.clone())
                })
        };
        let global = m
            .obs
            .objects
            .object(p.addr)
            .map(|(sym, _)| sym.name.clone());
        let Some(name) = function(*site).or_else(|| function(*prev)).or(global) else {
            let _ = writeln!(s, "# race {}: no function or global names it", i + 1);
            continue;
        };
        let at = m
            .obs
            .objects
            .frames(callstack::pc(*site))
            .first()
            .and_then(|f| Some(format!(" at {}:{}", f.file.as_deref()?, f.line?)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "# race {}: {} race on {}{at}\nrace:^{name}$",
            i + 1,
            kind_name(p.kind),
            crate::observe::detect::data_name(m, p.addr)
        );
    }
    s
}
