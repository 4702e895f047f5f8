//! xdma-bench: the reference board's measurement method as a library and a tool, on either
//! backend of the host crate.
//!
//! - [`measure`]: the two timing modes (back-to-back and serial) with data checked every run;
//! - [`scenario`]: a write and a read thread at once, and generated frames on C2H streams;
//! - [`reference`]: the board's measured tables;
//! - [`sweep`]: the block-size sweep, its fit and its comparison with a reference table;
//! - [`rtt`]: the ECHO stop-and-wait loop in segments, with tiers and a stability verdict;
//! - [`stats`]: reservoir sampling, percentiles, tiers, fits and marginal bandwidth;
//! - [`host`]: what the host tells about its CPU, kernel and driver;
//! - [`report`]: the metadata of every result, CSV and SVG output;
//! - [`csv_rows`]: the one CSV writer, serde records under a header;
//! - [`units`]: how a byte count reads in tables and plots;
//! - [`setting`]: a configuration with settings of its `[sim]` section changed;
//! - [`whatif`]: the simulated card with settings of its `[sim]` section changed, on the
//!   reference scenarios, against the configuration as given (`xdma-bench predict --set`).

pub mod csv_rows;
pub mod host;
pub mod measure;
pub mod reference;
pub mod report;
pub mod rtt;
pub mod scenario;
pub mod setting;
pub mod stats;
pub mod sweep;
pub mod units;
pub mod whatif;
