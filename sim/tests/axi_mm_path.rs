//! The memory-mapped path end to end (`axi_mm_path_tb`: axi_mm_path + DDR3 model): the
//! backdoor against bus contents, concurrent reads and writes with several reads in flight,
//! and the capture port sharing the DDR port with s_axi through the arbiter.

mod common;

use common::{mm_path, run, AxiMaster, Rng};

/// Bytes per s_axi beat; AXSIZE of a full beat.
const BEAT: usize = 16;
const FULL: u64 = 4;

fn full_beats(rng: &mut Rng, n: usize) -> Vec<(Vec<u8>, u64)> {
    (0..n).map(|_| (rng.bytes(BEAT), 0xffff)).collect()
}

#[test]
fn backdoor_and_bus_agree_both_ways() {
    let (mut m, clk, _) = mm_path().expect("model");
    let mut a = AxiMaster::attach(&mut m, clk, "s_axi", true, true, 1).expect("attach");
    let mut rng = Rng::new(1);
    // Backdoor preload, bus read.
    let pre = rng.bytes(64 * BEAT);
    m.ddr_write(0x7000, &pre).expect("preload");
    a.read(2, 0x7000, FULL, 64);
    // Bus write, backdoor read.
    let beats = full_beats(&mut rng, 32);
    let written: Vec<u8> = beats.iter().flat_map(|b| b.0.clone()).collect();
    a.write(3, 0x9_0010, FULL, beats);
    run(&mut m, &mut [&mut a], 100_000, "read and write", |_, ms| {
        ms[0].r.len() == 64 && ms[0].b.len() == 1
    })
    .expect("traffic");
    let read: Vec<u8> = a.r.iter().flat_map(|r| r.data.clone()).collect();
    assert_eq!(read, pre, "the bus reads what the backdoor wrote");
    assert!(a.r.iter().all(|r| r.id == 2 && r.resp == 0));
    assert_eq!(a.r.iter().filter(|r| r.last).count(), 1);
    assert!(a.r[63].last);
    let mut got = vec![0u8; written.len()];
    m.ddr_read(0x9_0010, &mut got).expect("backdoor");
    assert_eq!(got, written, "the backdoor reads what the bus wrote");
    assert_eq!((a.b[0].id, a.b[0].resp), (3, 0));
}

#[test]
fn reads_in_flight_return_in_order_per_id_while_writes_proceed() {
    let (mut m, clk, _) = mm_path().expect("model");
    let mut a = AxiMaster::attach(&mut m, clk, "s_axi", true, true, 2).expect("attach");
    let mut rng = Rng::new(2);
    let src = 0x0100_0000u64;
    let dst = 0x0200_0000u64;
    let mem = rng.bytes(0x8000);
    m.ddr_write(src, &mem).expect("preload");
    // 24 read bursts of 1..16 beats with IDs 0..3, and 12 write bursts to another region,
    // all queued at once: reads and writes run side by side.
    let mut reads = Vec::new();
    for n in 0..24u64 {
        let beats = 1 + rng.below(16) as usize;
        let addr = src + n * 1024 + rng.below(4) * 16;
        a.read(n % 4, addr, FULL, beats);
        reads.push((n % 4, addr, beats));
    }
    let mut expect = vec![0u8; 12 * 512];
    for n in 0..12u64 {
        let beats = full_beats(&mut rng, 32);
        common::apply_write(&mut expect, dst, dst + n * 512, FULL, BEAT, &beats);
        a.write(n % 16, dst + n * 512, FULL, beats);
    }
    let total: usize = reads.iter().map(|r| r.2).sum();
    run(
        &mut m,
        &mut [&mut a],
        200_000,
        "reads and writes",
        |_, ms| ms[0].r.len() == total && ms[0].b.len() == 12,
    )
    .expect("traffic");

    // Several read bursts were accepted before the first one's data came back.
    let first_data = a.r[0].cycle;
    let in_flight = a.ar_cycles.iter().filter(|&&c| c < first_data).count();
    assert!(in_flight >= 4, "only {in_flight} reads were in flight");
    // Writes completed while reads were still returning data: the paths overlap.
    let last_read = a.r.last().expect("beats").cycle;
    assert!(
        a.b.iter()
            .any(|b| b.cycle > first_data && b.cycle < last_read),
        "no write finished while reads were streaming"
    );

    // Each ID's bursts come back in the order they were issued, with the right data.
    for id in 0..4u64 {
        let want: Vec<u8> = reads
            .iter()
            .filter(|r| r.0 == id)
            .flat_map(|r| mem[(r.1 - src) as usize..(r.1 - src) as usize + r.2 * BEAT].to_vec())
            .collect();
        let got: Vec<u8> =
            a.r.iter()
                .filter(|r| r.id == id)
                .flat_map(|r| r.data.clone())
                .collect();
        assert_eq!(got, want, "data of ID {id}");
        let lasts = a.r.iter().filter(|r| r.id == id && r.last).count();
        assert_eq!(
            lasts,
            reads.iter().filter(|r| r.0 == id).count(),
            "RLAST per burst of ID {id}"
        );
    }
    let mut got = vec![0u8; expect.len()];
    m.ddr_read(dst, &mut got).expect("backdoor");
    assert_eq!(got, expect, "written data");
}

#[test]
fn random_backpressure_loses_nothing() {
    let (mut m, clk, _) = mm_path().expect("model");
    let mut a = AxiMaster::attach(&mut m, clk, "s_axi", true, true, 3).expect("attach");
    a.valid_pct = 60;
    a.ready_pct = 40;
    let mut rng = Rng::new(3);
    let base = 0x3000_0000u64;
    let mut mem = rng.bytes(0x4000);
    m.ddr_write(base, &mem).expect("preload");
    // Overwrite the second half by the bus, read back the first half meanwhile, then read
    // the second half after its writes completed.
    for n in 0..8u64 {
        let beats = full_beats(&mut rng, 64);
        common::apply_write(&mut mem, base, base + 0x2000 + n * 1024, FULL, BEAT, &beats);
        a.write(n, base + 0x2000 + n * 1024, FULL, beats);
        a.read(n, base + n * 1024, FULL, 64);
    }
    run(&mut m, &mut [&mut a], 1_000_000, "first round", |_, ms| {
        ms[0].b.len() == 8 && ms[0].r.len() == 8 * 64
    })
    .expect("round 1");
    for n in 0..8u64 {
        a.read(8 + n, base + 0x2000 + n * 1024, FULL, 64);
    }
    run(&mut m, &mut [&mut a], 1_000_000, "second round", |_, ms| {
        ms[0].r.len() == 16 * 64
    })
    .expect("round 2");
    let got: Vec<u8> = a.r.iter().flat_map(|r| r.data.clone()).collect();
    assert_eq!(got, mem, "every byte read back as written");
}

#[test]
fn capture_and_dma_writes_share_the_port_fairly() {
    let (mut m, clk, _) = mm_path().expect("model");
    let mut dma = AxiMaster::attach(&mut m, clk, "s_axi", true, true, 4).expect("dma");
    let mut cap = AxiMaster::attach(&mut m, clk, "s_axi_cap", false, false, 5).expect("cap");
    let mut rng = Rng::new(4);
    let (dma_base, cap_base) = (0x0400_0000u64, 0x0500_0000u64);
    let mut dma_mem = vec![0u8; 16 * 256];
    let mut cap_mem = vec![0u8; 16 * 256];
    for n in 0..16u64 {
        let beats = full_beats(&mut rng, 16);
        common::apply_write(
            &mut dma_mem,
            dma_base,
            dma_base + n * 256,
            FULL,
            BEAT,
            &beats,
        );
        dma.write(n, dma_base + n * 256, FULL, beats);
        let beats = full_beats(&mut rng, 16);
        common::apply_write(
            &mut cap_mem,
            cap_base,
            cap_base + n * 256,
            FULL,
            BEAT,
            &beats,
        );
        cap.write(0, cap_base + n * 256, FULL, beats);
    }
    run(
        &mut m,
        &mut [&mut dma, &mut cap],
        200_000,
        "both sources' responses",
        |_, ms| ms[0].b.len() == 16 && ms[1].b.len() == 16,
    )
    .expect("traffic");
    // Responses went to the source that wrote, with the DMA's IDs intact.
    let ids: Vec<u64> = dma.b.iter().map(|b| b.id).collect();
    assert_eq!(ids, (0..16).collect::<Vec<u64>>());
    assert!(cap.b.iter().chain(dma.b.iter()).all(|b| b.resp == 0));
    let mut got = vec![0u8; dma_mem.len()];
    m.ddr_read(dma_base, &mut got).expect("backdoor");
    assert_eq!(got, dma_mem, "DMA data");
    m.ddr_read(cap_base, &mut got).expect("backdoor");
    assert_eq!(got, cap_mem, "capture data");
    // While both had bursts waiting, grants alternated: the address handshakes of the two
    // sources interleave one for one.
    let mut order: Vec<(u64, char)> = dma
        .aw_cycles
        .iter()
        .map(|&c| (c, 'd'))
        .chain(cap.aw_cycles.iter().map(|&c| (c, 'c')))
        .collect();
    order.sort_unstable();
    let seq: String = order.iter().map(|o| o.1).collect();
    assert!(
        seq.as_bytes().windows(2).all(|w| w[0] != w[1]),
        "grants must alternate: {seq}"
    );
}
