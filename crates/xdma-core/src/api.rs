//! The consumer-side API: what tests and tools are written against, whatever the backend.

use std::future::Future;
use std::time::Duration;

use crate::addr::CardAddr;
use crate::buffer::DmaBuffer;
use crate::channel::{ChannelKind, Direction};
use crate::error::Result;

/// One DMA channel as discovery found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChannelInfo {
    /// Host to card or card to host.
    pub dir: Direction,
    /// The channel number within its direction.
    pub index: usize,
    /// Memory-mapped or stream.
    pub kind: ChannelKind,
    /// The engine's identifier register (0x1fc0xxxx for H2C, 0x1fc1xxxx for C2H), where the
    /// backend has one.
    pub id_register: u32,
}

/// What discovery found out about a card.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CardInfo {
    /// The backend that found it: "sim" or "hw".
    pub backend: String,
    /// The H2C channels, by index.
    pub h2c: Vec<ChannelInfo>,
    /// The C2H channels, by index.
    pub c2h: Vec<ChannelInfo>,
    /// Bytes of card memory reachable through the memory-mapped channels.
    pub memory_size: u64,
    /// Bytes of the user BAR (the register space).
    pub user_bar_size: u64,
    /// Number of user interrupt events.
    pub events: usize,
    /// The card's identifier register (user BAR offset 0x000).
    pub card_id: u32,
    /// The card's version register (user BAR offset 0x004).
    pub card_version: u32,
    /// The XDMA IP version from the engines' identifier registers, where known.
    pub xdma_version: Option<u8>,
    /// The engines' address alignment in bytes (1 when the engine takes any address).
    pub alignment: u64,
    /// The shortest timeout a stream receive can honour: zero on the simulated card; on a board
    /// the driver's `c2h_timeout` module parameter, since its stream read blocks that long
    /// whatever the caller asks (a receive with a shorter timeout is refused), and
    /// `Duration::MAX` when `c2h_timeout` is 0 (reads wait forever).
    #[serde(default)]
    pub min_stream_timeout: Duration,
}

impl CardInfo {
    /// The channels of one direction.
    pub fn channels(&self, dir: Direction) -> &[ChannelInfo] {
        match dir {
            Direction::H2C => &self.h2c,
            Direction::C2H => &self.c2h,
        }
    }

    /// The first channel of a direction and kind, if any.
    pub fn find(&self, dir: Direction, kind: ChannelKind) -> Option<usize> {
        self.all_of(dir, kind).into_iter().next()
    }

    /// Every channel of a direction and kind, in index order.
    pub fn all_of(&self, dir: Direction, kind: ChannelKind) -> Vec<usize> {
        self.channels(dir)
            .iter()
            .filter(|c| c.kind == kind)
            .map(|c| c.index)
            .collect()
    }

    /// The first memory-mapped channel of a direction, or [`Error::Unsupported`] saying the
    /// card has none (one XDMA instance is either memory-mapped or stream for all its
    /// channels).
    ///
    /// [`Error::Unsupported`]: crate::error::Error::Unsupported
    pub fn mm_channel(&self, dir: Direction) -> Result<usize> {
        self.find(dir, ChannelKind::MemoryMapped)
            .ok_or_else(|| crate::error::Error::Unsupported {
                backend: "any",
                what: format!("a memory-mapped {dir} transfer"),
                why: format!(
                    "the card has no memory-mapped {dir} channel (one XDMA instance is either memory-mapped or stream for all its channels)"
                ),
            })
    }
}

/// The card's own LOOP rate, a figure of its RTL alone: frames of one length fed back to back
/// at one beat per `axi_aclk` cycle with C2H always ready, so that nothing outside the card
/// (no engine, link or driver) limits it. A backend that has the card's RTL measures it (the
/// simulated card); a board's backend does not know it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoopRate {
    /// Frame length in bytes.
    pub frame_len: usize,
    /// Frames measured.
    pub frames: u32,
    /// `axi_aclk` cycles from the first frame's first C2H beat to the last frame's last beat.
    pub cycles: u64,
    /// Bytes per cycle as a fraction of the 16 the 128-bit stream carries.
    pub fraction: f64,
}

/// The outcome of one transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    /// Bytes moved.
    pub bytes: usize,
    /// For a stream receive, true when the transfer ended at an end-of-packet (TLAST); a
    /// receive that filled the buffer reports false, because whether the packet ended exactly
    /// there is not known. Always true for a stream send (the last byte carries TLAST) and
    /// false for memory-mapped transfers.
    pub end_of_packet: bool,
    /// When the transfer started, in picoseconds of the backend's clock: simulated time on the
    /// simulated card, host monotonic time since the card was opened on real hardware.
    pub start_ps: u64,
    /// When it ended, in the same clock.
    pub end_ps: u64,
}

impl Transfer {
    /// The transfer's duration.
    pub fn duration(&self) -> Duration {
        Duration::from_nanos(self.end_ps.saturating_sub(self.start_ps) / 1000)
    }

    /// Throughput in MB/s (10^6 bytes per second), as the reference table counts it.
    pub fn mb_per_s(&self) -> f64 {
        let ps = self.end_ps.saturating_sub(self.start_ps).max(1) as f64;
        self.bytes as f64 / ps * 1e6
    }
}

/// The blocking API, implemented by every backend.
///
/// Every method takes `&self`: a card is shared between threads (it is `Send + Sync`), several
/// threads may use different channels at once, and H2C and C2H run concurrently. Calls on the
/// same channel are serialised in call order.
pub trait Card: Send + Sync {
    /// What discovery found when the card was opened.
    fn info(&self) -> &CardInfo;

    /// Memory-mapped H2C: writes `data` at card address `addr` through H2C channel `channel`.
    fn write_mm(&self, channel: usize, addr: CardAddr, data: &[u8]) -> Result<Transfer>;

    /// Memory-mapped C2H: fills `buf` from card address `addr` through C2H channel `channel`.
    fn read_mm(&self, channel: usize, addr: CardAddr, buf: &mut [u8]) -> Result<Transfer>;

    /// Stream H2C: sends `frame` as one packet; its last byte carries end-of-packet.
    fn send_stream(&self, channel: usize, frame: &[u8]) -> Result<Transfer>;

    /// Stream C2H: receives into `buf` up to the next end-of-packet or until `buf` is full;
    /// fails with [`crate::error::ErrorKind::Timeout`] when no data comes within `timeout`.
    fn recv_stream(&self, channel: usize, buf: &mut [u8], timeout: Duration) -> Result<Transfer>;

    /// Reads the 32-bit user-BAR register at byte `offset` (a multiple of 4).
    fn read_reg(&self, offset: u64) -> Result<u32>;

    /// Writes the 32-bit user-BAR register at byte `offset` (a multiple of 4).
    fn write_reg(&self, offset: u64, value: u32) -> Result<()>;

    /// Waits for user interrupt `event`; returns the backend's event value (the driver's
    /// 4-byte word; on the simulated card, the number of interrupts since the last wait).
    /// Several interrupts before one wait collapse into one return, as with the driver.
    fn wait_event(&self, event: usize, timeout: Duration) -> Result<u32>;

    /// The backend's clock in picoseconds: simulated time, or host time since open.
    fn now_ps(&self) -> Result<u64>;
}

/// The result of an async data call: the outcome and the buffer handed back, whatever the
/// outcome, so that the caller keeps its allocation.
pub type BufResult<T> = (Result<T>, DmaBuffer);

/// The tokio async API, with the same meaning as [`Card`] call for call. Data calls take the
/// buffer by value and give it back, since the work may run on another thread.
pub trait AsyncCard: Send + Sync {
    /// As [`Card::write_mm`].
    fn write_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        data: DmaBuffer,
    ) -> impl Future<Output = BufResult<Transfer>> + Send;

    /// As [`Card::read_mm`]; the data is in the returned buffer.
    fn read_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: DmaBuffer,
    ) -> impl Future<Output = BufResult<Transfer>> + Send;

    /// As [`Card::send_stream`].
    fn send_stream_async(
        &self,
        channel: usize,
        frame: DmaBuffer,
    ) -> impl Future<Output = BufResult<Transfer>> + Send;

    /// As [`Card::recv_stream`].
    fn recv_stream_async(
        &self,
        channel: usize,
        buf: DmaBuffer,
        timeout: Duration,
    ) -> impl Future<Output = BufResult<Transfer>> + Send;

    /// As [`Card::read_reg`].
    fn read_reg_async(&self, offset: u64) -> impl Future<Output = Result<u32>> + Send;

    /// As [`Card::write_reg`].
    fn write_reg_async(&self, offset: u64, value: u32) -> impl Future<Output = Result<()>> + Send;

    /// As [`Card::wait_event`].
    fn wait_event_async(
        &self,
        event: usize,
        timeout: Duration,
    ) -> impl Future<Output = Result<u32>> + Send;
}
