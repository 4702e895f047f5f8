//! xdma-record: records the card's acquisition to disk.
//!
//! A recording takes the frames of the card's C2H streams through the `xdma` API, on either
//! backend, and writes them back to back into one file through [`sink::Sink`] (`O_DIRECT`,
//! io_uring, fio's parameters), with a JSON manifest beside it that counts what the card sent
//! against what the host took. [`verify`] reads a recording back and checks every frame.
//! [`bench`] measures the disk side beside fio.
//!
//! - [`record`]: the stream source and the pipeline.
//! - [`account`]: the manifest and the records in it (the plan, each stream, the gaps, the end),
//!   a leaf the other modules read.
//! - [`sink`]: the file.
//! - [`verify`]: the checker.
//! - [`bench`]: the sink against fio.
//! - [`manifest`]: where the manifest is written, with room kept for it from the start.
//! - [`plot`]: bandwidth against time, from the manifest.

pub mod account;
pub mod bench;
pub mod manifest;
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
    /// The configuration (`--config FILE` or `XDMA_CONFIG`) does not read: the error names
    /// the file.
    #[error("{0}")]
    Config(#[source] xdma::Error),
    /// Stopped by a signal (Ctrl-C, SIGTERM) before the work was done.
    #[error("stopped by a signal {0}")]
    Interrupted(String),
    /// The manifest fits nowhere: not beside the recording, not in the fallback folder.
    #[error("no room for the manifest ({tried}); nothing of it was left behind. The recording {}: {holds}", .path.display())]
    NoRoomForManifest {
        /// The recording.
        path: PathBuf,
        /// Where it was tried, and what each place answered.
        tried: String,
        /// What the recording holds, so that the file can still be used.
        holds: String,
    },
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

/// The plot's path for a recording at `file`: `FILE.svg` beside it.
pub fn plot_path(file: &std::path::Path) -> PathBuf {
    let mut s = file.as_os_str().to_owned();
    s.push(".svg");
    PathBuf::from(s)
}

/// Refuses a path that is not a regular file before it is opened for reading: opening a FIFO
/// that nobody writes blocks, and a device may never end.
pub(crate) fn regular_file(path: &std::path::Path, what: &str) -> Result<(), RecordError> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).map_err(|e| RecordError::Disk {
        what: format!("read {what}"),
        path: path.to_path_buf(),
        source: e,
    })?;
    let t = meta.file_type();
    let kind = if t.is_file() {
        return Ok(());
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    };
    Err(RecordError::Format {
        path: path.to_path_buf(),
        problem: format!("{what} is {kind}: name a regular file"),
    })
}
