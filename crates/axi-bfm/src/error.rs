//! The errors of the bus models and of the environment.

use sim_runtime::SimError;

use crate::protocol::Violation;

/// An AXI response code.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Resp {
    /// Normal access success.
    #[default]
    Okay,
    /// Exclusive access success.
    ExOkay,
    /// Slave error.
    SlvErr,
    /// Decode error.
    DecErr,
}

impl Resp {
    /// Decodes the two-bit BRESP/RRESP value.
    pub fn from_bits(bits: u64) -> Resp {
        match bits & 3 {
            0 => Resp::Okay,
            1 => Resp::ExOkay,
            2 => Resp::SlvErr,
            _ => Resp::DecErr,
        }
    }

    /// The two-bit encoding.
    pub fn bits(self) -> u64 {
        match self {
            Resp::Okay => 0,
            Resp::ExOkay => 1,
            Resp::SlvErr => 2,
            Resp::DecErr => 3,
        }
    }

    /// True for OKAY and EXOKAY.
    pub fn is_ok(self) -> bool {
        matches!(self, Resp::Okay | Resp::ExOkay)
    }

    /// Of two responses to parts of one transaction, the one to report: errors win.
    pub(crate) fn worst(self, other: Resp) -> Resp {
        if other.bits() > self.bits() || (self == Resp::ExOkay && other == Resp::Okay) {
            other
        } else {
            self
        }
    }
}

/// What went wrong while building, driving or checking a bus.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BfmError {
    /// The simulated model failed (RTL `$fatal`/`$error`, a bad port, ...).
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A protocol monitor saw a rule broken; the bus, cycle and values are in the violation.
    #[error("{0}")]
    Violation(Box<Violation>),
    /// A wait did not end within its cycle limit.
    #[error("timed out after {cycles} cycles of clock `{clock}` (at {time_ps} ps) waiting for {what}; raise the limit if the design is just slow, otherwise look at the bus in the waves (SIM_WAVES=1)")]
    Timeout {
        /// The clock counted: its port name.
        clock: String,
        /// How many of its cycles passed.
        cycles: u64,
        /// Simulated time when the wait gave up.
        time_ps: u64,
        /// What was awaited.
        what: String,
    },
    /// A bus could not be bound to the model's ports.
    #[error("cannot attach to bus `{bus}`: {problem}")]
    Bind {
        /// The port prefix.
        bus: String,
        /// What was wrong.
        problem: String,
    },
    /// A request that the bus model cannot carry out as asked.
    #[error("bad request on bus `{bus}`: {problem}")]
    BadRequest {
        /// The port prefix.
        bus: String,
        /// What was wrong and what is allowed.
        problem: String,
    },
    /// The bus carries something this bus model has no place for (an AXI-Stream position
    /// byte, say); the problem says what, and how to bind the bus so that it fits.
    #[error("bus `{bus}` carries what this bus model does not take: {problem}")]
    Unsupported {
        /// The port prefix.
        bus: String,
        /// What was seen, and what to do.
        problem: String,
    },
    /// A transaction ended with SLVERR or DECERR where the caller asked for success.
    #[error("bus `{bus}`: {what} at {addr:#x} answered {resp:?}")]
    Response {
        /// The port prefix.
        bus: String,
        /// Read or write.
        what: &'static str,
        /// The address of the access.
        addr: u64,
        /// The response.
        resp: Resp,
    },
    /// Data read back or received differs from what a test expected (a reference model, the
    /// data written, the frames sent).
    #[error("data mismatch on `{bus}` at {what}: expected {expected}, got {actual}")]
    Mismatch {
        /// The bus (its port prefix).
        bus: String,
        /// Where: an address, a frame and byte number.
        what: String,
        /// The expected value, formatted.
        expected: String,
        /// The value seen, formatted.
        actual: String,
    },
    /// A request the slave accepted whole (address, and data for a write) that no response
    /// followed within the master's bound: the slave lost it, or is slower than the bound.
    #[error("bus `{bus}`: no response to {what} #{txn} at {addr:#x}, which the slave accepted at cycle {accepted_cycle}, after {waited} cycles: a response is expected and missing; if the slave is only slow, raise the master's response_timeout_cycles")]
    MissingResponse {
        /// The port prefix.
        bus: String,
        /// Read or write.
        what: &'static str,
        /// The access's number (its handle).
        txn: u64,
        /// The access's address.
        addr: u64,
        /// The cycle of the clock the master runs on at which the request was accepted whole.
        accepted_cycle: u64,
        /// Cycles waited since.
        waited: u64,
    },
    /// A handle that names no transaction of this bus model (already taken, or never issued).
    #[error("bus `{bus}` has no transaction #{id}; each result can be taken once")]
    NoSuchTxn {
        /// The port prefix.
        bus: String,
        /// The handle's number.
        id: u64,
    },
}

impl BfmError {
    /// The violation, if this error is one.
    pub fn violation(&self) -> Option<&Violation> {
        match self {
            BfmError::Violation(v) => Some(v),
            _ => None,
        }
    }
}

impl From<Violation> for BfmError {
    fn from(v: Violation) -> Self {
        BfmError::Violation(Box::new(v))
    }
}

/// The result type of this crate.
pub type Result<T, E = BfmError> = std::result::Result<T, E>;
