//! The IRQ block (PG195's IRQ Block registers, target 0x2): its registers' decoding (enables
//! with their W1S/W1C aliases, requests, pendings, vectors), the MSI-X table and PBA, MSI and
//! INTx, and the outbox in which what it signals waits behind the IP's posted writes on the
//! link until it reaches the host.
//!
//! The channel requests are the engines' (an engine requests while a logged status bit is
//! enabled in its interrupt mask), so the IP's top passes them in as `chan_pending`, a bit per
//! engine with the H2C engines first; this file knows nothing of the engines or the top.

use std::collections::VecDeque;

use xdma_regmap::{irq as ireg, msix, Target};

use crate::pcie::{Pcie, Ps, MSI_BYTES};
use crate::regs::write_set_clear;
use crate::stats::IpStats;
use crate::{InterruptSink, IrqMode};

/// The PBA's offset from the start of the MSI-X table.
const PBA_IN_TABLE: u64 = msix::PBA - msix::TABLE;

/// The IRQ block and the MSI-X table.
#[derive(Debug)]
pub(crate) struct Irqs {
    mode: IrqMode,
    user_lines: usize,
    user_enable: u32,
    chan_enable: u32,
    /// User requests the IP has acknowledged on the card and not yet handed to the driver.
    user_latched: u32,
    user_vec: [u8; 16],
    chan_vec: [u8; 8],
    table: [u32; msix::VECTORS * 4],
    pba: u32,
    /// Request bits already signalled (channel bits 0-7, user bits 16-31).
    asserted: u32,
    intx: bool,
}

/// Four vector numbers from `i` on, packed a byte each as a vector register holds them; a
/// field past the block's lines reads zero.
fn pack_vectors(v: &[u8], i: usize) -> u32 {
    (0..4).fold(0u32, |acc, k| {
        acc | u32::from(v.get(i + k).copied().unwrap_or(0)) << (8 * k)
    })
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

    /// How the function delivers interrupts, as the front end last told it.
    pub(crate) fn mode(&self) -> IrqMode {
        self.mode
    }

    /// Takes the function's new interrupt configuration; false when it is the one in force,
    /// in which case nothing needs signalling again.
    pub(crate) fn set_mode(&mut self, mode: IrqMode) -> bool {
        if self.mode == mode {
            return false;
        }
        self.mode = mode;
        true
    }

    /// The IP has acknowledged user interrupt line `line` on the card: the request stays
    /// latched until the driver's handler reads it. A line past the ones the IP was configured
    /// with is ignored.
    pub(crate) fn latch_user(&mut self, line: u32) {
        if (line as usize) < self.user_lines {
            self.user_latched |= 1 << line;
            // Every request the IP acknowledges is an interrupt of its own: a message in MSI
            // and MSI-X mode even while an earlier one is still latched (the MSI-X handler
            // never reads the request register that clears it).
            self.asserted &= !(1 << (16 + line));
        }
    }

    /// The block's enabled requests, as [`Irqs::update`] takes them: channel bits 0-7 from
    /// the engines' `chan_pending`, user bits 16-31 from the latched user requests.
    pub(crate) fn requests(&self, chan_pending: u32) -> u32 {
        let user = self.user_latched & self.user_enable;
        (chan_pending & self.chan_enable) | (user << 16)
    }

    /// The register at `reg` (its offset in the block) as a read returns it, without the
    /// read's side effect.
    pub(crate) fn peek(&self, reg: u64, chan_pending: u32) -> u32 {
        match reg {
            ireg::IDENTIFIER => Target::Irq.identifier(0, false),
            ireg::USER_ENABLE | ireg::USER_ENABLE_W1S | ireg::USER_ENABLE_W1C => self.user_enable,
            ireg::CHANNEL_ENABLE | ireg::CHANNEL_ENABLE_W1S | ireg::CHANNEL_ENABLE_W1C => {
                self.chan_enable
            }
            ireg::USER_REQUEST => self.user_latched & self.user_enable,
            ireg::CHANNEL_REQUEST => chan_pending & self.chan_enable,
            ireg::USER_PENDING => self.user_latched,
            ireg::CHANNEL_PENDING => chan_pending,
            0x80..=0x9F => pack_vectors(&self.user_vec, (reg - ireg::USER_VECTOR) as usize),
            0xA0..=0xBF => pack_vectors(&self.chan_vec, (reg - ireg::CHANNEL_VECTOR) as usize),
            _ => 0,
        }
    }

    /// A read of the register at `reg`: its value, and whether the read changed the block's
    /// requests (the caller then signals them again).
    pub(crate) fn read(&mut self, reg: u64, chan_pending: u32) -> (u32, bool) {
        let v = self.peek(reg, chan_pending);
        if reg != ireg::USER_REQUEST {
            return (v, false);
        }
        // The card drops its request once the IP has acknowledged it, so the IP keeps what it
        // acknowledged until the driver's handler has read it here: the handler reads this
        // register to learn which user interrupt fired.
        self.user_latched &= !v;
        (v, true)
    }

    /// A write of `v` to the register at `reg` (its offset in the block). The caller signals
    /// the requests again afterwards, since an enable may have changed.
    pub(crate) fn write(&mut self, reg: u64, v: u32) {
        match reg {
            ireg::USER_ENABLE | ireg::USER_ENABLE_W1S | ireg::USER_ENABLE_W1C => {
                write_set_clear(&mut self.user_enable, reg, ireg::USER_ENABLE, v)
            }
            ireg::CHANNEL_ENABLE | ireg::CHANNEL_ENABLE_W1S | ireg::CHANNEL_ENABLE_W1C => {
                write_set_clear(&mut self.chan_enable, reg, ireg::CHANNEL_ENABLE, v)
            }
            ireg::USER_VECTOR..=0xBF => {
                let (vec, base): (&mut [u8], u64) = if reg < ireg::CHANNEL_VECTOR {
                    (&mut self.user_vec, ireg::USER_VECTOR)
                } else {
                    (&mut self.chan_vec, ireg::CHANNEL_VECTOR)
                };
                // A vector number has five bits; a field past the block's lines is dropped.
                for k in 0..4 {
                    if let Some(b) = vec.get_mut((reg - base) as usize + k) {
                        *b = (v >> (8 * k)) as u8 & 0x1F;
                    }
                }
            }
            _ => {}
        }
    }

    /// A read at `off` from the start of the MSI-X table: a table dword, the PBA's first
    /// dword, or zero for anything else in the region.
    pub(crate) fn msix_read(&self, off: u64) -> u32 {
        if off >= PBA_IN_TABLE {
            if off == PBA_IN_TABLE {
                self.pba
            } else {
                0
            }
        } else {
            self.table.get((off / 4) as usize).copied().unwrap_or(0)
        }
    }

    /// A write of `v` at `off` from the start of the MSI-X table. A table write may unmask a
    /// vector, so what waits in the PBA for it is sent to `sink` at once; the PBA itself is
    /// read only.
    pub(crate) fn msix_write(
        &mut self,
        off: u64,
        v: u32,
        sink: &mut dyn InterruptSink,
        stats: &mut IpStats,
    ) {
        if off < PBA_IN_TABLE {
            if let Some(w) = self.table.get_mut((off / 4) as usize) {
                *w = v;
            }
            self.flush_pba(sink, stats);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enables_take_plain_set_and_clear_writes() {
        let mut irq = Irqs::new(4);
        irq.write(ireg::USER_ENABLE, 0b0101);
        irq.write(ireg::USER_ENABLE_W1S, 0b0010);
        irq.write(ireg::USER_ENABLE_W1C, 0b0001);
        assert_eq!(irq.peek(ireg::USER_ENABLE, 0), 0b0110);
        // Every alias reads the one register.
        assert_eq!(irq.peek(ireg::USER_ENABLE_W1C, 0), 0b0110);
        irq.write(ireg::CHANNEL_ENABLE_W1S, 0b11);
        assert_eq!(irq.peek(ireg::CHANNEL_ENABLE, 0), 0b11);
        // The engines' requests are passed in; the request register shows the enabled ones.
        assert_eq!(irq.peek(ireg::CHANNEL_PENDING, 0b101), 0b101);
        assert_eq!(irq.peek(ireg::CHANNEL_REQUEST, 0b101), 0b001);
    }

    #[test]
    fn vector_registers_hold_five_bits_a_line_and_drop_lines_past_the_block() {
        let mut irq = Irqs::new(16);
        irq.write(ireg::USER_VECTOR + 4, 0xFF3F_2104);
        assert_eq!(irq.peek(ireg::USER_VECTOR + 4, 0), 0x1F1F_0104);
        // The channel block has eight lines: the register at +4 holds lines 4-7, one past it
        // reads and takes nothing.
        irq.write(ireg::CHANNEL_VECTOR + 4, 0x0403_0201);
        irq.write(ireg::CHANNEL_VECTOR + 8, 0x0807_0605);
        assert_eq!(irq.peek(ireg::CHANNEL_VECTOR + 4, 0), 0x0403_0201);
        assert_eq!(irq.peek(ireg::CHANNEL_VECTOR + 8, 0), 0);
    }

    #[test]
    fn reading_the_user_request_register_hands_over_what_it_returns() {
        let mut irq = Irqs::new(2);
        irq.write(ireg::USER_ENABLE, 0b01);
        irq.latch_user(0);
        irq.latch_user(1);
        // A line the IP was not configured with is not latched.
        irq.latch_user(2);
        assert_eq!(irq.peek(ireg::USER_PENDING, 0), 0b11);
        assert_eq!(irq.requests(0b100), 1 << 16);
        assert_eq!(irq.read(ireg::USER_PENDING, 0), (0b11, false));
        assert_eq!(irq.read(ireg::USER_REQUEST, 0), (0b01, true));
        // Only the enabled request was handed over; the disabled one stays latched.
        assert_eq!(irq.peek(ireg::USER_PENDING, 0), 0b10);
    }

    /// Counts what the block sends.
    #[derive(Default)]
    struct Sent(Vec<(u64, u32)>);

    impl InterruptSink for Sent {
        fn msix(&mut self, addr: u64, data: u32) {
            self.0.push((addr, data));
        }
        fn msi(&mut self, _vector: u32) {}
        fn intx(&mut self, _level: bool) {}
    }

    #[test]
    fn an_msix_table_write_that_unmasks_a_vector_sends_what_waits_in_the_pba() {
        let mut irq = Irqs::new(0);
        let mut stats = IpStats::default();
        let mut sent = Sent::default();
        irq.set_mode(IrqMode::MsiX {
            function_mask: false,
        });
        assert_eq!(irq.msix_read(12), msix::MASKED, "vectors start masked");
        irq.msix_write(0, 0xFEE0_0000, &mut sent, &mut stats);
        irq.msix_write(8, 0x41, &mut sent, &mut stats);
        irq.update(1, &mut sent, &mut stats);
        assert!(sent.0.is_empty());
        assert_eq!(irq.msix_read(PBA_IN_TABLE), 1);
        // The PBA is read only, and reads past its first dword are zero.
        irq.msix_write(PBA_IN_TABLE, 0, &mut sent, &mut stats);
        assert_eq!(irq.msix_read(PBA_IN_TABLE), 1);
        assert_eq!(irq.msix_read(PBA_IN_TABLE + 4), 0);
        irq.msix_write(12, 0, &mut sent, &mut stats);
        assert_eq!(sent.0, vec![(0xFEE0_0000, 0x41)]);
        assert_eq!(irq.msix_read(PBA_IN_TABLE), 0);
        assert_eq!(stats.messages, 1);
    }
}
