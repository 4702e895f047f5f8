//! The backend's settings, the `[hw]` section of the configuration ([`HwConfig`]), and
//! their checks.

use std::path::PathBuf;

use crate::sys::{self, RW_MAX};
use xdma_core::{BackendKind, Config, Error, Result};

/// Settings of the Linux driver backend: the `[hw]` section of the configuration.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HwConfig {
    /// Map the user BAR into memory (mmap of the `_user` node) for register access instead of
    /// one pread/pwrite per word. Default false: the system-call path works on every setup.
    pub mmap_user: bool,
    /// The engines' alignment in bytes when the driver cannot be asked (ALIGN_GET fails).
    /// Default 1, the IP's unaligned mode.
    pub fallback_alignment: u64,
    /// User interrupt event nodes to use (`_events_0` up; the driver makes 16). Default 16.
    pub events: usize,
    /// Bytes of card memory behind the memory-mapped channels (the driver cannot tell, and
    /// does not refuse a request past the card's memory: a write there reports success
    /// without landing, a read times out). Transfers past it are refused with an error that
    /// names it, so set it to the card's memory. Default 2 GiB: the reference board's DDR3.
    pub memory_size: u64,
    /// The most bytes one memory-mapped read or write hands to the driver, which pins all of a
    /// call's pages at once (a large call fails with ENOMEM on a fragmented host). A multiple
    /// of the page size. Default 8 MiB: one descriptor ring (2048 pages) per call.
    pub chunk_bytes: usize,
    /// The most bytes one C2H stream read asks for. Default one page (4096), which is one
    /// descriptor: a longer read can, under back-to-back traffic, hold the end of one packet
    /// and the start of the next, which the count does not show. A receive therefore returns
    /// at most this much (and at most up to the buffer's next page boundary); raise it only when
    /// packets never come back to back.
    pub c2h_stream_read: usize,
    /// The longest H2C stream frame sent. Default one page (4096): a frame that takes more than
    /// one descriptor can leave the card as two packets when the driver's descriptor ring wraps
    /// inside it. Longer frames are refused.
    pub h2c_stream_max_frame: usize,
    /// The folder of the driver's module parameters (`c2h_timeout`, `desc_blen_max`, ...).
    /// Default: `/sys/module/xdma/parameters` for nodes in `/dev`, else `parameters` beside the
    /// nodes (where `xdma-fuse` serves them). A folder that is not there means the driver's
    /// defaults.
    pub module_parameters: Option<PathBuf>,
    /// Block signals in the calling thread during DMA calls, because a signal aborts the
    /// driver's transfer. Signals sent meanwhile are delivered when the call returns.
    /// Default true.
    pub block_signals: bool,
    /// The identifier the card's ID register (user BAR offset 0) must read; open refuses a
    /// node whose ID differs, since another design's registers mean other things. Default
    /// this card's (`0x44415131`, "DAQ1", from the register table). 0 accepts any design
    /// whose ID reads neither 0 nor all ones (what a node that is not a card's BAR reads).
    pub card_id: u32,
}

impl Default for HwConfig {
    fn default() -> Self {
        HwConfig {
            mmap_user: false,
            fallback_alignment: 1,
            events: 16,
            memory_size: 2 << 30,
            chunk_bytes: 8 << 20,
            c2h_stream_read: 4096,
            h2c_stream_max_frame: 4096,
            module_parameters: None,
            block_signals: true,
            card_id: card_regs::id::RESET as u32,
        }
    }
}

impl HwConfig {
    /// The `[hw]` section of `cfg`, checked.
    pub fn from_config(cfg: &Config) -> Result<HwConfig> {
        let hw: HwConfig = cfg.section(BackendKind::Hw)?;
        hw.validate()?;
        Ok(hw)
    }

    /// Checks the values that no type rules out.
    pub fn validate(&self) -> Result<()> {
        let page = sys::page_size();
        if self.memory_size == 0 {
            return Err(Error::Config(
                "[hw] memory_size = 0: the card needs memory".into(),
            ));
        }
        if !self.fallback_alignment.is_power_of_two() {
            return Err(Error::Config(format!(
                "[hw] fallback_alignment = {}: a power of two",
                self.fallback_alignment
            )));
        }
        if self.chunk_bytes < page
            || !self.chunk_bytes.is_multiple_of(page)
            || self.chunk_bytes > RW_MAX
        {
            return Err(Error::Config(format!(
                "[hw] chunk_bytes = {}: a multiple of the page size ({page}) up to {RW_MAX:#x}, so that chunks keep the buffer's alignment",
                self.chunk_bytes
            )));
        }
        if self.c2h_stream_read == 0 || self.h2c_stream_max_frame == 0 {
            return Err(Error::Config(
                "[hw] c2h_stream_read and h2c_stream_max_frame: at least 1 byte".into(),
            ));
        }
        if self.events > 16 {
            return Err(Error::Config(format!(
                "[hw] events = {}: the driver makes 16 event nodes",
                self.events
            )));
        }
        Ok(())
    }
}
