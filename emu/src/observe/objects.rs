//! The object race detector's report (`lard run --detector object`): each
//! object race with both accesses, the object (heap block and allocation
//! site, or static symbol) and the lock sets, then the statistics of the
//! paper's Tables 3 to 5. Text for stderr and JSON fields for
//! `--report-json` (docs/cli.md).

use crate::machine::Machine;
use crate::observe::callstack;
use crate::observe::detect::{data_name, frames_json, frames_text, stack_json};
use lard_detector_hw::event::{AccessKind, LockId, ObjectKind};
use lard_detector_hw::object::{ObjectDetector, ObjectInfo, ObjectStats, OwnershipState};
use std::fmt::Write as _;

fn esc(t: &str) -> String {
    t.replace('\\', "\\\\").replace('"', "\\\"")
}

fn rw(write: bool) -> &'static str {
    if write {
        "write"
    } else {
        "read"
    }
}

/// `{name (0xaddr), ...}` for a set of locks.
fn lock_names(m: &Machine, locks: &[LockId]) -> String {
    let names: Vec<String> = locks
        .iter()
        .map(|&l| format!("{} ({l:#x})", data_name(m, l)))
        .collect();
    format!("{{{}}}", names.join(", "))
}

/// One line naming the object.
fn object_line(m: &Machine, o: &ObjectInfo) -> String {
    match o.kind {
        ObjectKind::Static => format!(
            "static object {} at {:#x}, {} bytes",
            data_name(m, o.addr),
            o.addr,
            o.size
        ),
        ObjectKind::Heap => {
            // `site` is the allocation call's return address.
            let site = if o.site == 0 {
                "an unknown site".to_string()
            } else {
                format!(
                    "the call returning to {:#x} <{}>",
                    o.site,
                    m.obs
                        .objects
                        .describe_pc(o.site)
                        .unwrap_or_else(|| "?".into())
                )
            };
            format!(
                "heap block at {:#x}, {} bytes, allocated by thread {} at {site}",
                o.addr, o.size, o.creator
            )
        }
    }
}

/// The statistics block (Tables 3-5).
pub fn stats_text(det: &ObjectDetector) -> String {
    let s = det.stats();
    let mut t = String::new();
    let by_state = |n: &[u64; 6]| {
        OwnershipState::ALL
            .iter()
            .map(|st| format!("{} {}", st.name(), n[st.index()]))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(t, "== object detector statistics ==");
    let _ = writeln!(
        t,
        "checked accesses by ownership state: {}; outside objects {}",
        by_state(&s.accesses),
        s.outside
    );
    let _ = writeln!(
        t,
        "access protocol: own {}, first owner {}, transfers {} (owner active), steals {} (owner blocked), inherits {}, revokes {}, lockset operations {}, object races {}",
        s.own, s.first_owner, s.transfers, s.steals, s.inherits, s.revokes, s.lockset_ops, s.object_races
    );
    let _ = writeln!(
        t,
        "objects: heap {}, static {}, freed {}, moved {}; lock acquires {}",
        s.heap_objects, s.static_objects, s.freed, s.moved, s.acquires
    );
    let _ = writeln!(
        t,
        "objects by final state: {}",
        by_state(&det.final_states())
    );
    t
}

/// The human report for stderr.
pub fn text(det: &ObjectDetector, m: &Machine) -> String {
    let mut t = String::new();
    let races = det.races();
    let _ = writeln!(
        t,
        "== lard object races (object) ==\nobject races: {}",
        races.len()
    );
    for (i, r) in races.iter().enumerate() {
        let o = &det.objects()[r.object];
        let a = &r.access;
        let write = a.kind == AccessKind::Write;
        let _ = writeln!(
            t,
            "object race {}: the lockset of a shared-modified object became empty",
            i + 1
        );
        let _ = write!(t, "  object: {}", object_line(m, o));
        if o.kind == ObjectKind::Heap && o.site != 0 {
            // The site is the call's return address: the call is before it.
            t += &frames_text(m, o.site - 1);
        }
        t.push('\n');
        let _ = writeln!(
            t,
            "  {} of {} bytes at {:#x} (object+{:#x}) by thread {} (kernel {}) holding {}\n    at {}{}",
            rw(write),
            a.size,
            a.addr,
            a.addr.wrapping_sub(o.addr),
            r.thread,
            a.origin.kthread,
            lock_names(m, &r.held),
            m.describe_pc(a.pc),
            frames_text(m, a.pc)
        );
        match &r.prior {
            Some(p) => {
                let _ = writeln!(
                    t,
                    "  previous {} by thread {}\n    at {}{}",
                    rw(p.write),
                    p.thread,
                    m.describe_pc(p.pc),
                    frames_text(m, p.pc)
                );
            }
            None => {
                let _ = writeln!(t, "  no earlier access by another thread is known");
            }
        }
        let _ = writeln!(
            t,
            "  state before: {}; object lockset before: {}",
            r.state_before.name(),
            lock_names(m, &r.lockset_before)
        );
    }
    t + &stats_text(det)
}

fn stats_json(s: &ObjectStats, finals: &[u64; 6]) -> String {
    let by_state = |n: &[u64; 6]| {
        let items: Vec<String> = OwnershipState::ALL
            .iter()
            .map(|st| format!("\"{}\":{}", st.name(), n[st.index()]))
            .collect();
        format!("{{{}}}", items.join(","))
    };
    format!(
        "{{\"accesses\":{},\"outside\":{},\"own\":{},\"first_owner\":{},\"transfers\":{},\"steals\":{},\"inherits\":{},\"revokes\":{},\"lockset_ops\":{},\"object_races\":{},\"heap_objects\":{},\"static_objects\":{},\"freed\":{},\"moved\":{},\"acquires\":{},\"final_states\":{}}}",
        by_state(&s.accesses),
        s.outside,
        s.own,
        s.first_owner,
        s.transfers,
        s.steals,
        s.inherits,
        s.revokes,
        s.lockset_ops,
        s.object_races,
        s.heap_objects,
        s.static_objects,
        s.freed,
        s.moved,
        s.acquires,
        by_state(finals)
    )
}

fn locks_json(m: &Machine, locks: &[LockId]) -> String {
    let items: Vec<String> = locks
        .iter()
        .map(|&l| format!("{{\"addr\":{l},\"data\":\"{}\"}}", esc(&data_name(m, l))))
        .collect();
    format!("[{}]", items.join(","))
}

/// The object detector's extra JSON fields (`"k":v,` pairs) for its
/// entry in the report (docs/cli.md).
pub fn json_fields(det: &ObjectDetector, m: &Machine) -> String {
    let races: Vec<String> = det
        .races()
        .iter()
        .map(|r| {
            let o = &det.objects()[r.object];
            let a = &r.access;
            let prior = match &r.prior {
                Some(p) => format!(
                    "{{\"pc\":{},\"symbol\":\"{}\",\"thread\":\"{}\",\"write\":{},\"frames\":{}}}",
                    callstack::pc(p.pc),
                    esc(&m.obs.objects.describe_pc(callstack::pc(p.pc)).unwrap_or_default()),
                    p.thread,
                    p.write,
                    stack_json(m, p.pc)
                ),
                None => "null".into(),
            };
            format!(
                "{{\"object\":{{\"addr\":{},\"size\":{},\"kind\":\"{}\",\"data\":\"{}\",\"site\":{},\"site_symbol\":\"{}\",\"site_frames\":{},\"creator\":\"{}\"}},\"pc\":{},\"symbol\":\"{}\",\"addr\":{},\"size\":{},\"write\":{},\"thread\":\"{}\",\"kthread\":{},\"frames\":{},\"prior\":{prior},\"state_before\":\"{}\",\"lockset_before\":{},\"held\":{}}}",
                o.addr,
                o.size,
                match o.kind {
                    ObjectKind::Heap => "heap",
                    ObjectKind::Static => "static",
                },
                esc(&data_name(m, o.addr)),
                o.site,
                esc(&m.obs.objects.describe_pc(o.site).unwrap_or_default()),
                frames_json(&m.obs.objects.frames(o.site.saturating_sub(1))),
                o.creator,
                callstack::pc(a.pc),
                esc(&m.obs.objects.describe_pc(callstack::pc(a.pc)).unwrap_or_default()),
                a.addr,
                a.size,
                a.kind == AccessKind::Write,
                r.thread,
                a.origin.kthread,
                stack_json(m, a.pc),
                r.state_before.name(),
                locks_json(m, &r.lockset_before),
                locks_json(m, &r.held)
            )
        })
        .collect();
    format!(
        "\"object_races\":[{}],\"stats\":{},",
        races.join(","),
        stats_json(det.stats(), &det.final_states())
    )
}
