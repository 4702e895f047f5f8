//! What the IP's tests share: a card of the IP over a plain buffer as host memory, with its
//! interrupts recorded, and the register sequences of the Linux driver that program it.

// Each test file is a crate of its own that uses a part of these helpers.
#![allow(dead_code)]

use card_sim::Top;
use xdma_ip::{
    Bar, BufferMemory as Ram, EngineKind, HostMemory, InterruptSink, IpConfig, IrqMode, XdmaIp,
};
use xdma_regmap::{
    self as map, control, desc, engine_regs as ereg, irq as ireg, msix, sgdma, status, Descriptor,
};

#[derive(Default)]
pub struct Irqs {
    pub msix: Vec<(u64, u32)>,
    pub msi: Vec<u32>,
    pub intx: Vec<bool>,
}

impl InterruptSink for Irqs {
    fn msix(&mut self, addr: u64, data: u32) {
        self.msix.push((addr, data));
    }
    fn msi(&mut self, vector: u32) {
        self.msi.push(vector);
    }
    fn intx(&mut self, level: bool) {
        self.intx.push(level);
    }
}

pub const RAM_BASE: u64 = 0x1000_0000;
pub const RAM_BYTES: usize = 4 << 20;
/// Where the tests keep descriptor chains, results and write-backs in host memory.
pub const DESCS: u64 = RAM_BASE;
pub const RESULTS: u64 = RAM_BASE + 0x1_0000;
pub const WB: u64 = RAM_BASE + 0x2_0000;
pub const DATA: u64 = RAM_BASE + 0x10_0000;

pub struct Card {
    pub ip: XdmaIp,
    pub mem: Ram,
    pub irq: Irqs,
}

pub fn top(name: &str) -> Top {
    *Top::ALL
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no top {name}"))
}

/// The combined card: H2C 0 memory-mapped, H2C 1 stream; C2H 0 memory-mapped, C2H 1 and 2
/// streams.
pub fn combined() -> Card {
    use EngineKind::{MemoryMapped as Mm, Stream as St};
    card(IpConfig::new(
        top("sim_top"),
        vec![Mm, St],
        vec![Mm, St, St],
    ))
}

pub fn card(cfg: IpConfig) -> Card {
    Card {
        ip: XdmaIp::new(cfg).expect("the IP builds"),
        mem: Ram::new(RAM_BASE, RAM_BYTES),
        irq: Irqs::default(),
    }
}

pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

impl Card {
    pub fn r(&mut self, off: u64) -> u32 {
        self.ip
            .bar_read(Bar::Dma, off, 4, &mut self.mem, &mut self.irq)
            .expect("DMA BAR read") as u32
    }

    pub fn w(&mut self, off: u64, v: u32) {
        self.ip
            .bar_write(Bar::Dma, off, u64::from(v), 4, &mut self.mem, &mut self.irq)
            .expect("DMA BAR write");
    }

    pub fn user_w(&mut self, off: u64, v: u32) {
        self.ip
            .bar_write(
                Bar::User,
                off,
                u64::from(v),
                4,
                &mut self.mem,
                &mut self.irq,
            )
            .expect("user BAR write");
    }

    pub fn user_r(&mut self, off: u64) -> u32 {
        self.ip
            .bar_read(Bar::User, off, 4, &mut self.mem, &mut self.irq)
            .expect("user BAR read") as u32
    }

    pub fn run(&mut self, cycles: u64) {
        self.ip
            .run(cycles, &mut self.mem, &mut self.irq)
            .expect("the card runs");
    }

    /// Runs until the engine's BUSY bit drops, at most `limit` cycles.
    pub fn run_until_idle(&mut self, c2h: bool, ch: usize, limit: u64) {
        let st = map::engine_base(c2h, ch) + ereg::STATUS;
        for _ in 0..limit / 64 {
            if self.r(st) & status::BUSY == 0 {
                return;
            }
            self.run(64);
        }
        panic!("engine still busy after {limit} cycles");
    }

    /// Writes a chain of descriptors at `at`, each linked to the next, with `flags` on the
    /// last (and the magic and the adjacent counts as the driver sets them).
    pub fn chain(&mut self, at: u64, pieces: &[(u64, u64, u32)], last_flags: u32) {
        for (i, &(src, dst, len)) in pieces.iter().enumerate() {
            let left = (pieces.len() - 1 - i) as u32;
            let mut control = map::DESC_MAGIC | (left.min(63) << desc::ADJ_SHIFT);
            if left == 0 {
                control |= last_flags;
            }
            let d = Descriptor {
                control,
                len,
                src,
                dst,
                next: at + 32 * (i as u64 + 1),
            };
            self.mem
                .write(at + 32 * i as u64, &d.to_bytes())
                .expect("descriptor in RAM");
        }
    }

    /// Programs an engine as the driver's engine_init_regs and engine_start do and starts it.
    pub fn start(&mut self, c2h: bool, ch: usize, first: u64, poll: bool) {
        let e = map::engine_base(c2h, ch);
        let s = map::sgdma_base(c2h, ch);
        let mut ie = control::IE_ALIGN_MISMATCH
            | control::IE_MAGIC_STOPPED
            | control::IE_READ_ERROR
            | control::IE_DESC_ERROR;
        if poll {
            self.w(e + ereg::POLL_WB_LO, WB as u32);
            self.w(e + ereg::POLL_WB_HI, (WB >> 32) as u32);
        } else {
            ie |= control::IE_DESC_STOPPED | control::IE_DESC_COMPLETED;
        }
        self.w(e + ereg::IE_MASK, ie);
        self.w(s + sgdma::FIRST_DESC_LO, first as u32);
        self.w(s + sgdma::FIRST_DESC_HI, (first >> 32) as u32);
        self.w(s + sgdma::FIRST_DESC_ADJACENT, 0);
        let mut c = control::RUN | ie;
        if poll {
            c = control::RUN
                | control::IE_ALIGN_MISMATCH
                | control::IE_MAGIC_STOPPED
                | control::IE_READ_ERROR
                | control::IE_DESC_ERROR
                | control::POLL_MODE_WB;
        }
        self.w(e + ereg::CONTROL, c);
    }

    /// Stops an engine as xdma_engine_stop does: the control register without RUN.
    pub fn stop(&mut self, c2h: bool, ch: usize) {
        let e = map::engine_base(c2h, ch);
        let c = self.r(e + ereg::CONTROL);
        self.w(e + ereg::CONTROL, c & !control::RUN);
    }

    pub fn msix_mode(&mut self) {
        self.ip.set_irq_mode(
            IrqMode::MsiX {
                function_mask: false,
            },
            &mut self.irq,
        );
        // Vector v: address 0xFEE0_0000 + v * 0x10, data 0x40 + v, unmasked.
        for v in 0..msix::VECTORS as u64 {
            let e = msix::TABLE + v * msix::ENTRY;
            self.w(e, 0xFEE0_0000 + 0x10 * v as u32);
            self.w(e + 4, 0);
            self.w(e + 8, 0x40 + v as u32);
            self.w(e + 12, 0);
        }
        // Channel request bit i to vector i, user line j to vector 8 + j, as the driver lays
        // them out (engines first).
        self.w(ireg::BASE + ireg::CHANNEL_VECTOR, 0x0302_0100);
        self.w(ireg::BASE + ireg::CHANNEL_VECTOR + 4, 0x0706_0504);
        self.w(ireg::BASE + ireg::USER_VECTOR, 0x0B0A_0908);
        self.w(ireg::BASE + ireg::CHANNEL_ENABLE, 0xFF);
        self.w(ireg::BASE + ireg::USER_ENABLE, 0xFFFF);
    }
}

/// What xdma_engine_stop writes to the control register: the interrupt enables the driver
/// keeps, idle_stopped's among them, and RUN clear.
pub const STOP_WRITE: u32 = control::IE_IDLE_STOPPED
    | control::IE_ALIGN_MISMATCH
    | control::IE_MAGIC_STOPPED
    | control::IE_READ_ERROR
    | control::IE_DESC_ERROR
    | control::IE_DESC_STOPPED
    | control::IE_DESC_COMPLETED;
