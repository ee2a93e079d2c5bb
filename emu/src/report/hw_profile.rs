//! `lard run --detector lardish --hw-profile FILE`: the LARDISH model's
//! instruction-level profile as JSON (docs/lardish.md, "Instruction
//! profile"): `{"totals": {...}, "instructions": [{...}, ...]}`, one row
//! per guest instruction that made an event, costliest first, each with
//! its PC, function, file and line.

use crate::machine::Machine;
use lard_detector_hw::lardish::{HwProfile, ProfileCounters};
use serde_json::{json, Map, Value};

/// The counters as a JSON object.
fn counters(c: &ProfileCounters) -> Map<String, Value> {
    let text = format!("{{{}}}", c.json_members());
    match serde_json::from_str(&text) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// The profile `p` of a run of machine `m`.
pub fn json(p: &HwProfile, m: &Machine) -> String {
    let rows: Vec<Value> = p
        .rows()
        .iter()
        .map(|(pc, c)| {
            let frame = m.obs.objects.frames(*pc).into_iter().next();
            let function = frame
                .as_ref()
                .and_then(|f| f.function.clone())
                .or_else(|| m.obs.objects.describe_pc(*pc));
            let mut row = Map::new();
            row.insert("pc".into(), json!(pc));
            row.insert("function".into(), json!(function));
            row.insert(
                "file".into(),
                json!(frame.as_ref().and_then(|f| f.file.clone())),
            );
            row.insert("line".into(), json!(frame.as_ref().and_then(|f| f.line)));
            row.extend(counters(c));
            Value::Object(row)
        })
        .collect();
    let v = json!({
        "totals": Value::Object(counters(&p.totals())),
        "instructions": rows,
    });
    v.to_string()
}
