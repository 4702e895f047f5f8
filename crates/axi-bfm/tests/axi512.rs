//! The AXI4 master and slave memory on a 512-bit bus (the DDR port's width) through the
//! registered pass-through, with the protocol monitors on both sides: unaligned transfers,
//! transfers that cross 4 KiB, sparse strobes and seeded random pauses on every channel.

mod common;

use axi_bfm::{AxiMaster, AxiSlave, BfmError, Burst, Env, PauseSpec};
use card_sim::{ClockId, Top};
use common::{env_of, pattern};
use rstest::rstest;

/// Bytes per beat of the bus.
const BEAT: usize = 64;

fn axi512() -> (Env, ClockId, AxiMaster, AxiSlave) {
    let (mut env, clk) = env_of(Top::Axi512Passthrough);
    let m = AxiMaster::attach(&mut env, "s_axi", clk).expect("master attaches");
    let s = AxiSlave::attach(&mut env, "m_axi", clk).expect("slave attaches");
    (env, clk, m, s)
}

#[rstest]
#[case::aligned_one_beat(0x1000, BEAT)]
#[case::unaligned_inside_one_beat(0x1007, 9)]
#[case::unaligned_multi_beat(0x2031, 300)]
#[case::crosses_4k(0x2fc5, 200)]
#[case::crosses_4k_twice(0x4fff, 4096 + 2)]
#[case::longer_than_a_burst(0x10_0000, BEAT * 256 + 70)]
fn write_then_read_back(#[case] addr: u64, #[case] len: usize) {
    let (mut env, clk, m, s) = axi512();
    assert_eq!(m.bus_bytes(), BEAT, "the master sees a 512-bit bus");
    env.reset(clk, 4).expect("reset");
    common::write_then_read_back(&mut env, &m, &s, addr, len, 5);
    assert!(env.violations().is_empty(), "{:?}", env.violations());
}

/// Seed of the random pauses below; a failure replays with it.
const PAUSE_SEED: u64 = 0x512_5eed;

#[test]
fn random_pauses_on_every_channel_keep_data_intact() {
    let (mut env, clk, m, s) = axi512();
    env.set_pauses(&PauseSpec::random(PAUSE_SEED, 35));
    env.reset(clk, 4).expect("reset");
    // Several transfers in flight at once, unaligned and crossing 4 KiB pages.
    let jobs: Vec<(u64, Vec<u8>)> = (0..6u64)
        .map(|i| {
            let addr = 0x7_0f00 + i * 0x1234 + i * 13;
            (addr, pattern(500 + 97 * i as usize, i as u8))
        })
        .collect();
    let writes: Vec<_> = jobs
        .iter()
        .enumerate()
        .map(|(i, (a, d))| m.start_write(i as u32 % 4, *a, d).expect("queued"))
        .collect();
    m.wait_idle(&mut env).expect("writes complete");
    for t in writes {
        assert!(m.take_write(t).expect("result").is_ok());
    }
    for (a, d) in &jobs {
        assert_eq!(&s.mem_read(*a, d.len()), d, "memory at {a:#x}");
    }
    let reads: Vec<_> = jobs
        .iter()
        .enumerate()
        .map(|(i, (a, d))| m.start_read(3 - i as u32 % 4, *a, d.len()).expect("queued"))
        .collect();
    m.wait_idle(&mut env).expect("reads complete");
    for (t, (a, d)) in reads.into_iter().zip(&jobs) {
        let (got, resp) = m.take_read(t).expect("result");
        assert!(resp.is_ok());
        assert_eq!(&got, d, "read at {a:#x}");
    }
    assert!(env.violations().is_empty(), "{:?}", env.violations());
}

#[test]
fn sparse_strobes_write_only_their_bytes() {
    let (mut env, clk, m, s) = axi512();
    env.set_pauses(&PauseSpec::random(PAUSE_SEED + 1, 25));
    env.reset(clk, 4).expect("reset");
    let base = 0x9_0000u64;
    let before = pattern(4 * BEAT, 0x77);
    s.mem_write(base, &before);
    let data = pattern(4 * BEAT, 0x11);
    // Every third byte is written, across all 64 lanes of four beats.
    let keep: Vec<bool> = (0..data.len()).map(|i| i % 3 == 0).collect();
    let burst = Burst {
        id: 2,
        addr: base,
        len: 3,
        size: 6,
        burst: 1,
        lock: false,
    };
    let t = m
        .start_write_burst_strobed(burst, &data, &keep)
        .expect("queued");
    m.wait(&mut env, t).expect("write completes");
    assert!(m.take_write(t).expect("result").is_ok());
    let want: Vec<u8> = (0..data.len())
        .map(|i| if keep[i] { data[i] } else { before[i] })
        .collect();
    assert_eq!(s.mem_read(base, data.len()), want);
    assert!(env.violations().is_empty(), "{:?}", env.violations());
}

#[test]
fn a_strobed_burst_needs_one_byte_and_one_strobe_per_lane() {
    let (_env, _clk, m, _s) = axi512();
    let burst = Burst {
        id: 0,
        addr: 0x1010,
        len: 1,
        size: 6,
        burst: 1,
        lock: false,
    };
    // The first beat uses lanes 16..64, the second all 64: 112 lanes.
    let ok = m.start_write_burst_strobed(burst, &[0; 112], &[true; 112]);
    assert!(ok.is_ok(), "{ok:?}");
    let short = m.start_write_burst_strobed(burst, &[0; 112], &[true; 111]);
    assert!(
        matches!(short, Err(BfmError::BadRequest { .. })),
        "{short:?}"
    );
}
