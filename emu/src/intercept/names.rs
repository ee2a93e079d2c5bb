//! What an OpenMP language thread is, for race reports: binary mode gives
//! every explicit task, section, loop chunk and team a language thread of
//! its own (docs/binary-mode.md), and a report names it beside its id —
//! "loop chunk [4, 8) of the loop at prog.c:9" — so that two chunks, tasks
//! or sections that one kernel thread ran can be told apart.

use std::collections::HashMap;

/// An OpenMP unit that runs as a language thread of its own. `site` is the
/// return address of the libgomp call that created or handed it out (the
/// program's call instruction follows from it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LangUnit {
    /// An explicit task created by the `GOMP_task` call at `site`, or one
    /// of the tasks of the `GOMP_taskloop` call there (`taskloop`), whose
    /// outlined body starts at `body` (gcc attributes the creating call to
    /// the enclosing construct's line: the body's line tells tasks apart).
    Task {
        /// Return address of the creating call.
        site: u64,
        /// Entry of the task's outlined body.
        body: u64,
        /// Created by a taskloop.
        taskloop: bool,
    },
    /// Section `n` (1-based, libgomp's numbering) of a `sections`
    /// construct, handed out by the call at `site`.
    Section {
        /// Return address of the call that handed it out.
        site: u64,
        /// The section's number.
        n: u32,
    },
    /// The iterations `[lo, hi)` of a worksharing loop, handed out by the
    /// call at `site`.
    Chunk {
        /// Return address of the call that handed it out.
        site: u64,
        /// First iteration.
        lo: i128,
        /// One past the last iteration.
        hi: i128,
    },
    /// Team `n` (0-based, as `omp_get_team_num`) of a `teams` construct
    /// started by the call at `site`.
    Team {
        /// Return address of the call that started it.
        site: u64,
        /// The team's number.
        n: u64,
    },
}

impl LangUnit {
    /// The call site's return address.
    pub fn site(&self) -> u64 {
        match *self {
            LangUnit::Task { site, .. }
            | LangUnit::Section { site, .. }
            | LangUnit::Chunk { site, .. }
            | LangUnit::Team { site, .. } => site,
        }
    }

    /// The unit in words; `line` gives an address's `file:line` (the call
    /// site's from its return address, `true`; a function entry's, `false`).
    pub fn text(&self, line: impl Fn(u64, bool) -> String) -> String {
        let at = line(self.site(), true);
        match *self {
            LangUnit::Task {
                body,
                taskloop: false,
                ..
            } => format!("task at {}, created at {at}", line(body, false)),
            LangUnit::Task {
                body,
                taskloop: true,
                ..
            } => format!("task at {} of the taskloop at {at}", line(body, false)),
            LangUnit::Section { n, .. } => format!("section {n} of the sections at {at}"),
            LangUnit::Chunk { lo, hi, .. } => {
                format!("loop chunk [{lo}, {hi}) of the loop at {at}")
            }
            LangUnit::Team { n, .. } => format!("team {n} of the teams at {at}"),
        }
    }
}

/// The units of a run by language thread id (binary mode never reuses an
/// id).
#[derive(Default)]
pub struct LangUnits {
    by_id: HashMap<u64, LangUnit>,
}

impl LangUnits {
    /// Language thread `id` runs `unit`.
    pub fn insert(&mut self, id: u64, unit: LangUnit) {
        self.by_id.insert(id, unit);
    }

    /// The unit language thread `id` ran, if it was one.
    pub fn get(&self, id: u64) -> Option<LangUnit> {
        self.by_id.get(&id).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_as_their_construct() {
        let mut u = LangUnits::default();
        u.insert(
            5,
            LangUnit::Chunk {
                site: 0x40_1000,
                lo: 4,
                hi: 8,
            },
        );
        u.insert(
            6,
            LangUnit::Section {
                site: 0x40_2000,
                n: 2,
            },
        );
        assert_eq!(u.get(7), None);
        let line = |a: u64, ret: bool| format!("a.c:{}", if ret { a - 1 } else { a });
        let c = u.get(5).unwrap();
        assert_eq!(c.site(), 0x40_1000);
        let chunk = LangUnit::Chunk {
            site: 10,
            lo: 4,
            hi: 8,
        };
        assert_eq!(chunk.text(line), "loop chunk [4, 8) of the loop at a.c:9");
        let sec = LangUnit::Section { site: 4, n: 2 };
        assert_eq!(sec.text(line), "section 2 of the sections at a.c:3");
        let t = LangUnit::Task {
            site: 8,
            body: 11,
            taskloop: false,
        };
        assert_eq!(t.text(line), "task at a.c:11, created at a.c:7");
        let t = LangUnit::Task {
            site: 8,
            body: 12,
            taskloop: true,
        };
        assert_eq!(t.text(line), "task at a.c:12 of the taskloop at a.c:7");
        let t = LangUnit::Team { site: 3, n: 0 };
        assert_eq!(t.text(line), "team 0 of the teams at a.c:2");
    }
}
