//! Race detectors as observers: `lard run --detector fasttrack|canonical|lardish`.
//!
//! The detector sees every event synchronously, before the access takes
//! effect. Races are aggregated per (PC, previous PC) pair with a count; the
//! number of racy dynamic accesses (DRE) and of distinct racy PCs are the
//! LARD paper's Table 3 measures. The report format is in docs/cli.md.

use crate::binary::dwarf::lines::Frame;
use crate::binary::program::ProgramSource;
use crate::machine::Machine;
use crate::observe::callstack;
use crate::observe::observer::{AccessMode, Control, Observer};
use crate::report::plural;
use lard_detector_hw::event::{Access, AccessKind, Event, EventKind, ThreadKey};
use lard_detector_hw::{Canonical, Detector, FastTrack, Lardish, ObjectDetector, Race, RaceKind};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::rc::Rc;

/// One distinct race: the later access's PC and the earlier one's.
#[derive(Clone, Debug)]
pub struct RacePair {
    /// Kind (earlier access first).
    pub kind: RaceKind,
    /// Thread of the later access.
    pub thread: ThreadKey,
    /// Kernel thread of the later access.
    pub kthread: u32,
    /// Thread of the earlier access.
    pub prev_thread: ThreadKey,
    /// The later access's epoch clock (0: not known).
    pub clock: u64,
    /// The earlier access's epoch clock (0: not known).
    pub prev_clock: u64,
    /// Data address of the first occurrence.
    pub addr: u64,
    /// Access size of the first occurrence.
    pub size: u32,
    /// Later access is a write.
    pub write: bool,
    /// How many racy dynamic accesses had this pair.
    pub count: u64,
}

/// What a detector found in one run.
#[derive(Clone, Debug, Default)]
pub struct RaceLog {
    /// Detector name.
    pub detector: &'static str,
    /// Racy dynamic accesses.
    pub dre: u64,
    /// Distinct racy PCs.
    pub pcs: BTreeSet<u64>,
    /// Distinct (pc, prev_pc) pairs.
    pub pairs: BTreeMap<(u64, u64), RacePair>,
    /// Data addresses of the pairs added or changed since
    /// [`Observer::fresh_race_addrs`] last took them.
    pub fresh: Vec<u64>,
}

/// The detector behind an observer; LARDISH is kept reachable for its statistics.
pub enum Engine {
    /// FastTrack, the default: called without dynamic dispatch, on the path
    /// of every checked access.
    FastTrack(Box<FastTrack>),
    /// Another software detector.
    Software(Box<dyn Detector>),
    /// The hardware model.
    Hardware(Rc<RefCell<Lardish>>),
    /// The object race detector, kept reachable for its objects and statistics.
    Object(Rc<RefCell<ObjectDetector>>),
}

/// An observer that runs a detector and logs its races.
pub struct DetectorObserver {
    engine: Engine,
    log: Rc<RefCell<RaceLog>>,
    exception: bool,
    /// The access the last data-race exception stopped before: checked
    /// already, not again when its instruction executes after all.
    raised: Option<Access>,
    /// LARDISH's accesses not yet handed over (never with an exception:
    /// see [`DetectorObserver::queue`]).
    pending: Vec<Event>,
}

/// Accesses LARDISH takes at a time ([`Lardish::events`]).
const QUEUE: usize = 256;

/// The detectors `--detector` accepts.
pub const DETECTORS: [&str; 4] = ["fasttrack", "canonical", "lardish", "object"];

impl DetectorObserver {
    /// A software detector by name (`fasttrack` or `canonical`).
    pub fn software(name: &str) -> Option<(DetectorObserver, Rc<RefCell<RaceLog>>)> {
        let engine = match name {
            "fasttrack" => Engine::FastTrack(Box::new(FastTrack::new().without_work())),
            "canonical" => Engine::Software(Box::new(Canonical::new())),
            _ => return None,
        };
        Some(Self::with(engine))
    }

    /// The LARDISH model.
    pub fn hardware(model: Rc<RefCell<Lardish>>) -> (DetectorObserver, Rc<RefCell<RaceLog>>) {
        Self::with(Engine::Hardware(model))
    }

    /// The object race detector (docs/detectors.md).
    pub fn object(det: Rc<RefCell<ObjectDetector>>) -> (DetectorObserver, Rc<RefCell<RaceLog>>) {
        Self::with(Engine::Object(det))
    }

    fn with(engine: Engine) -> (DetectorObserver, Rc<RefCell<RaceLog>>) {
        let name = match &engine {
            Engine::FastTrack(d) => d.name(),
            Engine::Software(d) => d.name(),
            Engine::Hardware(_) => "lardish",
            Engine::Object(_) => "object",
        };
        let log = Rc::new(RefCell::new(RaceLog {
            detector: name,
            ..RaceLog::default()
        }));
        (
            DetectorObserver {
                engine,
                log: log.clone(),
                exception: false,
                raised: None,
                pending: Vec::new(),
            },
            log,
        )
    }
}

impl DetectorObserver {
    /// Makes the first race of each racy PC pair a data-race exception:
    /// the observer asks the emulator to stop before the racy access takes
    /// effect (the first such stop ends an undebugged run).
    pub fn raise_on_race(mut self, yes: bool) -> Self {
        self.exception = yes;
        self
    }

    /// Whether access events wait in `pending`: for LARDISH, whose batch
    /// entry point prefetches a few accesses ahead (docs/lardish.md,
    /// "Speed"), unless a race must stop the guest
    /// before the racy access. Queued accesses reach the model in order,
    /// before any other event and before the run's results are read
    /// ([`Observer::finish`]), so the model sees the same event sequence.
    fn queue(&self) -> bool {
        matches!(self.engine, Engine::Hardware(_)) && !self.exception
    }

    /// Logs a race of access `a`; under `--on-race exception` the first
    /// race of a new racy PC pair stops the guest before `a` takes
    /// effect. The run ends there, unless a debugger resumes it: the
    /// instruction then executes again, and its access `a`, already
    /// checked and in the detector's history, is not checked twice.
    fn raced(&mut self, a: &Access, r: &Race) -> Control {
        let new = self.log.borrow_mut().record(a, r);
        if self.exception && new {
            self.raised = Some(*a);
            return Control::Stop;
        }
        Control::Continue
    }

    /// Hands the queued accesses to LARDISH and logs their races.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        if let Engine::Hardware(h) = &self.engine {
            let mut log = self.log.borrow_mut();
            let pending = &self.pending;
            h.borrow_mut().events(pending, |i, r| {
                if let EventKind::Access(a) = &pending[i].kind {
                    log.record(a, &r);
                }
            });
        }
        self.pending.clear();
    }
}

impl Observer for DetectorObserver {
    fn access_mode(&self) -> AccessMode {
        AccessMode::Tracked
    }

    fn wants_objects(&self) -> bool {
        matches!(self.engine, Engine::Object(_))
    }

    fn accepts_floors(&self) -> bool {
        match &self.engine {
            Engine::FastTrack(d) => d.accepts_floors(),
            Engine::Software(d) => d.accepts_floors(),
            Engine::Hardware(h) => h.borrow().accepts_floors(),
            Engine::Object(o) => o.borrow().accepts_floors(),
        }
    }

    fn race_clocks(&self, t: ThreadKey) -> Vec<u64> {
        let log = self.log.borrow();
        let mut out = Vec::new();
        for p in log.pairs.values() {
            if p.thread == t {
                out.push(p.clock);
            }
            if p.prev_thread == t {
                out.push(p.prev_clock);
            }
        }
        out
    }

    fn event(&mut self, e: &Event) -> Control {
        if let EventKind::Access(a) = &e.kind {
            if self.raised.as_ref() == Some(a) {
                self.raised = None;
                return Control::Continue;
            }
        }
        if self.queue() {
            if matches!(e.kind, EventKind::Access(_)) {
                self.pending.push(*e);
                if self.pending.len() >= QUEUE {
                    self.flush();
                }
                return Control::Continue;
            }
            self.flush();
        }
        let race = match &mut self.engine {
            Engine::FastTrack(d) => d.event(e),
            Engine::Software(d) => d.event(e),
            Engine::Hardware(h) => h.borrow_mut().event(e),
            Engine::Object(o) => o.borrow_mut().event(e),
        };
        if let (Some(r), EventKind::Access(a)) = (race, &e.kind) {
            return self.raced(a, &r);
        }
        Control::Continue
    }

    /// A software detector's access without the event around it (what
    /// [`Detector::event`] does with an access event); the other engines
    /// take the event.
    #[inline]
    fn access(&mut self, pc: u64, a: &Access) -> Control {
        if self.raised.as_ref() == Some(a) {
            self.raised = None;
            return Control::Continue;
        }
        let race = match &mut self.engine {
            // (Made without_work in `software`.)
            Engine::FastTrack(d) => d.access_without_work(a),
            Engine::Software(d) => d.access(a),
            _ => {
                return self.event(&Event {
                    pc,
                    origin: a.origin,
                    kind: EventKind::Access(*a),
                })
            }
        };
        if let Some(r) = race {
            return self.raced(a, &r);
        }
        Control::Continue
    }

    fn access_repeatable(&mut self, pc: u64, a: &Access) -> (Control, bool) {
        match &mut self.engine {
            // FastTrack's same-epoch rules leave a cell unchanged when its
            // thread repeats an access that raced with nothing: the
            // thread's clock only grows within its epoch, and the cell
            // changes only by another access to it. An access of another
            // thread that reports no race does not disturb that repeat:
            // if it is a write, or a read after a write, an event (the
            // synchronization ordering the two) came in between; two
            // reads leave each other's epoch in the cell (read-shared).
            Engine::FastTrack(d) if self.raised.is_none() => match d.access_without_work(a) {
                None => (Control::Continue, true),
                Some(r) => (self.raced(a, &r), false),
            },
            _ => (self.access(pc, a), false),
        }
    }

    fn prepare_fork(&mut self) -> Result<(), String> {
        if let Engine::Hardware(h) = &self.engine {
            h.borrow_mut().prepare_fork();
        }
        Ok(())
    }

    fn forked(&mut self, _child: bool) {
        if let Engine::Hardware(h) = &self.engine {
            h.borrow_mut().forked();
        }
    }

    fn finish(&mut self) {
        self.flush();
    }

    fn fresh_race_addrs(&mut self, out: &mut Vec<u64>) {
        out.append(&mut self.log.borrow_mut().fresh);
    }

    fn race_log(&mut self) -> Option<Rc<RefCell<RaceLog>>> {
        self.flush();
        Some(self.log.clone())
    }

    fn history(&self, addr: u64) -> Option<Vec<lard_detector_hw::Remembered>> {
        match &self.engine {
            Engine::FastTrack(d) => d.history(addr),
            Engine::Software(d) => d.history(addr),
            _ => None,
        }
    }
}

pub(crate) fn kind_name(k: RaceKind) -> &'static str {
    match k {
        RaceKind::WriteWrite => "write-write",
        RaceKind::WriteRead => "write-read",
        RaceKind::ReadWrite => "read-write",
    }
}

/// The report header's mode line: which accesses were checked and, in
/// binary mode, what a binary cannot tell (docs/binary-mode.md).
pub fn mode_line(m: &Machine) -> String {
    if m.obs.unchecked_go {
        return "mode: none — a Go program built without lard's race runtime: Go's own \
                scheduler and collector are not program code; build it with `lard go build` \
                to check it exactly (docs/go.md); nothing was checked"
            .to_string();
    }
    match &m.obs.binary {
        None => "mode: LARD (Tracked accesses, LARDx86 synchronization)".to_string(),
        Some(rt) if rt.program.is_empty() => "mode: binary — no program code (the executable has \
             no DWARF and no --program-code pattern matched: build with -g or name functions \
             or objects with --program-code); nothing was checked"
            .to_string(),
        Some(rt) => {
            // The limits that applied to this run (docs/binary-mode.md).
            let orders = if rt.plain_atomics > rt.inlined_atomics {
                "memory orders outside inlined atomic operations are not distinguished \
                 (a relaxed atomic load or store orders as acquire/release: races ordered \
                 only by relaxed atomics are missed)"
            } else {
                "memory orders outside inlined atomic operations are not distinguished"
            };
            // A stripped executable: what was checked, and what -g adds.
            let stripped = if rt.program_source == Some(ProgramSource::Text) {
                "; the executable has no DWARF: its whole code is program code \
                 (a -g build adds file:line and atomics from DWARF types)"
            } else {
                ""
            };
            // Clock floors raised (emu/src/machine/binary/floors.rs).
            let floors = match rt.floors_raised {
                0 => String::new(),
                n => format!(" ({n} clock floor(s) raised)"),
            };
            format!(
                "mode: binary (program code checked: {} range(s){stripped}; {} library call(s) \
                 intercepted{floors}, {} atomic instruction(s) and {} plain access(es) of \
                 atomic objects as synchronization, {} of them in inlined atomic operations \
                 with their memory orders; limits: plain-mov atomics are recognized inside \
                 inlined atomic operations (DWARF), on objects typed atomic in DWARF \
                 (globals and statics) and on locations once a lock-prefixed instruction or \
                 xchg touched them, {orders})",
                rt.program.ranges().len(),
                rt.calls,
                rt.atomics,
                rt.plain_atomics,
                rt.inlined_atomics
            )
        }
    }
}

/// What the report says of the mode when the user must act on it: that
/// nothing was checked (a Go program built without lard's runtime, a
/// binary without program code), or that a stripped executable's whole
/// code was checked without lines. `None` otherwise (`--stats` prints the
/// whole mode line).
pub fn mode_note(m: &Machine) -> Option<String> {
    if m.obs.unchecked_go {
        return Some(mode_line(m));
    }
    let rt = m.obs.binary.as_ref()?;
    if rt.program.is_empty() {
        return Some(mode_line(m));
    }
    (rt.program_source == Some(ProgramSource::Text)).then(|| {
        "note: the executable has no DWARF: its whole code is program code (a -g \
         build adds file:line and atomics from DWARF types)"
            .to_string()
    })
}

/// The accesses the detector checked: binary mode's observed program
/// accesses, else the Tracked accesses.
fn checked_accesses(m: &Machine) -> u64 {
    match &m.obs.binary {
        Some(rt) => rt.checked_accesses,
        None => m.obs.stats.tracked.iter().sum(),
    }
}

/// The location a data address belongs to, for the summary: a key that
/// tells locations apart (a heap block, a local or thread-local variable,
/// a global, else the address) and
/// its name (`counter`, `heap block allocated at prog.c:15`, `[stack]`).
fn location(m: &Machine, addr: u64) -> (String, String) {
    if let Some(b) = m.obs.binary.as_ref().and_then(|rt| rt.heap_block(addr)) {
        return (
            format!("heap {:#x}", b.addr),
            format!("heap block allocated at {}", call_site(m, b.site)),
        );
    }
    if let Some(v) = m.obs.locals.get(addr) {
        let name = crate::observe::locals::short(v);
        return (format!("local {name}"), name);
    }
    if let Some(d) = m.obs.objects.describe_data(addr) {
        // `name+0xoff[ in lib]` without the offset.
        let name = match d.split_once('+') {
            Some((name, rest)) => match rest.split_once(" in ") {
                Some((_, lib)) => format!("{name} in {lib}"),
                None => name.to_string(),
            },
            None => d,
        };
        return (format!("object {name}"), name);
    }
    let region = m.cpu.mem.region_name(addr).unwrap_or("?").to_string();
    (format!("address {addr:#x}"), region)
}

/// `file:line` of the call whose return address is `ret` (else its symbol).
pub(crate) fn call_site(m: &Machine, ret: u64) -> String {
    line_at(m, ret.wrapping_sub(1), ret)
}

/// `file:line` of the instruction at `pc` (else `fallback`'s symbol).
fn line_at(m: &Machine, pc: u64, fallback: u64) -> String {
    m.obs
        .objects
        .frames(pc)
        .first()
        .map(|f| {
            format!(
                "{}:{}",
                f.file.as_deref().unwrap_or("??"),
                f.line.map_or("?".into(), |l| l.to_string())
            )
        })
        .unwrap_or_else(|| m.describe_pc(fallback))
}

/// The OpenMP unit (task, section, loop chunk, team) language thread `t`
/// ran at its own clock `clock`, in words.
pub(crate) fn unit_text(m: &Machine, t: ThreadKey, clock: u64) -> Option<String> {
    let ThreadKey::Lang(id) = t else {
        return None;
    };
    let u = m.obs.lang_units.get(id, clock)?;
    Some(u.text(|a, ret| {
        if ret {
            call_site(m, a)
        } else {
            line_at(m, a, a)
        }
    }))
}

/// A name for a data address: a heap block (binary mode), a symbol in
/// whichever loaded object holds it, a local variable (observe::locals),
/// else the mapping's name (`[heap]`, `[stack]`, …).
pub(crate) fn data_name(m: &Machine, addr: u64) -> String {
    if let Some(b) = m.obs.binary.as_ref().and_then(|rt| rt.heap_block(addr)) {
        let site = call_site(m, b.site);
        return format!(
            "heap block of {} bytes at offset {}, allocated by {} at {}{}",
            b.size,
            addr - b.addr,
            b.thread,
            site,
            if b.live { "" } else { ", freed" }
        );
    }
    if let Some(v) = m.obs.locals.get(addr) {
        return crate::observe::locals::describe(v);
    }
    if let Some(d) = m.obs.objects.describe_data(addr) {
        return d;
    }
    m.cpu.mem.region_name(addr).unwrap_or("?").to_string()
}

/// The call stack of a site (observe::callstack) for the text report, one
/// `#n function file:line` per line, innermost first.
pub(crate) fn frames_text(m: &Machine, site: u64) -> String {
    let (chains, truncated) = callstack::chains(m, site);
    let mut s = String::new();
    let mut i = 0;
    for chain in &chains {
        for (k, f) in chain.iter().enumerate() {
            if f.function.as_deref() == Some(callstack::GAP_TEXT) {
                let _ = write!(s, "\n      #{i} {}", callstack::GAP_TEXT);
                i += 1;
                continue;
            }
            let _ = write!(s, "\n      #{i} {}", f.text());
            if k + 1 < chain.len() {
                s += " (inlined)";
            }
            i += 1;
        }
    }
    if truncated {
        s += "\n      (outer frames not recorded)";
    }
    s
}

/// The call stack of a site as JSON frames, innermost first.
pub(crate) fn stack_json(m: &Machine, site: u64) -> String {
    let (chains, _) = callstack::chains(m, site);
    frames_json(&chains.concat())
}

pub(crate) fn frames_json(frames: &[Frame]) -> String {
    let esc = |t: &str| t.replace('\\', "\\\\").replace('"', "\\\"");
    let items: Vec<String> = frames
        .iter()
        .map(|f| {
            format!(
                "{{\"function\":{},\"file\":{},\"line\":{}}}",
                f.function
                    .as_deref()
                    .map_or("null".into(), |x| format!("\"{}\"", esc(x))),
                f.file
                    .as_deref()
                    .map_or("null".into(), |x| format!("\"{}\"", esc(x))),
                f.line.map_or("null".into(), |l| l.to_string())
            )
        })
        .collect();
    format!("[{}]", items.join(","))
}

impl RaceLog {
    /// An empty log for `detector`.
    pub fn new(detector: &'static str) -> RaceLog {
        RaceLog {
            detector,
            ..RaceLog::default()
        }
    }

    /// The log without the pairs in `drop`: its racy dynamic accesses are
    /// the kept pairs' (at most the log's own: one access racing with two
    /// earlier ones counts in two pairs), its racy PCs theirs.
    pub fn without(&self, drop: &BTreeSet<(u64, u64)>) -> RaceLog {
        if drop.is_empty() {
            return self.clone();
        }
        let pairs: BTreeMap<(u64, u64), RacePair> = self
            .pairs
            .iter()
            .filter(|(k, _)| !drop.contains(k))
            .map(|(k, p)| (*k, p.clone()))
            .collect();
        RaceLog {
            detector: self.detector,
            dre: pairs.values().map(|p| p.count).sum::<u64>().min(self.dre),
            pcs: pairs.keys().map(|(site, _)| callstack::pc(*site)).collect(),
            pairs,
            fresh: Vec::new(),
        }
    }

    /// Records one racy access. An instruction that reads and writes (a
    /// read-modify-write such as `add [m], r`, or lard-cc's write stubs, a
    /// `lock or $0`) reaches the detector as a read then a write at one PC:
    /// its pair is reported as the write once a write occurred.
    /// True if a racy PC pair was new.
    pub fn record(&mut self, a: &Access, r: &Race) -> bool {
        self.dre += 1;
        let known = self.pairs.len();
        self.pcs.insert(callstack::pc(a.pc));
        let write = a.kind == AccessKind::Write;
        let mut fresh = false;
        for p in &r.priors {
            self.pairs
                .entry((a.pc, p.pc))
                .and_modify(|x| {
                    x.count += 1;
                    if write && !x.write {
                        x.write = true;
                        x.kind = p.kind;
                        x.thread = r.thread;
                        x.kthread = a.origin.kthread;
                        x.prev_thread = p.thread;
                        x.clock = r.clock;
                        x.prev_clock = p.clock;
                        x.addr = a.addr;
                        x.size = a.size;
                        fresh = true;
                    }
                })
                .or_insert(RacePair {
                    kind: p.kind,
                    thread: r.thread,
                    kthread: a.origin.kthread,
                    prev_thread: p.thread,
                    clock: r.clock,
                    prev_clock: p.clock,
                    addr: a.addr,
                    size: a.size,
                    write,
                    count: 1,
                });
        }
        if fresh || self.pairs.len() > known {
            self.fresh.push(a.addr);
        }
        self.pairs.len() > known
    }

    /// The race report for stderr: a header, what the user must know of
    /// the mode ([`mode_note`]), then both accesses of every distinct race
    /// with PC, symbol, source frames (innermost first), threads, kind,
    /// size, data address and the disassembled instruction.
    pub fn text(&self, m: &Machine) -> String {
        let mut s = format!("== lard races ({}) ==\n", self.detector);
        if let Some(note) = mode_note(m) {
            let _ = writeln!(s, "{note}");
        }
        for (i, ((pc, prev), p)) in self.pairs.iter().enumerate() {
            let _ = writeln!(
                s,
                "race {}: {} race, {} time(s)",
                i + 1,
                kind_name(p.kind),
                p.count
            );
            let _ = writeln!(
                s,
                "  {} of {} bytes at {:#x} <{}> by thread {} (kernel {}){}\n    at {}{}",
                if p.write { "write" } else { "read" },
                p.size,
                p.addr,
                data_name(m, p.addr),
                p.thread,
                p.kthread,
                unit_text(m, p.thread, p.clock).map_or(String::new(), |u| format!(": {u}")),
                m.describe_pc(*pc),
                frames_text(m, *pc)
            );
            let prev_kind = match p.kind {
                RaceKind::ReadWrite => "read",
                _ => "write",
            };
            let _ = writeln!(
                s,
                "  previous {prev_kind} by thread {}{}\n    at {}{}",
                p.prev_thread,
                unit_text(m, p.prev_thread, p.prev_clock)
                    .map_or(String::new(), |u| format!(": {u}")),
                m.describe_pc(*prev),
                frames_text(m, *prev)
            );
        }
        s
    }

    /// The report's last line, one sentence: `2 data races in 1 location
    /// (counter)`, or `no data races found in N checked accesses`.
    pub fn summary(&self, m: &Machine) -> String {
        if self.pairs.is_empty() {
            return format!(
                "no data races found in {}\n",
                plural(checked_accesses(m), "checked access", "checked accesses")
            );
        }
        let mut names: Vec<String> = Vec::new();
        let mut keys = BTreeSet::new();
        for p in self.pairs.values() {
            let (key, name) = location(m, p.addr);
            if keys.insert(key) && !names.contains(&name) {
                names.push(name);
            }
        }
        let shown = names.len().min(3);
        let more = if names.len() > shown { ", …" } else { "" };
        format!(
            "{} in {} ({}{more})\n",
            plural(self.pairs.len() as u64, "data race", "data races"),
            plural(keys.len() as u64, "location", "locations"),
            names[..shown].join(", ")
        )
    }

    /// `--stats`: the mode line, binary mode's pruning table and the
    /// detector's figures: racy dynamic accesses (DRE) and distinct racy
    /// PCs (the LARD paper's Table 3 measures).
    pub fn figures(&self, m: &Machine) -> String {
        let mut s = format!(
            "== lard race figures ({}) ==\n{}\n",
            self.detector,
            mode_line(m)
        );
        if let Some(rt) = &m.obs.binary {
            s += &rt.pruning_table();
        }
        let _ = writeln!(
            s,
            "racy dynamic accesses (DRE): {}, distinct racy PCs: {}",
            self.dre,
            self.pcs.len()
        );
        s
    }

    /// This detector's entry in the report JSON (docs/cli.md).
    pub fn json(&self, m: &Machine) -> String {
        self.json_with(m, "")
    }

    /// The JSON entry with `extra` fields (`"k":v,` pairs) after `pcs`.
    pub fn json_with(&self, m: &Machine, extra: &str) -> String {
        let esc = |t: String| t.replace('\\', "\\\\").replace('"', "\\\"");
        let races: Vec<String> = self
            .pairs
            .iter()
            .map(|((site, prev_site), p)| {
                let (pc, prev) = (callstack::pc(*site), callstack::pc(*prev_site));
                format!(
                    "{{\"pc\":{pc},\"symbol\":\"{}\",\"prev_pc\":{prev},\"prev_symbol\":\"{}\",\"addr\":{},\"data\":\"{}\",\"size\":{},\"kind\":\"{}\",\"thread\":\"{}\",\"kthread\":{},\"prev_thread\":\"{}\",\"unit\":{},\"prev_unit\":{},\"count\":{},\"frames\":{},\"prev_frames\":{}}}",
                    esc(m.obs.objects.describe_pc(pc).unwrap_or_default()),
                    esc(m.obs.objects.describe_pc(prev).unwrap_or_default()),
                    p.addr,
                    esc(data_name(m, p.addr)),
                    p.size,
                    kind_name(p.kind),
                    p.thread,
                    p.kthread,
                    p.prev_thread,
                    unit_text(m, p.thread, p.clock).map_or("null".into(), |u| format!("\"{}\"", esc(u))),
                    unit_text(m, p.prev_thread, p.prev_clock)
                        .map_or("null".into(), |u| format!("\"{}\"", esc(u))),
                    p.count,
                    stack_json(m, *site),
                    stack_json(m, *prev_site)
                )
            })
            .collect();
        format!(
            "\"{}\":{{\"dre\":{},\"pcs\":{},{extra}\"racy_pcs\":[{}],\"races\":[{}],\"mode\":\"{}\"}}",
            self.detector,
            self.dre,
            self.pcs.len(),
            self.pcs
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(","),
            races.join(","),
            if m.obs.unchecked_go {
                "none"
            } else if m.obs.binary.is_some() {
                "binary"
            } else {
                "lard"
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lard_detector_hw::event::Origin;
    use lard_detector_hw::PriorAccess;

    fn access(kind: AccessKind) -> Access {
        Access {
            pc: 0x40_1000,
            addr: 0x60_0000,
            size: 4,
            kind,
            tracked: true,
            stack: false,
            origin: Origin {
                kthread: 2,
                lthread: Some(5),
                core: 0,
            },
        }
    }

    fn race(kind: RaceKind, clock: u64) -> Race {
        Race {
            thread: ThreadKey::Lang(5),
            clock,
            access: access(AccessKind::Read),
            priors: vec![PriorAccess::new(kind, ThreadKey::Lang(4), 0x40_2000, 3)],
        }
    }

    /// A read-modify-write's read and write at one PC make one pair,
    /// reported as the write, whichever of its kinds came first.
    #[test]
    fn a_read_then_a_write_at_one_pc_is_reported_as_the_write() {
        let cases = [
            (
                [AccessKind::Read, AccessKind::Write],
                true,
                RaceKind::WriteWrite,
            ),
            (
                [AccessKind::Write, AccessKind::Read],
                true,
                RaceKind::WriteWrite,
            ),
            (
                [AccessKind::Read, AccessKind::Read],
                false,
                RaceKind::WriteRead,
            ),
        ];
        for (kinds, write, kind) in cases {
            let mut log = RaceLog::new("fasttrack");
            for (i, k) in kinds.into_iter().enumerate() {
                let rk = match k {
                    AccessKind::Read => RaceKind::WriteRead,
                    AccessKind::Write => RaceKind::WriteWrite,
                };
                log.record(&access(k), &race(rk, 7 + i as u64));
            }
            assert_eq!(log.dre, 2);
            assert_eq!(log.pairs.len(), 1);
            let p = &log.pairs[&(0x40_1000, 0x40_2000)];
            assert_eq!((p.write, p.kind, p.count), (write, kind, 2), "{kinds:?}");
            assert_eq!((p.prev_thread, p.prev_clock), (ThreadKey::Lang(4), 3));
        }
    }
}
