//! The AXI4 master and slave memory through the registered AXI4 pass-through, with the
//! protocol monitors on both sides.

mod common;

use axi_bfm::burst::{FIXED, WRAP};
use axi_bfm::pause::random_pause_strategy;
use axi_bfm::{AxiMasterConfig, AxiSlaveConfig, BfmError, Burst, PauseSpec, Resp};
use common::{axi, pattern};
use proptest::prelude::*;
use rstest::rstest;

#[rstest]
#[case::aligned_one_beat(0x1000, 16)]
#[case::unaligned_short(0x1003, 5)]
#[case::unaligned_multi_beat(0x2007, 61)]
#[case::crosses_4k(0x2ff9, 40)]
#[case::longer_than_a_burst(0x10_0000, 16 * 256 + 48)]
#[case::high_address(0xffff_ffff_0000_0ff0, 64)]
fn write_then_read_back(#[case] addr: u64, #[case] len: usize) {
    let (mut env, clk, m, s) = axi();
    env.reset(clk, 4).expect("reset");
    common::write_then_read_back(&mut env, &m, &s, addr, len, 3);
}

#[test]
fn splits_at_the_maximum_burst_length_and_still_completes() {
    let (mut env, clk, m, s) = axi();
    m.set_config(AxiMasterConfig {
        max_burst_len: 3,
        ..AxiMasterConfig::default()
    });
    env.reset(clk, 4).expect("reset");
    let data = pattern(200, 9);
    m.write(&mut env, 0x40_0005, &data).expect("write");
    assert_eq!(s.mem_read(0x40_0005, 200), data);
    assert_eq!(m.read(&mut env, 0x40_0005, 200).expect("read"), data);
}

#[test]
fn random_backpressure_on_every_channel_keeps_data_intact() {
    let (mut env, clk, m, s) = axi();
    env.set_pauses(&PauseSpec::random(0x5eed, 40));
    env.reset(clk, 4).expect("reset");
    let data = pattern(3000, 1);
    m.write(&mut env, 0x3_0ff1, &data).expect("write");
    assert_eq!(s.mem_read(0x3_0ff1, 3000), data);
    assert_eq!(m.read(&mut env, 0x3_0ff1, 3000).expect("read"), data);
    assert!(env.violations().is_empty());
}

#[test]
fn several_transactions_in_flight_with_ids() {
    let (mut env, clk, m, s) = axi();
    s.set_config(AxiSlaveConfig {
        read_latency: 12,
        write_latency: 12,
        ..AxiSlaveConfig::default()
    });
    env.reset(clk, 4).expect("reset");
    let writes: Vec<_> = (0..6u32)
        .map(|i| {
            let d = pattern(100 + i as usize * 7, i as u8);
            let t = m
                .start_write(i % 4, 0x8000 + u64::from(i) * 0x200, &d)
                .expect("queued");
            (t, d, i)
        })
        .collect();
    m.wait_idle(&mut env).expect("all writes complete");
    for (t, d, i) in &writes {
        assert_eq!(m.take_write(*t).expect("done"), Resp::Okay);
        assert_eq!(s.mem_read(0x8000 + u64::from(*i) * 0x200, d.len()), *d);
    }
    let reads: Vec<_> = writes
        .iter()
        .map(|(_, d, i)| {
            (
                m.start_read(3 - (i % 4), 0x8000 + u64::from(*i) * 0x200, d.len())
                    .expect("queued"),
                d,
            )
        })
        .collect();
    m.wait_idle(&mut env).expect("all reads complete");
    for (t, d) in reads {
        let (got, resp) = m.take_read(t).expect("done");
        assert_eq!(resp, Resp::Okay);
        assert_eq!(&got, d);
    }
    assert!(
        matches!(m.take_write(writes[0].0), Err(BfmError::NoSuchTxn { .. })),
        "taken once"
    );
}

#[test]
fn outstanding_limit_bounds_throughput_under_latency() {
    // With a long read latency, one read in flight at a time costs a round trip per burst;
    // eight in flight overlap them. The limit must be visible in the cycle count.
    let cycles = |limit: usize| {
        let (mut env, clk, m, s) = axi();
        m.set_config(AxiMasterConfig {
            max_burst_len: 4,
            max_outstanding_reads: limit,
            ..AxiMasterConfig::default()
        });
        s.set_config(AxiSlaveConfig {
            read_latency: 40,
            ..AxiSlaveConfig::default()
        });
        env.reset(clk, 4).expect("reset");
        let start = env.cycles(clk);
        m.read(&mut env, 0, 16 * 4 * 8).expect("read");
        env.cycles(clk) - start
    };
    let one = cycles(1);
    let eight = cycles(8);
    assert!(
        one > 8 * 40,
        "serial reads pay the latency per burst: {one}"
    );
    assert!(eight * 3 < one, "eight in flight overlap: {eight} vs {one}");
}

#[test]
fn fixed_wrap_narrow_and_exclusive_bursts() {
    let (mut env, clk, m, s) = axi();
    env.reset(clk, 4).expect("reset");
    s.mem_write(0x1000, &pattern(64, 5));
    // WRAP: four 16-byte beats from 0x1030 read 0x1030, 0x1000, 0x1010, 0x1020.
    let wrap = Burst {
        burst: WRAP,
        ..Burst::incr(1, 0x1030, 4, 4)
    };
    let t = m.start_read_burst(wrap).expect("queued");
    m.wait(&mut env, t).expect("done");
    let (got, _) = m.take_read(t).expect("data");
    let mem = pattern(64, 5);
    let want: Vec<u8> = [&mem[48..64], &mem[0..48]].concat();
    assert_eq!(got, want);
    // Narrow INCR: 2-byte beats from an odd address write only their lanes.
    let narrow = Burst::incr(2, 0x2001, 1, 4);
    let t = m
        .start_write_burst(narrow, &[1, 2, 3, 4, 5, 6, 7])
        .expect("queued");
    m.wait(&mut env, t).expect("done");
    assert_eq!(s.mem_read(0x2000, 9), [0, 1, 2, 3, 4, 5, 6, 7, 0]);
    // FIXED: every beat lands on the same address; the last one stays.
    let fixed = Burst {
        burst: FIXED,
        ..Burst::incr(0, 0x3004, 2, 3)
    };
    let t = m
        .start_write_burst(fixed, &[1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
        .expect("queued");
    m.wait(&mut env, t).expect("done");
    assert_eq!(s.mem_read(0x3004, 4), [3, 3, 3, 3]);
    // Exclusive read then write with the same ID: EXOKAY, and the write lands.
    let ex = Burst {
        lock: true,
        ..Burst::incr(3, 0x4000, 2, 1)
    };
    let t = m.start_read_burst(ex).expect("queued");
    m.wait(&mut env, t).expect("done");
    assert_eq!(m.take_read(t).expect("data").1, Resp::ExOkay);
    let t = m.start_write_burst(ex, &[9, 9, 9, 9]).expect("queued");
    m.wait(&mut env, t).expect("done");
    assert_eq!(m.take_write(t).expect("resp"), Resp::ExOkay);
    assert_eq!(s.mem_read(0x4000, 4), [9, 9, 9, 9]);
    // Without a reservation the exclusive write fails with OKAY and changes nothing.
    let t = m.start_write_burst(ex, &[7, 7, 7, 7]).expect("queued");
    m.wait(&mut env, t).expect("done");
    assert_eq!(m.take_write(t).expect("resp"), Resp::Okay);
    assert_eq!(s.mem_read(0x4000, 4), [9, 9, 9, 9]);
}

#[test]
fn bad_requests_are_typed_errors() {
    let (_env, _clk, m, _s) = axi();
    assert!(matches!(
        m.start_write(0, 0, &[]),
        Err(BfmError::BadRequest { .. })
    ));
    assert!(matches!(
        m.start_read(0, u64::MAX, 2),
        Err(BfmError::BadRequest { .. })
    ));
    let e = m.start_write(16, 0, &[1]).expect_err("4-bit IDs");
    assert!(e.to_string().contains("ID 16"), "{e}");
}

#[test]
fn a_slave_that_never_answers_is_a_timeout_not_a_hang() {
    let (mut env, clk, m, s) = axi();
    // Turn the monitors' latency bounds off, so the master's own cycle limit is what fires.
    for mon in [m.monitor(), s.monitor()].into_iter().flatten() {
        mon.set_config(axi_bfm::AxiMonitorConfig {
            latency_bound: 0,
            ..mon.config()
        });
    }
    m.set_config(AxiMasterConfig {
        timeout_cycles: 300,
        ..AxiMasterConfig::default()
    });
    s.set_faults(axi_bfm::SlaveFaults {
        hang: true,
        ..Default::default()
    });
    env.reset(clk, 4).expect("reset");
    match m.write(&mut env, 0, &[1, 2, 3]) {
        Err(BfmError::Timeout { cycles, .. }) => assert_eq!(cycles, 300),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[test]
fn monitors_can_be_left_off() {
    let (mut env, clk) = common::env_of(card_sim::Top::AxiPassthrough);
    env.set_monitors(false);
    let m = axi_bfm::AxiMaster::attach(&mut env, "s_axi", clk).expect("master");
    let s = axi_bfm::AxiSlave::attach(&mut env, "m_axi", clk).expect("slave");
    assert!(m.monitor().is_none() && s.monitor().is_none());
    env.reset(clk, 2).expect("reset");
    m.write(&mut env, 0x10, &[5; 33]).expect("write");
    assert_eq!(s.mem_read(0x10, 33), [5; 33]);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Any length and alignment, any pauses: what is written reads back, the memory around
    /// it is untouched, and neither monitor objects.
    #[test]
    fn any_length_alignment_and_pauses(
        addr in 0u64..0x3000,
        len in 1usize..700,
        burst_len in 1u32..=256,
        pauses in random_pause_strategy(60),
        latency in 0u64..6,
    ) {
        let (mut env, clk, m, s) = axi();
        m.set_config(AxiMasterConfig { max_burst_len: burst_len, ..AxiMasterConfig::default() });
        s.set_config(AxiSlaveConfig { read_latency: latency, write_latency: latency, ..AxiSlaveConfig::default() });
        env.set_pauses(&pauses);
        env.reset(clk, 3).expect("reset");
        let base = 0x1_0000 + addr;
        let data = pattern(len, addr as u8);
        m.write(&mut env, base, &data).expect("write");
        prop_assert_eq!(s.mem_read(base - 1, len + 2), [&[0][..], &data, &[0]].concat());
        prop_assert_eq!(m.read(&mut env, base, len).expect("read"), data);
    }
}
