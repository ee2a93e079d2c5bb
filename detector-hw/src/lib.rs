//! Race detectors for LARDx86 executions and the LARDISH hardware model.
//!
//! The crate has no dependency on the emulator: detectors consume the
//! [`event`] model, so they can be driven by synthetic traces.
//!
//! * [`event`]: the event model (the emulator/detector contract).
//! * [`adversarial`]: JUMBLE's adversarial memory (write buffers, the
//!   [READ] rule, heuristics).
//! * [`detector`]: the [`Detector`] trait and the
//!   [`Granularity`] knob.
//! * [`lard`]: LARD semantics (what is checked, identities, LARDx86 ops).
//! * [`clock`]: vector clocks and their initialisation rule.
//! * [`race`]: race reports.
//! * [`rng`]: the seeded SplitMix64 generator shared with the emulator.
//! * [`canonical`]: the textbook detector of LARD Appendix A (the oracle).
//! * [`fasttrack`]: FastTrack's epoch-based detector (the default).
//! * [`shadow`]: paged shadow memory.
//! * [`trace`]: seeded random traces and the runtime's lock model.
//! * [`object`]: the object race detector (ownership states and a
//!   per-object lockset, von Praun and Gross).
//! * [`lardish`]: the LARDISH (RADISH + LARD) hardware model and its cost
//!   accounting.
//! * [`variants`]: the accuracy analysis' detector variants (LARD §5.2) and
//!   the Table 3 aggregator.

#![deny(missing_docs)]

pub mod adversarial;
pub mod canonical;
pub mod clock;
pub mod detector;
pub mod event;
pub mod fasttrack;
pub mod lard;
pub mod lardish;
pub mod object;
mod prefetch;
pub mod race;
pub mod rng;
pub mod shadow;
pub mod trace;
pub mod variants;

pub use canonical::Canonical;
pub use detector::{Detector, Granularity, Remembered};
pub use fasttrack::{FastTrack, FtPath, FtWork};
pub use lardish::{HwConfig, HwStats, Lardish};
pub use object::ObjectDetector;
pub use race::{PriorAccess, Race, RaceKind, RaceKinds};
pub use variants::{Accuracy, Variant, VariantDetector, VariantSet};
