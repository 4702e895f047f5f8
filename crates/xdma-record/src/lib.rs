//! xdma-record: records the card's acquisition to disk.
//!
//! A recording takes the frames of the card's C2H streams through the `xdma` API, on either
//! backend, and writes them back to back into one file through [`sink::Sink`] (`O_DIRECT`,
//! io_uring, fio's parameters), with a JSON manifest beside it that counts what the card sent
//! against what the host took. [`verify`] reads a recording back and checks every frame.
//! [`bench`] measures the disk side beside fio.
//!
//! - [`record`]: the stream source, the pipeline and the manifest.
//! - [`sink`]: the file.
//! - [`verify`]: the checker.
//! - [`bench`]: the sink against fio.
//! - [`plot`]: bandwidth against time, from the manifest.

pub mod bench;
pub mod plot;
pub mod record;
pub mod sink;
pub mod verify;

use std::path::PathBuf;

/// What went wrong, with what to do.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// An option that cannot work.
    #[error("{0}")]
    Options(String),
    /// The file system refuses `O_DIRECT`.
    #[error("{}: the file system refuses O_DIRECT (tmpfs on older kernels, some network and FUSE file systems); record onto a disk's file system, or pass --buffered to write through the page cache (slower and less predictable)", .path.display())]
    NoDirectIo {
        /// The file.
        path: PathBuf,
    },
    /// A disk operation failed outside a write (a write's failure ends the recording and is
    /// reported in its manifest).
    #[error("{what} {}: {source}", .path.display())]
    Disk {
        /// What was being done.
        what: String,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The card failed.
    #[error("the card: {0}")]
    Card(#[from] xdma::Error),
    /// A recording's file or manifest does not read as one.
    #[error("{}: {problem}", .path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// fio, for the disk benchmark.
    #[error("fio: {0}")]
    Fio(String),
}

/// The manifest's path for a recording at `file`: `FILE.json` beside it.
pub fn manifest_path(file: &std::path::Path) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(".json");
    PathBuf::from(s)
}
