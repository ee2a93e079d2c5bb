//! Consumers of the event stream: the observer interface, race detectors,
//! detector variants for the accuracy analysis, and run statistics.

pub mod accuracy;
pub mod callstack;
pub mod detect;
pub mod go_report;
pub mod locals;
pub mod objects;
pub mod observation;
pub mod observer;
pub mod repeats;
pub mod stats;
pub(crate) mod stream_hash;
