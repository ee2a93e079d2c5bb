//! The parts of the [`Lardish`](super::Lardish) model's state (the
//! function, the validity of hardware-held state, the timing model, the
//! accounting) and the steps that use several of them: one access, software
//! checks, history operations.

mod access;
mod accounting;
mod function;
mod history_ops;
mod software;
mod timing;
mod validity;

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use crate::clock::FxHasher;

pub(super) use accounting::{hw_cause, sw_cause, Accounting};
pub(super) use function::{check_and_record, release_valid, Core, Function};
pub(super) use timing::Timing;
pub(super) use validity::{Validity, View};

/// A `HashSet` using [`FxHasher`].
pub(super) type FxHashSet<T> = HashSet<T, BuildHasherDefault<FxHasher>>;
