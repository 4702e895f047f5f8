//! The XDMA IP's own register space, the config BAR behind `_control`, as the driver and the
//! vendor's tools read it (PG195 "Register Space"): per engine an identifier, control (with its
//! write-1-to-set and write-1-to-clear aliases), status, completed descriptor count and
//! alignments; the IRQ block's and config block's identifiers and enables; the SGDMA blocks'
//! identifiers and descriptor registers. Every other word reads as zero and ignores writes.

use std::collections::HashMap;

use xdma_core::{CardInfo, ChannelKind, Direction};

/// Bytes of the config BAR (the IP's register space is 64 KiB).
pub const CONTROL_BAR: u64 = 64 << 10;

/// The engine control register's bit for fixed-address (non-incrementing) mode, which the
/// ADDRMODE ioctls set and clear (XDMA_CTRL_NON_INCR_ADDR).
pub const CTRL_NON_INCR_ADDR: u32 = 1 << 25;

/// Offset of an engine's registers: H2C at 0x0000, C2H at 0x1000, 0x100 per channel.
pub fn engine_base(dir: Direction, channel: usize) -> u32 {
    let target = match dir {
        Direction::H2C => 0,
        Direction::C2H => 1,
    };
    (target << 12) | ((channel as u32 & 0xf) << 8)
}

/// The register file of the config BAR.
#[derive(Debug)]
pub struct ControlRegs {
    /// Read-only words: identifiers and alignments.
    fixed: HashMap<u32, u32>,
    /// Words the host may write, with their current values.
    rw: HashMap<u32, u32>,
    /// Completed descriptor counts per engine base.
    completed: HashMap<u32, u32>,
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
            fixed.insert(base, c.id_register);
            fixed.insert(base + 0x4c, align);
            for off in [0x04, 0x88, 0x8c, 0x90, 0xc0] {
                rw.insert(base + off, 0);
            }
            completed.insert(base, 0);
            // The SGDMA block of the engine, 0x4000 further on: identifier (target 4 or 5)
            // and the first descriptor's address and adjacent count.
            let sg = base + 0x4000;
            fixed.insert(
                sg,
                (c.id_register & !0x000f_0000) | ((4 + (base >> 12)) << 16),
            );
            for off in [0x80, 0x84, 0x88, 0x8c] {
                rw.insert(sg + off, 0);
            }
        }
        let version = info
            .h2c
            .first()
            .or(info.c2h.first())
            .map(|c| c.id_register & 0xff)
            .unwrap_or(0);
        // IRQ block: identifier, user and channel interrupt enables, vectors.
        fixed.insert(0x2000, 0x1fc2_0000 | version);
        for off in [0x04, 0x10] {
            rw.insert(0x2000 + off, 0);
        }
        for k in 0..8 {
            rw.insert(0x2080 + 4 * k, 0);
            rw.insert(0x20a0 + 4 * k, 0);
        }
        // Config block: identifier, max payload 256 B (code 1), max read request 512 B (code
        // 2), PCIe data width 128 bits (code 1), and the AXI side's own payload limits.
        fixed.insert(0x3000, 0x1fc3_0000 | version);
        fixed.insert(0x3008, 1);
        fixed.insert(0x300c, 2);
        fixed.insert(0x3018, 1);
        fixed.insert(0x3040, 1);
        fixed.insert(0x3044, 2);
        for off in [0x1c, 0x60] {
            rw.insert(0x3000 + off, 0);
        }
        // SGDMA common block.
        fixed.insert(0x6000, 0x1fc6_0000 | version);
        for off in [0x10, 0x20] {
            rw.insert(0x6000 + off, 0);
        }
        ControlRegs {
            fixed,
            rw,
            completed,
        }
    }

    /// Reads the word at `offset` (4-aligned, inside the BAR).
    pub fn read(&self, offset: u32) -> u32 {
        let base = offset & !0xff;
        match offset & 0xff {
            // Control's aliases and status read back as control and status.
            0x08 | 0x0c if self.completed.contains_key(&base) => {
                self.rw.get(&(base + 4)).copied().unwrap_or(0)
            }
            0x48 if self.completed.contains_key(&base) => {
                self.completed.get(&base).copied().unwrap_or(0)
            }
            // Interrupt enable aliases.
            0x94 | 0x98 if self.completed.contains_key(&base) => {
                self.rw.get(&(base + 0x90)).copied().unwrap_or(0)
            }
            _ => self
                .fixed
                .get(&offset)
                .or_else(|| self.rw.get(&offset))
                .copied()
                .unwrap_or(0),
        }
    }

    /// Writes the word at `offset`; words that are not writable ignore it.
    pub fn write(&mut self, offset: u32, value: u32) {
        let base = offset & !0xff;
        let engine = self.completed.contains_key(&base);
        let target = match offset & 0xff {
            0x08 if engine => Some((base + 4, Op::Set)),
            0x0c if engine => Some((base + 4, Op::Clear)),
            0x94 if engine => Some((base + 0x90, Op::Set)),
            0x98 if engine => Some((base + 0x90, Op::Clear)),
            _ if base == 0x2000 && matches!(offset & 0xff, 0x08 | 0x14) => {
                Some((offset - 4, Op::Set))
            }
            _ if base == 0x2000 && matches!(offset & 0xff, 0x0c | 0x18) => {
                Some((offset - 8, Op::Clear))
            }
            _ => Some((offset, Op::Store)),
        };
        if let Some((reg, op)) = target {
            if let Some(v) = self.rw.get_mut(&reg) {
                *v = match op {
                    Op::Store => value,
                    Op::Set => *v | value,
                    Op::Clear => *v & !value,
                };
            }
        }
    }

    /// True when the engine is in fixed-address mode.
    pub fn fixed_address(&self, dir: Direction, channel: usize) -> bool {
        self.read(engine_base(dir, channel) + 4) & CTRL_NON_INCR_ADDR != 0
    }

    /// Sets or clears the engine's fixed-address mode, as ADDRMODE_SET does.
    pub fn set_fixed_address(&mut self, dir: Direction, channel: usize, fixed: bool) {
        let base = engine_base(dir, channel);
        self.write(base + if fixed { 0x08 } else { 0x0c }, CTRL_NON_INCR_ADDR);
    }

    /// Counts the descriptors of a finished transfer of `bytes` (one per page).
    pub fn completed(&mut self, dir: Direction, channel: usize, bytes: usize) {
        if let Some(c) = self.completed.get_mut(&engine_base(dir, channel)) {
            *c = c.wrapping_add(bytes.div_ceil(4096) as u32);
        }
    }
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

    #[test]
    fn the_registers_read_as_pg195_lays_them_out() {
        let ch = |dir, index, id| ChannelInfo {
            dir,
            index,
            kind: ChannelKind::MemoryMapped,
            id_register: id,
        };
        let info = CardInfo {
            backend: "sim".into(),
            h2c: vec![ch(Direction::H2C, 0, 0x1fc0_0000)],
            c2h: vec![ch(Direction::C2H, 0, 0x1fc1_0000)],
            memory_size: 1 << 20,
            user_bar_size: 4096,
            events: 1,
            card_id: 0,
            card_version: 0,
            xdma_version: None,
            alignment: 1,
            min_stream_timeout: std::time::Duration::ZERO,
        };
        let mut r = ControlRegs::new(&info);
        // Identifiers where the driver probes them, and nothing for a missing engine.
        assert_eq!(r.read(0x0000), 0x1fc0_0000);
        assert_eq!(r.read(0x1000), 0x1fc1_0000);
        assert_eq!(r.read(0x0100), 0);
        assert_eq!(r.read(0x2000) >> 16, 0x1fc2);
        assert_eq!(r.read(0x3000) >> 16, 0x1fc3);
        assert_eq!(r.read(0x4000) >> 16, 0x1fc4);
        assert_eq!(r.read(0x5000) >> 16, 0x1fc5);
        // Alignments: address alignment 1, granularity 1, 64 address bits.
        assert_eq!(r.read(0x004c), 0x0001_0140);
        // Control with its set and clear aliases; the mode bit the ADDRMODE ioctls use.
        r.set_fixed_address(Direction::H2C, 0, true);
        assert!(r.fixed_address(Direction::H2C, 0));
        assert_eq!(r.read(0x0004), CTRL_NON_INCR_ADDR);
        r.write(0x000c, CTRL_NON_INCR_ADDR);
        assert!(!r.fixed_address(Direction::H2C, 0));
        // Read-only words ignore writes; descriptor counts add up by pages.
        r.write(0x0000, 7);
        assert_eq!(r.read(0x0000), 0x1fc0_0000);
        r.completed(Direction::C2H, 0, 4097);
        assert_eq!(r.read(0x1048), 2);
    }
}
