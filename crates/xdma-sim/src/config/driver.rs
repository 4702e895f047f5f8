//! The host driver's module parameters as the `[sim]` section's `driver` table sets them: the
//! settings a user of `xdma.ko` chooses when loading the module, passed to the driver model
//! (`xdma_driver::Params`) when the simulated card is opened.

use serde::{Deserialize, Serialize};

/// The module parameters of `xdma.ko` that the simulated card lets a configuration choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DriverConfig {
    /// `xdma.ko`'s `poll_mode` module parameter: the driver learns that a transfer has ended
    /// from the engine's write-back to host memory, which it polls, instead of from the
    /// engine's completion interrupt. Default false, as the module loads by default.
    pub poll_mode: bool,
}
