//! Port look-up errors of a model. The card's register file itself is driven by the AXI4-Lite
//! bus model in axi-bfm (crates/axi-bfm/tests/axil_regs.rs).

use card_sim::{Model, Result, Top};

#[test]
fn unknown_ports_and_driving_outputs_are_errors() -> Result<()> {
    let m = Model::new(Top::CardCore)?;
    let err = m.port("s_axil_nonsense").expect_err("no such port");
    assert!(
        err.to_string().contains("s_axil_awvalid"),
        "lists the real ports: {err}"
    );
    let err = m.input("s_axil_rdata").expect_err("an output");
    assert!(err.to_string().contains("output"), "{err}");
    Ok(())
}
