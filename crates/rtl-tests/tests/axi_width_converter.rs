//! The 128 -> 512 write width conversion of the memory-mapped path (`axi_mm_path_tb`): every
//! strobe pattern, unaligned starts, narrow transfers and burst lengths, written through s_axi
//! by the AXI4 master bus model (monitor on) and checked in the DDR3 model's memory through
//! the backdoor; and narrow, unaligned reads.

use axi_bfm::{AxiMaster, AxiMasterConfig, PauseSpec, Result};
use card_sim::DdrBackdoor;
use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;
use rtl_tests::{apply_write, incr, mm_path, random_bytes, record_axi, strobed_lanes};

/// Bytes per s_axi beat.
const BEAT: usize = 16;
/// AxSIZE of a full beat.
const FULL: u8 = 4;

fn master(env: &mut axi_bfm::Env, clk: card_sim::ClockId) -> Result<AxiMaster> {
    AxiMaster::attach_with(
        env,
        "s_axi",
        clk,
        AxiMasterConfig {
            max_outstanding_writes: 64,
            max_outstanding_reads: 64,
            timeout_cycles: 2_000_000,
            ..AxiMasterConfig::default()
        },
    )
}

#[test]
fn every_strobe_pattern_writes_only_its_bytes() -> Result<()> {
    let (mut env, clk, _) = mm_path()?;
    let a = master(&mut env, clk)?;
    let log = record_axi(&mut env, "s_axi", clk)?;
    let mut rng = XorShiftRng::seed_from_u64(0x5eed);
    // One beat for each of the 2^16 patterns, 16 bytes apart, over memory that holds a known
    // random pattern, in 256-beat bursts.
    let patterns = 1usize << BEAT;
    let base = 0x0010_0000u64;
    let len = patterns * BEAT;
    let pre = random_bytes(&mut rng, len);
    env.model_mut().ddr_write(base, &pre)?;
    let mut expect = pre.clone();
    let bursts = patterns / 256;
    for b in 0..bursts {
        let beats: Vec<(Vec<u8>, u128)> = (0..256)
            .map(|i| (random_bytes(&mut rng, BEAT), (b * 256 + i) as u128))
            .collect();
        let addr = base + (b * 256 * BEAT) as u64;
        apply_write(&mut expect, base, addr, FULL, BEAT, &beats);
        let burst = incr((b % 16) as u32, addr, FULL, 256);
        let (data, keep) = strobed_lanes(&burst, BEAT, &beats);
        a.start_write_burst_strobed(burst, &data, &keep)?;
    }
    a.wait_idle(&mut env)?;
    assert_eq!(log.borrow().b.len(), bursts);
    assert!(log.borrow().b.iter().all(|b| b.resp == 0), "all OKAY");
    let mut got = vec![0u8; len];
    env.model().ddr_read(base, &mut got)?;
    if let Some(i) = (0..len).find(|&i| got[i] != expect[i]) {
        panic!(
            "byte {i} (pattern {:#06x}, lane {}): memory {:#04x}, expected {:#04x}",
            i / BEAT,
            i % BEAT,
            got[i],
            expect[i]
        );
    }
    Ok(())
}

/// Seed of the random pauses in the unaligned write test.
const NARROW_PAUSE_SEED: u64 = 0xa11;

#[test]
fn unaligned_narrow_and_odd_length_bursts() -> Result<()> {
    let (mut env, clk, _) = mm_path()?;
    let a = master(&mut env, clk)?;
    a.set_pauses(&PauseSpec::random(NARROW_PAUSE_SEED, 20));
    let log = record_axi(&mut env, "s_axi", clk)?;
    let mut rng = XorShiftRng::seed_from_u64(0xa11);
    let base = 0x4000_0000u64 - 0x10_0000;
    let len = 0x4_0000usize;
    let pre = random_bytes(&mut rng, len);
    env.model_mut().ddr_write(base, &pre)?;
    let mut expect = pre.clone();
    let mut sent = 0;
    for n in 0..120u64 {
        // Any size up to the bus width, any start address, a length that stays inside one
        // 4 KiB page as AXI requires.
        let size = rng.random_range(0..5u8);
        let step = 1u64 << size;
        let page = base + (n % (len as u64 / 4096)) * 4096;
        let off = rng.random_range(0..4096u64);
        let room = (4096 - (off & !(step - 1))) / step;
        let beats = 1 + rng.random_range(0..room.min(if n % 4 == 0 { 256 } else { 20 }));
        let addr = page + off;
        let data: Vec<(Vec<u8>, u128)> = (0..beats)
            .map(|_| {
                (
                    random_bytes(&mut rng, BEAT),
                    if rng.random_range(0..100) < 70 {
                        0xffff
                    } else {
                        u128::from(rng.random::<u16>())
                    },
                )
            })
            .collect();
        apply_write(&mut expect, base, addr, size, BEAT, &data);
        let burst = incr((n % 16) as u32, addr, size, beats as usize);
        let (bytes, keep) = strobed_lanes(&burst, BEAT, &data);
        a.start_write_burst_strobed(burst, &bytes, &keep)?;
        sent += 1;
    }
    a.wait_idle(&mut env)?;
    let mut got = vec![0u8; len];
    env.model().ddr_read(base, &mut got)?;
    if let Some(i) = (0..len).find(|&i| got[i] != expect[i]) {
        panic!(
            "byte at {:#x}: memory {:#04x}, expected {:#04x}",
            base + i as u64,
            got[i],
            expect[i]
        );
    }
    // Write responses carry the IDs of their bursts, in order (one source, one path).
    let ids: Vec<u64> = log.borrow().b.iter().map(|b| b.id).collect();
    let want: Vec<u64> = (0..sent as u64).map(|n| n % 16).collect();
    assert_eq!(ids, want);
    assert!(env.violations().is_empty(), "{:?}", env.violations());
    Ok(())
}

#[test]
fn unaligned_narrow_reads_return_the_right_lanes() -> Result<()> {
    let (mut env, clk, _) = mm_path()?;
    let a = master(&mut env, clk)?;
    let log = record_axi(&mut env, "s_axi", clk)?;
    let mut rng = XorShiftRng::seed_from_u64(0xbee);
    let base = 0x20_0000u64;
    let mem = random_bytes(&mut rng, 0x1_0000);
    env.model_mut().ddr_write(base, &mem)?;
    let mut want = Vec::new();
    for n in 0..40u64 {
        let size = rng.random_range(0..5u8);
        let step = 1u64 << size;
        let off = rng.random_range(0..0x1_0000u64 - 4096);
        let room = (4096 - (((base + off) % 4096) & !(step - 1))) / step;
        let beats = 1 + rng.random_range(0..room.min(24));
        let addr = base + off;
        let t = a.start_read_burst(incr((n % 16) as u32, addr, size, beats as usize))?;
        want.push((t, n % 16, addr, size, beats));
    }
    a.wait_idle(&mut env)?;
    let log = log.borrow();
    let mut rbeats = log.r.iter();
    for (t, id, addr, size, n) in want {
        let (data, resp) = a.take_read(t)?;
        assert!(resp.is_ok());
        let mut got = data.iter();
        for k in 0..n {
            let r = rbeats.next().expect("beat");
            assert_eq!(
                (r.id, r.last, r.resp),
                (id, k + 1 == n, 0),
                "burst at {addr:#x}"
            );
            let burst = incr(0, addr, size, n as usize);
            let (lo, hi) = burst.beat_lanes(k as u32, BEAT);
            let line = burst.beat_line(k as u32, BEAT);
            for lane in lo..hi {
                let at = line + lane as u64;
                assert_eq!(
                    got.next().copied(),
                    Some(mem[(at - base) as usize]),
                    "burst at {addr:#x} size {size}, beat {k}, lane {lane}"
                );
            }
        }
        assert!(got.next().is_none(), "no bytes beyond the lanes used");
    }
    Ok(())
}
