//! Environments shared by the tests: each RTL pass-through with a bus model on either side.

#![allow(dead_code)]

pub mod master;

use axi_bfm::{
    AxiMaster, AxiSlave, AxilMaster, AxilSlave, AxisSink, AxisSource, BfmError, Env, MasterFaults,
    ResetPolarity, Rule, SlaveFaults,
};
use card_sim::{ClockId, Model, Top};

/// The reference board's AXI clock.
pub const AXI_HZ: u64 = 250_000_000;

pub fn env_of(top: Top) -> (Env, ClockId) {
    let mut env = Env::new(Model::new(top).expect("model builds"));
    let clk = env.add_clock("clk", AXI_HZ).expect("clock");
    env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)
        .expect("reset");
    (env, clk)
}

/// AXI4 master on `s_axi`, slave memory on `m_axi`, through the registered pass-through.
pub fn axi() -> (Env, ClockId, AxiMaster, AxiSlave) {
    let (mut env, clk) = env_of(Top::AxiPassthrough);
    let m = AxiMaster::attach(&mut env, "s_axi", clk).expect("master attaches");
    let s = AxiSlave::attach(&mut env, "m_axi", clk).expect("slave attaches");
    (env, clk, m, s)
}

/// [`axi`] with a master that breaks the protocol as `f` says.
pub fn axi_master_faults(f: MasterFaults) -> (Env, ClockId, AxiMaster, AxiSlave) {
    let (env, clk, m, s) = axi();
    m.set_faults(f);
    (env, clk, m, s)
}

/// [`axi`] with a slave that breaks the protocol as `f` says.
pub fn axi_slave_faults(f: SlaveFaults) -> (Env, ClockId, AxiMaster, AxiSlave) {
    let (env, clk, m, s) = axi();
    s.set_faults(f);
    (env, clk, m, s)
}

/// AXI4-Lite master on `s_axil`, slave memory on `m_axil`.
pub fn axil() -> (Env, ClockId, AxilMaster, AxilSlave) {
    let (mut env, clk) = env_of(Top::AxilPassthrough);
    let m = AxilMaster::attach(&mut env, "s_axil", clk).expect("master attaches");
    let s = AxilSlave::attach(&mut env, "m_axil", clk).expect("slave attaches");
    (env, clk, m, s)
}

/// AXI-Stream source on `s_axis`, sink on `m_axis`.
pub fn axis() -> (Env, ClockId, AxisSource, AxisSink) {
    let (mut env, clk) = env_of(Top::AxisPassthrough);
    let src = AxisSource::attach(&mut env, "s_axis", clk).expect("source attaches");
    let sink = AxisSink::attach(&mut env, "m_axis", clk).expect("sink attaches");
    (env, clk, src, sink)
}

/// Writes `len` bytes of [`pattern`]`(len, seed)` at `addr` through the master, checks
/// that the slave's memory holds them and that the bytes either side are untouched (the
/// strobes covered only the written bytes), and reads them back through the master.
pub fn write_then_read_back(
    env: &mut Env,
    m: &AxiMaster,
    s: &AxiSlave,
    addr: u64,
    len: usize,
    seed: u8,
) {
    let data = pattern(len, seed);
    m.write(env, addr, &data).expect("write completes");
    assert_eq!(
        s.mem_read(addr, len),
        data,
        "the slave memory holds what was written"
    );
    assert_eq!(s.mem_read(addr - 1, 1), [0]);
    assert_eq!(s.mem_read(addr + len as u64, 1), [0]);
    assert_eq!(m.read(env, addr, len).expect("read completes"), data);
}

/// A deterministic byte pattern that differs at every offset of a transfer.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(31)
                .wrapping_add(u32::from(seed) * 7 + (i as u32 >> 8)) as u8
        })
        .collect()
}

/// Asserts that `r` failed with a violation of `rule` on `bus`, and returns the violation's
/// text for further checks.
#[track_caller]
pub fn expect_rule<T: std::fmt::Debug>(r: Result<T, BfmError>, rule: Rule, bus: &str) -> String {
    match r {
        Err(BfmError::Violation(v)) => {
            assert_eq!(v.rule, rule, "wrong rule reported: {v}");
            assert_eq!(v.bus, bus, "reported on the wrong bus: {v}");
            assert!(
                v.time_ps > 0 && v.cycle > 0,
                "time and cycle are filled in: {v}"
            );
            v.to_string()
        }
        other => panic!("expected a `{rule}` violation on `{bus}`, got {other:?}"),
    }
}
