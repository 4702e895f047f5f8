//! What a front end sets on the card before its first call and reads of the card's shape
//! ([`CardSetup`]), without reaching the model or its ports.

use axi_bfm::{BfmError, PauseSpec, Result};

use crate::bus::CardBuses;
use crate::CardHarness;

/// The DDR controller model's settings, held on the card's constant inputs
/// (`ddr_arb_algorithm`, `ddr_arqos`, `ddr_awqos`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DdrController {
    /// The arbitration algorithm's input value.
    pub arbitration: u64,
    /// The read port's QoS value.
    pub read_qos: u64,
    /// The write port's QoS value.
    pub write_qos: u64,
}

/// A view of a harness that sets what a front end may set (the DDR controller, random bus
/// pauses) and reads the card's shape; it cannot run the card or touch its model.
#[derive(Debug)]
pub struct CardSetup<'a> {
    pub(crate) card: &'a mut CardHarness,
}

impl CardSetup<'_> {
    /// Holds the DDR controller model's settings on the card's constant inputs. A top without
    /// an input takes only its default (0): any other value for it is an error, as that card
    /// cannot be set so.
    pub fn set_ddr_controller(&mut self, ddr: DdrController) -> Result<()> {
        let model = self.card.env.model_mut();
        let wanted = [
            ("ddr_arb_algorithm", ddr.arbitration),
            ("ddr_arqos", ddr.read_qos),
            ("ddr_awqos", ddr.write_qos),
        ];
        for (name, value) in wanted {
            match model.input(name) {
                Ok(port) => model.set(port, value),
                Err(_) if value == 0 => {}
                Err(e) => {
                    return Err(BfmError::Bind {
                        bus: name.to_string(),
                        problem: format!(
                            "the DDR controller setting {value} cannot be held: {e}; this top has no such input, so leave the setting at its default"
                        ),
                    })
                }
            }
        }
        Ok(())
    }

    /// Installs pauses from one spec on every channel of every bus (random backpressure and
    /// idle cycles, reproducible from the spec's seed).
    pub fn set_bus_pauses(&mut self, spec: &PauseSpec) {
        self.card.env.set_pauses(spec);
    }

    /// The card's buses, to tell which one a protocol violation is on.
    pub fn buses(&self) -> CardBuses {
        CardBuses::new(&self.card.h2c_names, &self.card.c2h_names)
    }

    /// Bytes of card memory behind the DMA port (see [`CardHarness::memory_size`]).
    pub fn memory_size(&self) -> Option<u64> {
        self.card.memory_size()
    }

    /// Bytes of the user BAR (see [`CardHarness::bar_size`]).
    pub fn bar_size(&self) -> u64 {
        self.card.bar_size()
    }

    /// H2C stream ports the top has.
    pub fn h2c_streams(&self) -> usize {
        self.card.h2c.len()
    }

    /// C2H stream ports the top has.
    pub fn c2h_streams(&self) -> usize {
        self.card.c2h.len()
    }

    /// Bytes of the DMA port's data bus.
    pub fn bus_bytes(&self) -> usize {
        self.card.dma.bus_bytes()
    }
}
