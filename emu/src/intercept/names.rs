//! What an OpenMP language thread is, for race reports: binary mode gives
//! every explicit task, section, loop chunk and team a language thread of
//! its own (docs/binary-mode.md), and a report names it beside its id —
//! "loop chunk [4, 8) of the loop at prog.c:9" — so that two chunks, tasks
//! or sections that one kernel thread ran can be told apart.

use std::collections::{HashMap, HashSet};

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
    /// The iterations of a `schedule(static)` loop that one chunk runs (a
    /// lard-cc build with `--lard-omp-iterations`): `count` iterations (one
    /// without a chunk size) from the one whose first iteration variable is
    /// `first`; `site` is the return address of the loop's begin mark.
    Iterations {
        /// Return address of the loop's begin mark.
        site: u64,
        /// The first iteration variable's value in the unit's first
        /// iteration.
        first: i64,
        /// Iterations per unit (the chunk size; 1 without one).
        count: u64,
        /// A window slot's holder (guest-sdk/cc/omp/window.c): the unit
        /// `k` ticks after this one starts at `first + k * stride`; 0: a
        /// single unit.
        stride: i64,
    },
    /// The SIMD lane that runs one iteration of a `simd` loop (a lard-cc
    /// build with `--lard-omp-iterations`): the one whose first iteration
    /// variable is `index`; `site` is the return address of the loop's
    /// begin mark.
    Lane {
        /// Return address of the loop's begin mark.
        site: u64,
        /// The first iteration variable's value.
        index: i64,
        /// A window slot's holder: the lane `k` ticks after this one runs
        /// iteration `index + k * stride`; 0: a single lane.
        stride: i64,
    },
    /// Team `n` (0-based, as `omp_get_team_num`) of a `teams` construct
    /// started by the call at `site`.
    Team {
        /// Return address of the call that started it.
        site: u64,
        /// The team's number.
        n: u64,
    },
    /// A goroutine, created by the `go` statement whose call returns to
    /// `site`, in a goroutine whose call-stack id was `stack`
    /// (observe::callstack; docs/go.md).
    Goroutine {
        /// Return address of the go statement's call.
        site: u64,
        /// The creator's call-stack id (0: none recorded).
        stack: u32,
    },
}

impl LangUnit {
    /// The holder `ticks` ticks after this one of a window slot (itself
    /// for a single unit).
    fn at_tick(self, ticks: u64) -> LangUnit {
        let k = i64::try_from(ticks).unwrap_or(i64::MAX);
        match self {
            LangUnit::Iterations {
                site,
                first,
                count,
                stride,
            } if stride != 0 => LangUnit::Iterations {
                site,
                first: first.wrapping_add(k.wrapping_mul(stride)),
                count,
                stride,
            },
            LangUnit::Lane {
                site,
                index,
                stride,
            } if stride != 0 => LangUnit::Lane {
                site,
                index: index.wrapping_add(k.wrapping_mul(stride)),
                stride,
            },
            u => u,
        }
    }

    /// The call site's return address.
    pub fn site(&self) -> u64 {
        match *self {
            LangUnit::Task { site, .. }
            | LangUnit::Section { site, .. }
            | LangUnit::Chunk { site, .. }
            | LangUnit::Iterations { site, .. }
            | LangUnit::Lane { site, .. }
            | LangUnit::Team { site, .. }
            | LangUnit::Goroutine { site, .. } => site,
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
            LangUnit::Iterations {
                first, count: 1, ..
            } => format!("iteration {first} of the static loop at {at}"),
            LangUnit::Iterations { first, count, .. } => {
                format!("chunk of {count} iterations from {first} of the static loop at {at}")
            }
            LangUnit::Lane { index, .. } => {
                format!("SIMD lane of iteration {index} of the simd loop at {at}")
            }
            LangUnit::Team { n, .. } => format!("team {n} of the teams at {at}"),
            LangUnit::Goroutine { .. } => format!("goroutine created at {at}"),
        }
    }
}

/// What `lardcc_note_unit(const struct lardcc_unit_note *n)` says: the
/// lard-cc runtime calls it when language thread `id` starts to run an
/// OpenMP unit, its own clock then at `clock` (guest-sdk/cc/rt.h has the
/// struct: seven 64-bit words `id, clock, kind, site, a, b, stride`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitNote {
    /// The language thread.
    pub id: u64,
    /// Its own clock when the unit starts.
    pub clock: u64,
    /// The unit.
    pub unit: LangUnit,
}

/// `kind` of a unit note: an explicit task (`a`: its body).
pub const NOTE_TASK: u64 = 1;
/// A task of a taskloop (`a`: its body).
pub const NOTE_TASKLOOP_TASK: u64 = 2;
/// A section (`a`: its number, 1-based).
pub const NOTE_SECTION: u64 = 3;
/// A chunk `[a, b)` of a loop over `long` iterations.
pub const NOTE_CHUNK: u64 = 4;
/// A chunk `[a, b)` of a loop over `unsigned long long` iterations.
pub const NOTE_CHUNK_ULL: u64 = 5;
/// A team (`a`: its number, 0-based).
pub const NOTE_TEAM: u64 = 6;
/// A chunk of a `schedule(static)` loop (`a`: the first iteration
/// variable's value, `b`: iterations per chunk).
pub const NOTE_ITERATIONS: u64 = 7;
/// A SIMD lane (`a`: the first iteration variable's value, `b`: the loop's
/// safelen, 0 for none).
pub const NOTE_LANE: u64 = 8;
/// A goroutine (`site`: its go statement; `a`: the creator's call-stack id).
pub const NOTE_GOROUTINE: u64 = 9;

impl UnitNote {
    /// The note at guest address `at` (`read` reads a 64-bit word); `None`
    /// when it cannot be read or names no kind of unit.
    pub fn read(read: impl Fn(u64) -> Option<u64>, at: u64) -> Option<UnitNote> {
        let w = |i: u64| read(at.wrapping_add(8 * i));
        let (id, clock, kind, site, a, b) = (w(0)?, w(1)?, w(2)?, w(3)?, w(4)?, w(5)?);
        let unit = match kind {
            NOTE_TASK | NOTE_TASKLOOP_TASK => LangUnit::Task {
                site,
                body: a,
                taskloop: kind == NOTE_TASKLOOP_TASK,
            },
            NOTE_SECTION => LangUnit::Section { site, n: a as u32 },
            NOTE_CHUNK => LangUnit::Chunk {
                site,
                lo: i128::from(a as i64),
                hi: i128::from(b as i64),
            },
            NOTE_CHUNK_ULL => LangUnit::Chunk {
                site,
                lo: i128::from(a),
                hi: i128::from(b),
            },
            NOTE_TEAM => LangUnit::Team { site, n: a },
            NOTE_LANE => LangUnit::Lane {
                site,
                index: a as i64,
                stride: w(6)? as i64,
            },
            NOTE_ITERATIONS => LangUnit::Iterations {
                site,
                first: a as i64,
                count: b,
                stride: w(6)? as i64,
            },
            NOTE_GOROUTINE => LangUnit::Goroutine {
                site,
                stack: a as u32,
            },
            _ => return None,
        };
        Some(UnitNote { id, clock, unit })
    }
}

/// The units of a run by language thread id. Binary mode and the lard-cc
/// runtime reuse an id once its previous holder happens before its next
/// (`IdPool` in intercept/hb.rs, docs/lard-cc.md), so an id's own clock
/// keeps growing across its holders and an epoch `clock@id` names one of
/// them: the last that started at or before `clock`.
#[derive(Default)]
pub struct LangUnits {
    by_id: HashMap<u64, Vec<(u64, LangUnit)>>,
    /// Ids some of whose holders were pruned: a clock of 0 names none.
    pruned: HashSet<u64>,
}

impl LangUnits {
    /// Language thread `id` runs `unit` from its own clock `start` on.
    pub fn insert(&mut self, id: u64, start: u64, unit: LangUnit) {
        let v = self.by_id.entry(id).or_default();
        if v.is_empty() {
            // Most ids have one holder (binary mode's always do): no room
            // for more until a second comes (a default first allocation
            // holds four, and a recursive task program names millions).
            v.reserve_exact(1);
        }
        // Holders start in clock order; keep the list sorted regardless.
        let at = v.partition_point(|(s, _)| *s <= start);
        v.insert(at, (start, unit));
    }

    /// The unit language thread `id` ran at its own clock `clock` (0: not
    /// known, answered only when the id had a single holder).
    pub fn get(&self, id: u64, clock: u64) -> Option<LangUnit> {
        let v = self.by_id.get(&id)?;
        if clock == 0 {
            return match v.as_slice() {
                [(_, u)] if !self.pruned.contains(&id) => Some(*u),
                _ => None,
            };
        }
        let at = v.partition_point(|(s, _)| *s <= clock);
        at.checked_sub(1).map(|i| v[i].1.at_tick(clock - v[i].0))
    }

    /// Entry `id` of every clock is at least `floor` (a clock floor): no
    /// access of `id` at a clock at or below it can be the earlier access
    /// of a race any more, and the later access of one is its latest
    /// holder's. So the holders whose clocks all lie at or below it (a
    /// later holder started at `floor + 1` or before) are forgotten, but
    /// for those a race found so far names (`pinned`: its clocks). A long
    /// run of worksharing units keeps names for one phase's units, not
    /// for every unit it ran.
    pub fn prune(&mut self, id: u64, floor: u64, pinned: &[u64]) {
        let Some(v) = self.by_id.get_mut(&id) else {
            return;
        };
        if pinned.contains(&0) {
            return;
        }
        // Holders [0, last) have a successor that started by floor + 1.
        let last = v
            .partition_point(|(s, _)| *s <= floor.saturating_add(1))
            .saturating_sub(1);
        if last == 0 {
            return;
        }
        let next: Vec<u64> = v.iter().skip(1).map(|(s, _)| *s).collect();
        let mut i = 0;
        v.retain(|&(s, _)| {
            let k = i;
            i += 1;
            k >= last || pinned.iter().any(|&c| c >= s && c < next[k])
        });
        self.pruned.insert(id);
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
            0,
            LangUnit::Chunk {
                site: 0x40_1000,
                lo: 4,
                hi: 8,
            },
        );
        u.insert(
            6,
            0,
            LangUnit::Section {
                site: 0x40_2000,
                n: 2,
            },
        );
        assert_eq!(u.get(7, 1), None);
        let line = |a: u64, ret: bool| format!("a.c:{}", if ret { a - 1 } else { a });
        let c = u.get(5, 3).unwrap();
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
        let it = |first, count| LangUnit::Iterations {
            site: 6,
            first,
            count,
            stride: 0,
        };
        assert_eq!(
            it(-3, 1).text(line),
            "iteration -3 of the static loop at a.c:5"
        );
        assert_eq!(
            it(8, 4).text(line),
            "chunk of 4 iterations from 8 of the static loop at a.c:5"
        );
        let lane = LangUnit::Lane {
            site: 6,
            index: 3,
            stride: 0,
        };
        assert_eq!(
            lane.text(line),
            "SIMD lane of iteration 3 of the simd loop at a.c:5"
        );
    }

    /// Every kind of note, read from guest words.
    #[test]
    fn notes_read_as_units() {
        let cases: [(u64, u64, u64, LangUnit); 9] = [
            (
                NOTE_TASK,
                0x500,
                0,
                LangUnit::Task {
                    site: 0x40,
                    body: 0x500,
                    taskloop: false,
                },
            ),
            (
                NOTE_TASKLOOP_TASK,
                0x500,
                0,
                LangUnit::Task {
                    site: 0x40,
                    body: 0x500,
                    taskloop: true,
                },
            ),
            (NOTE_SECTION, 2, 0, LangUnit::Section { site: 0x40, n: 2 }),
            (
                NOTE_CHUNK,
                (-8i64) as u64,
                (-4i64) as u64,
                LangUnit::Chunk {
                    site: 0x40,
                    lo: -8,
                    hi: -4,
                },
            ),
            (
                NOTE_CHUNK_ULL,
                u64::MAX - 3,
                u64::MAX,
                LangUnit::Chunk {
                    site: 0x40,
                    lo: i128::from(u64::MAX - 3),
                    hi: i128::from(u64::MAX),
                },
            ),
            (NOTE_TEAM, 3, 0, LangUnit::Team { site: 0x40, n: 3 }),
            (
                NOTE_LANE,
                5,
                2,
                LangUnit::Lane {
                    site: 0x40,
                    index: 5,
                    stride: 0,
                },
            ),
            (
                NOTE_ITERATIONS,
                (-2i64) as u64,
                4,
                LangUnit::Iterations {
                    site: 0x40,
                    first: -2,
                    count: 4,
                    stride: 0,
                },
            ),
            (
                NOTE_CHUNK,
                0,
                4,
                LangUnit::Chunk {
                    site: 0x40,
                    lo: 0,
                    hi: 4,
                },
            ),
        ];
        for (kind, a, b, unit) in cases {
            let words = [7, 11, kind, 0x40, a, b, 0];
            let read = |at: u64| words.get(((at - 0x1000) / 8) as usize).copied();
            assert_eq!(
                UnitNote::read(read, 0x1000),
                Some(UnitNote {
                    id: 7,
                    clock: 11,
                    unit
                }),
                "kind {kind}"
            );
        }
        let words = [7u64, 11, 99, 0x40, 0, 0];
        assert_eq!(
            UnitNote::read(
                |at| words.get(((at - 0x1000) / 8) as usize).copied(),
                0x1000
            ),
            None
        );
        assert_eq!(UnitNote::read(|_| None, 0x1000), None);
    }

    /// A window slot's holders follow one another one tick apart, each
    /// `stride` iterations on; a later note (a unit that ticked itself)
    /// takes over from its clock.
    #[test]
    fn a_window_slot_names_each_holder_by_its_tick() {
        let mut u = LangUnits::default();
        let it = |first, stride| LangUnit::Iterations {
            site: 6,
            first,
            count: 2,
            stride,
        };
        u.insert(4, 10, it(100, 128));
        u.insert(4, 13, it(484, 0));
        u.insert(4, 15, it(612, 128));
        let first = |c| match u.get(4, c) {
            Some(LangUnit::Iterations { first, .. }) => Some(first),
            _ => None,
        };
        let cases = [
            (9, None),
            (10, Some(100)),
            (11, Some(228)),
            (12, Some(356)),
            (13, Some(484)),
            (14, Some(484)),
            (15, Some(612)),
            (17, Some(868)),
        ];
        for (clock, want) in cases {
            assert_eq!(first(clock), want, "clock {clock}");
        }
        let lane = LangUnit::Lane {
            site: 6,
            index: 5,
            stride: -3,
        };
        u.insert(8, 1, lane);
        assert!(matches!(
            u.get(8, 3),
            Some(LangUnit::Lane { index: -1, .. })
        ));
    }

    /// A reused id names the holder whose clocks contain the epoch's.
    #[test]
    fn a_reused_id_is_told_apart_by_the_clock() {
        let chunk = |lo| LangUnit::Chunk {
            site: 1,
            lo,
            hi: lo + 4,
        };
        let mut u = LangUnits::default();
        u.insert(9, 1, chunk(0));
        u.insert(9, 7, chunk(8));
        u.insert(9, 4, chunk(4));
        let cases = [
            (1, Some(chunk(0))),
            (3, Some(chunk(0))),
            (4, Some(chunk(4))),
            (6, Some(chunk(4))),
            (7, Some(chunk(8))),
            (99, Some(chunk(8))),
            (0, None),
        ];
        for (clock, want) in cases {
            assert_eq!(u.get(9, clock), want, "clock {clock}");
        }
        // Before its first holder started, and unknown with one holder.
        u.insert(2, 5, chunk(12));
        assert_eq!(u.get(2, 4), None);
        assert_eq!(u.get(2, 0), Some(chunk(12)));
    }

    /// A floor forgets the holders whose clocks all lie at or below it,
    /// but those a race names; the latest holder always stays.
    #[test]
    fn floors_forget_the_holders_below_them() {
        let chunk = |lo| LangUnit::Chunk {
            site: 1,
            lo,
            hi: lo + 4,
        };
        // Holders of id 9 from clocks 1, 4, 7 and 10: chunks 0, 4, 8, 12.
        let held = || {
            let mut u = LangUnits::default();
            for (i, s) in [1, 4, 7, 10].into_iter().enumerate() {
                u.insert(9, s, chunk(4 * i as i128));
            }
            u
        };
        // (floor, pinned clocks, the chunks still named at clocks 1, 4, 7, 10)
        type Case<'a> = (u64, &'a [u64], [Option<i128>; 4]);
        let cases: [Case; 8] = [
            (0, &[], [Some(0), Some(4), Some(8), Some(12)]),
            (2, &[], [Some(0), Some(4), Some(8), Some(12)]),
            (3, &[], [None, Some(4), Some(8), Some(12)]),
            (6, &[], [None, None, Some(8), Some(12)]),
            (50, &[], [None, None, None, Some(12)]),
            (50, &[5], [None, Some(4), None, Some(12)]),
            (50, &[2, 8], [Some(0), None, Some(8), Some(12)]),
            (50, &[0], [Some(0), Some(4), Some(8), Some(12)]),
        ];
        for (floor, pinned, want) in cases {
            let mut u = held();
            u.prune(9, floor, pinned);
            let got = [1, 4, 7, 10].map(|c| {
                u.get(9, c).map(|x| match x {
                    LangUnit::Chunk { lo, .. } => lo,
                    _ => -1,
                })
            });
            // A pruned holder's clocks fall to the holder before it, if any
            // stayed: compare only the clocks whose holder stayed.
            for (i, w) in want.iter().enumerate() {
                if w.is_some() {
                    assert_eq!(got[i], *w, "floor {floor} pinned {pinned:?} clock #{i}");
                }
            }
            let stayed = u.by_id[&9].len();
            assert_eq!(
                stayed,
                want.iter().filter(|w| w.is_some()).count(),
                "floor {floor} pinned {pinned:?}"
            );
            assert_eq!(u.get(9, 0), None, "an unknown clock names nobody");
        }
        let mut u = held();
        u.prune(3, 50, &[]);
        assert_eq!(u.by_id[&9].len(), 4, "another id's floor");
    }
}
