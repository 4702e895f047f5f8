//! The AXI4-Lite register file of `card_core` (the user BAR), driven by the AXI4-Lite master
//! with its protocol monitor on and random backpressure.

use axi_bfm::{AxilMaster, BfmError, Channel, Env, PauseSpec, ResetPolarity};
use card_sim::{ClockId, Model, Top};
use rstest::rstest;

// The map's table (hdl/regs.toml) is the source of truth: these come from it through card-regs.
const CARD_ID: u64 = card_regs::id::RESET;
const CARD_VERSION: u64 = card_regs::version::RESET;
const REG_ID: u64 = card_regs::ID as u64;
const REG_VERSION: u64 = card_regs::VERSION as u64;
const REG_SCRATCH: u64 = card_regs::SCRATCH as u64;

/// The first word of the 4 KiB register window that the map leaves unused.
fn unmapped_offset() -> u64 {
    (0..4096u32)
        .step_by(4)
        .find(|off| card_regs::REGISTERS.iter().all(|r| r.offset != *off))
        .map(u64::from)
        .expect("the map leaves a word free")
}

fn card(pauses: &PauseSpec) -> (Env, ClockId, AxilMaster) {
    let mut env = Env::new(Model::new(Top::CardCore).expect("model"));
    let clk = env.add_clock("axi_aclk", 250_000_000).expect("clock");
    env.add_reset(clk, "axi_aresetn", ResetPolarity::ActiveLow)
        .expect("reset");
    let m = AxilMaster::attach(&mut env, "s_axil", clk).expect("attach");
    assert!(
        m.monitor().is_some(),
        "the protocol monitor is on by default"
    );
    m.set_pauses(pauses);
    env.reset(clk, 4).expect("reset");
    (env, clk, m)
}

#[rstest]
#[case::full_speed(PauseSpec::Never)]
#[case::random_backpressure(PauseSpec::random(0xca4d, 50))]
fn identifier_and_version_read_back(#[case] pauses: PauseSpec) {
    let (mut env, _clk, m) = card(&pauses);
    assert_eq!(m.read(&mut env, REG_ID).expect("read"), CARD_ID);
    assert_eq!(m.read(&mut env, REG_VERSION).expect("read"), CARD_VERSION);
    assert_eq!(
        m.read(&mut env, unmapped_offset()).expect("read"),
        0,
        "unmapped words read as zero"
    );
}

#[rstest]
#[case::data_with_address(PauseSpec::Never, PauseSpec::Never)]
#[case::data_after_address(PauseSpec::Never, PauseSpec::pattern("1110"))]
#[case::random_backpressure(PauseSpec::random(7, 60), PauseSpec::random(8, 60))]
fn scratch_is_read_write(#[case] pauses: PauseSpec, #[case] w_pauses: PauseSpec) {
    let (mut env, _clk, m) = card(&pauses);
    m.set_channel_pauses(Channel::W, &w_pauses);
    assert_eq!(
        m.read(&mut env, REG_SCRATCH).expect("read"),
        0,
        "scratch resets to zero"
    );
    m.write(&mut env, REG_SCRATCH, 0xdead_beef).expect("write");
    assert_eq!(m.read(&mut env, REG_SCRATCH).expect("read"), 0xdead_beef);
    // Byte strobes write only the lanes they select.
    m.write_strb(&mut env, REG_SCRATCH, 0x1122_3344, 0b0101)
        .expect("write");
    assert_eq!(m.read(&mut env, REG_SCRATCH).expect("read"), 0xde22_be44);
    // Read-only registers ignore writes.
    m.write(&mut env, REG_ID, 0).expect("write");
    assert_eq!(m.read(&mut env, REG_ID).expect("read"), CARD_ID);
    assert!(env.violations().is_empty());
}

#[test]
fn reset_clears_scratch() {
    let (mut env, clk, m) = card(&PauseSpec::random(3, 30));
    m.write(&mut env, REG_SCRATCH, 0x5a5a_5a5a).expect("write");
    env.reset(clk, 2).expect("reset");
    assert_eq!(m.read(&mut env, REG_SCRATCH).expect("read"), 0);
}

#[test]
fn attaching_to_a_missing_bus_lists_the_near_matches() {
    let mut env = Env::new(Model::new(Top::CardCore).expect("model"));
    let clk = env.add_clock("axi_aclk", 250_000_000).expect("clock");
    let err = AxilMaster::attach(&mut env, "m_axil", clk).expect_err("no such bus");
    assert!(matches!(err, BfmError::Bind { .. }), "{err}");
    // The real bus's signal of that name is among the near matches, with the way to map it.
    assert!(
        err.to_string().contains("s_axil_wdata"),
        "lists the near matches: {err}"
    );
    assert!(err.to_string().contains("map_signal"), "{err}");
}
