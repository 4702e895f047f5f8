//! The XDMA IP's own register space, the config BAR behind `_control`, as the driver and the
//! vendor's tools read it (PG195 "Register Space"): per engine an identifier, control (with its
//! write-1-to-set and write-1-to-clear aliases), status, completed descriptor count and
//! alignments; the IRQ block's and config block's identifiers and enables; the SGDMA blocks'
//! identifiers and descriptor registers. Every other word reads as zero and ignores writes.

use std::collections::HashMap;

use xdma_core::{CardInfo, ChannelKind, Direction};
use xdma_regmap::{
    common, config, control, engine, irq, page_pieces, sgdma, Target, ID_ENGINE_MASK,
    ID_VERSION_MASK,
};

/// Offset of an engine's registers: H2C at 0x0000, C2H at 0x1000, 0x100 per channel.
pub fn engine_base(dir: Direction, channel: usize) -> u64 {
    xdma_regmap::engine_base(dir == Direction::C2H, channel)
}

/// The register file of the config BAR.
#[derive(Debug)]
pub struct ControlRegs {
    /// Read-only words: identifiers and alignments.
    fixed: HashMap<u64, u32>,
    /// Words the host may write, with their current values.
    rw: HashMap<u64, u32>,
    /// Completed descriptor counts per engine base.
    completed: HashMap<u64, u32>,
}

impl ControlRegs {
    /// The register space of a card with `info`'s engines.
    pub fn new(info: &CardInfo) -> ControlRegs {
        let mut fixed = HashMap::new();
        let mut rw = HashMap::new();
        let mut completed = HashMap::new();
        // The alignments register: address alignment, length granularity, address bits.
        let align = (info.alignment.min(255) as u32) << 16 | 1 << 8 | 64;
        for c in info.h2c.iter().chain(&info.c2h) {
            let base = engine_base(c.dir, c.index);
            fixed.insert(base + engine::IDENTIFIER, c.id_register);
            fixed.insert(base + engine::ALIGNMENTS, align);
            for off in [
                engine::CONTROL,
                engine::POLL_WB_LO,
                engine::POLL_WB_HI,
                engine::IE_MASK,
                engine::PERF_CTRL,
            ] {
                rw.insert(base + off, 0);
            }
            completed.insert(base, 0);
            // The SGDMA block of the engine: the engine's identifier with the SGDMA target,
            // and the first descriptor's address and adjacent count.
            let c2h = c.dir == Direction::C2H;
            let sg = xdma_regmap::sgdma_base(c2h, c.index);
            let sg_target = if c2h {
                Target::C2hSgdma
            } else {
                Target::H2cSgdma
            };
            fixed.insert(
                sg + sgdma::IDENTIFIER,
                (c.id_register & !ID_ENGINE_MASK) | sg_target.id_base(),
            );
            for off in [
                sgdma::FIRST_DESC_LO,
                sgdma::FIRST_DESC_HI,
                sgdma::FIRST_DESC_ADJACENT,
                sgdma::CREDITS,
            ] {
                rw.insert(sg + off, 0);
            }
        }
        let version = info
            .h2c
            .first()
            .or(info.c2h.first())
            .map(|c| c.id_register & ID_VERSION_MASK)
            .unwrap_or(0);
        let id = |target: Target| target.identifier_version(0, false, version);
        // IRQ block: identifier, user and channel interrupt enables, vectors.
        fixed.insert(irq::BASE + irq::IDENTIFIER, id(Target::Irq));
        for off in [irq::USER_ENABLE, irq::CHANNEL_ENABLE] {
            rw.insert(irq::BASE + off, 0);
        }
        for k in 0..8 {
            rw.insert(irq::BASE + irq::USER_VECTOR + 4 * k, 0);
            rw.insert(irq::BASE + irq::CHANNEL_VECTOR + 4 * k, 0);
        }
        // Config block: identifier, max payload 256 B (code 1), max read request 512 B (code
        // 2), PCIe data width 128 bits (code 1), and the AXI side's own payload limits.
        fixed.insert(config::BASE + config::IDENTIFIER, id(Target::Config));
        fixed.insert(config::BASE + config::MAX_PAYLOAD, 1);
        fixed.insert(config::BASE + config::MAX_READ, 2);
        fixed.insert(config::BASE + config::DATA_WIDTH, 1);
        fixed.insert(config::BASE + config::AXI_MAX_PAYLOAD, 1);
        fixed.insert(config::BASE + config::AXI_MAX_READ, 2);
        for off in [config::PCIE_CONTROL, config::WRITE_FLUSH_TIMEOUT] {
            rw.insert(config::BASE + off, 0);
        }
        // SGDMA common block.
        fixed.insert(common::BASE + common::IDENTIFIER, id(Target::SgdmaCommon));
        for off in [common::DESC_CONTROL, common::CREDIT_MODE_ENABLE] {
            rw.insert(common::BASE + off, 0);
        }
        ControlRegs {
            fixed,
            rw,
            completed,
        }
    }

    /// Reads the word at `offset` (4-aligned, inside the BAR).
    pub fn read(&self, offset: u64) -> u32 {
        let base = offset & !0xff;
        let engine = self.completed.contains_key(&base);
        let reg = |off: u64| self.rw.get(&(base + off)).copied().unwrap_or(0);
        match offset & 0xff {
            // Control's aliases read back as control.
            engine::CONTROL_W1S | engine::CONTROL_W1C if engine => reg(engine::CONTROL),
            engine::COMPLETED if engine => self.completed.get(&base).copied().unwrap_or(0),
            // Interrupt enable aliases.
            engine::IE_MASK_W1S | engine::IE_MASK_W1C if engine => reg(engine::IE_MASK),
            _ => self
                .fixed
                .get(&offset)
                .or_else(|| self.rw.get(&offset))
                .copied()
                .unwrap_or(0),
        }
    }

    /// Writes the word at `offset`; words that are not writable ignore it.
    pub fn write(&mut self, offset: u64, value: u32) {
        let base = offset & !0xff;
        let engine = self.completed.contains_key(&base);
        let irq_block = base == irq::BASE;
        let (reg, op) = match offset & 0xff {
            engine::CONTROL_W1S if engine => (base + engine::CONTROL, Op::Set),
            engine::CONTROL_W1C if engine => (base + engine::CONTROL, Op::Clear),
            engine::IE_MASK_W1S if engine => (base + engine::IE_MASK, Op::Set),
            engine::IE_MASK_W1C if engine => (base + engine::IE_MASK, Op::Clear),
            irq::USER_ENABLE_W1S if irq_block => (base + irq::USER_ENABLE, Op::Set),
            irq::USER_ENABLE_W1C if irq_block => (base + irq::USER_ENABLE, Op::Clear),
            irq::CHANNEL_ENABLE_W1S if irq_block => (base + irq::CHANNEL_ENABLE, Op::Set),
            irq::CHANNEL_ENABLE_W1C if irq_block => (base + irq::CHANNEL_ENABLE, Op::Clear),
            _ => (offset, Op::Store),
        };
        if let Some(v) = self.rw.get_mut(&reg) {
            *v = match op {
                Op::Store => value,
                Op::Set => *v | value,
                Op::Clear => *v & !value,
            };
        }
    }

    /// True when the engine is in fixed-address mode.
    pub fn fixed_address(&self, dir: Direction, channel: usize) -> bool {
        self.read(engine_base(dir, channel) + engine::CONTROL) & control::NON_INCR_ADDR != 0
    }

    /// Sets or clears the engine's fixed-address mode, as ADDRMODE_SET does.
    pub fn set_fixed_address(&mut self, dir: Direction, channel: usize, fixed: bool) {
        let alias = if fixed {
            engine::CONTROL_W1S
        } else {
            engine::CONTROL_W1C
        };
        self.write(engine_base(dir, channel) + alias, control::NON_INCR_ADDR);
    }

    /// Counts the descriptors of a finished transfer of `bytes` whose buffer starts at host
    /// address `host`: one per host page run, as the driver cuts the buffer and as the
    /// simulated engine did.
    pub fn completed(&mut self, dir: Direction, channel: usize, host: u64, bytes: usize) {
        if let Some(c) = self.completed.get_mut(&engine_base(dir, channel)) {
            *c = c.wrapping_add(descriptor_count(host, bytes));
        }
    }
}

/// Descriptors the driver makes of `bytes` at host address `host` (the page rule).
fn descriptor_count(host: u64, bytes: usize) -> u32 {
    page_pieces(host, bytes as u64).len() as u32
}

#[derive(Clone, Copy)]
enum Op {
    Store,
    Set,
    Clear,
}

/// True for a stream engine.
pub fn is_stream(info: &CardInfo, dir: Direction, channel: usize) -> bool {
    info.channels(dir)
        .get(channel)
        .is_some_and(|c| c.kind == ChannelKind::Stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use xdma_core::ChannelInfo;
    use xdma_regmap::HOST_PAGE;

    /// A memory-mapped engine.
    fn ch(dir: Direction, index: usize, id_register: u32) -> ChannelInfo {
        ChannelInfo {
            dir,
            index,
            kind: ChannelKind::MemoryMapped,
            id_register,
        }
    }

    /// A card with these engines.
    fn card(h2c: Vec<ChannelInfo>, c2h: Vec<ChannelInfo>) -> CardInfo {
        CardInfo {
            backend: "sim".into(),
            h2c,
            c2h,
            memory_size: 1 << 20,
            user_bar_size: 4096,
            events: 1,
            card_id: 0,
            card_version: 0,
            xdma_version: None,
            alignment: 1,
            min_stream_timeout: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn the_registers_read_as_pg195_lays_them_out() {
        let h2c_id = Target::H2c.identifier_version(0, false, 0);
        let c2h_id = Target::C2h.identifier_version(0, false, 0);
        let info = card(
            vec![ch(Direction::H2C, 0, h2c_id)],
            vec![ch(Direction::C2H, 0, c2h_id)],
        );
        let mut r = ControlRegs::new(&info);
        // Identifiers where the driver probes them, and nothing for a missing engine.
        assert_eq!(r.read(0x0000), h2c_id);
        assert_eq!(r.read(0x1000), c2h_id);
        assert_eq!(r.read(0x0100), 0);
        let target = |off: u64| r.read(off) & ID_ENGINE_MASK;
        assert_eq!(target(0x2000), Target::Irq.id_base());
        assert_eq!(target(0x3000), Target::Config.id_base());
        assert_eq!(target(0x4000), Target::H2cSgdma.id_base());
        assert_eq!(target(0x5000), Target::C2hSgdma.id_base());
        assert_eq!(target(0x6000), Target::SgdmaCommon.id_base());
        // Alignments: address alignment 1, granularity 1, 64 address bits.
        assert_eq!(r.read(0x004c), 0x0001_0140);
        // Control with its set and clear aliases; the mode bit the ADDRMODE ioctls use.
        r.set_fixed_address(Direction::H2C, 0, true);
        assert!(r.fixed_address(Direction::H2C, 0));
        assert_eq!(r.read(0x0004), control::NON_INCR_ADDR);
        r.write(0x000c, control::NON_INCR_ADDR);
        assert!(!r.fixed_address(Direction::H2C, 0));
        // The IRQ block's enables with their aliases.
        r.write(0x2008, 0b110);
        r.write(0x200c, 0b010);
        assert_eq!(r.read(0x2004), 0b100);
        r.write(0x2014, 0b11);
        r.write(0x2018, 0b01);
        assert_eq!(r.read(0x2010), 0b10);
        // Read-only words ignore writes; descriptor counts add up by pages.
        r.write(0x0000, 7);
        assert_eq!(r.read(0x0000), h2c_id);
        r.completed(Direction::C2H, 0, 0, 4097);
        assert_eq!(r.read(0x1048), 2);
    }

    #[test]
    fn descriptors_of_an_unaligned_buffer_are_counted_by_host_pages() {
        // A buffer starting 0x100 before a page end, 0x1100 bytes long: 0x100 up to the page
        // end, then one whole page of 0x1000, and nothing is left: two descriptors.
        let start = 5 * HOST_PAGE - 0x100;
        assert_eq!(descriptor_count(start, 0x1100), 2);
        // 0x1000 bytes from the same place: 0x100, then 0xF00 on the next page. Two, where a
        // count by the length alone says one.
        assert_eq!(descriptor_count(start, 0x1000), 2);
        // 0x1100 bytes from 0x80 before a page end: 0x80, 0x1000, 0x80. Three, where a count
        // by the length alone says two.
        assert_eq!(descriptor_count(5 * HOST_PAGE - 0x80, 0x1100), 3);
        // Page-aligned, 0x1100 bytes: 0x1000 and 0x100.
        assert_eq!(descriptor_count(5 * HOST_PAGE, 0x1100), 2);
        // The simulated engine cuts the same buffers into as many descriptors.
        assert_eq!(xdma_sim::engine::descriptors(start, 0, 0x1000).len(), 2);
        assert_eq!(
            xdma_sim::engine::descriptors(5 * HOST_PAGE - 0x80, 0, 0x1100).len(),
            3
        );

        // And the engine's completed count adds them up.
        let h2c_id = Target::H2c.identifier_version(0, false, 0);
        let info = card(vec![ch(Direction::H2C, 0, h2c_id)], Vec::new());
        let mut r = ControlRegs::new(&info);
        r.completed(Direction::H2C, 0, start, 0x1000);
        r.completed(Direction::H2C, 0, 5 * HOST_PAGE - 0x80, 0x1100);
        assert_eq!(
            r.read(engine_base(Direction::H2C, 0) + engine::COMPLETED),
            2 + 3
        );
    }
}
