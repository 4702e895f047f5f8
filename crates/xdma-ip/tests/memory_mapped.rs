//! The memory-mapped engines (PG195's AXI4 memory-mapped H2C and C2H channels) programmed as
//! the driver programs them: descriptor chains, write-backs, errors, stopping, alignment and
//! PCIe timing, with host memory a plain buffer and expected values from PG195.

mod common;

use common::*;
use rstest::rstest;
use xdma_ip::{EngineKind, HostMemory, IpConfig, XdmaIp};
use xdma_regmap::{self as map, control, desc, engine_regs as ereg, irq as ireg, status};

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
                ..RootConfig::default()
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
