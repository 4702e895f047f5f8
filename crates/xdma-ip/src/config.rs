//! How the IP is built (PG195's customization: the channels, their kinds, the alignment rule,
//! the burst size) and the card's top it sits in front of.

use card_harness::Fault;
use card_sim::Top;

use crate::pcie::PcieConfig;

/// What kind of engine a channel has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// AXI4 memory-mapped, on the card's `s_axi`.
    MemoryMapped,
    /// AXI-Stream, on the card's next free stream port of its direction.
    Stream,
}

/// How the IP is built: the card's top and the channels the IP has.
#[derive(Debug, Clone)]
pub struct IpConfig {
    /// The card's RTL top.
    pub top: Top,
    /// The deliberate fault of the top to turn on (card-harness's [`Fault`]), or none.
    pub fault: Option<Fault>,
    /// H2C engines, channel 0 first (at most 4).
    pub h2c: Vec<EngineKind>,
    /// C2H engines, channel 0 first (at most 4).
    pub c2h: Vec<EngineKind>,
    /// User interrupt lines the IP serves (at most the card's `usr_irq_req` bits, 16).
    pub user_irqs: usize,
    /// Protocol monitors on the card's buses.
    pub monitors: bool,
    /// The engines' address alignment in bytes, a power of two from 1 to 128: 1 when the IP
    /// is built to allow unaligned transfers (the reference board's), otherwise a descriptor
    /// whose source and destination differ modulo it stops the engine with ALIGN_MISMATCH.
    pub alignment: u32,
    /// The harness's name for the card (its waveform file and messages).
    pub name: Option<String>,
    /// Cycles an H2C stream beat may wait for the card's TREADY before its monitor reports a
    /// stall; 0 for no bound.
    pub h2c_stall_bound: u64,
    /// Most beats in one H2C AXI write burst, 1 to 256 (C2H read bursts are one max payload
    /// each with timing, 256 beats without). Default 16: 256-byte bursts.
    pub max_burst_beats: u32,
    /// The PCIe link, root complex and request windows in simulated time; `None` reaches host
    /// memory at once (a virtual machine's front end, whose time is not the host's).
    pub pcie: Option<PcieConfig>,
}

impl IpConfig {
    /// The IP of the reference board in front of `top`, with these channels: unaligned
    /// transfers allowed, one user interrupt line, monitors on.
    pub fn new(top: Top, h2c: Vec<EngineKind>, c2h: Vec<EngineKind>) -> IpConfig {
        IpConfig {
            top,
            fault: None,
            h2c,
            c2h,
            user_irqs: 1,
            monitors: true,
            alignment: 1,
            name: None,
            h2c_stall_bound: 0,
            max_burst_beats: 16,
            pcie: None,
        }
    }
}
