//! The stream engines (PG195's AXI4-Stream H2C and C2H channels): packets, result records
//! with end of packet, and how a C2H stream engine stops.

mod common;

use common::*;
use xdma_ip::HostMemory;
use xdma_regmap::{self as map, desc, engine_regs as ereg, status};

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
