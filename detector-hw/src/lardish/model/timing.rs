//! The timing model's state: the LARDISH cache hierarchy, the baseline
//! cost models and the asynchronous checking cores.

use crate::lardish::baselines::Baselines;
use crate::lardish::cache::Hierarchy;
use crate::lardish::config::HwConfig;

/// The timing model: the LARDISH cache hierarchy, the baseline cost models
/// and the asynchronous checking cores.
#[derive(Debug)]
pub(in crate::lardish) struct Timing {
    pub(in crate::lardish) hier: Hierarchy,
    /// The baseline machines, run later in batches ([`baselines`],
    /// [`lanes`]): the no-detection hierarchy, the software-FastTrack
    /// hierarchy and the software FastTrack detector whose work (paths per
    /// cell) the FastTrack cost model and LARDISH's software checks charge
    /// at the measured [`FtCost`]. What they add to `cycles_no_detection`,
    /// `cycles_fasttrack` and `cycles_lardish` reaches `stats` in
    /// [`Lardish::stats`].
    pub(in crate::lardish) baselines: Baselines,
    /// The baselines left their thread for a fork ([`Lardish::prepare_fork`]).
    pub(in crate::lardish) parked: bool,
    /// Per asynchronous checking core: when it is free.
    pub(in crate::lardish) async_busy: Vec<u64>,
    /// Per core: completion time of its outstanding asynchronous checks.
    pub(in crate::lardish) outstanding: Vec<u64>,
}

impl Timing {
    /// The machine `cfg`, idle.
    pub(in crate::lardish) fn new(cfg: &HwConfig) -> Timing {
        Timing {
            hier: Hierarchy::new(cfg),
            baselines: Baselines::threaded(cfg),
            parked: false,
            async_busy: vec![0; cfg.async_cores as usize],
            outstanding: vec![0; cfg.cores as usize],
        }
    }

    /// See [`Lardish::prepare_fork`](crate::Lardish::prepare_fork).
    pub(in crate::lardish) fn prepare_fork(&mut self) {
        self.parked |= self.baselines.park();
    }

    /// See [`Lardish::forked`](crate::Lardish::forked).
    pub(in crate::lardish) fn forked(&mut self) {
        if std::mem::take(&mut self.parked) {
            self.baselines.unpark();
        }
    }

    /// Core `c` hands a software check of `cost` cycles, at its time `now`,
    /// to an asynchronous checking core that is idle then (the one free
    /// longest). Returns `false` when every checking core is busy: the
    /// check would wait behind other checks, and the core, which has to
    /// wait for it at its next synchronization anyway, checks it itself.
    pub(in crate::lardish) fn enqueue_async(&mut self, c: usize, now: u64, cost: u64) -> bool {
        let Some((i, _)) = self
            .async_busy
            .iter()
            .enumerate()
            .filter(|(_, b)| **b <= now)
            .min_by_key(|(_, b)| **b)
        else {
            return false;
        };
        let done = now + cost;
        self.async_busy[i] = done;
        self.outstanding[c] = self.outstanding[c].max(done);
        true
    }
}
