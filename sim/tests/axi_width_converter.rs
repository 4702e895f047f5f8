//! The 128 -> 512 write width conversion of the memory-mapped path (`axi_mm_path_tb`): every
//! strobe pattern, unaligned starts, narrow transfers and burst lengths, written through s_axi
//! and checked in the DDR3 model's memory through the backdoor.

mod common;

use common::{apply_write, mm_path, run, AxiMaster, Rng};

/// Bytes per s_axi beat.
const BEAT: usize = 16;

#[test]
fn every_strobe_pattern_writes_only_its_bytes() {
    let (mut m, clk, _) = mm_path().expect("model");
    let mut a = AxiMaster::attach(&mut m, clk, "s_axi", true, true, 1).expect("attach");
    let mut rng = Rng::new(0x5eed);
    // One beat for each of the 2^16 patterns, 16 bytes apart, over memory that holds a known
    // random pattern, in 256-beat bursts.
    let patterns = 1usize << BEAT;
    let base = 0x0010_0000u64;
    let len = patterns * BEAT;
    let pre = rng.bytes(len);
    m.ddr_write(base, &pre).expect("preload");
    let mut expect = pre.clone();
    let bursts = patterns / 256;
    for b in 0..bursts {
        let beats: Vec<(Vec<u8>, u64)> = (0..256)
            .map(|i| (rng.bytes(BEAT), (b * 256 + i) as u64))
            .collect();
        let addr = base + (b * 256 * BEAT) as u64;
        apply_write(&mut expect, base, addr, 4, BEAT, &beats);
        a.write(b as u64 % 16, addr, 4, beats);
    }
    run(
        &mut m,
        &mut [&mut a],
        2_000_000,
        "all write responses",
        |_, ms| ms[0].b.len() == bursts,
    )
    .expect("writes");
    assert!(a.b.iter().all(|b| b.resp == 0), "all OKAY");
    let mut got = vec![0u8; len];
    m.ddr_read(base, &mut got).expect("backdoor");
    if let Some(i) = (0..len).find(|&i| got[i] != expect[i]) {
        panic!(
            "byte {i} (pattern {:#06x}, lane {}): memory {:#04x}, expected {:#04x}",
            i / BEAT,
            i % BEAT,
            got[i],
            expect[i]
        );
    }
}

#[test]
fn unaligned_narrow_and_odd_length_bursts() {
    let (mut m, clk, _) = mm_path().expect("model");
    let mut a = AxiMaster::attach(&mut m, clk, "s_axi", true, true, 2).expect("attach");
    let mut rng = Rng::new(0xa11);
    let base = 0x4000_0000u64 - 0x10_0000;
    let len = 0x4_0000usize;
    let pre = rng.bytes(len);
    m.ddr_write(base, &pre).expect("preload");
    let mut expect = pre.clone();
    let mut sent = 0;
    for n in 0..120u64 {
        // Any size up to the bus width, any start address, a length that stays inside one
        // 4 KiB page as AXI requires.
        let size = rng.below(5);
        let step = 1u64 << size;
        let page = base + (n % (len as u64 / 4096)) * 4096;
        let off = rng.below(4096);
        let room = (4096 - (off & !(step - 1))) / step;
        let beats = 1 + rng.below(room.min(if n % 4 == 0 { 256 } else { 20 }));
        let addr = page + off;
        let data: Vec<(Vec<u8>, u64)> = (0..beats)
            .map(|_| {
                (
                    rng.bytes(BEAT),
                    if rng.chance(70) {
                        0xffff
                    } else {
                        rng.below(1 << 16)
                    },
                )
            })
            .collect();
        apply_write(&mut expect, base, addr, size, BEAT, &data);
        a.write(n % 16, addr, size, data);
        sent += 1;
    }
    run(
        &mut m,
        &mut [&mut a],
        2_000_000,
        "all write responses",
        |_, ms| ms[0].b.len() == sent,
    )
    .expect("writes");
    let mut got = vec![0u8; len];
    m.ddr_read(base, &mut got).expect("backdoor");
    if let Some(i) = (0..len).find(|&i| got[i] != expect[i]) {
        panic!(
            "byte at {:#x}: memory {:#04x}, expected {:#04x}",
            base + i as u64,
            got[i],
            expect[i]
        );
    }
    // Write responses carry the IDs of their bursts, in order (one source, one path).
    let ids: Vec<u64> = a.b.iter().map(|b| b.id).collect();
    let want: Vec<u64> = (0..sent as u64).map(|n| n % 16).collect();
    assert_eq!(ids, want);
}

#[test]
fn unaligned_narrow_reads_return_the_right_lanes() {
    let (mut m, clk, _) = mm_path().expect("model");
    let mut a = AxiMaster::attach(&mut m, clk, "s_axi", true, true, 3).expect("attach");
    let mut rng = Rng::new(0xbee);
    let base = 0x20_0000u64;
    let mem = rng.bytes(0x1_0000);
    m.ddr_write(base, &mem).expect("preload");
    let mut want = Vec::new();
    for n in 0..40u64 {
        let size = rng.below(5);
        let step = 1u64 << size;
        let off = rng.below(0x1_0000 - 4096);
        let room = (4096 - ((base + off) % 4096 & !(step - 1))) / step;
        let beats = 1 + rng.below(room.min(24));
        let addr = base + off;
        a.read(n % 16, addr, size, beats as usize);
        want.push((n % 16, addr, size, beats));
    }
    let total: u64 = want.iter().map(|w| w.3).sum();
    run(
        &mut m,
        &mut [&mut a],
        1_000_000,
        "all read beats",
        |_, ms| ms[0].r.len() as u64 == total,
    )
    .expect("reads");
    let mut beats = a.r.iter();
    for (id, addr, size, n) in want {
        let step = 1u64 << size;
        for k in 0..n {
            let r = beats.next().expect("beat");
            assert_eq!(
                (r.id, r.last, r.resp),
                (id, k + 1 == n, 0),
                "burst at {addr:#x}"
            );
            let beat_addr = if k == 0 {
                addr
            } else {
                (addr & !(step - 1)) + k * step
            };
            let lo = beat_addr % BEAT as u64;
            let hi = (beat_addr & !(step - 1)) % BEAT as u64 + step;
            for lane in lo..hi {
                let a = (beat_addr & !(BEAT as u64 - 1)) + lane;
                assert_eq!(
                    r.data[lane as usize],
                    mem[(a - base) as usize],
                    "burst at {addr:#x} size {size}, beat {k}, lane {lane}"
                );
            }
        }
    }
}
