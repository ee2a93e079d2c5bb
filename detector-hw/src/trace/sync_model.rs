//! The runtime's lock model: acquire and release as ReadVC/WriteVC
//! sequences.

use std::collections::BTreeMap;

use crate::clock::INITIAL_OWN_CLOCK;
use crate::event::{Event, EventKind, LangThreadId, LardOp, Origin};

/// The runtime side of lock synchronization through LARDx86 vector-clock
/// instructions: it owns the architectural clock values of language threads
/// and locks and emits the ReadVC/WriteVC sequences a runtime would execute.
///
/// * acquire: join the lock's clock into the thread's clock, entry by entry
///   (ReadVC each entry the lock knows, WriteVC those that grow);
/// * release: the lock's clock becomes the thread's clock (ReadVC of every
///   entry), then the thread's own entry is incremented (WriteVC).
///
/// Language threads start with own entry [`INITIAL_OWN_CLOCK`], like the
/// detector's clocks. Only language threads can synchronise this way (WriteVC
/// names language-thread entries only), so both operations emit nothing for
/// an origin without a language thread.
#[derive(Clone, Debug, Default)]
pub struct SyncModel {
    threads: BTreeMap<LangThreadId, BTreeMap<LangThreadId, u64>>,
    locks: BTreeMap<u64, BTreeMap<LangThreadId, u64>>,
}

impl SyncModel {
    /// No threads, no locks.
    pub fn new() -> SyncModel {
        SyncModel::default()
    }

    fn clock_mut(&mut self, t: LangThreadId) -> &mut BTreeMap<LangThreadId, u64> {
        self.threads
            .entry(t)
            .or_insert_with(|| BTreeMap::from([(t, INITIAL_OWN_CLOCK)]))
    }

    /// Entry `entry` of language thread `t`'s clock.
    pub fn entry(&self, t: LangThreadId, entry: LangThreadId) -> u64 {
        match self.threads.get(&t) {
            Some(c) => c.get(&entry).copied().unwrap_or(0),
            None if t == entry => INITIAL_OWN_CLOCK,
            None => 0,
        }
    }

    /// The events of `origin`'s language thread acquiring `lock` at `pc`.
    pub fn acquire(&mut self, origin: Origin, lock: u64, pc: u64) -> Vec<Event> {
        let Some(t) = origin.lthread else {
            return Vec::new();
        };
        let lock_clock = self.locks.get(&lock).cloned().unwrap_or_default();
        let clock = self.clock_mut(t);
        let mut events = Vec::new();
        let mut op = |op: LardOp| events.push(lard_event(origin, pc, op));
        for (&tid, &value) in &lock_clock {
            let mine = clock.get(&tid).copied().unwrap_or(0);
            op(LardOp::ReadVc { tid, value: mine });
            if value > mine {
                op(LardOp::WriteVc { tid, value });
                clock.insert(tid, value);
            }
        }
        events
    }

    /// The events of `origin`'s language thread releasing `lock` at `pc`.
    pub fn release(&mut self, origin: Origin, lock: u64, pc: u64) -> Vec<Event> {
        let Some(t) = origin.lthread else {
            return Vec::new();
        };
        let clock = self.clock_mut(t);
        let mut events: Vec<Event> = clock
            .iter()
            .map(|(&tid, &value)| lard_event(origin, pc, LardOp::ReadVc { tid, value }))
            .collect();
        let snapshot = clock.clone();
        let own = clock.entry(t).or_insert(INITIAL_OWN_CLOCK);
        *own = own.saturating_add(1);
        let value = *own;
        events.push(lard_event(origin, pc, LardOp::WriteVc { tid: t, value }));
        self.locks.insert(lock, snapshot);
        events
    }
}

fn lard_event(origin: Origin, pc: u64, op: LardOp) -> Event {
    Event {
        pc,
        origin,
        kind: EventKind::Lard(op),
    }
}
