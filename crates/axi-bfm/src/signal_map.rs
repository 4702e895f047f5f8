//! The explicit names given to a bus's signals, a leaf that both the environment (which keeps
//! them) and the binding (which resolves ports with them) use.

/// An explicit name for one signal of one bus ([`crate::Env::map_signal`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignalMapping {
    pub prefix: String,
    pub signal: String,
    pub port: String,
}
