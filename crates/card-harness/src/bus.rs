//! Which of the card's buses a protocol violation is on, named by the harness ([`CardBus`]), so
//! that code outside the harness can tell the buses apart without knowing their port names.

use axi_bfm::Violation;

/// One of the buses the harness drives on the card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CardBus {
    /// The user BAR's register bus (`s_axil`).
    Registers,
    /// The memory-mapped DMA port (`s_axi`).
    Dma,
    /// H2C stream `k` (`s_axis_h2c<k>`).
    H2c(usize),
    /// C2H stream `k` (`m_axis_c2h<k>`).
    C2h(usize),
    /// The user-interrupt handshake (`usr_irq_req`/`usr_irq_ack`).
    UserIrq,
}

/// The port prefixes of a card's buses, from its harness: tells which [`CardBus`] a protocol
/// violation names. A value of its own (not a borrow of the harness), so that a thread that
/// runs the card can keep it beside the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardBuses {
    h2c: Vec<String>,
    c2h: Vec<String>,
}

/// The register bus's port prefix.
pub(crate) const REGISTERS: &str = "s_axil";
/// The memory-mapped DMA port's prefix.
pub(crate) const DMA: &str = "s_axi";
/// The DMA master's port passed out of the top on sim_top's PATH 2, for a slave model.
#[cfg(feature = "test-util")]
pub(crate) const TAP: &str = "m_axi_tap";
/// The user-interrupt handshake's prefix.
const USER_IRQ: &str = "usr_irq";

impl CardBuses {
    /// The buses of a card whose stream ports are `h2c` and `c2h`, in channel order.
    pub(crate) fn new(h2c: &[String], c2h: &[String]) -> CardBuses {
        CardBuses {
            h2c: h2c.to_vec(),
            c2h: c2h.to_vec(),
        }
    }

    /// The bus a monitor names `bus` (its port prefix), or `None` when it is none of this
    /// card's.
    pub fn by_name(&self, bus: &str) -> Option<CardBus> {
        match bus {
            REGISTERS => Some(CardBus::Registers),
            DMA => Some(CardBus::Dma),
            USER_IRQ => Some(CardBus::UserIrq),
            _ => self
                .h2c
                .iter()
                .position(|p| p == bus)
                .map(CardBus::H2c)
                .or_else(|| self.c2h.iter().position(|p| p == bus).map(CardBus::C2h)),
        }
    }

    /// The bus a protocol violation is on.
    pub fn of(&self, v: &Violation) -> Option<CardBus> {
        self.by_name(&v.bus)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bus_is_told_apart_and_a_stranger_is_none() {
        let b = CardBuses::new(
            &["s_axis_h2c0".into(), "s_axis_h2c1".into()],
            &["m_axis_c2h0".into()],
        );
        assert_eq!(b.by_name("s_axil"), Some(CardBus::Registers));
        assert_eq!(b.by_name("s_axi"), Some(CardBus::Dma));
        assert_eq!(b.by_name("usr_irq"), Some(CardBus::UserIrq));
        assert_eq!(b.by_name("s_axis_h2c1"), Some(CardBus::H2c(1)));
        assert_eq!(b.by_name("m_axis_c2h0"), Some(CardBus::C2h(0)));
        assert_eq!(b.by_name("m_axis_c2h1"), None);
        assert_eq!(b.by_name(""), None);
    }
}
