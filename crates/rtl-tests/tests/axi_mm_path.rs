//! The memory-mapped path end to end (`axi_mm_path_tb`: axi_mm_path + DDR3 model) through
//! AXI4 master bus models with their protocol monitors: the backdoor against bus contents,
//! concurrent reads and writes with several reads in flight, seeded random pauses on every
//! channel, and the capture port sharing the DDR port with s_axi through the arbiter.

use axi_bfm::{AxiMaster, AxiMasterConfig, BfmError, Channel, PauseSpec, Result};
use card_sim::DdrBackdoor;
use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;
use rtl_tests::{mm_path, random_bytes, record_axi};

/// Bytes per s_axi beat.
const BEAT: usize = 16;

/// A master with no limit below the test's own on bursts in flight.
fn deep() -> AxiMasterConfig {
    AxiMasterConfig {
        max_outstanding_reads: 64,
        max_outstanding_writes: 64,
        ..AxiMasterConfig::default()
    }
}

#[test]
fn backdoor_and_bus_agree_both_ways() -> Result<()> {
    let (mut env, clk, _) = mm_path()?;
    let a = AxiMaster::attach(&mut env, "s_axi", clk)?;
    let log = record_axi(&mut env, "s_axi", clk)?;
    let mut rng = XorShiftRng::seed_from_u64(1);
    // Backdoor preload, bus read.
    let pre = random_bytes(&mut rng, 64 * BEAT);
    env.model_mut().ddr_write(0x7000, &pre)?;
    let rd = a.start_read(2, 0x7000, pre.len())?;
    // Bus write, backdoor read.
    let written = random_bytes(&mut rng, 32 * BEAT);
    let wr = a.start_write(3, 0x9_0010, &written)?;
    a.wait_idle(&mut env)?;
    let (read, resp) = a.take_read(rd)?;
    assert!(resp.is_ok());
    assert_eq!(read, pre, "the bus reads what the backdoor wrote");
    let log = log.borrow();
    assert_eq!(log.r.len(), 64, "one 64-beat burst");
    assert!(log.r.iter().all(|r| r.id == 2 && r.resp == 0));
    assert_eq!(log.r.iter().filter(|r| r.last).count(), 1);
    assert!(log.r[63].last);
    let mut got = vec![0u8; written.len()];
    env.model().ddr_read(0x9_0010, &mut got)?;
    assert_eq!(got, written, "the backdoor reads what the bus wrote");
    assert!(a.take_write(wr)?.is_ok());
    assert_eq!((log.b.len(), log.b[0].id, log.b[0].resp), (1, 3, 0));
    Ok(())
}

#[test]
fn reads_in_flight_return_in_order_per_id_while_writes_proceed() -> Result<()> {
    let (mut env, clk, _) = mm_path()?;
    let a = AxiMaster::attach_with(&mut env, "s_axi", clk, deep())?;
    let log = record_axi(&mut env, "s_axi", clk)?;
    let mut rng = XorShiftRng::seed_from_u64(2);
    let src = 0x0100_0000u64;
    let dst = 0x0200_0000u64;
    let mem = random_bytes(&mut rng, 0x8000);
    env.model_mut().ddr_write(src, &mem)?;
    // 24 read bursts of 1..16 beats with IDs 0..3, and 12 write bursts to another region,
    // all queued at once: reads and writes run side by side.
    let mut reads = Vec::new();
    for n in 0..24u64 {
        let beats = 1 + rng.random_range(0..16usize);
        let addr = src + n * 1024 + rng.random_range(0..4u64) * 16;
        let t = a.start_read((n % 4) as u32, addr, beats * BEAT)?;
        reads.push((t, n % 4, addr, beats));
    }
    let mut writes = Vec::new();
    for n in 0..12u64 {
        let data = random_bytes(&mut rng, 32 * BEAT);
        let t = a.start_write((n % 16) as u32, dst + n * 512, &data)?;
        writes.push((t, data));
    }
    a.wait_idle(&mut env)?;
    let log = log.borrow();

    // Several read bursts were accepted before the first one's data came back.
    let first_data = log.r[0].cycle;
    let in_flight = log.ar.iter().filter(|&&c| c < first_data).count();
    assert!(in_flight >= 4, "only {in_flight} reads were in flight");
    // Writes completed while reads were still returning data: the paths overlap.
    let last_read = log.r.last().expect("beats").cycle;
    assert!(
        log.b
            .iter()
            .any(|b| b.cycle > first_data && b.cycle < last_read),
        "no write finished while reads were streaming"
    );

    // Each ID's bursts come back in the order they were issued (the master matches beats
    // to bursts per ID in issue order), with the right data.
    for (t, id, addr, beats) in &reads {
        let (got, resp) = a.take_read(*t)?;
        assert!(resp.is_ok());
        let off = (addr - src) as usize;
        assert_eq!(
            got,
            mem[off..off + beats * BEAT],
            "burst of ID {id} at {addr:#x}"
        );
    }
    for id in 0..4u64 {
        let lasts = log.r.iter().filter(|r| r.id == id && r.last).count();
        let beats: usize = reads.iter().filter(|r| r.1 == id).map(|r| r.3).sum();
        assert_eq!(
            lasts,
            reads.iter().filter(|r| r.1 == id).count(),
            "RLAST per burst of ID {id}"
        );
        assert_eq!(log.r.iter().filter(|r| r.id == id).count(), beats);
    }
    for (n, (t, data)) in writes.iter().enumerate() {
        assert!(a.take_write(*t)?.is_ok());
        let mut got = vec![0u8; data.len()];
        env.model().ddr_read(dst + n as u64 * 512, &mut got)?;
        assert_eq!(&got, data, "written data of burst {n}");
    }
    Ok(())
}

/// Seed of the random pauses in the backpressure test.
const PAUSE_SEED: u64 = 3;

/// Seeded random idle cycles on AW, W and AR (VALID on 60 % of cycles) and backpressure on B
/// and R (READY on 40 %): nothing is lost.
#[test]
fn random_backpressure_loses_nothing() -> Result<()> {
    let (mut env, clk, _) = mm_path()?;
    let a = AxiMaster::attach_with(&mut env, "s_axi", clk, deep())?;
    for (ch, pct, salt) in [
        (Channel::Aw, 40, 0),
        (Channel::W, 40, 1),
        (Channel::Ar, 40, 2),
        (Channel::B, 60, 3),
        (Channel::R, 60, 4),
    ] {
        a.set_channel_pauses(ch, &PauseSpec::random(PAUSE_SEED + salt, pct));
    }
    let mut rng = XorShiftRng::seed_from_u64(3);
    let base = 0x3000_0000u64;
    let mut mem = random_bytes(&mut rng, 0x4000);
    env.model_mut().ddr_write(base, &mem)?;
    // Overwrite the second half by the bus, read back the first half meanwhile, then read
    // the second half after its writes completed.
    let mut first = Vec::new();
    for n in 0..8u64 {
        let data = random_bytes(&mut rng, 64 * BEAT);
        let at = 0x2000 + n as usize * 1024;
        mem[at..at + data.len()].copy_from_slice(&data);
        a.start_write(n as u32, base + at as u64, &data)?;
        first.push(a.start_read(n as u32, base + n * 1024, 64 * BEAT)?);
    }
    a.wait_idle(&mut env)?;
    let mut second = Vec::new();
    for n in 0..8u64 {
        second.push(a.start_read(8 + n as u32, base + 0x2000 + n * 1024, 64 * BEAT)?);
    }
    a.wait_idle(&mut env)?;
    let mut got = Vec::new();
    for t in first.into_iter().chain(second) {
        let (d, resp) = a.take_read(t)?;
        assert!(resp.is_ok());
        got.extend(d);
    }
    assert_eq!(got, mem, "every byte read back as written");
    assert!(env.violations().is_empty(), "{:?}", env.violations());
    Ok(())
}

#[test]
fn capture_and_dma_writes_share_the_port_fairly() -> Result<()> {
    let (mut env, clk, _) = mm_path()?;
    let dma = AxiMaster::attach_with(&mut env, "s_axi", clk, deep())?;
    // The capture port is write-only and has no IDs; the master and its monitor bind only
    // the write channels.
    let cap = AxiMaster::attach_with(&mut env, "s_axi_cap", clk, deep())?;
    let (dma_base, cap_base) = (0x0400_0000u64, 0x0500_0000u64);
    assert!(
        matches!(
            cap.start_read(0, cap_base, 16),
            Err(BfmError::BadRequest { .. })
        ),
        "a read on a write-only bus is refused"
    );
    let dma_log = record_axi(&mut env, "s_axi", clk)?;
    let cap_log = record_axi(&mut env, "s_axi_cap", clk)?;
    let mut rng = XorShiftRng::seed_from_u64(4);
    let dma_mem = random_bytes(&mut rng, 16 * 256);
    let cap_mem = random_bytes(&mut rng, 16 * 256);
    for n in 0..16usize {
        let at = n * 256;
        dma.start_write(n as u32, dma_base + at as u64, &dma_mem[at..at + 256])?;
        cap.start_write(0, cap_base + at as u64, &cap_mem[at..at + 256])?;
    }
    dma.wait_idle(&mut env)?;
    cap.wait_idle(&mut env)?;
    // Responses went to the source that wrote, with the DMA's IDs intact.
    let (dma_log, cap_log) = (dma_log.borrow(), cap_log.borrow());
    let ids: Vec<u64> = dma_log.b.iter().map(|b| b.id).collect();
    assert_eq!(ids, (0..16).collect::<Vec<u64>>());
    assert_eq!(cap_log.b.len(), 16);
    assert!(cap_log.b.iter().chain(&dma_log.b).all(|b| b.resp == 0));
    let mut got = vec![0u8; dma_mem.len()];
    env.model().ddr_read(dma_base, &mut got)?;
    assert_eq!(got, dma_mem, "DMA data");
    env.model().ddr_read(cap_base, &mut got)?;
    assert_eq!(got, cap_mem, "capture data");
    // While both had bursts waiting, grants alternated: the address handshakes of the two
    // sources interleave one for one.
    let mut order: Vec<(u64, char)> = dma_log
        .aw
        .iter()
        .map(|&c| (c, 'd'))
        .chain(cap_log.aw.iter().map(|&c| (c, 'c')))
        .collect();
    order.sort_unstable();
    let seq: String = order.iter().map(|o| o.1).collect();
    assert!(
        seq.as_bytes().windows(2).all(|w| w[0] != w[1]),
        "grants must alternate: {seq}"
    );
    Ok(())
}

/// Seed of the random pauses on the capture port.
const CAP_PAUSE_SEED: u64 = 0xca9;

/// The write-only capture port (`s_axi_cap`, no IDs) under seeded random idle cycles and
/// backpressure, while the DMA port writes beside it: both land in DDR intact.
#[test]
fn capture_port_under_random_pauses() -> Result<()> {
    let (mut env, clk, _) = mm_path()?;
    let dma = AxiMaster::attach_with(&mut env, "s_axi", clk, deep())?;
    let cap = AxiMaster::attach_with(&mut env, "s_axi_cap", clk, deep())?;
    cap.set_pauses(&PauseSpec::random(CAP_PAUSE_SEED, 40));
    dma.set_pauses(&PauseSpec::random(CAP_PAUSE_SEED + 1, 20));
    let mut rng = XorShiftRng::seed_from_u64(CAP_PAUSE_SEED);
    let (dma_base, cap_base) = (0x0600_0000u64, 0x0700_0000u64);
    let dma_mem = random_bytes(&mut rng, 3000);
    let cap_mem = random_bytes(&mut rng, 5000);
    // Unaligned starts and lengths: the master splits them into strobed bursts.
    let td = dma.start_write(1, dma_base + 5, &dma_mem)?;
    let tc = cap.start_write(0, cap_base + 0xff3, &cap_mem)?;
    dma.wait(&mut env, td)?;
    cap.wait(&mut env, tc)?;
    assert!(dma.take_write(td)?.is_ok() && cap.take_write(tc)?.is_ok());
    let mut got = vec![0u8; dma_mem.len()];
    env.model().ddr_read(dma_base + 5, &mut got)?;
    assert_eq!(got, dma_mem, "DMA data");
    let mut got = vec![0u8; cap_mem.len()];
    env.model().ddr_read(cap_base + 0xff3, &mut got)?;
    assert_eq!(got, cap_mem, "capture data");
    assert!(env.violations().is_empty(), "{:?}", env.violations());
    Ok(())
}
