//! The IP model programmed as the Linux driver programs it, without a virtual machine: host
//! memory is a plain buffer, interrupts are recorded, and every expected value comes from
//! PG195's register descriptions, the descriptor format or plain arithmetic.

use card_sim::Top;
use rstest::rstest;
use xdma_ip::{
    Bar, BufferMemory as Ram, EngineKind, HostMemory, InterruptSink, IpConfig, IrqMode, XdmaIp,
};
use xdma_regmap::{
    self as map, control, desc, engine as ereg, irq as ireg, msix, sgdma, status, Descriptor,
};

#[derive(Default)]
struct Irqs {
    msix: Vec<(u64, u32)>,
    msi: Vec<u32>,
    intx: Vec<bool>,
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

const RAM_BASE: u64 = 0x1000_0000;
const RAM_BYTES: usize = 4 << 20;
/// Where the tests keep descriptor chains, results and write-backs in host memory.
const DESCS: u64 = RAM_BASE;
const RESULTS: u64 = RAM_BASE + 0x1_0000;
const WB: u64 = RAM_BASE + 0x2_0000;
const DATA: u64 = RAM_BASE + 0x10_0000;

struct Card {
    ip: XdmaIp,
    mem: Ram,
    irq: Irqs,
}

fn top(name: &str) -> Top {
    *Top::ALL
        .iter()
        .find(|t| t.name() == name)
        .unwrap_or_else(|| panic!("no top {name}"))
}

/// The combined card: H2C 0 memory-mapped, H2C 1 stream; C2H 0 memory-mapped, C2H 1 and 2
/// streams.
fn combined() -> Card {
    use EngineKind::{MemoryMapped as Mm, Stream as St};
    card(IpConfig::new(
        top("sim_top"),
        vec![Mm, St],
        vec![Mm, St, St],
    ))
}

fn card(cfg: IpConfig) -> Card {
    Card {
        ip: XdmaIp::new(cfg).expect("the IP builds"),
        mem: Ram::new(RAM_BASE, RAM_BYTES),
        irq: Irqs::default(),
    }
}

fn pattern(len: usize, seed: u32) -> Vec<u8> {
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
    fn r(&mut self, off: u64) -> u32 {
        self.ip
            .bar_read(Bar::Dma, off, 4, &mut self.mem, &mut self.irq)
            .expect("DMA BAR read") as u32
    }

    fn w(&mut self, off: u64, v: u32) {
        self.ip
            .bar_write(Bar::Dma, off, u64::from(v), 4, &mut self.mem, &mut self.irq)
            .expect("DMA BAR write");
    }

    fn user_w(&mut self, off: u64, v: u32) {
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

    fn user_r(&mut self, off: u64) -> u32 {
        self.ip
            .bar_read(Bar::User, off, 4, &mut self.mem, &mut self.irq)
            .expect("user BAR read") as u32
    }

    fn run(&mut self, cycles: u64) {
        self.ip
            .run(cycles, &mut self.mem, &mut self.irq)
            .expect("the card runs");
    }

    /// Runs until the engine's BUSY bit drops, at most `limit` cycles.
    fn run_until_idle(&mut self, c2h: bool, ch: usize, limit: u64) {
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
    fn chain(&mut self, at: u64, pieces: &[(u64, u64, u32)], last_flags: u32) {
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
    fn start(&mut self, c2h: bool, ch: usize, first: u64, poll: bool) {
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
    fn stop(&mut self, c2h: bool, ch: usize) {
        let e = map::engine_base(c2h, ch);
        let c = self.r(e + ereg::CONTROL);
        self.w(e + ereg::CONTROL, c & !control::RUN);
    }

    fn msix_mode(&mut self) {
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

#[test]
fn identifiers_and_set_clear_registers() {
    let mut c = combined();
    // PG195 identifiers: 0x1FC + target + stream bit 15 + channel in 11:8 + version 0x06.
    assert_eq!(c.r(0x0000), 0x1FC0_0006, "H2C 0, memory-mapped");
    assert_eq!(c.r(0x0100), 0x1FC0_8106, "H2C 1, stream");
    assert_eq!(c.r(0x0200), 0, "no H2C 2: the driver's probe stops there");
    assert_eq!(c.r(0x1000), 0x1FC1_0006, "C2H 0");
    assert_eq!(c.r(0x1200), 0x1FC1_8206, "C2H 2, stream");
    assert_eq!(c.r(0x2000), 0x1FC2_0006, "IRQ block");
    assert_eq!(c.r(0x3000), 0x1FC3_0006, "config block");
    assert_eq!(c.r(0x4000), 0x1FC4_0006, "H2C SGDMA 0");
    assert_eq!(c.r(0x5100), 0x1FC5_8106, "C2H SGDMA 1");
    assert_eq!(c.r(0x6000), 0x1FC6_0006, "SGDMA common");
    // Write 1 to set, write 1 to clear, on the interrupt enable mask.
    let e = map::engine_base(true, 1);
    c.w(e + ereg::IE_MASK, 0x0000_0006);
    c.w(e + ereg::IE_MASK_W1S, 0x0000_0010);
    assert_eq!(c.r(e + ereg::IE_MASK), 0x16);
    c.w(e + ereg::IE_MASK_W1C, 0x0000_0002);
    assert_eq!(c.r(e + ereg::IE_MASK), 0x14);
    // The channel enable mask likewise, and the vector registers hold 5-bit fields a byte.
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE_W1S, 0x5);
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE_W1C, 0x1);
    assert_eq!(c.r(ireg::BASE + ireg::CHANNEL_ENABLE), 0x4);
    c.w(ireg::BASE + ireg::USER_VECTOR + 4, 0xFF1F_2001);
    assert_eq!(c.r(ireg::BASE + ireg::USER_VECTOR + 4), 0x1F1F_0001);
    // A narrow write merges into its dword.
    c.ip.bar_write(
        Bar::Dma,
        e + ereg::IE_MASK + 1,
        0xAB,
        1,
        &mut c.mem,
        &mut c.irq,
    )
    .expect("byte write");
    assert_eq!(c.r(e + ereg::IE_MASK), 0xAB14);
    // The engine accepts any alignment: 1-byte address alignment and granularity, 64 bits.
    assert_eq!(c.r(ereg::ALIGNMENTS), 0x0001_0140);
    // MSI-X vectors are masked after reset (PCIe: Vector Control bit 0 is set at reset).
    assert_eq!(c.r(msix::TABLE + 12), msix::MASKED);
}

#[test]
fn memory_mapped_chain_round_trip_with_msix() {
    let mut c = combined();
    c.msix_mode();
    // Unaligned pieces on both sides, as a user buffer cut by pages gives them.
    let pieces = [
        (0x1003u64, 0x2001u64, 100u32),
        (0x2000, 0x2065, 4096),
        (0x3000, 0x3065, 5001),
    ];
    let total: usize = pieces.iter().map(|p| p.2 as usize).sum();
    let data = pattern(total, 1);
    let mut at = 0;
    for &(h, _, n) in &pieces {
        c.mem
            .write(DATA + h, &data[at..at + n as usize])
            .expect("data in RAM");
        at += n as usize;
    }
    let chain: Vec<_> = pieces.iter().map(|&(h, d, n)| (DATA + h, d, n)).collect();
    c.chain(DESCS, &chain, desc::STOP | desc::COMPLETED | desc::EOP);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 200_000);
    let e = map::engine_base(false, 0);
    assert_eq!(c.r(e + ereg::COMPLETED), 3, "three descriptors completed");
    assert_eq!(
        c.r(e + ereg::STATUS),
        status::DESC_STOPPED | status::DESC_COMPLETED
    );
    // One MSI-X message on vector 0 (H2C 0 is channel request bit 0).
    assert_eq!(c.irq.msix, vec![(0xFEE0_0000, 0x40)]);
    // The card's DDR holds the bytes where the descriptors put them.
    let mut ddr = vec![0u8; total];
    c.ip.card()
        .ddr_read(0x2001, &mut ddr)
        .expect("DDR backdoor");
    assert_eq!(ddr, data);
    // The status read that clears drops the request; a second read shows it cleared.
    assert_eq!(
        c.r(e + ereg::STATUS_RC),
        status::DESC_STOPPED | status::DESC_COMPLETED
    );
    assert_eq!(c.r(e + ereg::STATUS), 0);
    assert_eq!(c.r(ireg::BASE + ireg::CHANNEL_REQUEST), 0);
    c.stop(false, 0);

    // And back: C2H 0 reads the card into another host buffer, in one descriptor.
    let back = DATA + 0x10_0000;
    c.chain(
        DESCS + 0x1000,
        &[(0x2001, back, total as u32)],
        desc::STOP | desc::COMPLETED,
    );
    c.start(true, 0, DESCS + 0x1000, false);
    c.run_until_idle(true, 0, 200_000);
    let mut got = vec![0u8; total];
    c.mem.read(back, &mut got).expect("RAM");
    assert_eq!(got, data);
    // C2H 0 is channel request bit 2 (two H2C engines come first): vector 2.
    assert_eq!(c.irq.msix.last(), Some(&(0xFEE0_0020, 0x42)));
}

#[test]
fn a_running_card_costs_one_evaluation_per_clock_edge_instant() {
    // The IP steps the card through its bus models only, so the model needs no evaluation of
    // its own between edges. In 20 ns axi_aclk (4 ns) has 10 edges and ddr_clk (5 ns) 8, two
    // instants hold one of each: 16 evaluations per 5 cycles, whatever the DMA does.
    let mut c = combined();
    let len = 64 << 10;
    let data = pattern(len, 7);
    c.ip.card().ddr_write(0, &data).expect("DDR backdoor");
    c.chain(
        DESCS,
        &[(0, DATA, len as u32)],
        desc::STOP | desc::COMPLETED,
    );
    c.start(true, 0, DESCS, false);
    const CYCLES: u64 = 1_000;
    let before = c.ip.card().env().model().evaluations();
    c.run(CYCLES);
    let spent = c.ip.card().env().model().evaluations() - before;
    assert_eq!(spent, CYCLES / 5 * 16);
    // The engine was busy all along, and the stepping lost none of its data.
    let e = map::engine_base(true, 0);
    assert_ne!(c.r(e + ereg::STATUS) & status::BUSY, 0, "still moving data");
    c.run_until_idle(true, 0, 200_000);
    let mut got = vec![0u8; len];
    c.mem.read(DATA, &mut got).expect("RAM");
    assert_eq!(got, data);
}

#[test]
fn poll_mode_writes_back_the_completed_count() {
    let mut c = combined();
    c.mem.write(DATA, &pattern(8192, 2)).expect("RAM");
    c.chain(
        DESCS,
        &[(DATA, 0x10_0000, 4096), (DATA + 4096, 0x10_1000, 4096)],
        desc::STOP | desc::COMPLETED,
    );
    c.start(false, 0, DESCS, true);
    c.run_until_idle(false, 0, 100_000);
    let mut wb = [0u8; 4];
    c.mem.read(WB, &mut wb).expect("RAM");
    // Two descriptors, no error bit.
    assert_eq!(u32::from_le_bytes(wb), 2);
    // Poll mode logs no stop or completion (the driver leaves their ie bits off), so no
    // interrupt is requested.
    assert_eq!(c.r(map::engine_base(false, 0) + ereg::STATUS), 0);
}

#[test]
fn a_bad_magic_stops_the_engine_with_magic_stopped() {
    let mut c = combined();
    c.msix_mode();
    c.chain(DESCS, &[(DATA, 0, 64), (DATA, 64, 64)], desc::STOP);
    // Spoil the second descriptor's magic.
    c.mem.write(DESCS + 32 + 2, &[0x12, 0x34]).expect("RAM");
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    let e = map::engine_base(false, 0);
    assert_eq!(c.r(e + ereg::COMPLETED), 1);
    assert_eq!(c.r(e + ereg::STATUS), status::MAGIC_STOPPED);
    assert_eq!(c.irq.msix.len(), 1, "the error interrupts");
}

#[test]
fn a_descriptor_outside_host_memory_is_a_descriptor_error() {
    let mut c = combined();
    c.chain(DESCS, &[(DATA, 0, 64)], 0);
    // The first descriptor's next pointer leads out of host memory.
    c.mem
        .write(DESCS + 24, &0x7_0000_0000u64.to_le_bytes())
        .expect("RAM");
    c.start(true, 0, DESCS, false);
    c.run_until_idle(true, 0, 50_000);
    assert_eq!(
        c.r(map::engine_base(true, 0) + ereg::STATUS),
        status::DESC_UNSUPP_REQ
    );
}

#[test]
fn h2c_data_outside_host_memory_is_a_read_error() {
    let mut c = combined();
    c.chain(DESCS, &[(0x7_0000_0000, 0, 64)], desc::STOP);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    let e = map::engine_base(false, 0);
    assert_eq!(c.r(e + ereg::STATUS), status::H2C_R_UNSUPP_REQ);
    assert_eq!(c.r(e + ereg::COMPLETED), 0);
}

#[test]
fn a_card_read_error_is_logged_and_stops_the_engine() {
    let mut c = combined();
    // The card answers bursts at or above 2 GiB with DECERR (its DDR is smaller).
    c.chain(
        DESCS,
        &[(0x8000_0000, DATA, 256)],
        desc::STOP | desc::COMPLETED,
    );
    c.start(true, 0, DESCS, false);
    c.run_until_idle(true, 0, 50_000);
    let e = map::engine_base(true, 0);
    assert_eq!(c.r(e + ereg::STATUS), status::C2H_R_DECODE_ERR);
    assert_eq!(c.r(e + ereg::COMPLETED), 0);
}

#[test]
fn fixed_address_mode_asks_whole_beats_and_sends_fixed_bursts_that_this_card_refuses() {
    let mut c = combined();
    let e = map::engine_base(true, 0);
    // The alignments register: bits 23:16 the address alignment, 15:8 the length
    // granularity. Any byte by default; whole 16-byte beats of the data path in fixed-address
    // mode (PG195's alignment and granularity tables, "AXI4 MM fixed address").
    let fields = |c: &mut Card| (c.r(e + ereg::ALIGNMENTS) >> 8) & 0xFFFF;
    assert_eq!(fields(&mut c), 0x0101);
    c.w(e + ereg::CONTROL_W1S, control::NON_INCR_ADDR);
    assert_eq!(fields(&mut c), 0x1010);
    c.w(e + ereg::CONTROL_W1C, control::NON_INCR_ADDR);
    assert_eq!(fields(&mut c), 0x0101);

    // A read from one card address: the card's AXI port supports INCR bursts only (its
    // ERROR.DMA_BURST), so it answers the FIXED burst with SLVERR and the engine stops on the
    // read error the driver enables.
    c.chain(DESCS, &[(0x1000, DATA, 256)], desc::STOP | desc::COMPLETED);
    c.start(true, 0, DESCS, false);
    c.w(e + ereg::CONTROL_W1S, control::NON_INCR_ADDR);
    c.run_until_idle(true, 0, 50_000);
    assert_eq!(c.r(e + ereg::STATUS), status::C2H_R_SLAVE_ERR);
    assert_eq!(c.r(e + ereg::COMPLETED), 0);
    let err = u64::from(c.user_r(u64::from(card_regs::ERROR)));
    assert_eq!(
        err & card_regs::error::DMA_BURST_MASK,
        card_regs::error::DMA_BURST_MASK,
        "the card saw a FIXED burst"
    );
    c.stop(true, 0);

    // A descriptor that is not whole beats stops the engine on it before any burst.
    c.user_w(u64::from(card_regs::ERROR), err as u32);
    c.chain(DESCS, &[(0x1000, DATA, 100)], desc::STOP | desc::COMPLETED);
    c.start(true, 0, DESCS, false);
    c.w(e + ereg::CONTROL_W1S, control::NON_INCR_ADDR);
    c.run_until_idle(true, 0, 50_000);
    assert_eq!(c.r(e + ereg::STATUS), status::ALIGN_MISMATCH);
    assert_eq!(
        u64::from(c.user_r(u64::from(card_regs::ERROR))) & card_regs::error::DMA_BURST_MASK,
        0
    );
}

#[test]
fn a_card_write_error_without_its_ie_bits_goes_unlogged() {
    // PG195: ie_write_error enables logging a write error and stopping on it; the driver does
    // not set it, so the engine completes the descriptor as if nothing had happened.
    let mut c = combined();
    c.chain(
        DESCS,
        &[(DATA, 0x8000_0000, 256)],
        desc::STOP | desc::COMPLETED,
    );
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    let e = map::engine_base(false, 0);
    assert_eq!(c.r(e + ereg::COMPLETED), 1);
    assert_eq!(
        c.r(e + ereg::STATUS),
        status::DESC_STOPPED | status::DESC_COMPLETED
    );
    // With the bits set, the same write is an error and stops the engine.
    c.stop(false, 0);
    c.r(e + ereg::STATUS_RC);
    c.start(false, 0, DESCS, false);
    c.w(e + ereg::CONTROL_W1S, control::IE_WRITE_ERROR);
    c.run_until_idle(false, 0, 50_000);
    assert_eq!(c.r(e + ereg::STATUS), status::H2C_W_DECODE_ERR);
}

#[test]
fn clearing_run_aborts_and_the_engine_runs_again() {
    let mut c = combined();
    let n = 64u64;
    c.mem
        .write(DATA, &pattern((n * 4096) as usize, 3))
        .expect("RAM");
    let pieces: Vec<_> = (0..n)
        .map(|i| (DATA + i * 4096, i * 4096, 4096u32))
        .collect();
    c.chain(DESCS, &pieces, desc::STOP | desc::COMPLETED);
    c.start(false, 0, DESCS, false);
    c.run(2_000);
    let e = map::engine_base(false, 0);
    let at_stop = c.r(e + ereg::COMPLETED);
    c.stop(false, 0);
    c.run_until_idle(false, 0, 50_000);
    let done = c.r(e + ereg::COMPLETED);
    assert!(done > 0 && done < n as u32, "stopped part way: {done}");
    // PG195: with Run cleared the engine completes the descriptor it is on and no other,
    // though the card has taken the writes of the next ones already on its bus.
    assert!(
        done <= at_stop + 1,
        "{done} completed, {at_stop} when Run was cleared"
    );
    assert_eq!(c.r(e + ereg::STATUS) & status::DESC_STOPPED, 0);
    // The next run starts afresh and finishes.
    c.r(e + ereg::STATUS_RC);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 400_000);
    assert_eq!(c.r(e + ereg::COMPLETED), n as u32);
    let mut ddr = vec![0u8; (n * 4096) as usize];
    c.ip.card().ddr_read(0, &mut ddr).expect("DDR backdoor");
    assert_eq!(ddr, pattern((n * 4096) as usize, 3));
}

/// A card whose H2C 0 and C2H 0 are memory-mapped, behind a timed PCIe port or an untimed one.
fn mm_card(timed: bool) -> Card {
    let mut cfg = IpConfig::new(
        top("sim_top"),
        vec![EngineKind::MemoryMapped],
        vec![EngineKind::MemoryMapped],
    );
    if timed {
        cfg.pcie = Some(xdma_ip::PcieConfig::default());
    }
    card(cfg)
}

/// What xdma_engine_stop writes to the control register: the interrupt enables the driver
/// keeps, idle_stopped's among them, and RUN clear.
const STOP_WRITE: u32 = control::IE_IDLE_STOPPED
    | control::IE_ALIGN_MISMATCH
    | control::IE_MAGIC_STOPPED
    | control::IE_READ_ERROR
    | control::IE_DESC_ERROR
    | control::IE_DESC_STOPPED
    | control::IE_DESC_COMPLETED;

/// PG195, H2C and C2H Channel Control (0x04), Run: "Reset to 0 to stop transfer. If the
/// engine is busy it completes the current descriptor"; Status (0x40), idle_stopped: set "when
/// the engine is idle after resetting the Control register Run bit". So once Run is cleared a
/// memory-mapped engine moves the data of the descriptor it is on and of no later one, counts
/// that descriptor and no other, and once its status shows it idle it touches nothing more:
/// the Linux driver's performance stop clears Run and frees the pages the chain points at on
/// its next line. The chain is as that run builds it, a page per descriptor, each page its
/// own here so that every byte moved shows.
#[rstest]
fn a_memory_mapped_engine_stopped_mid_chain_completes_only_its_current_descriptor(
    #[values(true, false)] c2h: bool,
    #[values(false, true)] timed: bool,
) {
    const UNTOUCHED: u8 = 0xEE;
    let mut c = mm_card(timed);
    let n = 128u64;
    let bytes = (n * 4096) as usize;
    let data = pattern(bytes, 7);
    let fill = vec![UNTOUCHED; bytes];
    // The source holds the data, the destination a fill the engine must overwrite.
    let (src, dst) = if c2h { (&data, &fill) } else { (&fill, &data) };
    c.ip.card().ddr_write(0, src).expect("DDR backdoor");
    c.mem.write(DATA, dst).expect("RAM");
    let pieces: Vec<_> = (0..n)
        .map(|i| {
            let (card, host) = (i * 4096, DATA + i * 4096);
            if c2h {
                (card, host, 4096u32)
            } else {
                (host, card, 4096u32)
            }
        })
        .collect();
    c.chain(DESCS, &pieces, desc::STOP | desc::COMPLETED);
    c.start(c2h, 0, DESCS, false);
    let e = map::engine_base(c2h, 0);
    // Stopped a few descriptors in, part way through the third (a page moves in about 256
    // cycles), with the next ones' bursts on the card's bus.
    for _ in 0..400_000 / 16 {
        if c.r(e + ereg::COMPLETED) >= 2 {
            break;
        }
        c.run(16);
    }
    c.run(160);
    let at_stop = c.r(e + ereg::COMPLETED);
    assert!(
        (2..n as u32 / 2).contains(&at_stop),
        "stopped early in the chain: {at_stop}"
    );
    let mut host_at_stop = vec![0u8; RAM_BYTES];
    c.mem.read(RAM_BASE, &mut host_at_stop).expect("RAM");
    c.w(e + ereg::CONTROL, STOP_WRITE);
    assert!(c.ip.stopping(), "the engine is finishing its descriptor");
    let t0 = c.ip.stats().cycles;
    c.run_until_idle(c2h, 0, 200_000);
    let stop_cycles = c.ip.stats().cycles - t0;
    assert!(!c.ip.stopping(), "idle, so no longer stopping");
    eprintln!("c2h {c2h} timed {timed}: stopped {stop_cycles} cycles after Run was cleared");
    let after = c.r(e + ereg::COMPLETED);
    assert_eq!(
        after,
        at_stop + 1,
        "descriptors completed when Run was cleared and once the engine was idle: the current one completes, no other"
    );
    let st = c.r(e + ereg::STATUS);
    assert_eq!(st & status::BUSY, 0, "status {st:#x}");
    assert_ne!(st & status::IDLE_STOPPED, 0, "status {st:#x}");
    assert_eq!(st & status::DESC_STOPPED, 0, "status {st:#x}");
    // The pages of the completed descriptors hold their data whole; C2H, no later page was
    // written at all (H2C: the card's memory is not the host's, and bursts already on its
    // bus when Run was cleared do reach it).
    let mut moved = vec![0u8; bytes];
    let read_dst = |c: &mut Card, out: &mut [u8]| {
        if c2h {
            c.mem.read(DATA, out).expect("RAM");
        } else {
            c.ip.card().ddr_read(0, out).expect("DDR backdoor");
        }
    };
    read_dst(&mut c, &mut moved);
    let page = |v: &[u8], i: usize| v[i * 4096..(i + 1) * 4096].to_vec();
    for i in 0..n as usize {
        if i < after as usize {
            assert!(
                page(&moved, i) == page(&data, i),
                "page {i} of a completed descriptor"
            );
        } else if c2h {
            assert!(
                page(&moved, i).iter().all(|&b| b == UNTOUCHED),
                "page {i} was written though its descriptor never completed ({after} did)"
            );
        }
    }
    if !c2h {
        let mut host = vec![0u8; RAM_BYTES];
        c.mem.read(RAM_BASE, &mut host).expect("RAM");
        assert!(host == host_at_stop, "an H2C engine wrote host memory");
    }
    // Nothing moves once the engine is idle.
    c.run(20_000);
    let mut later = vec![0u8; bytes];
    read_dst(&mut c, &mut later);
    assert!(later == moved, "memory changed after the engine went idle");
    assert_eq!(c.r(e + ereg::COMPLETED), after);
    // The stop is prompt: the rest of the current page and what else the engine had on the
    // card's bus (16 KiB at most without timing; with it, what its request IDs allow).
    assert!(stop_cycles < 5_000, "the stop took {stop_cycles} cycles");
    // The next run starts afresh and finishes the chain.
    c.r(e + ereg::STATUS_RC);
    c.start(c2h, 0, DESCS, false);
    c.run_until_idle(c2h, 0, 1_000_000);
    assert_eq!(c.r(e + ereg::COMPLETED), n as u32);
    read_dst(&mut c, &mut moved);
    assert!(moved == data, "the second run's pages");
}

/// A C2H stream engine stops as soon as Run is cleared (docs/vm.md: a descriptor half filled
/// is given up), with idle_stopped; a packet that arrives afterwards stays on the stream, and
/// the next run gets it. Nothing reaches host memory from the stopped run.
#[test]
fn a_c2h_stream_engine_stops_at_once_and_leaves_the_stream_to_the_next_run() {
    let mut c = combined();
    c.user_w(
        u64::from(card_regs::CONTROL),
        card_regs::control::MODE_LOOP as u32,
    );
    let bufs = DATA + 0x20_0000;
    c.mem.write(bufs, &[0xEE; 4096]).expect("RAM");
    c.mem.write(RESULTS, &[0xEE; 32]).expect("RAM");
    c.chain(
        DESCS + 0x1000,
        &[(RESULTS, bufs, 4096)],
        desc::STOP | desc::COMPLETED | desc::EOP,
    );
    c.start(true, 1, DESCS + 0x1000, false);
    c.run(2_000);
    let e = map::engine_base(true, 1);
    assert_ne!(
        c.r(e + ereg::STATUS) & status::BUSY,
        0,
        "waiting for a packet"
    );
    c.w(e + ereg::CONTROL, STOP_WRITE);
    c.run(1);
    assert!(!c.ip.stopping());
    let st = c.r(e + ereg::STATUS);
    assert_eq!(st & status::BUSY, 0, "status {st:#x}");
    assert_ne!(st & status::IDLE_STOPPED, 0, "status {st:#x}");
    // A packet looped back while the engine is stopped.
    let p = pattern(100, 9);
    c.mem.write(DATA, &p).expect("RAM");
    c.chain(
        DESCS,
        &[(DATA, 0, 100)],
        desc::STOP | desc::EOP | desc::COMPLETED,
    );
    c.start(false, 1, DESCS, false);
    // The stopped engine's port takes no beat, so the packet waits in the loop.
    c.run(20_000);
    let mut got = vec![0u8; 100];
    c.mem.read(bufs, &mut got).expect("RAM");
    assert!(
        got.iter().all(|&b| b == 0xEE),
        "a stopped engine wrote its buffer"
    );
    assert_eq!(c.r(e + ereg::COMPLETED), 0);
    // The next run takes it.
    c.r(e + ereg::STATUS_RC);
    c.start(true, 1, DESCS + 0x1000, false);
    c.run_until_idle(true, 1, 100_000);
    assert_eq!(c.r(e + ereg::COMPLETED), 1);
    c.mem.read(bufs, &mut got).expect("RAM");
    assert_eq!(got, p);
}

#[test]
fn stream_loop_writes_results_with_end_of_packet() {
    let mut c = combined();
    // LOOP mode: H2C stream frames leave on C2H stream 0 unchanged (C2H engine 1 here).
    c.user_w(
        u64::from(card_regs::CONTROL),
        card_regs::control::MODE_LOOP as u32,
    );
    // Three 4 KiB buffers for C2H 1, results after them.
    let bufs = DATA + 0x20_0000;
    let rx: Vec<_> = (0..3)
        .map(|i| (RESULTS + 32 * i, bufs + 4096 * i, 4096u32))
        .collect();
    c.chain(
        DESCS + 0x1000,
        &rx,
        desc::STOP | desc::COMPLETED | desc::EOP,
    );
    c.start(true, 1, DESCS + 0x1000, false);
    // A 5000-byte packet in two descriptors (EOP on the second), then a 100-byte one.
    let p1 = pattern(5000, 4);
    let p2 = pattern(100, 5);
    c.mem.write(DATA, &p1).expect("RAM");
    c.mem.write(DATA + 0x2000, &p2).expect("RAM");
    c.chain(
        DESCS,
        &[(DATA, 0, 4096), (DATA + 4096, 0, 904)],
        desc::STOP | desc::EOP | desc::COMPLETED,
    );
    c.start(false, 1, DESCS, false);
    c.run_until_idle(false, 1, 100_000);
    assert_eq!(c.r(map::engine_base(false, 1) + ereg::COMPLETED), 2);
    c.run(2_000);
    // The first packet filled one buffer and ended in the second; the third still waits.
    assert_ne!(
        c.r(map::engine_base(true, 1) + ereg::STATUS) & status::BUSY,
        0
    );
    c.stop(false, 1);
    c.r(map::engine_base(false, 1) + ereg::STATUS_RC);
    c.chain(
        DESCS,
        &[(DATA + 0x2000, 0, 100)],
        desc::STOP | desc::EOP | desc::COMPLETED,
    );
    c.start(false, 1, DESCS, false);
    c.run_until_idle(true, 1, 100_000);
    let e = map::engine_base(true, 1);
    assert_eq!(c.r(e + ereg::COMPLETED), 3);
    let mut res = vec![0u8; 96];
    c.mem.read(RESULTS, &mut res).expect("RAM");
    let word = |i: usize| u32::from_le_bytes([res[i], res[i + 1], res[i + 2], res[i + 3]]);
    // Status 0x52B4 in the upper half, EOP in bit 0; then the length.
    assert_eq!((word(0), word(4)), (0x52B4_0000, 4096));
    assert_eq!((word(32), word(36)), (0x52B4_0001, 904));
    assert_eq!((word(64), word(68)), (0x52B4_0001, 100));
    let mut got = vec![0u8; 5000];
    c.mem.read(bufs, &mut got).expect("RAM");
    assert_eq!(got, p1);
    let mut got = vec![0u8; 100];
    c.mem.read(bufs + 8192, &mut got).expect("RAM");
    assert_eq!(got, p2);
}

#[test]
fn a_masked_msix_vector_waits_in_the_pba_until_unmasked() {
    let mut c = combined();
    c.msix_mode();
    // Mask vector 0 (H2C 0's).
    c.w(msix::TABLE + 12, msix::MASKED);
    c.chain(DESCS, &[(DATA, 0, 64)], desc::STOP | desc::COMPLETED);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    c.run(8);
    assert!(c.irq.msix.is_empty());
    assert_eq!(c.r(msix::PBA), 1, "pending bit of vector 0");
    c.w(msix::TABLE + 12, 0);
    assert_eq!(c.irq.msix, vec![(0xFEE0_0000, 0x40)]);
    assert_eq!(c.r(msix::PBA), 0);
    // The function mask holds messages the same way.
    c.ip.set_irq_mode(
        IrqMode::MsiX {
            function_mask: true,
        },
        &mut c.irq,
    );
    c.r(map::engine_base(false, 0) + ereg::STATUS_RC);
    c.stop(false, 0);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    c.run(8);
    assert_eq!(c.irq.msix.len(), 1);
    c.ip.set_irq_mode(
        IrqMode::MsiX {
            function_mask: false,
        },
        &mut c.irq,
    );
    assert_eq!(c.irq.msix.len(), 2);
}

#[test]
fn intx_follows_the_request_and_drops_with_the_status_read() {
    let mut c = combined();
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE, 0xFF);
    c.chain(DESCS, &[(DATA, 0, 64)], desc::STOP | desc::COMPLETED);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    c.run(4);
    assert_eq!(c.irq.intx, vec![true]);
    assert_eq!(c.r(ireg::BASE + ireg::CHANNEL_REQUEST), 1);
    // The driver's handler masks the channel, then the service reads the status to clear it:
    // the line is low as soon as the mask is written.
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE_W1C, 1);
    assert_eq!(c.irq.intx, vec![true, false]);
    c.r(map::engine_base(false, 0) + ereg::STATUS_RC);
    c.w(ireg::BASE + ireg::CHANNEL_ENABLE_W1S, 1);
    assert_eq!(c.irq.intx, vec![true, false], "nothing left to request");
    // MSI with one vector: every request is vector 0.
    c.ip.set_irq_mode(IrqMode::Msi { vectors: 1 }, &mut c.irq);
    c.stop(false, 0);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    c.run(4);
    assert_eq!(c.irq.msi, vec![0]);
}

#[test]
fn the_user_bar_reaches_the_cards_registers() {
    let mut c = combined();
    c.user_w(u64::from(card_regs::SCRATCH), 0xCAFE_F00D);
    assert_eq!(c.user_r(u64::from(card_regs::SCRATCH)), 0xCAFE_F00D);
    // A byte read takes its lane of the dword.
    let b =
        c.ip.bar_read(
            Bar::User,
            u64::from(card_regs::SCRATCH) + 1,
            1,
            &mut c.mem,
            &mut c.irq,
        )
        .expect("byte read");
    assert_eq!(b, 0xF0);
    // The ID register reads as the register table says.
    assert_eq!(
        c.user_r(u64::from(card_regs::ID)),
        card_regs::id::RESET as u32
    );
}

#[test]
fn an_ip_with_an_alignment_rule_refuses_addresses_aligned_differently() {
    use EngineKind::{MemoryMapped as Mm, Stream as St};
    let mut c = card(IpConfig {
        alignment: 64,
        ..IpConfig::new(top("sim_top"), vec![Mm, St], vec![Mm, St, St])
    });
    // Bits 23:16 hold the alignment the driver reads (ALIGN_GET).
    assert_eq!(c.r(ereg::ALIGNMENTS) >> 16, 64);
    // The same offset modulo 64 on both sides is fine, another is not.
    c.chain(DESCS, &[(DATA + 0x10, 0x1010, 64)], desc::STOP);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    let e = map::engine_base(false, 0);
    assert_eq!(c.r(e + ereg::COMPLETED), 1);
    c.stop(false, 0);
    c.r(e + ereg::STATUS_RC);
    c.chain(DESCS, &[(DATA + 0x10, 0x1020, 64)], desc::STOP);
    c.start(false, 0, DESCS, false);
    c.run_until_idle(false, 0, 50_000);
    assert_eq!(c.r(e + ereg::STATUS), status::ALIGN_MISMATCH);
    assert_eq!(c.r(e + ereg::COMPLETED), 0);
    assert!(XdmaIp::new(IpConfig {
        alignment: 3,
        ..IpConfig::new(top("sim_top"), vec![Mm], vec![Mm])
    })
    .is_err());
}

/// Starts the card's capture into a 64 KiB ring with a fill-level interrupt at 1 KiB.
fn capture_with_fill_interrupt(c: &mut Card) {
    use card_regs as r;
    let w = |c: &mut Card, reg: u32, v: u32| c.user_w(u64::from(reg), v);
    w(c, r::SRC0_FRAME_LEN, 256);
    w(c, r::SRC0_GAP, 64);
    w(c, r::CAP_BASE, 0x0100_0000);
    w(c, r::CAP_SIZE, 0x1_0000);
    w(c, r::CAP_IRQ_LEVEL, 1024);
    w(c, r::IRQ_ENABLE, 1);
    w(c, r::CONTROL, (r::control::MODE_CAPTURE as u32) | (1 << 8));
}

fn run_until(c: &mut Card, limit: u64, mut done: impl FnMut(&Card) -> bool) {
    for _ in 0..limit / 64 {
        if done(c) {
            return;
        }
        c.run(64);
    }
    panic!("not done after {limit} cycles");
}

#[test]
fn every_acknowledged_user_interrupt_is_a_message_of_its_own() {
    let mut c = combined();
    c.msix_mode();
    capture_with_fill_interrupt(&mut c);
    // User line 0 is vector 8 in this layout.
    run_until(&mut c, 400_000, |c| !c.irq.msix.is_empty());
    assert_eq!(c.irq.msix, vec![(0xFEE0_0080, 0x48)]);
    // The request register shows it until the handler (MSI and INTx) reads it there.
    assert_eq!(c.r(ireg::BASE + ireg::USER_REQUEST), 1);
    assert_eq!(c.r(ireg::BASE + ireg::USER_REQUEST), 0);
    // Empty the ring and clear the event: the fill rises past the level again, and the
    // card's second request is a second message, whether or not anyone read the register.
    let wptr = c.user_r(u64::from(card_regs::CAP_WPTR));
    c.user_w(u64::from(card_regs::CAP_RPTR), wptr);
    c.user_w(u64::from(card_regs::IRQ_STATUS), 1);
    run_until(&mut c, 400_000, |c| c.irq.msix.len() == 2);
    let wptr = c.user_r(u64::from(card_regs::CAP_WPTR));
    c.user_w(u64::from(card_regs::CAP_RPTR), wptr);
    c.user_w(u64::from(card_regs::IRQ_STATUS), 1);
    run_until(&mut c, 400_000, |c| c.irq.msix.len() == 3);
    c.user_w(u64::from(card_regs::CONTROL), 0);
}

#[test]
fn a_user_interrupt_holds_intx_until_the_handler_reads_it() {
    let mut c = combined();
    c.w(ireg::BASE + ireg::USER_ENABLE, 1);
    capture_with_fill_interrupt(&mut c);
    run_until(&mut c, 400_000, |c| !c.irq.intx.is_empty());
    c.run(1_000);
    assert_eq!(
        c.irq.intx,
        vec![true],
        "held after the card dropped its request"
    );
    assert_eq!(c.r(ireg::BASE + ireg::USER_REQUEST), 1);
    assert_eq!(
        c.irq.intx,
        vec![true, false],
        "lowered by the handler's read"
    );
    c.user_w(u64::from(card_regs::CONTROL), 0);
}

/// With PCIe timing, a memory-mapped H2C run of one 4 KiB descriptor cannot interrupt the host
/// sooner than its two read round trips (the descriptor, then the data) plus the data's time
/// on the link, and the message itself reaches the host a flight after it leaves; with one
/// PCIe tag, the data's eight reads of 512 bytes go one round trip at a time.
#[test]
fn with_timing_host_memory_is_a_link_away() {
    use xdma_ip::{LinkConfig, PcieConfig, RootConfig};
    let flight_ns = 125.0;
    let read_ns = 250.0;
    let timed = |tags: u32| {
        let mut cfg = IpConfig::new(
            top("sim_top"),
            vec![EngineKind::MemoryMapped],
            vec![EngineKind::MemoryMapped],
        );
        cfg.pcie = Some(PcieConfig {
            link: LinkConfig {
                flight_ns,
                ..LinkConfig::default()
            },
            root: RootConfig {
                read_latency_ns: read_ns,
                ack_latency_ns: 250.0,
            },
            tags,
            ..PcieConfig::default()
        });
        let mut c = card(cfg);
        c.msix_mode();
        c.mem.write(DATA, &pattern(4096, 3)).expect("data in RAM");
        c.chain(DESCS, &[(DATA, 0x1000, 4096)], desc::STOP | desc::COMPLETED);
        c.start(false, 0, DESCS, false);
        let started = c.ip.now();
        while c.irq.msix.is_empty() {
            c.run(1);
            assert!(c.ip.now() - started < 100_000_000, "no interrupt in 100 us");
        }
        c.ip.now() - started
    };
    let round_trip_ps = ((2.0 * flight_ns + read_ns) * 1000.0) as u64;
    // 4 KiB of completions at 128 bytes each: 32 TLPs of 148 wire bytes at 4 GB/s less SKP.
    let data_ps = (32.0 * 148.0 / 4.0 * 1000.0) as u64;
    let with_32 = timed(32);
    assert!(
        with_32 >= 2 * round_trip_ps + data_ps + (flight_ns * 1000.0) as u64,
        "{with_32} ps"
    );
    // Far from a link-free run: the card's own path is a few hundred ns.
    assert!(
        with_32 < 2 * round_trip_ps + data_ps + 3_000_000,
        "{with_32} ps"
    );
    // One tag: each of the eight data reads waits for the one before.
    let with_1 = timed(1);
    assert!(
        with_1 >= round_trip_ps * 9,
        "{with_1} ps with one tag, {with_32} ps with 32"
    );
}
