//! The XDMA IP's contract with its driver, in one place: the register map of the DMA ("config")
//! BAR, the engine identifiers, the bits of the engine's control and status registers, the
//! IRQ block, the 32-byte descriptor, the C2H stream result record and the poll-mode
//! write-back (Xilinx PG195, "Register Space" and "Descriptors"; the Linux driver's
//! `libxdma.h` uses the same names).
//!
//! Every crate that talks to the IP or plays it takes these values from here: the register-level
//! IP model (`xdma-ip`), the driver backend (`xdma-hw`), the FUSE nodes (`xdma-fuse`) and the
//! simulated card (`xdma-sim`); [`driver`] holds the Linux driver's nodes, ioctls and errno.
//! The crate has no dependencies, so that a crate of the driver's
//! world can use it without pulling in a simulator.

#![forbid(unsafe_code)]

/// Bytes of the DMA BAR the driver maps and the IP decodes: the engine, IRQ, config and SGDMA
/// targets (0x0000-0x6FFF) and the MSI-X table and PBA (0x8000-0x8FFF) fit in 64 KiB.
pub const DMA_BAR_SIZE: u64 = 0x1_0000;
/// The smallest DMA BAR the driver accepts (`XDMA_BAR_SIZE` in `libxdma.h`).
pub const DMA_BAR_MIN: u64 = 0x8000;
/// Channels per direction that one IP can have.
pub const MAX_CHANNELS: usize = 4;
/// User interrupt lines (`usr_irq_req` bits) the IP can have.
pub const MAX_USER_IRQ: usize = 16;
/// The host page by which the driver cuts a pinned buffer into descriptors.
pub const HOST_PAGE: u64 = 4096;

/// The upper 12 bits of every block's identifier register.
pub const BLOCK_ID_HEAD: u32 = 0x1FC0_0000;
/// Mask of the block identifier's upper bits.
pub const BLOCK_ID_MASK: u32 = 0xFFF0_0000;
/// The version field of every identifier register (bits 7:0): 0x06 is the 2017.1+ IP.
pub const IP_VERSION: u32 = 0x06;
/// Bit 15 of an engine identifier: the engine is AXI-Stream, not memory-mapped.
pub const ID_STREAM: u32 = 1 << 15;
/// Mask of an identifier's subsystem and target (bits 31:16): the part the driver's probe
/// compares with the expected engine (`XDMA_ID_H2C` and `XDMA_ID_C2H` in `libxdma.h`), see
/// [`Target::id_base`].
pub const ID_ENGINE_MASK: u32 = 0xFFFF_0000;
/// Shift of an identifier's channel field (bits 11:8).
pub const ID_CHANNEL_SHIFT: u32 = 8;
/// Mask of the channel field after the shift.
pub const ID_CHANNEL_MASK: u32 = 0xF;
/// Mask of an identifier's version field (bits 7:0).
pub const ID_VERSION_MASK: u32 = 0xFF;

/// The channel field of an identifier register value.
pub fn id_channel(id: u32) -> usize {
    ((id >> ID_CHANNEL_SHIFT) & ID_CHANNEL_MASK) as usize
}

/// A target of the DMA BAR: bits 15:12 of the offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// H2C engine registers (0x0).
    H2c,
    /// C2H engine registers (0x1).
    C2h,
    /// The IRQ block (0x2).
    Irq,
    /// The config block (0x3).
    Config,
    /// H2C SGDMA (first descriptor) registers (0x4).
    H2cSgdma,
    /// C2H SGDMA registers (0x5).
    C2hSgdma,
    /// The SGDMA common block (0x6).
    SgdmaCommon,
    /// The MSI-X table and PBA (0x8).
    MsiX,
}

impl Target {
    /// The target a DMA BAR offset falls in, if any.
    pub fn of(offset: u64) -> Option<Target> {
        Some(match offset >> 12 {
            0 => Target::H2c,
            1 => Target::C2h,
            2 => Target::Irq,
            3 => Target::Config,
            4 => Target::H2cSgdma,
            5 => Target::C2hSgdma,
            6 => Target::SgdmaCommon,
            8 => Target::MsiX,
            _ => return None,
        })
    }

    /// The target's number, bits 15:12 of its offsets and bits 19:16 of its identifiers.
    pub fn number(self) -> u32 {
        match self {
            Target::H2c => 0,
            Target::C2h => 1,
            Target::Irq => 2,
            Target::Config => 3,
            Target::H2cSgdma => 4,
            Target::C2hSgdma => 5,
            Target::SgdmaCommon => 6,
            Target::MsiX => 8,
        }
    }

    /// Bits 31:16 of the identifiers of this target's blocks, the rest zero: 0x1FC0_0000 for
    /// H2C engines, 0x1FC1_0000 for C2H engines. An identifier `id` belongs to the target when
    /// `id & ID_ENGINE_MASK` is this.
    pub fn id_base(self) -> u32 {
        BLOCK_ID_HEAD | (self.number() << 16)
    }

    /// The identifier register value of a block of this target for `channel`, with the stream
    /// bit for a stream engine.
    pub fn identifier(self, channel: usize, stream: bool) -> u32 {
        self.identifier_version(channel, stream, IP_VERSION)
    }

    /// [`Target::identifier`] with the version field `version` instead of [`IP_VERSION`] (a
    /// model that is no IP release, or a test that probes the field).
    pub fn identifier_version(self, channel: usize, stream: bool, version: u32) -> u32 {
        let ch = (channel as u32 & ID_CHANNEL_MASK) << ID_CHANNEL_SHIFT;
        self.id_base() | if stream { ID_STREAM } else { 0 } | ch | (version & ID_VERSION_MASK)
    }
}

/// The driver's test that a BAR is the IP's DMA ("config") BAR (`is_config_bar` in
/// `libxdma.c`): the IRQ block's identifier (at [`irq::BASE`]) and the config block's (at
/// [`config::BASE`]) each name their target, the version field aside. A node whose words are
/// not these (a file of zeros, `/dev/zero`, another design's BAR) is not the IP's.
pub fn is_dma_bar(irq_id: u32, config_id: u32) -> bool {
    irq_id & ID_ENGINE_MASK == Target::Irq.id_base()
        && config_id & ID_ENGINE_MASK == Target::Config.id_base()
}

/// Offset of an engine's register block: H2C at `0x0000 + ch*0x100`, C2H at `0x1000 + ...`.
pub fn engine_base(c2h: bool, channel: usize) -> u64 {
    (u64::from(c2h) << 12) | ((channel as u64) << 8)
}

/// Offset of an engine's SGDMA block: H2C at `0x4000 + ch*0x100`, C2H at `0x5000 + ...`.
pub fn sgdma_base(c2h: bool, channel: usize) -> u64 {
    0x4000 | engine_base(c2h, channel)
}

pub mod driver;

/// Registers of an engine block, relative to [`engine_base`].
pub mod engine_regs {
    /// Identifier (read only).
    pub const IDENTIFIER: u64 = 0x00;
    /// Control: write sets the whole register.
    pub const CONTROL: u64 = 0x04;
    /// Control, write 1 to set.
    pub const CONTROL_W1S: u64 = 0x08;
    /// Control, write 1 to clear.
    pub const CONTROL_W1C: u64 = 0x0C;
    /// Status (read only).
    pub const STATUS: u64 = 0x40;
    /// Status, cleared by the read (the error and stop bits; BUSY stays).
    pub const STATUS_RC: u64 = 0x44;
    /// Completed descriptor count since the engine was last started.
    pub const COMPLETED: u64 = 0x48;
    /// Alignments: address alignment (23:16), transfer granularity (15:8), address bits (7:0).
    pub const ALIGNMENTS: u64 = 0x4C;
    /// Poll-mode write-back address, low word.
    pub const POLL_WB_LO: u64 = 0x88;
    /// Poll-mode write-back address, high word.
    pub const POLL_WB_HI: u64 = 0x8C;
    /// Interrupt enable mask (the status bits that raise the channel's request).
    pub const IE_MASK: u64 = 0x90;
    /// Interrupt enable mask, write 1 to set.
    pub const IE_MASK_W1S: u64 = 0x94;
    /// Interrupt enable mask, write 1 to clear.
    pub const IE_MASK_W1C: u64 = 0x98;
    /// Performance monitor control: RUN (bit 0), CLEAR (bit 1), AUTO (bit 2).
    pub const PERF_CTRL: u64 = 0xC0;
    /// Performance monitor: cycles while running, low word.
    pub const PERF_CYC_LO: u64 = 0xC4;
    /// Performance monitor: cycles, high word (bit 16: overflow).
    pub const PERF_CYC_HI: u64 = 0xC8;
    /// Performance monitor: data beats, low word.
    pub const PERF_DAT_LO: u64 = 0xCC;
    /// Performance monitor: data beats, high word.
    pub const PERF_DAT_HI: u64 = 0xD0;
    /// Performance monitor: cycles with requests pending, low word.
    pub const PERF_PND_LO: u64 = 0xD4;
    /// Performance monitor: pending, high word.
    pub const PERF_PND_HI: u64 = 0xD8;
}

/// Bits of an engine's control register (and of its interrupt enable mask, which uses the
/// status bit positions).
pub mod control {
    /// Run: a rising edge starts the engine at the first descriptor; clearing it stops the
    /// engine after the descriptor in flight.
    pub const RUN: u32 = 1 << 0;
    /// Interrupt on a descriptor with STOP completed.
    pub const IE_DESC_STOPPED: u32 = 1 << 1;
    /// Interrupt on a descriptor with COMPLETED completed.
    pub const IE_DESC_COMPLETED: u32 = 1 << 2;
    /// Interrupt on an alignment mismatch.
    pub const IE_ALIGN_MISMATCH: u32 = 1 << 3;
    /// Interrupt on a descriptor with a bad magic.
    pub const IE_MAGIC_STOPPED: u32 = 1 << 4;
    /// Interrupt on an invalid length.
    pub const IE_INVALID_LEN: u32 = 1 << 5;
    /// Interrupt when the engine stops idle (run cleared).
    pub const IE_IDLE_STOPPED: u32 = 1 << 6;
    /// Interrupt on a read error (bits 13:9).
    pub const IE_READ_ERROR: u32 = 0x1F << 9;
    /// Interrupt on a write error (bits 18:14).
    pub const IE_WRITE_ERROR: u32 = 0x1F << 14;
    /// Interrupt on a descriptor fetch error (bits 23:19).
    pub const IE_DESC_ERROR: u32 = 0x1F << 19;
    /// Memory-mapped transfers at a fixed card address.
    pub const NON_INCR_ADDR: u32 = 1 << 25;
    /// Write the completed descriptor count to the poll-mode write-back address.
    pub const POLL_MODE_WB: u32 = 1 << 26;
    /// C2H stream: write a result record per descriptor (always on in this model's driver).
    pub const STM_MODE_WB: u32 = 1 << 27;
}

/// Bits of an engine's status register.
pub mod status {
    /// The engine is running.
    pub const BUSY: u32 = 1 << 0;
    /// A descriptor with STOP completed (or the engine stopped on one).
    pub const DESC_STOPPED: u32 = 1 << 1;
    /// A descriptor with COMPLETED completed.
    pub const DESC_COMPLETED: u32 = 1 << 2;
    /// The source and destination addresses are not aligned alike.
    pub const ALIGN_MISMATCH: u32 = 1 << 3;
    /// A descriptor with a bad magic: the engine stopped on it.
    pub const MAGIC_STOPPED: u32 = 1 << 4;
    /// A descriptor length the engine cannot do.
    pub const INVALID_LEN: u32 = 1 << 5;
    /// The engine stopped because run was cleared.
    pub const IDLE_STOPPED: u32 = 1 << 6;
    /// H2C: a read of host memory got an unsupported-request completion (data outside host
    /// memory).
    pub const H2C_R_UNSUPP_REQ: u32 = 1 << 9;
    /// H2C: a read of host memory was aborted.
    pub const H2C_R_COMPL_ABORT: u32 = 1 << 10;
    /// H2C: a write on the card's AXI bus got DECERR.
    pub const H2C_W_DECODE_ERR: u32 = 1 << 14;
    /// H2C: a write on the card's AXI bus got SLVERR.
    pub const H2C_W_SLAVE_ERR: u32 = 1 << 15;
    /// C2H: a read on the card's AXI bus got DECERR.
    pub const C2H_R_DECODE_ERR: u32 = 1 << 9;
    /// C2H: a read on the card's AXI bus got SLVERR.
    pub const C2H_R_SLAVE_ERR: u32 = 1 << 10;
    /// A descriptor fetch got an unsupported-request completion (descriptor outside host
    /// memory).
    pub const DESC_UNSUPP_REQ: u32 = 1 << 19;
    /// A descriptor fetch was aborted.
    pub const DESC_COMPL_ABORT: u32 = 1 << 20;
    /// Every bit a read of STATUS_RC clears: all but BUSY.
    pub const CLEARED_BY_READ: u32 = !BUSY & 0x00FF_FFFF;
}

/// Registers of an engine's SGDMA block, relative to [`sgdma_base`].
pub mod sgdma {
    /// Identifier.
    pub const IDENTIFIER: u64 = 0x00;
    /// Bus address of the first descriptor, low word.
    pub const FIRST_DESC_LO: u64 = 0x80;
    /// Bus address of the first descriptor, high word.
    pub const FIRST_DESC_HI: u64 = 0x84;
    /// Descriptors adjacent to the first one (fetched with it).
    pub const FIRST_DESC_ADJACENT: u64 = 0x88;
    /// C2H stream descriptor credits (credit mode only).
    pub const CREDITS: u64 = 0x8C;
}

/// Registers of the IRQ block, relative to 0x2000.
pub mod irq {
    /// Base of the block.
    pub const BASE: u64 = 0x2000;
    /// Identifier.
    pub const IDENTIFIER: u64 = 0x00;
    /// User interrupt enable mask (bit per `usr_irq_req` line).
    pub const USER_ENABLE: u64 = 0x04;
    /// User interrupt enable mask, write 1 to set.
    pub const USER_ENABLE_W1S: u64 = 0x08;
    /// User interrupt enable mask, write 1 to clear.
    pub const USER_ENABLE_W1C: u64 = 0x0C;
    /// Channel interrupt enable mask (bit per engine, H2C engines first).
    pub const CHANNEL_ENABLE: u64 = 0x10;
    /// Channel interrupt enable mask, write 1 to set.
    pub const CHANNEL_ENABLE_W1S: u64 = 0x14;
    /// Channel interrupt enable mask, write 1 to clear.
    pub const CHANNEL_ENABLE_W1C: u64 = 0x18;
    /// User interrupt requests, enabled ones only.
    pub const USER_REQUEST: u64 = 0x40;
    /// Channel interrupt requests, enabled ones only.
    pub const CHANNEL_REQUEST: u64 = 0x44;
    /// User interrupts pending, enabled or not.
    pub const USER_PENDING: u64 = 0x48;
    /// Channel interrupts pending, enabled or not.
    pub const CHANNEL_PENDING: u64 = 0x4C;
    /// User interrupt vector numbers: four 5-bit fields a register, lines 0-3 at 0x80.
    pub const USER_VECTOR: u64 = 0x80;
    /// Channel interrupt vector numbers: four 5-bit fields a register, request bits 0-3 at
    /// 0xA0.
    pub const CHANNEL_VECTOR: u64 = 0xA0;
}

/// Registers of the config block, relative to 0x3000.
pub mod config {
    /// Base of the block.
    pub const BASE: u64 = 0x3000;
    /// Identifier.
    pub const IDENTIFIER: u64 = 0x00;
    /// PCIe max payload size, encoded as in the Device Control register (read only).
    pub const MAX_PAYLOAD: u64 = 0x08;
    /// PCIe max read request size, encoded likewise (read only).
    pub const MAX_READ: u64 = 0x0C;
    /// System ID (read only).
    pub const SYSTEM_ID: u64 = 0x10;
    /// MSI enable (bit 0) and MSI-X enable (bit 1), as the function's capabilities say.
    pub const MSI_ENABLE: u64 = 0x14;
    /// PCIe data width (read only): 0 64-bit, 1 128-bit, 2 256-bit, 3 512-bit.
    pub const DATA_WIDTH: u64 = 0x18;
    /// PCIe control: relaxed ordering (bit 0).
    pub const PCIE_CONTROL: u64 = 0x1C;
    /// AXI user max payload size, encoded as [`MAX_PAYLOAD`] (read only).
    pub const AXI_MAX_PAYLOAD: u64 = 0x40;
    /// AXI user max read request size, encoded as [`MAX_READ`] (read only).
    pub const AXI_MAX_READ: u64 = 0x44;
    /// Write flush timeout (bits 4:0).
    pub const WRITE_FLUSH_TIMEOUT: u64 = 0x60;
}

/// Registers of the SGDMA common block, relative to 0x6000.
pub mod common {
    /// Base of the block.
    pub const BASE: u64 = 0x6000;
    /// Identifier.
    pub const IDENTIFIER: u64 = 0x00;
    /// Descriptor control: halt on the next descriptor fetch (bits for each engine).
    pub const DESC_CONTROL: u64 = 0x10;
    /// Credit mode enable (bit per C2H stream engine, at 16 + channel).
    pub const CREDIT_MODE_ENABLE: u64 = 0x20;
    /// Credit mode enable, write 1 to set.
    pub const CREDIT_MODE_ENABLE_W1S: u64 = 0x24;
    /// Credit mode enable, write 1 to clear.
    pub const CREDIT_MODE_ENABLE_W1C: u64 = 0x28;
}

/// The MSI-X table and PBA, relative to the DMA BAR.
pub mod msix {
    /// The table's offset (PG195: BAR offset 0x8000).
    pub const TABLE: u64 = 0x8000;
    /// The pending bit array's offset.
    pub const PBA: u64 = 0x8FE0;
    /// Vectors in the table.
    pub const VECTORS: usize = 32;
    /// Bytes of one table entry: address low, address high, data, vector control.
    pub const ENTRY: u64 = 16;
    /// Vector control bit 0: the vector is masked.
    pub const MASKED: u32 = 1;
}

/// The magic in bits 31:16 of a descriptor's control word.
pub const DESC_MAGIC: u32 = 0xAD4B_0000;
/// Mask of the magic.
pub const DESC_MAGIC_MASK: u32 = 0xFFFF_0000;
/// Bytes of one descriptor.
pub const DESC_BYTES: usize = 32;
/// The longest length a descriptor carries (28 bits).
pub const DESC_MAX_LEN: u32 = (1 << 28) - 1;
/// Descriptors the engine may fetch at once: the adjacent count is at most 63 (`Nxt_adj`, six
/// bits), and a block never crosses a 4 KiB page of descriptors.
pub const DESC_MAX_ADJACENT: u32 = 63;
/// Bytes of one C2H stream result record.
pub const RESULT_BYTES: usize = 32;
/// The magic of a C2H stream result's status word (bits 31:16).
pub const RESULT_MAGIC: u32 = 0x52B4_0000;
/// Result status bit 0: the descriptor's buffer ended a packet (TLAST seen).
pub const RESULT_EOP: u32 = 1;
/// Poll-mode write-back: bit 31 flags an error, bits 23:0 count completed descriptors.
pub const WB_ERR: u32 = 1 << 31;
/// Poll-mode write-back: the count's mask.
pub const WB_COUNT_MASK: u32 = 0x00FF_FFFF;

/// Bits of a descriptor's control word (bits 7:0; bits 13:8 are the adjacent count).
pub mod desc {
    /// Stop the engine after this descriptor.
    pub const STOP: u32 = 1 << 0;
    /// Raise DESC_COMPLETED (and its interrupt) after this descriptor.
    pub const COMPLETED: u32 = 1 << 1;
    /// H2C stream: end the packet (TLAST) on this descriptor's last beat.
    pub const EOP: u32 = 1 << 4;
    /// Shift of the adjacent count (`Nxt_adj`): descriptors that follow this one contiguously.
    pub const ADJ_SHIFT: u32 = 8;
    /// Mask of the adjacent count after the shift.
    pub const ADJ_MASK: u32 = 0x3F;
}

/// One descriptor as the engine reads it from host memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Descriptor {
    /// Control word: magic, adjacent count, STOP/COMPLETED/EOP.
    pub control: u32,
    /// Length in bytes (28 bits).
    pub len: u32,
    /// Source address: host for H2C, card for memory-mapped C2H, the result record's host
    /// address for C2H streams.
    pub src: u64,
    /// Destination address: card for memory-mapped H2C, host for C2H.
    pub dst: u64,
    /// Bus address of the next descriptor.
    pub next: u64,
}

impl Descriptor {
    /// Parses 32 little-endian bytes.
    pub fn from_bytes(b: &[u8; DESC_BYTES]) -> Descriptor {
        let w = |i: usize| u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
        let q = |i: usize| u64::from(w(i)) | (u64::from(w(i + 1)) << 32);
        Descriptor {
            control: w(0),
            len: w(1),
            src: q(2),
            dst: q(4),
            next: q(6),
        }
    }

    /// The 32 little-endian bytes of the descriptor.
    pub fn to_bytes(&self) -> [u8; DESC_BYTES] {
        let mut b = [0u8; DESC_BYTES];
        b[0..4].copy_from_slice(&self.control.to_le_bytes());
        b[4..8].copy_from_slice(&self.len.to_le_bytes());
        b[8..16].copy_from_slice(&self.src.to_le_bytes());
        b[16..24].copy_from_slice(&self.dst.to_le_bytes());
        b[24..32].copy_from_slice(&self.next.to_le_bytes());
        b
    }

    /// Whether the control word carries the magic.
    pub fn magic_ok(&self) -> bool {
        self.control & DESC_MAGIC_MASK == DESC_MAGIC
    }

    /// Descriptors that follow this one contiguously, by its `Nxt_adj` field.
    pub fn adjacent(&self) -> u32 {
        (self.control >> desc::ADJ_SHIFT) & desc::ADJ_MASK
    }

    /// The length field (28 bits).
    pub fn length(&self) -> u32 {
        self.len & DESC_MAX_LEN
    }
}

/// A C2H stream result record's status word for a descriptor whose buffer took `eop` or not.
pub fn result_status(eop: bool) -> u32 {
    RESULT_MAGIC | u32::from(eop)
}

/// Splits `len` bytes of a buffer at host address `host` into the driver's descriptor pieces:
/// one per host page run (each pinned page is its own run, since user pages are not physically
/// contiguous in general), never more than [`DESC_MAX_LEN`]. Returns `(offset, len)` pairs.
pub fn page_pieces(host: u64, len: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::with_capacity(len.div_ceil(HOST_PAGE) as usize + 1);
    let mut done = 0;
    while done < len {
        let h = host + done;
        let n = (len - done)
            .min(HOST_PAGE - h % HOST_PAGE)
            .min(u64::from(DESC_MAX_LEN));
        out.push((done, n));
        done += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_pg195s() {
        // PG195 Table "H2C Channel Identifier": 0x1FC0_0006 for H2C 0 memory-mapped,
        // stream bit 15, channel in 11:8; the IRQ block is 0x1FC2_0006 and config 0x1FC3_0006.
        assert_eq!(Target::H2c.identifier(0, false), 0x1FC0_0006);
        assert_eq!(Target::C2h.identifier(1, true), 0x1FC1_8106);
        assert_eq!(Target::Irq.identifier(0, false), 0x1FC2_0006);
        assert_eq!(Target::Config.identifier(0, false), 0x1FC3_0006);
        assert_eq!(Target::C2hSgdma.identifier(2, false), 0x1FC5_0206);
        assert_eq!(Target::SgdmaCommon.identifier(0, false), 0x1FC6_0006);
        assert_eq!(Target::C2h.id_base(), 0x1FC1_0000);
        assert_eq!(Target::H2c.identifier_version(3, true, 0), 0x1FC0_8300);
        assert_eq!(id_channel(0x1FC1_8206), 2);
    }

    #[test]
    fn the_dma_bar_is_known_by_its_irq_and_config_identifiers() {
        let (irq, cfg) = (
            Target::Irq.identifier(0, false),
            Target::Config.identifier(0, false),
        );
        assert!(is_dma_bar(irq, cfg));
        // Any version field: the driver compares the upper half only.
        assert!(is_dma_bar(irq & !ID_VERSION_MASK, cfg | 0x42));
        // A file of zeros, all ones, the two swapped, an engine's identifier.
        assert!(!is_dma_bar(0, 0));
        assert!(!is_dma_bar(u32::MAX, u32::MAX));
        assert!(!is_dma_bar(cfg, irq));
        assert!(!is_dma_bar(Target::H2c.identifier(0, false), cfg));
    }

    #[test]
    fn targets_and_bases() {
        assert_eq!(engine_base(true, 3), 0x1300);
        assert_eq!(sgdma_base(false, 1), 0x4100);
        assert_eq!(Target::of(0x2044), Some(Target::Irq));
        assert_eq!(Target::of(0x8FE0), Some(Target::MsiX));
        assert_eq!(Target::of(0x7000), None);
    }

    #[test]
    fn descriptor_round_trip() {
        let d = Descriptor {
            control: DESC_MAGIC | (5 << desc::ADJ_SHIFT) | desc::STOP | desc::EOP,
            len: 4096,
            src: 0x1_2345_6780,
            dst: 0xDEAD_BEEF,
            next: 0x9_0000_0020,
        };
        let b = d.to_bytes();
        // The driver's struct: control, bytes, src lo/hi, dst lo/hi, next lo/hi.
        assert_eq!(&b[0..4], &0xAD4B_0511u32.to_le_bytes());
        assert_eq!(&b[8..12], &0x2345_6780u32.to_le_bytes());
        assert_eq!(&b[12..16], &1u32.to_le_bytes());
        assert_eq!(Descriptor::from_bytes(&b), d);
        assert!(d.magic_ok());
        assert_eq!(d.adjacent(), 5);
    }

    #[test]
    fn pages_cut_as_the_driver_does() {
        assert_eq!(
            page_pieces(0x1000, 10_000),
            vec![(0, 4096), (4096, 4096), (8192, 1808)]
        );
        assert_eq!(page_pieces(0x1F00, 512), vec![(0, 256), (256, 256)]);
        assert!(page_pieces(0, 0).is_empty());
    }
}
