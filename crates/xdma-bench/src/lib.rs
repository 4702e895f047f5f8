//! xdma-bench: the reference board's measurement method as a library and a tool, on either
//! backend of the host crate.
//!
//! - [`measure`]: the two timing modes (back-to-back and serial) with data checked every run;
//! - [`reference`]: the board's measured tables.

pub mod measure;
pub mod reference;
