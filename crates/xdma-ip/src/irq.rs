//! The IRQ block (PG195's IRQ Block registers, target 0x2): its enables, requests and
//! vectors, the MSI-X table and PBA, MSI and INTx, and the outbox in which what it signals
//! waits behind the IP's posted writes on the link until it reaches the host.

use std::collections::VecDeque;

use xdma_regmap::msix;

use crate::pcie::{Pcie, Ps, MSI_BYTES};
use crate::stats::IpStats;
use crate::{InterruptSink, IrqMode};

/// The IRQ block and the MSI-X table.
#[derive(Debug)]
pub(crate) struct Irqs {
    pub(crate) mode: IrqMode,
    pub(crate) user_lines: usize,
    pub(crate) user_enable: u32,
    pub(crate) chan_enable: u32,
    /// User requests the IP has acknowledged on the card and not yet handed to the driver.
    pub(crate) user_latched: u32,
    pub(crate) user_vec: [u8; 16],
    pub(crate) chan_vec: [u8; 8],
    pub(crate) table: [u32; msix::VECTORS * 4],
    pub(crate) pba: u32,
    /// Request bits already signalled (channel bits 0-7, user bits 16-31).
    pub(crate) asserted: u32,
    intx: bool,
}

impl Irqs {
    pub(crate) fn new(user_lines: usize) -> Irqs {
        let mut table = [0u32; msix::VECTORS * 4];
        for v in 0..msix::VECTORS {
            table[4 * v + 3] = msix::MASKED;
        }
        Irqs {
            mode: IrqMode::Intx { disabled: false },
            user_lines,
            user_enable: 0,
            chan_enable: 0,
            user_latched: 0,
            user_vec: [0; 16],
            chan_vec: [0; 8],
            table,
            pba: 0,
            asserted: 0,
            intx: false,
        }
    }

    fn vector_of(&self, bit: u32) -> u32 {
        let v = if bit >= 16 {
            self.user_vec[(bit - 16) as usize]
        } else {
            self.chan_vec[bit as usize & 7]
        };
        u32::from(v & 0x1F)
    }

    fn masked(&self, v: u32) -> bool {
        self.table[4 * v as usize + 3] & msix::MASKED != 0
    }

    fn send_msix(&mut self, v: u32, sink: &mut dyn InterruptSink, stats: &mut IpStats) {
        let e = 4 * v as usize;
        let addr = u64::from(self.table[e]) | (u64::from(self.table[e + 1]) << 32);
        sink.msix(addr, self.table[e + 2]);
        stats.messages += 1;
    }

    /// Signals what `req` newly raises, and the INTx level.
    pub(crate) fn update(&mut self, req: u32, sink: &mut dyn InterruptSink, stats: &mut IpStats) {
        let new = req & !self.asserted;
        self.asserted = req;
        match self.mode {
            IrqMode::MsiX { function_mask } => {
                for bit in (0..32).filter(|b| new >> b & 1 == 1) {
                    let v = self.vector_of(bit);
                    if function_mask || self.masked(v) {
                        self.pba |= 1 << v;
                    } else {
                        self.send_msix(v, sink, stats);
                    }
                }
            }
            IrqMode::Msi { vectors } => {
                for bit in (0..32).filter(|b| new >> b & 1 == 1) {
                    sink.msi(self.vector_of(bit) & (vectors.max(1) - 1));
                    stats.messages += 1;
                }
            }
            IrqMode::Intx { .. } => {}
        }
        let level = matches!(self.mode, IrqMode::Intx { disabled: false }) && req != 0;
        if level != self.intx {
            self.intx = level;
            sink.intx(level);
            stats.intx_changes += 1;
        }
    }

    /// Sends what waits in the PBA for vectors that are no longer masked.
    pub(crate) fn flush_pba(&mut self, sink: &mut dyn InterruptSink, stats: &mut IpStats) {
        if let IrqMode::MsiX {
            function_mask: false,
        } = self.mode
        {
            for v in 0..msix::VECTORS as u32 {
                if self.pba >> v & 1 == 1 && !self.masked(v) {
                    self.pba &= !(1 << v);
                    self.send_msix(v, sink, stats);
                }
            }
        }
    }
}

/// An interrupt message or level on its way to the host.
#[derive(Debug, Clone, Copy)]
enum Message {
    MsiX(u64, u32),
    Msi(u32),
    Intx(bool),
}

/// Interrupt messages on their way to the host, in order.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    queue: VecDeque<(Ps, Message)>,
}

impl Outbox {
    /// Where the IRQ block sends at `now`: behind the IP's posted writes on `pcie`.
    pub(crate) fn sender<'a>(&'a mut self, pcie: &'a mut Pcie, now: Ps) -> Sender<'a> {
        Sender {
            pcie,
            now,
            queue: &mut self.queue,
        }
    }

    /// Hands the host the interrupt messages that have reached it by `now`.
    pub(crate) fn deliver(&mut self, now: Ps, sink: &mut dyn InterruptSink) {
        while self.queue.front().is_some_and(|m| m.0 <= now) {
            match self.queue.pop_front().map(|m| m.1) {
                Some(Message::MsiX(addr, data)) => sink.msix(addr, data),
                Some(Message::Msi(v)) => sink.msi(v),
                Some(Message::Intx(level)) => sink.intx(level),
                None => break,
            }
        }
    }
}

/// What the IRQ block signals, queued behind the IP's posted writes on the link.
pub(crate) struct Sender<'a> {
    pcie: &'a mut Pcie,
    now: Ps,
    queue: &'a mut VecDeque<(Ps, Message)>,
}

impl InterruptSink for Sender<'_> {
    fn msix(&mut self, addr: u64, data: u32) {
        let at = self.pcie.write(self.now, MSI_BYTES);
        self.queue.push_back((at, Message::MsiX(addr, data)));
    }
    fn msi(&mut self, vector: u32) {
        let at = self.pcie.write(self.now, MSI_BYTES);
        self.queue.push_back((at, Message::Msi(vector)));
    }
    fn intx(&mut self, level: bool) {
        // An INTx assertion or deassertion is a message of its own on the link.
        let at = self.pcie.write(self.now, 0);
        self.queue.push_back((at, Message::Intx(level)));
    }
}
