//! A campaign file (TOML) and the runs it names: every program crossed
//! with every value of every axis (docs/campaigns.md).
//!
//! ```toml
//! name = "detectors"
//! timeout = 120
//!
//! [[program]]
//! name = "racy_counter"
//! build = "gcc -O2 -g -pthread -o racy_counter racy_counter.c"
//! command = ["./racy_counter", "4"]
//! racy = true
//! expect = { exit = 0, stdout = "counter = 4000\n" }
//!
//! [axes]
//! detector = ["none", "fasttrack", "lardish"]
//! seed = [1, 2, 3]
//! env.OMP_NUM_THREADS = ["1", "2"]
//! variant = { default = [], no-prune = ["--no-prune"] }
//! ```
//!
//! An axis named like a `lard run` option (`detector`, `seed`, `sched`,
//! `hw-config`, …) gives that option each of its values (`true` gives a
//! flag alone, `false` leaves it out); `env.NAME` sets an environment
//! variable; `variant` names sets of extra options. A top-level `[env]`
//! table sets variables for every run, and `options` gives `lard run`
//! options to every run; a program's own `options` come after them. A
//! program's `expect` (exit status, standard output or its `stdout_fnv`)
//! is the behaviour its runs are compared with. `dir` is the directory
//! commands run in (default: the file's).

use crate::cmd::toml_place;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Value;

/// `timeout` when the campaign file gives none (seconds per run).
pub const DEFAULT_TIMEOUT: f64 = 600.0;

/// One program of a campaign.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Its name in results and figures.
    pub name: String,
    /// The guest and its arguments.
    pub command: Vec<String>,
    /// A shell command that builds it, run once before its runs.
    pub build: Option<String>,
    /// Ground truth: whether the program has a race (`None`: unknown).
    pub racy: Option<bool>,
    /// `lard run` options of this program's runs, after the campaign's.
    pub options: Vec<String>,
    /// The behaviour every run should show (`None`: not known).
    pub expect: Option<Expect>,
}

/// A program's expected behaviour: what its runs are compared with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    /// Exit status as a shell shows it.
    pub exit: Option<i64>,
    /// [`stdout_fnv`] of the standard output.
    pub stdout_fnv: Option<String>,
}

/// The hash results keep of a run's whole standard output (FNV-1a, 64
/// bits, 16 hex digits), so that outputs of any size are compared exactly.
pub fn stdout_fnv(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a(bytes, FNV_OFFSET))
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// One value of an axis: how it is named in results, and what it adds to
/// a run.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisValue {
    /// The value as results and figures show it.
    pub label: String,
    /// Options it adds to `lard run`.
    pub options: Vec<String>,
    /// Environment it sets.
    pub env: Vec<(String, String)>,
}

/// An axis: a name and its values, in the file's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// `detector`, `env.OMP_NUM_THREADS`, `variant`, …
    pub name: String,
    /// Its values.
    pub values: Vec<AxisValue>,
}

/// A parsed campaign file.
#[derive(Clone, Debug, PartialEq)]
pub struct Campaign {
    /// Its name.
    pub name: String,
    /// The directory commands and relative paths are taken from (the
    /// file's).
    pub dir: PathBuf,
    /// Seconds each run may take (`lard run --timeout`).
    pub timeout: f64,
    /// Environment every run gets (the file's `[env]`).
    pub env: Vec<(String, String)>,
    /// `lard run` options of every run (the file's `options`), before the
    /// axes' options.
    pub options: Vec<String>,
    /// The programs.
    pub programs: Vec<Program>,
    /// The axes, crossed.
    pub axes: Vec<Axis>,
    /// Runs that use the hardware model also write its instruction
    /// profile (`lard run --hw-profile`) into their results (the file's
    /// `hw_profile = true`).
    pub hw_profile: bool,
}

/// One run of a campaign.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Its position in the campaign's order (shards split on it).
    pub index: usize,
    /// The program's index in [`Campaign::programs`].
    pub program: usize,
    /// Per axis, the value's label.
    pub params: BTreeMap<String, String>,
    /// `lard run` options (before the guest).
    pub options: Vec<String>,
    /// Environment for the run.
    pub env: Vec<(String, String)>,
    /// The result's name: a hash of everything that makes the run.
    pub key: String,
}

/// Why a campaign file is unusable: one line naming the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(pub String);

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

fn err<T>(msg: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError(msg.into()))
}

/// A scalar as an option value or label.
fn scalar(v: &Value, what: &str) -> Result<String, SpecError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Integer(i) => Ok(i.to_string()),
        Value::Float(f) => Ok(f.to_string()),
        Value::Boolean(b) => Ok(b.to_string()),
        _ => err(format!("{what}: expected a string or a number")),
    }
}

/// The values of an option axis `name = [...]`.
fn option_axis(name: &str, v: &Value) -> Result<Axis, SpecError> {
    let Value::Array(items) = v else {
        return err(format!("axes.{name}: expected a list of values"));
    };
    if items.is_empty() {
        return err(format!("axes.{name}: no values"));
    }
    let values = items
        .iter()
        .map(|item| {
            let option = format!("--{name}");
            Ok(match item {
                Value::Boolean(true) => AxisValue {
                    label: "yes".into(),
                    options: vec![option],
                    env: Vec::new(),
                },
                Value::Boolean(false) => AxisValue {
                    label: "no".into(),
                    options: Vec::new(),
                    env: Vec::new(),
                },
                _ => {
                    let s = scalar(item, &format!("axes.{name}"))?;
                    AxisValue {
                        label: s.clone(),
                        options: vec![option, s],
                        env: Vec::new(),
                    }
                }
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Axis {
        name: name.into(),
        values,
    })
}

/// `env.NAME = [...]` axes.
fn env_axes(v: &Value) -> Result<Vec<Axis>, SpecError> {
    let Value::Table(t) = v else {
        return err("axes.env: expected a table of NAME = [values]");
    };
    t.iter()
        .map(|(var, vals)| {
            let Value::Array(items) = vals else {
                return err(format!("axes.env.{var}: expected a list of values"));
            };
            if items.is_empty() {
                return err(format!("axes.env.{var}: no values"));
            }
            let values = items
                .iter()
                .map(|i| {
                    let s = scalar(i, &format!("axes.env.{var}"))?;
                    Ok(AxisValue {
                        label: s.clone(),
                        options: Vec::new(),
                        env: vec![(var.clone(), s)],
                    })
                })
                .collect::<Result<Vec<_>, SpecError>>()?;
            Ok(Axis {
                name: format!("env.{var}"),
                values,
            })
        })
        .collect()
}

/// `variant = { name = [options...] }`.
fn variant_axis(v: &Value) -> Result<Axis, SpecError> {
    let Value::Table(t) = v else {
        return err("axes.variant: expected a table of name = [options]");
    };
    if t.is_empty() {
        return err("axes.variant: no variants");
    }
    let values = t
        .iter()
        .map(|(name, opts)| {
            let Value::Array(items) = opts else {
                return err(format!("axes.variant.{name}: expected a list of options"));
            };
            Ok(AxisValue {
                label: name.clone(),
                options: items
                    .iter()
                    .map(|i| scalar(i, &format!("axes.variant.{name}")))
                    .collect::<Result<_, _>>()?,
                env: Vec::new(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Axis {
        name: "variant".into(),
        values,
    })
}

/// Options `lard campaign` sets itself; an axis may not.
const RESERVED: &[&str] = &[
    "report-json",
    "stats-json",
    "hw-stats-json",
    "hw-profile",
    "timeout",
    "gdb",
];

fn program(i: usize, v: &Value) -> Result<Program, SpecError> {
    let Value::Table(t) = v else {
        return err(format!("program {}: expected a table", i + 1));
    };
    let command: Vec<String> = match t.get("command") {
        Some(Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|w| scalar(w, &format!("program {}: command", i + 1)))
            .collect::<Result<_, _>>()?,
        Some(Value::String(s)) if !s.trim().is_empty() => {
            s.split_whitespace().map(str::to_string).collect()
        }
        _ => return err(format!("program {}: no command", i + 1)),
    };
    let name = match t.get("name") {
        Some(Value::String(s)) => s.clone(),
        None => Path::new(&command[0])
            .file_name()
            .map_or_else(|| command[0].clone(), |n| n.to_string_lossy().into_owned()),
        Some(_) => return err(format!("program {}: name must be a string", i + 1)),
    };
    let build = match t.get("build") {
        Some(Value::String(s)) => Some(s.clone()),
        None => None,
        Some(_) => return err(format!("program {name}: build must be a string")),
    };
    let racy = match t.get("racy") {
        Some(Value::Boolean(b)) => Some(*b),
        None => None,
        Some(_) => return err(format!("program {name}: racy must be true or false")),
    };
    let options = match t.get("options") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|o| scalar(o, &format!("program {name}: options")))
            .collect::<Result<Vec<_>, _>>()?,
        Some(_) => return err(format!("program {name}: options must be a list")),
    };
    reserved_options(&options, &format!("program {name}: options"))?;
    let expect = match t.get("expect") {
        None => None,
        Some(v) => Some(expect(&name, v)?),
    };
    for k in t.keys() {
        if !["name", "command", "build", "racy", "options", "expect"].contains(&k.as_str()) {
            return err(format!("program {name}: unknown key `{k}`"));
        }
    }
    Ok(Program {
        name,
        command,
        build,
        racy,
        options,
        expect,
    })
}

/// `expect = { exit = N, stdout = "..." | stdout_fnv = "..." }`.
fn expect(name: &str, v: &Value) -> Result<Expect, SpecError> {
    let Value::Table(t) = v else {
        return err(format!("program {name}: expect must be a table"));
    };
    let mut e = Expect::default();
    for (k, x) in t {
        match (k.as_str(), x) {
            ("exit", Value::Integer(i)) => e.exit = Some(*i),
            ("stdout", Value::String(s)) if e.stdout_fnv.is_none() => {
                e.stdout_fnv = Some(stdout_fnv(s.as_bytes()))
            }
            ("stdout_fnv", Value::String(s))
                if e.stdout_fnv.is_none()
                    && s.len() == 16
                    && s.bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                e.stdout_fnv = Some(s.to_ascii_lowercase())
            }
            ("exit" | "stdout" | "stdout_fnv", _) => {
                return err(format!(
                    "program {name}: expect.{k}: expected {}",
                    match k.as_str() {
                        "exit" => "an integer",
                        "stdout" => "a string (and not with stdout_fnv)",
                        _ => "16 hex digits (and not with stdout)",
                    }
                ))
            }
            _ => return err(format!("program {name}: expect: unknown key `{k}`")),
        }
    }
    Ok(e)
}

/// Refuses options `lard campaign` sets itself.
fn reserved_options(options: &[String], what: &str) -> Result<(), SpecError> {
    for o in options {
        let name = o.trim_start_matches('-');
        if o.starts_with("--") && RESERVED.iter().any(|r| name.starts_with(r)) {
            return err(format!("{what}: lard campaign sets {o} itself"));
        }
    }
    Ok(())
}

impl Campaign {
    /// Parses campaign text; `dir` is where its relative paths start.
    pub fn parse(text: &str, dir: &Path, default_name: &str) -> Result<Campaign, SpecError> {
        let doc: toml::Table =
            toml::from_str(text).map_err(|e| SpecError(e.message().replace('\n', " ")))?;
        for k in doc.keys() {
            if ![
                "name",
                "dir",
                "timeout",
                "env",
                "options",
                "program",
                "axes",
                "hw_profile",
            ]
            .contains(&k.as_str())
            {
                return err(format!("unknown key `{k}`"));
            }
        }
        let name = match doc.get("name") {
            Some(Value::String(s)) => s.clone(),
            None => default_name.to_string(),
            Some(_) => return err("name must be a string"),
        };
        let timeout = match doc.get("timeout") {
            Some(Value::Integer(i)) if *i > 0 => *i as f64,
            Some(Value::Float(f)) if *f > 0.0 => *f,
            None => DEFAULT_TIMEOUT,
            Some(_) => return err("timeout must be a positive number of seconds"),
        };
        let hw_profile = match doc.get("hw_profile") {
            None => false,
            Some(Value::Boolean(b)) => *b,
            Some(_) => return err("hw_profile must be true or false"),
        };
        let env = match doc.get("env") {
            None => Vec::new(),
            Some(Value::Table(t)) => t
                .iter()
                .map(|(k, v)| Ok((k.clone(), scalar(v, &format!("env.{k}"))?)))
                .collect::<Result<Vec<_>, SpecError>>()?,
            Some(_) => return err("env must be a table of NAME = value"),
        };
        let options = match doc.get("options") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|o| scalar(o, "options"))
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return err("options must be a list of lard run options"),
        };
        reserved_options(&options, "options")?;
        let dir = match doc.get("dir") {
            None => dir.to_path_buf(),
            Some(Value::String(d)) => dir.join(d),
            Some(_) => return err("dir must be a string"),
        };
        let programs = match doc.get("program") {
            Some(Value::Array(a)) if !a.is_empty() => a
                .iter()
                .enumerate()
                .map(|(i, p)| program(i, p))
                .collect::<Result<Vec<_>, _>>()?,
            _ => return err("no [[program]]"),
        };
        let mut names = std::collections::BTreeSet::new();
        for p in &programs {
            if !names.insert(&p.name) {
                return err(format!("two programs are named {}", p.name));
            }
        }
        let mut axes = Vec::new();
        match doc.get("axes") {
            None => {}
            Some(Value::Table(t)) => {
                for (k, v) in t {
                    match k.as_str() {
                        "env" => axes.extend(env_axes(v)?),
                        "variant" => axes.push(variant_axis(v)?),
                        o if RESERVED.contains(&o) => {
                            return err(format!("axes.{o}: lard campaign sets --{o} itself"))
                        }
                        o => axes.push(option_axis(o, v)?),
                    }
                }
            }
            Some(_) => return err("axes must be a table"),
        }
        let c = Campaign {
            name,
            dir,
            timeout,
            env,
            options,
            programs,
            axes,
            hw_profile,
        };
        c.check_options()?;
        Ok(c)
    }

    /// Checks every run's `lard run` options as `lard run` checks them
    /// before its guest starts (an axis whose name is no option, a value
    /// of the wrong type, a misspelled option): the first problem, naming
    /// the program and the axis values of its run.
    fn check_options(&self) -> Result<(), SpecError> {
        use crate::cmd::run::check_option_words as parse_options;
        // Each set of options alone first, to name where a word is wrong.
        parse_options(&self.options).map_err(|e| SpecError(format!("options: {e}")))?;
        for p in &self.programs {
            parse_options(&p.options)
                .map_err(|e| SpecError(format!("program {}: options: {e}", p.name)))?;
        }
        for a in &self.axes {
            for v in &a.values {
                parse_options(&v.options)
                    .map_err(|e| SpecError(format!("axes.{} = {}: {e}", a.name, v.label)))?;
            }
        }
        // Then every run's options together (options that need others).
        let mut checked = std::collections::HashSet::new();
        for r in self.runs() {
            if !checked.insert(r.options.clone()) {
                continue;
            }
            if let Err(e) = crate::cmd::run::check_options_in(&r.options, Some(&self.dir)) {
                let mut what = format!("program {}", self.programs[r.program].name);
                for (axis, value) in &r.params {
                    what.push_str(&format!(", {axis} = {value}"));
                }
                return err(format!("{what}: lard run options: {e}"));
            }
        }
        Ok(())
    }

    /// Reads and parses a campaign file.
    pub fn load(path: &Path) -> Result<Campaign, SpecError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SpecError(format!("{}: {e}", path.display())))?;
        let dir = path
            .canonicalize()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_else(|| PathBuf::from("."));
        let stem = path
            .file_stem()
            .map_or_else(|| "campaign".into(), |s| s.to_string_lossy().into_owned());
        let shown = path.display().to_string();
        if let Err(e) = text.parse::<toml::Table>() {
            return Err(SpecError(toml_place::syntax_error(&shown, &text, &e)));
        }
        Campaign::parse(&text, &dir, &stem)
            .map_err(|e| SpecError(toml_place::checked_error(&shown, &text, &e.0)))
    }

    /// Every run: programs in order, each crossed with the axes (the last
    /// axis varies fastest).
    pub fn runs(&self) -> Vec<RunSpec> {
        let mut out = Vec::new();
        for (pi, p) in self.programs.iter().enumerate() {
            let mut combos: Vec<Vec<&AxisValue>> = vec![Vec::new()];
            for a in &self.axes {
                combos = combos
                    .into_iter()
                    .flat_map(|c| {
                        a.values.iter().map(move |v| {
                            let mut c = c.clone();
                            c.push(v);
                            c
                        })
                    })
                    .collect();
            }
            for combo in combos {
                let mut params = BTreeMap::new();
                let mut options = self.options.clone();
                options.extend(p.options.iter().cloned());
                let mut env = Vec::new();
                for (a, v) in self.axes.iter().zip(&combo) {
                    params.insert(a.name.clone(), v.label.clone());
                    options.extend(v.options.iter().cloned());
                    env.extend(v.env.iter().cloned());
                }
                let all_env: Vec<(String, String)> = self.env.iter().chain(&env).cloned().collect();
                // A profiled run is another run (its result holds more).
                let keyed: Vec<String> = if self.hw_profile {
                    options
                        .iter()
                        .cloned()
                        .chain(["--hw-profile".into()])
                        .collect()
                } else {
                    options.clone()
                };
                let key = run_key(p, &keyed, &all_env, self.timeout);
                out.push(RunSpec {
                    index: out.len(),
                    program: pi,
                    params,
                    options,
                    env,
                    key,
                });
            }
        }
        out
    }
}

impl Campaign {
    /// The campaign as a campaign file (`dir` absolute) that
    /// [`Campaign::parse`] reads back to the same runs, with the same
    /// result names. Fails for an axis no campaign file can spell.
    pub fn to_toml(&self) -> Result<String, SpecError> {
        use toml::Table;
        let strings = |v: &[String]| Value::Array(v.iter().cloned().map(Value::String).collect());
        let mut doc = Table::new();
        doc.insert("name".into(), Value::String(self.name.clone()));
        doc.insert(
            "dir".into(),
            Value::String(self.dir.to_string_lossy().into_owned()),
        );
        doc.insert("timeout".into(), Value::Float(self.timeout));
        if !self.env.is_empty() {
            let env: Table = self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            doc.insert("env".into(), Value::Table(env));
        }
        if !self.options.is_empty() {
            doc.insert("options".into(), strings(&self.options));
        }
        if self.hw_profile {
            doc.insert("hw_profile".into(), Value::Boolean(true));
        }
        let programs = self
            .programs
            .iter()
            .map(|p| {
                let mut t = Table::new();
                t.insert("name".into(), Value::String(p.name.clone()));
                t.insert("command".into(), strings(&p.command));
                if let Some(b) = &p.build {
                    t.insert("build".into(), Value::String(b.clone()));
                }
                if let Some(r) = p.racy {
                    t.insert("racy".into(), Value::Boolean(r));
                }
                if !p.options.is_empty() {
                    t.insert("options".into(), strings(&p.options));
                }
                if let Some(e) = &p.expect {
                    let mut x = Table::new();
                    if let Some(c) = e.exit {
                        x.insert("exit".into(), Value::Integer(c));
                    }
                    if let Some(h) = &e.stdout_fnv {
                        x.insert("stdout_fnv".into(), Value::String(h.clone()));
                    }
                    t.insert("expect".into(), Value::Table(x));
                }
                Value::Table(t)
            })
            .collect();
        doc.insert("program".into(), Value::Array(programs));
        let mut axes = Table::new();
        let mut env_axes = Table::new();
        for a in &self.axes {
            let labels = || {
                Value::Array(
                    a.values
                        .iter()
                        .map(|v| Value::String(v.label.clone()))
                        .collect(),
                )
            };
            if let Some(var) = a.name.strip_prefix("env.") {
                if !a
                    .values
                    .iter()
                    .all(|v| v.options.is_empty() && v.env == [(var.to_string(), v.label.clone())])
                {
                    return err(format!("axis {}: not an environment axis", a.name));
                }
                env_axes.insert(var.to_string(), labels());
            } else if a.name == "variant" {
                let t: Table = a
                    .values
                    .iter()
                    .map(|v| (v.label.clone(), strings(&v.options)))
                    .collect();
                axes.insert("variant".into(), Value::Table(t));
            } else {
                let flag = format!("--{}", a.name);
                let values = a
                    .values
                    .iter()
                    .map(|v| match (v.options.as_slice(), v.label.as_str()) {
                        ([o], "yes") if *o == flag => Ok(Value::Boolean(true)),
                        ([], "no") => Ok(Value::Boolean(false)),
                        ([o, x], l) if *o == flag && x == l => Ok(Value::String(l.to_string())),
                        _ => err(format!(
                            "axis {}: value {} is not `--{} {}`",
                            a.name, v.label, a.name, v.label
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                axes.insert(a.name.clone(), Value::Array(values));
            }
        }
        if !env_axes.is_empty() {
            axes.insert("env".into(), Value::Table(env_axes));
        }
        if !axes.is_empty() {
            doc.insert("axes".into(), Value::Table(axes));
        }
        toml::to_string(&doc).map_err(|e| SpecError(format!("cannot write the campaign: {e}")))
    }
}

/// FNV-1a, 64 bits: a hash that stays the same across builds and hosts.
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A run's result name: the hash of its program (name, command, build),
/// its options, its environment and its timeout, as 16 hex digits.
pub fn run_key(p: &Program, options: &[String], env: &[(String, String)], timeout: f64) -> String {
    let mut h = FNV_OFFSET;
    let mut add = |s: &str| h = fnv1a(&[s.as_bytes(), b"\0"].concat(), h);
    add(&p.name);
    p.command.iter().for_each(|w| add(w));
    add("--build");
    add(p.build.as_deref().unwrap_or(""));
    add("--options");
    options.iter().for_each(|w| add(w));
    add("--env");
    for (k, v) in env {
        add(k);
        add(v);
    }
    add(&timeout.to_string());
    format!("{h:016x}")
}

/// `I/N`: this process runs the runs whose index is I modulo N.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s
        .split_once('/')
        .ok_or_else(|| format!("`{s}`: expected I/N"))?;
    let i: usize = i.parse().map_err(|_| format!("`{s}`: I is not a number"))?;
    let n: usize = n.parse().map_err(|_| format!("`{s}`: N is not a number"))?;
    if n == 0 || i >= n {
        return Err(format!("`{s}`: need 0 <= I < N"));
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests;
