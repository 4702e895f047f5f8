//! The XDMA IP at register and descriptor level (Xilinx PG195), in front of the card's RTL.
//!
//! A driver programs this model as it programs the IP on a board: it writes descriptor chains
//! into host memory, points an engine's SGDMA registers at them, sets the engine's run bit and
//! takes the interrupt (or polls the write-back). The engines then walk the chains in host
//! memory and move the data over the card's buses, driven cycle by cycle through the card
//! harness: memory-mapped engines on the card's AXI4 port (`s_axi`), stream engines on its
//! AXI-Stream ports, the user BAR on `s_axil`, user interrupts on `usr_irq_req`/`usr_irq_ack`.
//!
//! What lies outside the IP is an interface, so that the same model sits behind any front end:
//! - host memory ([`HostMemory`]): the guest RAM of a virtual machine, or a plain buffer;
//! - interrupts ([`InterruptSink`]): MSI-X messages from the IP's own table, MSI vectors of
//!   the function's capability, or the INTx level;
//! - the PCI function's interrupt configuration ([`IrqMode`]), which lives in config space and
//!   so belongs to the front end, is told to the IP whenever it changes.

mod config;
mod engine;
mod ip;
mod irq;
pub mod pcie;
mod regs;
mod stats;
mod variant;

pub use config::{EngineKind, IpConfig};
pub use ip::{UserAccess, XdmaIp};
pub use pcie::{LinkConfig, PcieConfig, Ps, RootConfig};
pub use stats::{IpStats, LatencyStats};
pub use variant::Variant;

/// The IP's AXI clock (`axi_aclk`), which [`XdmaIp::run`] counts in.
pub use card_harness::AXI_HZ;

use thiserror::Error;

/// A DMA access outside host memory: the bus would answer with an unsupported request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("DMA outside host memory: {len} bytes at {addr:#x}")]
pub struct DmaFault {
    /// The first address of the access.
    pub addr: u64,
    /// Its length in bytes.
    pub len: usize,
}

/// Host memory as the IP's DMA sees it, by bus address.
pub trait HostMemory {
    /// Reads `buf.len()` bytes at `addr`.
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> std::result::Result<(), DmaFault>;
    /// Writes `data` at `addr`.
    fn write(&mut self, addr: u64, data: &[u8]) -> std::result::Result<(), DmaFault>;
}

/// Host memory that is one buffer at a bus address: what a test or a host model without an
/// IOMMU gives the IP.
#[derive(Debug, Clone)]
pub struct BufferMemory {
    base: u64,
    bytes: Vec<u8>,
}

impl BufferMemory {
    /// `size` zeroed bytes at bus address `base`.
    pub fn new(base: u64, size: usize) -> BufferMemory {
        BufferMemory {
            base,
            bytes: vec![0; size],
        }
    }

    /// The bus address of the first byte.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Bytes of memory.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for memory of no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    fn range(
        &self,
        addr: u64,
        len: usize,
    ) -> std::result::Result<std::ops::Range<usize>, DmaFault> {
        let fault = DmaFault { addr, len };
        let off = usize::try_from(addr.checked_sub(self.base).ok_or(fault)?).map_err(|_| fault)?;
        let end = off.checked_add(len).ok_or(fault)?;
        if end > self.bytes.len() {
            return Err(fault);
        }
        Ok(off..end)
    }

    /// The `len` bytes at `addr`.
    pub fn slice(&self, addr: u64, len: usize) -> std::result::Result<&[u8], DmaFault> {
        let r = self.range(addr, len)?;
        Ok(&self.bytes[r])
    }

    /// The `len` bytes at `addr`, to change.
    pub fn slice_mut(&mut self, addr: u64, len: usize) -> std::result::Result<&mut [u8], DmaFault> {
        let r = self.range(addr, len)?;
        Ok(&mut self.bytes[r])
    }
}

impl HostMemory for BufferMemory {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> std::result::Result<(), DmaFault> {
        buf.copy_from_slice(self.slice(addr, buf.len())?);
        Ok(())
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> std::result::Result<(), DmaFault> {
        self.slice_mut(addr, data.len())?.copy_from_slice(data);
        Ok(())
    }
}

/// Where the IP's interrupts go.
pub trait InterruptSink {
    /// An MSI-X message, as the IP's table holds it for the vector.
    fn msix(&mut self, addr: u64, data: u32);
    /// MSI vector `vector` of the function's MSI capability; the front end forms the message.
    fn msi(&mut self, vector: u32);
    /// The INTx pin's level. The front end must have applied it before it returns, since the
    /// driver's handler clears the source with a BAR access and expects the line low after it.
    fn intx(&mut self, level: bool);
}

/// How the PCI function delivers interrupts, from its config space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqMode {
    /// Neither MSI nor MSI-X enabled: the INTx pin, unless the command register disables it.
    Intx {
        /// Command register bit 10 (Interrupt Disable).
        disabled: bool,
    },
    /// MSI enabled with `vectors` vectors allocated (a power of two, 1 to 32).
    Msi {
        /// Vectors the system allocated (Multiple Message Enable).
        vectors: u32,
    },
    /// MSI-X enabled.
    MsiX {
        /// The capability's Function Mask bit: nothing is sent, requests wait in the PBA.
        function_mask: bool,
    },
}

/// The BARs the IP decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bar {
    /// The user BAR: the card's `s_axil` (the IP's `M_AXI_LITE`).
    User,
    /// The DMA BAR: engines, IRQ block, config, SGDMA, MSI-X table and PBA.
    Dma,
}

/// What went wrong in the model itself (not a guest mistake, which gets the IP's behaviour).
#[derive(Debug, Error)]
pub enum IpError {
    /// The card's simulation failed: an RTL `$fatal`, a protocol monitor's violation, or a bus
    /// model's timeout.
    #[error("card simulation: {0}")]
    Card(#[from] axi_bfm::BfmError),
    /// The configuration cannot be built.
    #[error("XDMA IP configuration: {0}")]
    Config(String),
}

/// The model's result type.
pub type Result<T> = std::result::Result<T, IpError>;
