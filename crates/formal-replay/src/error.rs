//! What can be wrong with a replay, its trace or its design.

use std::path::PathBuf;

/// A replay that cannot be made, read or written, with what was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A replay file that is not one, or not whole.
    #[error("{}: {problem}", path.display())]
    File { path: PathBuf, problem: String },
    /// A replay's text that is not one, or not whole.
    #[error("not a replay: {problem}")]
    Format { problem: String },
    /// The VCD trace lacks what the replay needs, or is not one.
    #[error("the counterexample trace: {problem}")]
    Trace { problem: String },
    /// The design Yosys wrote is not a proof wrapper this replay understands.
    #[error("the proof's design: {problem}")]
    Design { problem: String },
}
