//! The interrupts, as `libxdma.c` sets them up and handles them.
//!
//! `irq_setup`, `xdma_channel_irq`, `xdma_isr`, `user_irq_service` and
//! `engine_service_wb_monitor`: the IRQ block and the MSI-X table programmed, the handlers'
//! top halves, and a running transfer's completion taken from its interrupt or its poll-mode
//! write-back.

use xdma_ip::Ps;
use xdma_regmap::{self as map, engine_regs as ereg, irq as ireg, msix, WB_COUNT_MASK, WB_ERR};

use crate::call::Dir;
use crate::dev::{Driver, Transfer, MSIX_ADDR};
use crate::engine::State;
use crate::error::{DriverError, Errno, Result};
use crate::params::InterruptMode;

/// The driver's `user_max`: a vector for each of the IP's user interrupt lines.
const USER_MAX: u32 = map::MAX_USER_IRQ as u32;

/// Whether a running transfer has been serviced, and the driver's verdict.
#[derive(Debug)]
pub(crate) enum Serviced {
    Not,
    At(Ps, State),
}

impl Driver {
    /// The IRQ block's vectors (`prog_irq_msix_channel`, `prog_irq_msix_user`), the MSI-X
    /// table as the PCI core fills it, and the interrupts enabled.
    pub(crate) fn irq_setup(&mut self) -> Result<()> {
        // The engines' bits are numbered H2C first, then C2H; the probe found them so.
        let mut engines: Vec<(Dir, usize)> = self.h2c.iter().map(|e| (e.dir, e.channel)).collect();
        engines.extend(self.c2h.iter().map(|e| (e.dir, e.channel)));
        for (i, (dir, ch)) in engines.iter().enumerate() {
            if let Some(e) = self.engine_mut(*dir, *ch) {
                e.irq_bit = i as u32;
            }
        }
        let channels = engines.len() as u32;
        if self.params.poll_mode {
            return Ok(());
        }
        if self.params.interrupt_mode == InterruptMode::MsiX {
            let vectors = |first: u32, n: u32| -> Vec<u32> {
                (0..n.div_ceil(4))
                    .map(|j| {
                        (0..4)
                            .filter(|k| j * 4 + k < n)
                            .fold(0u32, |v, k| v | (((first + j * 4 + k) & 0x1F) << (8 * k)))
                    })
                    .collect()
            };
            for (j, v) in vectors(0, channels).into_iter().enumerate() {
                self.dma_write(ireg::BASE + ireg::CHANNEL_VECTOR + 4 * j as u64, v)?;
            }
            for (j, v) in vectors(channels, USER_MAX).into_iter().enumerate() {
                self.dma_write(ireg::BASE + ireg::USER_VECTOR + 4 * j as u64, v)?;
            }
            for v in 0..(channels + USER_MAX).min(msix::VECTORS as u32) {
                let entry = msix::TABLE + u64::from(v) * msix::ENTRY;
                self.dma_write(entry, MSIX_ADDR as u32)?;
                self.dma_write(entry + 4, (MSIX_ADDR >> 32) as u32)?;
                self.dma_write(entry + 8, v)?;
                self.dma_write(entry + 12, 0)?;
            }
        }
        // channel_interrupts_enable(~0) and user_interrupts_enable(~0) at the end of probe.
        self.dma_write(ireg::BASE + ireg::CHANNEL_ENABLE_W1S, !0)?;
        self.dma_write(ireg::BASE + ireg::USER_ENABLE_W1S, !0)?;
        Ok(())
    }

    /// The top halves: what each handler does when its interrupt arrives.
    pub(crate) fn handle_irqs(&mut self) -> Result<()> {
        if self.params.poll_mode {
            return Ok(());
        }
        let channels = (self.h2c.len() + self.c2h.len()) as u32;
        let now = self.now();
        for v in std::mem::take(&mut self.irqs.msix_vectors) {
            if v < channels {
                // xdma_channel_irq: mask the engine's interrupts, flush, schedule its work.
                if let Some((dir, ch)) = self.engine_of_bit(v) {
                    let base = map::engine_base(dir == Dir::C2h, ch);
                    let ie = self.engine_mut(dir, ch).map_or(0, |e| e.ie_mask);
                    self.dma_write(base + ereg::IE_MASK_W1C, ie)?;
                    self.dma_read(ireg::BASE + ireg::CHANNEL_PENDING)?;
                    if let Some(e) = self.engine_mut(dir, ch) {
                        e.irq_at = Some(now);
                    }
                }
            } else {
                self.user_irq((v - channels) as usize, now);
            }
        }
        let shared = std::mem::take(&mut self.irqs.msi) > 0 || self.irqs.intx;
        if shared {
            // xdma_isr: the channel requests masked, the user requests serviced.
            let ch_irq = self.dma_read(ireg::BASE + ireg::CHANNEL_REQUEST)?;
            if ch_irq != 0 {
                self.dma_write(ireg::BASE + ireg::CHANNEL_ENABLE_W1C, ch_irq)?;
            }
            let user_irq = self.dma_read(ireg::BASE + ireg::USER_REQUEST)?;
            for line in 0..map::MAX_USER_IRQ {
                if user_irq & (1 << line) != 0 {
                    self.user_irq(line, now);
                }
            }
            for bit in 0..channels {
                if ch_irq & (1 << bit) != 0 {
                    if let Some((dir, ch)) = self.engine_of_bit(bit) {
                        if let Some(e) = self.engine_mut(dir, ch) {
                            e.irq_at = Some(now);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A user interrupt's handler (`user_irq_service`): the event counted, and latched for
    /// the event node's readers once the handler is done.
    fn user_irq(&mut self, line: usize, at: Ps) {
        if let Some(n) = self.user_events.get_mut(line) {
            *n += 1;
        }
        let irq = self.costs.irq;
        if let Some(q) = self.user_latched.get_mut(line) {
            q.push_back(at + irq);
        }
    }

    fn engine_of_bit(&self, bit: u32) -> Option<(Dir, usize)> {
        self.h2c
            .iter()
            .chain(&self.c2h)
            .find(|e| e.irq_bit == bit)
            .map(|e| (e.dir, e.channel))
    }

    /// Whether the running transfer has been serviced, and when: in poll mode the write-back
    /// looked at as the completion thread does, otherwise the engine's interrupt handled if
    /// one came (the work's end enables the engine's interrupts again). Either way the
    /// handler's work takes `irq` from the moment the interrupt or write-back reached the host.
    pub(crate) fn check(
        &mut self,
        dir: Dir,
        channel: usize,
        xfer: Transfer,
        eop_flush: bool,
    ) -> Result<Serviced> {
        let now = self.now();
        let irq = self.costs.irq;
        if self.params.poll_mode {
            let wb = self.engines(dir)[channel].poll_wb;
            let v = self
                .ram
                .dword(wb)
                .map_err(|e| DriverError::errno(Errno::Io, e.to_string()))?;
            let expected = if eop_flush { 1 } else { xfer.desc_num as u32 };
            if v & WB_ERR == 0 && v & WB_COUNT_MASK < expected {
                return Ok(Serviced::Not);
            }
            let seen = *self
                .engine_mut(dir, channel)
                .map_or(&mut None, |e| &mut e.irq_at)
                .get_or_insert(now);
            let at = seen.saturating_add(irq);
            if at > now {
                return Ok(Serviced::Not);
            }
            if let Some(e) = self.engine_mut(dir, channel) {
                e.irq_at = None;
            }
            let s = self.service(dir, channel, xfer, eop_flush, v)?;
            return Ok(Serviced::At(at, s));
        }
        let Some(came) = self.engines(dir)[channel].irq_at else {
            return Ok(Serviced::Not);
        };
        let at = came.saturating_add(irq);
        if at > now {
            return Ok(Serviced::Not);
        }
        if let Some(e) = self.engine_mut(dir, channel) {
            e.irq_at = None;
        }
        let s = self.service(dir, channel, xfer, eop_flush, 0)?;
        let (ie, bit) = {
            let e = &self.engines(dir)[channel];
            (e.ie_mask, e.irq_bit)
        };
        if self.params.interrupt_mode == InterruptMode::MsiX {
            let base = map::engine_base(dir == Dir::C2h, channel);
            self.dma_write(base + ereg::IE_MASK_W1S, ie)?;
        } else {
            self.dma_write(ireg::BASE + ireg::CHANNEL_ENABLE_W1S, 1 << bit)?;
        }
        Ok(Serviced::At(at, s))
    }
}
