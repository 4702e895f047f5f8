//! The function's config space, as an XDMA endpoint presents it: identity, two 32-bit memory
//! BARs, the MSI, MSI-X and PCI Express capabilities, and which bits software may write.
//!
//! Only the first 256 bytes exist: QEMU's `pc` machine reaches config space through ports
//! 0xCF8/0xCFC, which cannot address the extended space, and the proxy forwards no more.

use xdma_ip::{Bar, IrqMode};

/// Bytes of config space.
pub const CONFIG_SIZE: usize = 256;
/// Xilinx.
pub const VENDOR_ID: u16 = 0x10EE;
/// The XDMA IP's default device ID for a 7-series Gen2 x8 endpoint.
pub const DEVICE_ID: u16 = 0x7028;
/// Memory controller, other (`0x0580`), programming interface 0.
pub const CLASS_CODE: u32 = 0x05_80_00;
/// The IP's default subsystem vendor.
pub const SUBSYSTEM_VENDOR_ID: u16 = 0x10EE;
/// The IP's default subsystem ID.
pub const SUBSYSTEM_ID: u16 = 0x0007;
/// The BAR of the user logic (the card's `s_axil`).
pub const USER_BAR: usize = 0;
/// The BAR of the DMA registers.
pub const DMA_BAR: usize = 1;
/// Vectors of the MSI-X table (and of MSI, multiple message capable).
pub const VECTORS: u32 = 32;

/// Where the capabilities sit (as on the IP, which has power management at 0x40).
const MSI: usize = 0x48;
const MSIX: usize = 0x60;
const PCIE: usize = 0x70;
/// Bytes of a version 2 PCI Express capability, which must fit in config space.
const PCIE_LEN: usize = 0x3C;
const _: () = assert!(PCIE + PCIE_LEN <= CONFIG_SIZE);

// Standard header offsets.
const COMMAND: usize = 0x04;
const STATUS: usize = 0x06;
const BAR0: usize = 0x10;
const INTERRUPT_LINE: usize = 0x3C;

/// Command register bits.
const CMD_MEMORY: u16 = 1 << 1;
const CMD_BUS_MASTER: u16 = 1 << 2;
const CMD_PARITY: u16 = 1 << 6;
const CMD_SERR: u16 = 1 << 8;
const CMD_INTX_DISABLE: u16 = 1 << 10;
/// Status register bits.
const STS_INTERRUPT: u16 = 1 << 3;
const STS_CAP_LIST: u16 = 1 << 4;
/// The error bits of the status register, cleared by writing 1.
const STS_ERRORS_W1C: u16 = 0xF900;

/// MSI Message Control bits.
const MSI_ENABLE: u16 = 1 << 0;
const MSI_MMC_SHIFT: u16 = 1;
const MSI_MME_SHIFT: u16 = 4;
const MSI_64BIT: u16 = 1 << 7;
/// MSI-X Message Control bits.
const MSIX_FUNCTION_MASK: u16 = 1 << 14;
const MSIX_ENABLE: u16 = 1 << 15;

/// How much of each BAR the function decodes, and so how its BAR register sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarSizes {
    /// The user BAR: a power of two, at least 4 KiB.
    pub user: u32,
    /// The DMA BAR.
    pub dma: u32,
}

impl BarSizes {
    /// The sizes for a card whose user logic decodes `user_decoded` bytes: rounded up to a
    /// power of two of at least 4 KiB, as a BAR must be.
    pub fn for_user_logic(user_decoded: u64) -> BarSizes {
        let user = user_decoded.clamp(4096, 1 << 31).next_power_of_two() as u32;
        BarSizes {
            user,
            dma: xdma_regmap::DMA_BAR_SIZE as u32,
        }
    }
}

/// The config space of the function.
#[derive(Debug, Clone)]
pub struct ConfigSpace {
    bytes: [u8; CONFIG_SIZE],
    /// Bits software may write, per byte.
    writable: [u8; CONFIG_SIZE],
    /// Bits cleared by writing 1, per byte.
    w1c: [u8; CONFIG_SIZE],
    bars: BarSizes,
}

impl ConfigSpace {
    /// The function at power-on.
    pub fn new(bars: BarSizes) -> ConfigSpace {
        let mut c = ConfigSpace {
            bytes: [0; CONFIG_SIZE],
            writable: [0; CONFIG_SIZE],
            w1c: [0; CONFIG_SIZE],
            bars,
        };
        c.build();
        c
    }

    /// Back to the power-on state (the function's reset).
    pub fn reset(&mut self) {
        *self = ConfigSpace::new(self.bars);
    }

    /// The BAR sizes.
    pub fn bar_sizes(&self) -> BarSizes {
        self.bars
    }

    fn set16(&mut self, at: usize, v: u16) {
        self.bytes[at..at + 2].copy_from_slice(&v.to_le_bytes());
    }
    fn set32(&mut self, at: usize, v: u32) {
        self.bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    fn mask16(&mut self, at: usize, m: u16) {
        self.writable[at..at + 2].copy_from_slice(&m.to_le_bytes());
    }
    fn mask32(&mut self, at: usize, m: u32) {
        self.writable[at..at + 4].copy_from_slice(&m.to_le_bytes());
    }
    fn get16(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.bytes[at], self.bytes[at + 1]])
    }
    fn get32(&self, at: usize) -> u32 {
        u32::from_le_bytes([
            self.bytes[at],
            self.bytes[at + 1],
            self.bytes[at + 2],
            self.bytes[at + 3],
        ])
    }

    fn build(&mut self) {
        // Identity.
        self.set16(0x00, VENDOR_ID);
        self.set16(0x02, DEVICE_ID);
        self.set32(0x08, CLASS_CODE << 8);
        self.set16(0x2C, SUBSYSTEM_VENDOR_ID);
        self.set16(0x2E, SUBSYSTEM_ID);
        self.set16(STATUS, STS_CAP_LIST);
        self.w1c[STATUS..STATUS + 2].copy_from_slice(&STS_ERRORS_W1C.to_le_bytes());
        // No I/O BARs, so I/O space enable stays zero.
        self.mask16(
            COMMAND,
            CMD_MEMORY | CMD_BUS_MASTER | CMD_PARITY | CMD_SERR | CMD_INTX_DISABLE,
        );
        // Cache line size is read/write; the latency timer is zero on PCI Express.
        self.writable[0x0C] = 0xFF;
        // BAR0 and BAR1: 32-bit non-prefetchable memory, so the low four bits read zero and
        // the size shows as the address bits that do not stick.
        self.mask32(BAR0 + 4 * USER_BAR, !(self.bars.user - 1));
        self.mask32(BAR0 + 4 * DMA_BAR, !(self.bars.dma - 1));
        self.bytes[0x34] = MSI as u8;
        self.writable[INTERRUPT_LINE] = 0xFF;
        self.bytes[0x3D] = 1; // INTA#

        // MSI: 64-bit, 32 vectors requested, no per-vector masking.
        self.bytes[MSI] = 0x05;
        self.bytes[MSI + 1] = MSIX as u8;
        self.set16(MSI + 2, MSI_64BIT | (5 << MSI_MMC_SHIFT));
        self.mask16(MSI + 2, MSI_ENABLE | (0b111 << MSI_MME_SHIFT));
        self.mask32(MSI + 4, !0b11);
        self.mask32(MSI + 8, !0);
        self.mask16(MSI + 12, !0);

        // MSI-X: the table and PBA live in the DMA BAR, where the IP keeps them.
        self.bytes[MSIX] = 0x11;
        self.bytes[MSIX + 1] = PCIE as u8;
        self.set16(MSIX + 2, (VECTORS - 1) as u16);
        self.mask16(MSIX + 2, MSIX_ENABLE | MSIX_FUNCTION_MASK);
        self.set32(MSIX + 4, xdma_regmap::msix::TABLE as u32 | DMA_BAR as u32);
        self.set32(MSIX + 8, xdma_regmap::msix::PBA as u32 | DMA_BAR as u32);

        // PCI Express, version 2, endpoint: what the driver's relaxed ordering, extended tag
        // and max read request settings and the kernel's link reports read.
        self.bytes[PCIE] = 0x10;
        self.bytes[PCIE + 1] = 0;
        self.set16(PCIE + 0x02, 0x0002);
        // Device capabilities: 512-byte max payload, extended tags, role-based errors.
        self.set32(PCIE + 0x04, 0x0000_8022);
        // Device control: relaxed ordering and no snoop on, 128-byte payload, 512-byte reads.
        self.set16(PCIE + 0x08, 0x2810);
        self.mask16(PCIE + 0x08, 0x79FF);
        self.w1c[PCIE + 0x0A] = 0x0F;
        // Link: 5 GT/s x8, trained, common slot clock.
        self.set32(PCIE + 0x0C, 0x0000_0082);
        self.mask16(PCIE + 0x10, 0x00CB);
        self.set16(PCIE + 0x12, 0x1082);
        // Link capabilities 2: 2.5 and 5 GT/s; link control 2: target 5 GT/s.
        self.set32(PCIE + 0x2C, 0x0000_0006);
        self.set16(PCIE + 0x30, 0x0002);
        self.mask16(PCIE + 0x30, 0x003F);
    }

    /// A read of `len` bytes (1, 2 or 4) at `addr`; outside config space reads zero.
    pub fn read(&self, addr: u32, len: u32) -> u32 {
        let mut v = 0u32;
        for i in 0..len.min(4) {
            let a = addr as usize + i as usize;
            let b = if a < CONFIG_SIZE { self.bytes[a] } else { 0 };
            v |= u32::from(b) << (8 * i);
        }
        v
    }

    /// A write of `len` bytes at `addr`: bits software may not write keep their value, bits
    /// that clear on a 1 clear, and writes outside config space are dropped.
    pub fn write(&mut self, addr: u32, val: u32, len: u32) {
        for i in 0..len.min(4) {
            let a = addr as usize + i as usize;
            if a >= CONFIG_SIZE {
                continue;
            }
            let b = (val >> (8 * i)) as u8;
            let w = self.writable[a];
            self.bytes[a] = (self.bytes[a] & !w) | (b & w);
            self.bytes[a] &= !(b & self.w1c[a]);
        }
    }

    /// The base address a BAR register holds (zero while unassigned).
    pub fn bar_base(&self, index: usize) -> u64 {
        u64::from(self.get32(BAR0 + 4 * index) & !0xF)
    }

    /// Which BAR a guest physical access of `len` bytes at `addr` falls in, and its offset
    /// there. An access that does not lie wholly inside an assigned BAR is none of ours.
    pub fn decode(&self, addr: u64, len: u32) -> Option<(Bar, u64)> {
        [
            (USER_BAR, Bar::User, self.bars.user),
            (DMA_BAR, Bar::Dma, self.bars.dma),
        ]
        .into_iter()
        .find_map(|(index, bar, size)| {
            let base = self.bar_base(index);
            let end = base + u64::from(size);
            let last = addr.checked_add(u64::from(len))?;
            (base != 0 && addr >= base && last <= end).then(|| (bar, addr - base))
        })
    }

    /// The command register.
    pub fn command(&self) -> u16 {
        self.get16(COMMAND)
    }

    /// The Interrupt Line register: the system's interrupt line for INTx (on the `pc` machine
    /// the IOAPIC input).
    pub fn interrupt_line(&self) -> u8 {
        self.bytes[INTERRUPT_LINE]
    }

    /// Sets or clears the status register's Interrupt Status bit, which mirrors the INTx
    /// level.
    pub fn set_interrupt_status(&mut self, level: bool) {
        let s = self.get16(STATUS);
        let s = if level {
            s | STS_INTERRUPT
        } else {
            s & !STS_INTERRUPT
        };
        self.set16(STATUS, s);
    }

    /// How the function delivers interrupts. MSI-X wins if software enabled both, which the
    /// specification forbids.
    pub fn irq_mode(&self) -> IrqMode {
        let msix = self.get16(MSIX + 2);
        let msi = self.get16(MSI + 2);
        if msix & MSIX_ENABLE != 0 {
            IrqMode::MsiX {
                function_mask: msix & MSIX_FUNCTION_MASK != 0,
            }
        } else if msi & MSI_ENABLE != 0 {
            IrqMode::Msi {
                vectors: self.msi_vectors(),
            }
        } else {
            IrqMode::Intx {
                disabled: self.command() & CMD_INTX_DISABLE != 0,
            }
        }
    }

    /// Vectors the system allocated to MSI (Multiple Message Enable, capped at what the
    /// function asked for).
    fn msi_vectors(&self) -> u32 {
        let ctl = self.get16(MSI + 2);
        let mmc = (ctl >> MSI_MMC_SHIFT) & 0b111;
        let mme = ((ctl >> MSI_MME_SHIFT) & 0b111).min(mmc);
        1 << mme
    }

    /// The MSI message for `vector`: the programmed address, and the programmed data with
    /// the vector in its low bits (as many as there are vectors). None while MSI is off.
    pub fn msi_message(&self, vector: u32) -> Option<(u64, u32)> {
        if self.get16(MSI + 2) & MSI_ENABLE == 0 {
            return None;
        }
        let addr = u64::from(self.get32(MSI + 4)) | (u64::from(self.get32(MSI + 8)) << 32);
        let mask = self.msi_vectors() - 1;
        let data = u32::from(self.get16(MSI + 12));
        Some((addr, (data & !mask) | (vector & mask)))
    }
}
