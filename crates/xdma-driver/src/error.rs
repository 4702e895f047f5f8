//! The errno a call fails with, as the driver returns it, and the model's own failures.
//!
//! A leaf: every other file returns these.

use thiserror::Error;

use xdma_ip::IpError;

/// An errno the driver returns from a system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errno {
    /// The transfer did not complete within the direction's timeout.
    TimedOut,
    /// The engine reported an error, or stopped before the end of the chain.
    Io,
    /// The driver refused the call's arguments.
    Invalid,
    /// The host memory model has no room for the buffer (the driver's `ENOMEM`).
    NoMemory,
}

/// What went wrong with a call.
#[derive(Debug, Error)]
pub enum DriverError {
    /// The call failed as the driver fails it: the errno and what led to it.
    #[error("{errno:?}: {why}")]
    Errno {
        /// The errno.
        errno: Errno,
        /// What the driver saw.
        why: String,
    },
    /// The model itself failed: the card's simulation or the IP's configuration.
    #[error(transparent)]
    Ip(#[from] IpError),
}

impl DriverError {
    pub(crate) fn errno(errno: Errno, why: impl Into<String>) -> DriverError {
        DriverError::Errno {
            errno,
            why: why.into(),
        }
    }

    /// The errno, if the call failed as the driver fails it.
    pub fn kind(&self) -> Option<Errno> {
        match self {
            DriverError::Errno { errno, .. } => Some(*errno),
            DriverError::Ip(_) => None,
        }
    }
}

/// The model's result type.
pub type Result<T> = std::result::Result<T, DriverError>;
