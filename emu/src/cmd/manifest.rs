//! guests/manifest.toml: the guests with their ground truth (schema in the
//! manifest's header), flattened into runs — one per (guest, libc, config).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use toml::Value;

/// One run of one guest build with one argument list.
#[derive(Clone, Debug)]
pub struct GuestRun {
    /// `libc/name config-id`.
    pub label: String,
    /// The guest's manifest name.
    pub name: String,
    /// `glibc`, `musl` or `glibc-dynamic` ([`DYNAMIC`]).
    pub libc: String,
    /// The built executable.
    pub bin: PathBuf,
    /// Source file relative to guests/.
    pub source: String,
    /// Arguments.
    pub args: Vec<String>,
    /// True when the LARD detector must report races.
    pub racy: bool,
    /// Source lines of the racing (second) accesses.
    pub race_lines: BTreeSet<i64>,
    /// Reports may be any non-empty subset of race_lines.
    pub race_lines_any: bool,
    /// Lines reported in every schedule (with race_lines_any).
    pub race_lines_always: BTreeSet<i64>,
    /// The object race detector's verdict (`object_expect`): `Some(true)`
    /// when `--detector object` must report object races, `None` when the
    /// manifest does not say.
    pub object_racy: Option<bool>,
    /// Source lines of the allocation sites of the objects it must report
    /// (`object_sites`; empty: not checked).
    pub object_sites: BTreeSet<i64>,
    /// Expected stdout.
    pub stdout: String,
    /// Expected exit status.
    pub exit: i32,
}

fn lines(v: Option<&Value>) -> BTreeSet<i64> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_integer).collect())
        .unwrap_or_default()
}

/// The build of every C glibc guest as a dynamically linked executable.
pub const DYNAMIC: &str = "glibc-dynamic";

/// Reads the manifest; executables are looked up as `build/<libc>/<name>`
/// (`libc` is `glibc`, `musl` or [`DYNAMIC`]).
pub fn read(manifest: &Path, build: &Path) -> Result<Vec<GuestRun>, String> {
    let text =
        std::fs::read_to_string(manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    let doc: Value = toml::from_str(&text)
        .map_err(|e| super::toml_place::syntax_error(&manifest.display().to_string(), &text, &e))?;
    let guests = doc
        .get("guest")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{}: no [[guest]] tables", manifest.display()))?;
    let mut out = Vec::new();
    let bad = |what: &str| format!("{}: a guest has no valid '{what}'", manifest.display());
    for g in guests {
        let name = g
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("name"))?;
        let source = g
            .get("source")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("source"))?;
        let mut libcs: Vec<&str> = g
            .get("libc")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("libc"))?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        // Every C guest built for glibc is also built dynamically linked
        // (guests/tools/guests.py), with the same ground truth.
        let lang = g.get("lang").and_then(Value::as_str).unwrap_or("c");
        if libcs.contains(&"glibc") && lang != "rust" {
            libcs.push(DYNAMIC);
        }
        let none = [Value::Table(toml::map::Map::new())];
        let configs = g
            .get("configs")
            .and_then(Value::as_array)
            .map_or(&none[..], |c| &c[..]);
        for libc in libcs {
            for c in configs {
                let field = |k: &str| c.get(k).or_else(|| g.get(k));
                let id = c.get("id").and_then(Value::as_str).unwrap_or("");
                out.push(GuestRun {
                    label: format!("{libc}/{name}{}{id}", if id.is_empty() { "" } else { " " }),
                    name: name.to_string(),
                    libc: libc.to_string(),
                    bin: build.join(libc).join(name),
                    source: source.to_string(),
                    args: c
                        .get("args")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default(),
                    racy: field("expect").and_then(Value::as_str) == Some("racy"),
                    race_lines: lines(field("race_lines")),
                    race_lines_any: field("race_lines_any")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    race_lines_always: lines(field("race_lines_always")),
                    object_racy: field("object_expect")
                        .and_then(Value::as_str)
                        .map(|v| v == "racy"),
                    object_sites: lines(field("object_sites")),
                    stdout: field("stdout")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    exit: field("exit").and_then(Value::as_integer).unwrap_or(0) as i32,
                });
            }
        }
    }
    Ok(out)
}

impl GuestRun {
    /// This run as a campaign program (docs/campaigns.md): its label, its
    /// command, its ground truth, and the manifest's output and exit
    /// status as the behaviour every run should show.
    pub fn campaign_program(&self) -> crate::cmd::campaign::spec::Program {
        use crate::cmd::campaign::spec::{stdout_fnv, Expect, Program};
        Program {
            name: self.label.clone(),
            command: std::iter::once(self.bin.to_string_lossy().into_owned())
                .chain(self.args.iter().cloned())
                .collect(),
            build: None,
            racy: Some(self.racy),
            options: Vec::new(),
            expect: Some(Expect {
                exit: Some(i64::from(self.exit)),
                stdout_fnv: Some(stdout_fnv(self.stdout.as_bytes())),
            }),
        }
    }

    /// Checks a set of reported guest-source lines against the ground truth;
    /// `Err` says how they differ.
    pub fn check_lines(&self, got: &BTreeSet<i64>) -> Result<(), String> {
        if !self.racy {
            return if got.is_empty() {
                Ok(())
            } else {
                Err(format!("false races on lines {got:?}"))
            };
        }
        if self.race_lines_any {
            if got.is_empty()
                || !got.is_subset(&self.race_lines)
                || !self.race_lines_always.is_subset(got)
            {
                return Err(format!(
                    "lines {got:?}, expected a subset of {:?} with {:?}",
                    self.race_lines, self.race_lines_always
                ));
            }
            return Ok(());
        }
        if *got == self.race_lines {
            Ok(())
        } else {
            Err(format!("lines {got:?}, expected {:?}", self.race_lines))
        }
    }
}
