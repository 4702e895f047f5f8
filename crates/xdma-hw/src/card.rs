//! The card handle ([`HwCard`]) and what it holds: its nodes, settings and what open learnt
//! of the driver, with its register calls.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::config::HwConfig;
use crate::driver::DriverInfo;
use crate::node::Node;
use crate::regs::{read_word, write_word};
use crate::sys;
use xdma_core::{check, CardInfo, Error, ProgressReport, Result};

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) info: CardInfo,
    pub(crate) driver: DriverInfo,
    pub(crate) hw: HwConfig,
    pub(crate) page: usize,
    pub(crate) control: Node,
    pub(crate) user: Node,
    pub(crate) user_map: Option<sys::Mapping>,
    pub(crate) h2c: Vec<Node>,
    pub(crate) c2h: Vec<Node>,
    pub(crate) events: Vec<Node>,
    pub(crate) epoch: Instant,
    /// Where the progress of memory-mapped transfers goes.
    pub(crate) progress: Mutex<ProgressReport>,
}

/// A card on the Linux XDMA driver. Cloning gives another handle to the same card.
#[derive(Debug, Clone)]
pub struct HwCard {
    pub(crate) inner: Arc<Inner>,
}

impl HwCard {
    /// The `_control` node of this card, for messages.
    pub fn control_node(&self) -> &Path {
        &self.inner.control.path
    }

    /// Where the progress of this card's memory-mapped transfers goes from the next transfer
    /// on, for every handle of the card (see [`xdma_core::progress`]): reported after each
    /// chunk of `[hw] chunk_bytes`; by default a line on stderr (or a `tracing` event when a
    /// subscriber is installed) for a transfer that runs longer than 5 s. A callback is called
    /// on the thread that makes the transfer.
    pub fn set_progress(&self, report: ProgressReport) {
        *self
            .inner
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = report;
    }

    /// What open found out about the driver: its version, its module parameters, and what it
    /// had to put right (engines left in fixed-address mode, latched interrupts).
    pub fn driver(&self) -> &DriverInfo {
        &self.inner.driver
    }
}

impl Inner {
    pub(crate) fn now_ps(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos().saturating_mul(1000)).unwrap_or(u64::MAX)
    }

    pub(crate) fn read_reg(&self, offset: u64) -> Result<u32> {
        check::reg(&self.info, offset)?;
        if let Some(m) = &self.user_map {
            let o = usize::try_from(offset).unwrap_or(usize::MAX);
            return m.read(o).ok_or(Error::RegisterOutOfRange {
                offset,
                size: m.len() as u64,
            });
        }
        let g = self.user.lock()?;
        read_word(g.io()?, &self.user.path, offset)
    }

    pub(crate) fn write_reg(&self, offset: u64, value: u32) -> Result<()> {
        check::reg(&self.info, offset)?;
        if let Some(m) = &self.user_map {
            let o = usize::try_from(offset).unwrap_or(usize::MAX);
            return if m.write(o, value) {
                Ok(())
            } else {
                Err(Error::RegisterOutOfRange {
                    offset,
                    size: m.len() as u64,
                })
            };
        }
        let g = self.user.lock()?;
        write_word(g.io()?, &self.user.path, offset, value)
    }
}
