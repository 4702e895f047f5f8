//! The errors of every backend, with one [`ErrorKind`] that callers match on.

use std::path::PathBuf;
use std::time::Duration;

use crate::addr::CardAddr;
use crate::channel::{ChannelKind, Direction};

/// What kind of failure an [`Error`] is, the same on every backend, so that a program written
/// against the API can react without knowing which backend it runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An argument that can never work, such as a zero-length transfer.
    InvalidInput,
    /// A card address, length or register offset past the end of what the card has.
    OutOfRange,
    /// A buffer or card address that breaks the engine's alignment rule.
    Misaligned,
    /// A register access of the wrong shape: not one 32-bit word at a 4-aligned offset
    /// (the driver's EPROTO).
    RegisterAccess,
    /// A stream call on a memory-mapped channel or the reverse.
    WrongChannelKind,
    /// A channel or event number that the card does not have.
    NoSuchChannel,
    /// The device is not there: driver not loaded, wrong node prefix, no such folder.
    NoDevice,
    /// The device is there but this process may not open it.
    PermissionDenied,
    /// Another opener holds a node that allows one at a time (the driver's EBUSY).
    Busy,
    /// A wait ended without the event or data it waited for.
    Timeout,
    /// The engine or driver reported a failed transfer (the driver's EIO, a short transfer).
    TransferFailed,
    /// The backend cannot do this yet (for example, RTL that is not in this build).
    Unsupported,
    /// The configuration is invalid.
    Config,
    /// The backend itself failed: the simulator stopped on an RTL error, its thread is gone,
    /// or the operating system returned an error that none of the kinds above describes.
    Backend,
}

/// An error of the host DMA API. Each variant says what was wrong and what to do; [`Error::kind`]
/// gives the [`ErrorKind`] to match on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A transfer of zero bytes.
    #[error("{op}: zero-length transfer; pass a buffer of at least one byte")]
    ZeroLength {
        /// The operation, for example "memory-mapped C2H read".
        op: &'static str,
    },
    /// An argument that can never work, other than the specific cases below.
    #[error("{op}: {problem}")]
    Invalid {
        /// The operation.
        op: &'static str,
        /// What was wrong and what to do.
        problem: String,
    },
    /// A transfer that does not fit in card memory.
    #[error("{op}: {len} bytes at card address {addr} run past the end of card memory ({size:#x} bytes, {size_from}); keep address + length <= {size:#x}")]
    OutOfRange {
        /// The operation.
        op: &'static str,
        /// The card address asked for.
        addr: CardAddr,
        /// The length asked for.
        len: u64,
        /// The card memory size.
        size: u64,
        /// Where the backend has the size from, and what to do when it is not the card's:
        /// the simulated card's is its RTL's, the driver backend's its `[hw] memory_size`
        /// setting (the driver cannot tell).
        size_from: &'static str,
    },
    /// A register offset outside the user BAR.
    #[error("register offset {offset:#x} is outside the user BAR of {size:#x} bytes")]
    RegisterOutOfRange {
        /// The offset asked for.
        offset: u64,
        /// The BAR size.
        size: u64,
    },
    /// A buffer or card address that breaks the engine's alignment rule.
    #[error("{op}: {problem}; the engine's alignment is {align} bytes (use DmaBuffer and an address with the same offset modulo {align})")]
    Misaligned {
        /// The operation.
        op: &'static str,
        /// What is misaligned, with the values.
        problem: String,
        /// The engine's alignment in bytes.
        align: u64,
    },
    /// A register offset that is not a multiple of four.
    #[error("register offset {offset:#x} is not 4-aligned; the user BAR is accessed as whole 32-bit words at offsets that are multiples of 4")]
    RegisterAlignment {
        /// The offset asked for.
        offset: u64,
    },
    /// A stream call on a memory-mapped channel, or the reverse.
    #[error("{dir} channel {channel} is a {actual} channel, but {op} needs a {wanted} channel; see CardInfo for which channels are which")]
    WrongChannelKind {
        /// The operation.
        op: &'static str,
        /// The direction.
        dir: Direction,
        /// The channel number.
        channel: usize,
        /// What the channel is.
        actual: ChannelKind,
        /// What the call needs.
        wanted: ChannelKind,
    },
    /// A channel that the card does not have.
    #[error("{dir} channel {channel} does not exist: the card has {count} {dir} channel(s), numbered from 0")]
    NoSuchChannel {
        /// The direction.
        dir: Direction,
        /// The channel number asked for.
        channel: usize,
        /// How many the card has.
        count: usize,
    },
    /// An event (user interrupt) number that the card does not have.
    #[error("user interrupt event {event} does not exist: the card has {count} event(s), numbered from 0")]
    NoSuchEvent {
        /// The event number asked for.
        event: usize,
        /// How many the card has.
        count: usize,
    },
    /// A wait that ended without what it waited for.
    #[error("timed out after {after:?} waiting for {what}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long the wait lasted.
        after: Duration,
    },
    /// An operating-system call on a device node failed.
    #[error("{op} on {}: {source}; {hint}", .node.display())]
    Os {
        /// The kind the errno maps to.
        kind: ErrorKind,
        /// What was being done, for example "open" or "pread".
        op: &'static str,
        /// The device node.
        node: PathBuf,
        /// What to do about it.
        hint: String,
        /// The errno.
        #[source]
        source: std::io::Error,
    },
    /// A transfer that moved fewer bytes than asked and could not go on.
    #[error("{op} on {}: the driver moved {done} of {len} bytes and then returned 0; the engine stopped early (check the card's AXI slave and the kernel log)", .node.display())]
    ShortTransfer {
        /// The operation.
        op: &'static str,
        /// The device node.
        node: PathBuf,
        /// Bytes moved.
        done: u64,
        /// Bytes asked.
        len: u64,
    },
    /// A bus transaction on the card that the card answered with an error, or not at all.
    #[error("{0}")]
    Bus(String),
    /// Something this backend cannot do yet.
    #[error("{what} is not supported by the {backend} backend: {why}")]
    Unsupported {
        /// The backend's name.
        backend: &'static str,
        /// The operation.
        what: String,
        /// Why, and what is missing.
        why: String,
    },
    /// The device is not there: no such simulated card in this build, or a top that is not a
    /// card. (The driver backend reports a missing node as [`Error::Os`] with this kind.)
    #[error("{what} not found: {hint}")]
    NoDevice {
        /// What was looked for.
        what: String,
        /// Why it is missing and what to do.
        hint: String,
    },
    /// An invalid configuration.
    #[error("invalid xdma configuration: {0}")]
    Config(String),
    /// A failure that a backend carries up from the layer below it (the simulator, a bus model,
    /// a protocol monitor), with the kind the backend gives it.
    #[error("{context}: {source}")]
    Source {
        /// The kind of failure, as the backend classifies it.
        kind: ErrorKind,
        /// Where it happened, for example "simulated card".
        context: &'static str,
        /// The underlying error.
        #[source]
        source: BoxError,
    },
    /// The backend failed in a way that none of the variants above describes.
    #[error("{0}")]
    Backend(String),
}

impl Error {
    /// The kind of failure, the same on every backend.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::ZeroLength { .. } | Error::Invalid { .. } => ErrorKind::InvalidInput,
            Error::OutOfRange { .. } | Error::RegisterOutOfRange { .. } => ErrorKind::OutOfRange,
            Error::Misaligned { .. } => ErrorKind::Misaligned,
            Error::RegisterAlignment { .. } => ErrorKind::RegisterAccess,
            Error::WrongChannelKind { .. } => ErrorKind::WrongChannelKind,
            Error::NoSuchChannel { .. } | Error::NoSuchEvent { .. } => ErrorKind::NoSuchChannel,
            Error::Timeout { .. } => ErrorKind::Timeout,
            Error::Os { kind, .. } => *kind,
            Error::ShortTransfer { .. } | Error::Bus(_) => ErrorKind::TransferFailed,
            Error::Unsupported { .. } => ErrorKind::Unsupported,
            Error::Config(_) => ErrorKind::Config,
            Error::NoDevice { .. } => ErrorKind::NoDevice,
            Error::Source { kind, .. } => *kind,
            Error::Backend(_) => ErrorKind::Backend,
        }
    }
}

/// A boxed error from a layer below a backend.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
