//! The model-based property tests' operations: what they are, how proptest draws them, how
//! one runs on a card and on the model at once, and their replayable text form.
//!
//! A [`Case`] is the simulated card's bus pauses, the host driver's costs, and a list of
//! [`Op`]s. [`run_case`] opens a card for it, brings card and model to the same start, runs the
//! operations one by one and, after each, compares what the card returned and what its
//! counters say with the model. Every operation is valid in any state (a stream operation
//! sets the mode it needs), so any sub-list of a failing case is a case too, which is what
//! lets proptest shrink a failure to the few operations that matter. A case prints (its
//! `Debug`) as one operation per line, the form [`Case::parse`] reads back and
//! `cargo run -p card-tests --example replay -- FILE` runs.
//!
//! Each concern has a file: [`op`] what the operations and cases are, [`text`] their
//! replayable text form, [`strategy`] how proptest draws them, and [`run`] the runner that
//! checks card and model against each other. The three lean only on `op`, and this module only
//! gathers them, so no two import each other.

mod op;
mod run;
mod strategy;
mod text;

pub use op::{edit_sim, op_settable, zero_host_costs, Case, Fault, Op, Pauses, Settable};
pub use run::{run_case, Failure, TRACE_ENV};
pub use strategy::{case, proptest_config};
