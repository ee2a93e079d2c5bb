//! `lard run --sarif FILE`: the reported races as a SARIF 2.1.0 log, the
//! format GitHub code scanning and CI dashboards read (docs/cli.md,
//! "SARIF").
//!
//! One result per race: the racing (later) access is the location, the
//! earlier access the related location, and both call stacks are thread
//! flows of one code flow (outermost frame first, as SARIF orders a flow).
//! A rule per race kind; the tool is lard with its version, the
//! invocation lard's command line.

use super::plural;
use crate::binary::dwarf::lines::Frame;
use crate::machine::Machine;
use crate::observe::callstack;
use crate::observe::detect::{data_name, kind_name, RaceLog, RacePair};
use lard_detector_hw::RaceKind;
use serde_json::{json, Value};

/// The schema a SARIF 2.1.0 log names.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The race kinds, in rule order.
const KINDS: [RaceKind; 3] = [
    RaceKind::WriteWrite,
    RaceKind::WriteRead,
    RaceKind::ReadWrite,
];

/// A rule's id: `data-race/write-read`.
fn rule_id(k: RaceKind) -> String {
    format!("data-race/{}", kind_name(k))
}

fn rule(k: RaceKind) -> Value {
    let (short, full) = match k {
        RaceKind::WriteWrite => (
            "Data race: two writes",
            "Two threads wrote the same memory and no synchronization ordered the writes.",
        ),
        RaceKind::WriteRead => (
            "Data race: a read after a write",
            "A thread read memory another thread wrote, and no synchronization ordered the write before the read.",
        ),
        RaceKind::ReadWrite => (
            "Data race: a write after a read",
            "A thread wrote memory another thread read, and no synchronization ordered the read before the write.",
        ),
    };
    json!({
        "id": rule_id(k),
        "name": format!("{}DataRace", match k {
            RaceKind::WriteWrite => "WriteWrite",
            RaceKind::WriteRead => "WriteRead",
            RaceKind::ReadWrite => "ReadWrite",
        }),
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": "Order the two accesses with a lock, an atomic operation or another synchronization, or make the data thread-private. A race a team has decided to keep can be suppressed (lard run --suppressions FILE)."},
        "defaultConfiguration": {"level": "error"}
    })
}

/// A source path as a URI reference: `file:///abs/path` for an absolute
/// path, the relative path otherwise; bytes outside RFC 3986's unreserved
/// set and `/` percent-encoded.
pub fn file_uri(path: &str) -> String {
    let mut s = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    if path.starts_with('/') {
        format!("file://{s}")
    } else {
        s
    }
}

/// A SARIF location for frame `f`, at instruction `pc` when known.
fn location(f: Option<&Frame>, pc: Option<u64>, message: Option<String>) -> Value {
    let mut physical = serde_json::Map::new();
    if let Some(file) = f.and_then(|f| f.file.as_deref()) {
        physical.insert("artifactLocation".into(), json!({"uri": file_uri(file)}));
        if let Some(line) = f.and_then(|f| f.line).filter(|&l| l > 0) {
            physical.insert("region".into(), json!({"startLine": line}));
        }
    }
    if let Some(pc) = pc {
        physical.insert("address".into(), json!({"absoluteAddress": pc}));
    }
    let mut loc = serde_json::Map::new();
    if !physical.is_empty() {
        loc.insert("physicalLocation".into(), Value::Object(physical));
    }
    if let Some(name) = f.and_then(|f| f.function.as_deref()) {
        loc.insert(
            "logicalLocations".into(),
            json!([{"name": name, "kind": "function"}]),
        );
    }
    if let Some(text) = message {
        loc.insert("message".into(), json!({ "text": text }));
    }
    Value::Object(loc)
}

/// `file:line (function)` of a frame, for messages.
fn frame_text(f: Option<&Frame>) -> String {
    let Some(f) = f else {
        return "an unknown place".into();
    };
    let file = f
        .file
        .as_deref()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .unwrap_or("??");
    let line = f.line.map_or("?".into(), |l| l.to_string());
    match &f.function {
        Some(func) => format!("{file}:{line} ({func})"),
        None => format!("{file}:{line}"),
    }
}

/// A site's frames, innermost first.
fn frames(m: &Machine, site: u64) -> Vec<Frame> {
    callstack::chains(m, site).0.concat()
}

/// A thread flow: the frames outermost first, each a level deeper.
fn thread_flow(id: &str, what: &str, frames: &[Frame], pc: u64) -> Value {
    let n = frames.len();
    let locations: Vec<Value> = frames
        .iter()
        .enumerate()
        .rev()
        .map(|(i, f)| {
            json!({
                "location": location(Some(f), (i == 0).then_some(pc), None),
                "nestingLevel": n - 1 - i,
            })
        })
        .collect();
    let locations = if locations.is_empty() {
        vec![json!({"location": location(None, Some(pc), None)})]
    } else {
        locations
    };
    json!({"id": id, "message": {"text": what}, "locations": locations})
}

/// 64-bit FNV-1a of `text`, in hex: a fingerprint that is the same for
/// the same race in every run.
fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn result(m: &Machine, (site, prev): (u64, u64), p: &RacePair) -> Value {
    let (now, before) = (frames(m, site), frames(m, prev));
    let access = if p.write { "write" } else { "read" };
    let prev_access = match p.kind {
        RaceKind::ReadWrite => "read",
        _ => "write",
    };
    let data = data_name(m, p.addr);
    let this = format!(
        "{access} of {} by thread {} at {}",
        plural(u64::from(p.size), "byte", "bytes"),
        p.thread,
        frame_text(now.first())
    );
    let earlier = format!(
        "previous {prev_access} by thread {} at {}",
        p.prev_thread,
        frame_text(before.first())
    );
    let key: Vec<String> = now
        .iter()
        .chain(&before)
        .map(|f| {
            format!(
                "{}@{}",
                f.function.as_deref().unwrap_or("?"),
                f.file
                    .as_deref()
                    .map(|p| p.rsplit('/').next().unwrap_or(p))
                    .unwrap_or("?")
            )
        })
        .collect();
    json!({
        "ruleId": rule_id(p.kind),
        "ruleIndex": KINDS.iter().position(|&k| k == p.kind).unwrap_or(0),
        "level": "error",
        "message": {"text": format!("{} race on {data}: {this}; {earlier}", kind_name(p.kind))},
        "locations": [location(now.first(), Some(callstack::pc(site)), Some(this.clone()))],
        "relatedLocations": [{
            "id": 1,
            "message": {"text": earlier.clone()},
            "physicalLocation": location(before.first(), Some(callstack::pc(prev)), None)
                .get("physicalLocation").cloned()
                .unwrap_or_else(|| json!({"address": {"absoluteAddress": callstack::pc(prev)}})),
        }],
        "codeFlows": [{
            "message": {"text": format!("the two accesses of the race on {data}")},
            "threadFlows": [
                thread_flow(&p.thread.to_string(), &this, &now, callstack::pc(site)),
                thread_flow(&p.prev_thread.to_string(), &earlier, &before, callstack::pc(prev)),
            ],
        }],
        "partialFingerprints": {
            "lardRace/v1": fingerprint(&format!("{}|{}", kind_name(p.kind), key.join("|"))),
        },
        "properties": {
            "count": p.count,
            "data": data,
            "address": p.addr,
            "size": p.size,
            "thread": p.thread.to_string(),
            "previousThread": p.prev_thread.to_string(),
        },
    })
}

/// The SARIF log of the races of `log` (the reported ones), for a run
/// started by `command_line`.
pub fn sarif(log: &RaceLog, m: &Machine, command_line: &str) -> String {
    let results: Vec<Value> = log
        .pairs
        .iter()
        .map(|(key, p)| result(m, *key, p))
        .collect();
    let doc = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "lard",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": KINDS.iter().map(|&k| rule(k)).collect::<Vec<_>>(),
            }},
            "invocations": [{
                "commandLine": command_line,
                "executionSuccessful": true,
            }],
            "properties": {"detector": log.detector, "racyDynamicAccesses": log.dre},
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(file_uri("/src/a b.c"), "file:///src/a%20b.c");
        assert_eq!(file_uri("lib/x.c"), "lib/x.c");
        assert_eq!(file_uri("/t/ä.c"), "file:///t/%C3%A4.c");
    }
}
