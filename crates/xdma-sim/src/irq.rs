//! The XDMA IP's side of the user interrupt handshake, as an agent on `axi_aclk`.
//!
//! The card raises a bit of `usr_irq_req` and holds it; the IP sends the interrupt message and
//! pulses the matching bit of `usr_irq_ack` for one cycle; the card then drops the request.
//! The IP does this whether or not anyone waits, so interrupts are counted here and handed to
//! waiters; the driver collapses several interrupts before one read into one event, and so
//! does [`IrqAgent::take`].

use std::collections::VecDeque;

use axi_bfm::{Agent, Cx};
use card_sim::{Model, Port};

/// The IP's interrupt handling for up to 16 request bits.
#[derive(Debug)]
pub(super) struct IrqAgent {
    req: Port,
    ack: Port,
    bits: u32,
    /// Request bits seen high before this edge.
    seen: u64,
    /// Bits acknowledged and not yet seen low again: the card's request drops one cycle after
    /// the ack, so the same request must not be acknowledged twice.
    acked: u64,
    /// One-way link latency: an interrupt message reaches the host this long after the ack.
    one_way_ps: u64,
    /// Interrupts on their way to the host: (bit, arrival time in ps).
    in_flight: VecDeque<(u32, u64)>,
}

impl IrqAgent {
    pub(super) fn new(req: Port, ack: Port, one_way_ps: u64) -> IrqAgent {
        IrqAgent {
            req,
            ack,
            bits: req.width().min(16),
            seen: 0,
            acked: 0,
            one_way_ps,
            in_flight: VecDeque::new(),
        }
    }

    /// The number of request lines.
    pub(super) fn lines(&self) -> usize {
        self.bits as usize
    }

    /// Takes the interrupts of `event` that have reached the host by `now_ps`; zero when none.
    pub(super) fn take(&mut self, event: usize, now_ps: u64) -> u32 {
        let mut n = 0;
        self.in_flight.retain(|&(bit, at)| {
            let hit = bit as usize == event && at <= now_ps;
            n += u32::from(hit);
            !hit
        });
        n
    }
}

impl Agent for IrqAgent {
    fn sample(&mut self, model: &Model, _cx: &Cx) -> axi_bfm::Result<()> {
        self.seen = model.get(self.req) & ((1u64 << self.bits) - 1);
        Ok(())
    }

    fn drive(&mut self, model: &mut Model, cx: &Cx) -> axi_bfm::Result<()> {
        if cx.in_reset {
            self.acked = 0;
            model.set(self.ack, 0);
            return Ok(());
        }
        // A request seen low again may be acknowledged the next time it rises.
        self.acked &= self.seen;
        let ack = self.seen & !self.acked;
        for bit in 0..self.bits {
            if ack >> bit & 1 == 1 {
                self.in_flight
                    .push_back((bit, cx.time_ps + self.one_way_ps));
            }
        }
        self.acked |= ack;
        model.set(self.ack, ack);
        Ok(())
    }
}
