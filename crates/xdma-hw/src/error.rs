//! The driver breaking its own contract: [`DriverError`], and the check of the counts its
//! calls return.

use std::path::{Path, PathBuf};

use xdma_core::{Error, ErrorKind, Result};

/// A failure of the driver to keep its own contract, carried as the source of an
/// [`Error::Source`] whose kind is [`ErrorKind::TransferFailed`] (downcast to match it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// A read or write returned a count outside the buffer (old drivers do this in
    /// end-of-packet mode: negative, or larger than the buffer).
    #[error("{op} on {}: the driver returned {returned} for a {len}-byte buffer; a count outside 0..={len} breaks the driver's contract (drivers before 2025.2 do this in end-of-packet mode), so the buffer's contents cannot be trusted: update the driver", .node.display())]
    Count {
        /// The call.
        op: &'static str,
        /// The node.
        node: PathBuf,
        /// What the call returned.
        returned: i64,
        /// The buffer's length.
        len: usize,
    },
    /// A signal interrupted a stream transfer, which the driver then aborted.
    #[error("{op} on {}: a signal interrupted the transfer and the driver aborted it (stream data may be lost or a frame cut); keep [hw] block_signals = true", .node.display())]
    Interrupted {
        /// The call.
        op: &'static str,
        /// The node.
        node: PathBuf,
    },
}

impl DriverError {
    pub(crate) fn into_error(self) -> Error {
        Error::Source {
            kind: ErrorKind::TransferFailed,
            context: "XDMA driver",
            source: Box::new(self),
        }
    }
}

/// Checks a count the driver returned for a `len`-byte buffer.
pub(crate) fn count(op: &'static str, node: &Path, r: isize, len: usize) -> Result<usize> {
    match usize::try_from(r) {
        Ok(n) if n <= len => Ok(n),
        _ => Err(DriverError::Count {
            op,
            node: node.to_path_buf(),
            returned: r as i64,
            len,
        }
        .into_error()),
    }
}
