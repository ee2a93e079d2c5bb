//! Subcommands beyond `lard run`, and the guest manifest they read.

pub mod accuracy;
pub mod adversarial;
pub mod campaign;
pub mod cc_accuracy;
pub mod explore;
pub mod jumble;
pub mod manifest;
