//! xdma-bench: the reference board's measurement method as a library and a tool, on either
//! backend of the host crate.
//!
//! - [`measure`]: the two timing modes (back-to-back and serial) with data checked every run;
//! - [`scenario`]: a write and a read thread at once, and generated frames on C2H streams;
//! - [`reference`]: the board's measured tables.

pub mod measure;
pub mod reference;
pub mod scenario;
pub mod stats;
