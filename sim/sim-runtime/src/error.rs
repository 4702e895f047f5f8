//! The errors a simulated model reports.

/// What went wrong while building or driving a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The RTL called `$fatal`, `$stop` or `$error`, an assertion failed, or Verilator's runtime
    /// gave up (for example a combinational loop that does not converge).
    #[error("RTL error in model `{model}` at {time_ps} ps: {message}")]
    Rtl {
        /// The model's name (usually its test's name).
        model: String,
        /// Simulated time of the failing evaluation.
        time_ps: u64,
        /// What the RTL or Verilator said.
        message: String,
    },
    /// An earlier RTL error left this model mid-evaluation.
    #[error(
        "model `{model}` stopped on an earlier RTL error; its state is unusable: build a new model"
    )]
    Poisoned {
        /// The model's name.
        model: String,
    },
    /// The top could not be verilated, compiled or loaded (sim-build's message, with
    /// Verilator's or the compiler's whole text).
    #[error("cannot build top `{top}`: {message}")]
    Build {
        /// The top.
        top: String,
        /// What went wrong, whole.
        message: String,
    },
    /// The model could not be built.
    #[error("cannot build a model of `{top}`: {message}")]
    Create {
        /// The top module.
        top: String,
        /// Why.
        message: String,
    },
    /// A port name that the top does not have.
    #[error("top `{top}` has no port `{port}`; its ports are: {known}")]
    NoSuchPort {
        /// The top module.
        top: String,
        /// The name asked for.
        port: String,
        /// The names it has, comma separated.
        known: String,
    },
    /// A port used in a way its direction or width does not allow.
    #[error("port `{port}` of `{top}` ({width} bits, {direction}) {problem}")]
    PortUse {
        /// The top module.
        top: String,
        /// The port.
        port: String,
        /// Its width in bits.
        width: u32,
        /// "input" or "output".
        direction: &'static str,
        /// What was wrong, phrased to follow the port description.
        problem: String,
    },
    /// A clock frequency the scheduler cannot represent.
    #[error("clock `{port}` at {freq_hz} Hz: frequencies from 1 Hz to 500 GHz are supported (edges are placed to the picosecond)")]
    BadClock {
        /// The clock port.
        port: String,
        /// The frequency asked for.
        freq_hz: u64,
    },
    /// A wait that did not end within its bound.
    #[error("timed out after {cycles} cycles of `{clock}` waiting for {what}")]
    Timeout {
        /// The clock counted.
        clock: String,
        /// How many of its cycles passed.
        cycles: u64,
        /// What was awaited.
        what: String,
    },
    /// A backdoor call for a kind of named memory the model has none of.
    #[error("model `{model}` has no `{kind}` memory: use a top whose RTL registers one (a simulation-only model files its storage with sim_memory_register, cpp/sim_memory.h)")]
    NoMemory {
        /// The model's name.
        model: String,
        /// The kind asked for.
        kind: String,
    },
    /// A backdoor call that does not say which of several memories of its kind it means.
    #[error("model `{model}` has several `{kind}` memories ({instances}): name one with the `_in` variant of the call")]
    MemoryAmbiguous {
        /// The model's name.
        model: String,
        /// The kind asked for.
        kind: String,
        /// The memories' hierarchical names, comma separated.
        instances: String,
    },
    /// A memory name that matches none (or more than one) of the model's memories of a kind.
    #[error("model `{model}` has no single `{kind}` memory named `{instance}`; its `{kind}` memories are: {known}")]
    NoSuchMemory {
        /// The model's name.
        model: String,
        /// The kind asked for.
        kind: String,
        /// The name asked for.
        instance: String,
        /// The memories' hierarchical names, comma separated.
        known: String,
    },
    /// A backdoor access that does not fit in the memory.
    #[error("backdoor access of {len} bytes at {addr:#x} in `{instance}` runs past its end ({size:#x} bytes)")]
    MemoryRange {
        /// The memory's hierarchical name.
        instance: String,
        /// First byte address of the access.
        addr: u64,
        /// Length of the access in bytes.
        len: usize,
        /// Size of the memory in bytes.
        size: u64,
    },
    /// The waveform folder could not be created.
    #[error("cannot create waveform folder {path}: {source}")]
    Waves {
        /// The folder.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An output trace could not be written or read.
    #[error("cannot write or read the trace {path}: {source}")]
    Trace {
        /// The trace file or its folder.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file path the call cannot use.
    #[error("cannot use {path:?}: {problem}")]
    BadPath {
        /// The path given.
        path: std::path::PathBuf,
        /// What is wrong with it.
        problem: String,
    },
}

/// The result type of this crate.
pub type Result<T, E = SimError> = std::result::Result<T, E>;
