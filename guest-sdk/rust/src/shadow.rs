// SPDX-License-Identifier: MIT OR Apache-2.0
//! Test-only software model of a LARD CPU + detector ("shadow"): every op and
//! Tracked access the crate issues is also fed to it (under `cfg(test)`), so
//! native unit tests can check that the software clocks are mirrored exactly
//! and that the reported edges make race-free programs race-free and racy
//! ones racy. Semantics as docs/lardx86.md §1 and docs/detectors.md: per-byte
//! histories, identities are language ids after Thread and kernel identities
//! before, a fresh identity's clock is own entry 1.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Ident {
    Lang(u64),
    Kernel(u64),
}

type Vc = BTreeMap<Ident, u64>;

#[derive(Default, Clone)]
struct Byte {
    writes: BTreeMap<Ident, u64>,
    reads: BTreeMap<Ident, u64>,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Race {
    pub(crate) addr: usize,
    #[allow(dead_code)]
    pub(crate) who: Ident,
    #[allow(dead_code)]
    pub(crate) write: bool,
}

struct State {
    clocks: BTreeMap<Ident, Vc>,
    bytes: BTreeMap<usize, Byte>,
    races: Vec<Race>,
    next_kernel: u64,
}

static STATE: Mutex<State> = Mutex::new(State {
    clocks: BTreeMap::new(),
    bytes: BTreeMap::new(),
    races: Vec::new(),
    next_kernel: 0,
});

thread_local! {
    static IDENT: Cell<Option<Ident>> = const { Cell::new(None) };
}

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

fn fresh(s: &mut State, who: Ident) {
    s.clocks
        .entry(who)
        .or_insert_with(|| BTreeMap::from([(who, 1)]));
}

/// The identity of the calling kernel thread (a kernel identity until it
/// issues Thread).
pub(crate) fn current() -> Ident {
    let mut s = state();
    current_locked(&mut s)
}

fn current_locked(s: &mut State) -> Ident {
    let who = IDENT.with(|c| match c.get() {
        Some(i) => i,
        None => {
            let i = Ident::Kernel(s.next_kernel);
            s.next_kernel += 1;
            c.set(Some(i));
            i
        }
    });
    fresh(s, who);
    who
}

pub(crate) fn on_thread(id: u64) {
    let who = Ident::Lang(id);
    IDENT.with(|c| c.set(Some(who)));
    fresh(&mut state(), who);
}

pub(crate) fn on_write_vc(tid: u64, v: u64) {
    let mut s = state();
    let me = current_locked(&mut s);
    s.clocks.get_mut(&me).unwrap().insert(Ident::Lang(tid), v);
}

/// Entry `tid` of `who`'s detector clock (what ReadVC returns on LARD).
pub(crate) fn clock_entry(who: Ident, tid: u64) -> u64 {
    let s = state();
    s.clocks
        .get(&who)
        .and_then(|c| c.get(&Ident::Lang(tid)).copied())
        .unwrap_or(0)
}

/// The language entries of `who`'s detector clock.
pub(crate) fn lang_clock(who: Ident) -> BTreeMap<u64, u64> {
    let s = state();
    s.clocks
        .get(&who)
        .map(|c| {
            c.iter()
                .filter_map(|(k, &v)| match k {
                    Ident::Lang(i) => Some((*i, v)),
                    Ident::Kernel(_) => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn on_access(addr: usize, size: usize, write: bool) {
    let mut s = state();
    let me = current_locked(&mut s);
    let vc = s.clocks[&me].clone();
    let now = vc[&me];
    let ordered = |who: &Ident, e: u64| *who == me || e <= vc.get(who).copied().unwrap_or(0);
    let mut racy = false;
    for a in addr..addr + size {
        let b = s.bytes.entry(a).or_default();
        racy |= b.writes.iter().any(|(w, &e)| !ordered(w, e));
        if write {
            racy |= b.reads.iter().any(|(r, &e)| !ordered(r, e));
            b.writes.insert(me, now);
        } else {
            b.reads.insert(me, now);
        }
    }
    if racy {
        s.races.push(Race {
            addr,
            who: me,
            write,
        });
    }
}

pub(crate) fn on_clear(addr: usize, len: usize) {
    assert!(len > 0, "ClearHistory with len 0 faults on LARD");
    assert_eq!(
        addr / 4096,
        (addr + len - 1) / 4096,
        "ClearHistory crosses a page"
    );
    let mut s = state();
    for a in addr..addr + len {
        s.bytes.remove(&a);
    }
}

pub(crate) fn on_copy(src: usize, dst: usize, len: usize) {
    assert!(len > 0, "CopyHistory with len 0 faults on LARD");
    assert_eq!(
        src / 4096,
        (src + len - 1) / 4096,
        "CopyHistory src crosses a page"
    );
    assert_eq!(
        dst / 4096,
        (dst + len - 1) / 4096,
        "CopyHistory dst crosses a page"
    );
    let mut s = state();
    let hist: Vec<Option<Byte>> = (src..src + len).map(|a| s.bytes.get(&a).cloned()).collect();
    for (i, h) in hist.into_iter().enumerate() {
        match h {
            Some(b) => s.bytes.insert(dst + i, b),
            None => s.bytes.remove(&(dst + i)),
        };
    }
}

/// The races reported so far on accesses starting in `[lo, hi)`.
pub(crate) fn races_in(lo: usize, hi: usize) -> Vec<Race> {
    state()
        .races
        .iter()
        .filter(|r| r.addr >= lo && r.addr < hi)
        .copied()
        .collect()
}

/// The races on accesses to `value`'s bytes.
pub(crate) fn races_on<T: ?Sized>(value: &T) -> Vec<Race> {
    let lo = value as *const T as *const u8 as usize;
    races_in(lo, lo + std::mem::size_of_val(value))
}
