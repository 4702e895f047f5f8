//! The card's registers read through its simulated AXI4-Lite bus: the pipeline's first demo.
//!
//! Builds `card_core`, resets it, writes the scratch register and reads every register back
//! with proper valid/ready handshakes, then prints what the bus returned and the simulated
//! time it took.

use card_sim::{ClockId, Model, Port, Result, SimError, Top};

const REGISTERS: [(&str, u64); 3] = [("ID", 0x000), ("VERSION", 0x004), ("SCRATCH", 0x008)];
/// Cycles any single handshake may take before the demo reports a hang.
const LIMIT: u64 = 64;

fn main() {
    if let Err(e) = run() {
        eprintln!("demo failed: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let mut m = Model::builder(Top::CardCore).name("demo").build()?;
    let clk = m.add_clock("axi_aclk", 250_000_000)?;
    let rstn = m.input("axi_aresetn")?;
    m.set_bool(rstn, false);
    m.ticks(clk, 8)?;
    m.set_bool(rstn, true);
    m.eval()?;

    let t0 = m.time_ps();
    handshake(
        &mut m,
        clk,
        &[
            ("s_axil_awaddr", 0x008),
            ("s_axil_wdata", 0xc0ffee),
            ("s_axil_wstrb", 0xf),
        ],
        &["s_axil_awvalid", "s_axil_wvalid"],
        "s_axil_bvalid",
        "s_axil_bready",
    )?;
    println!("wrote SCRATCH = 0x00c0ffee");
    for (name, addr) in REGISTERS {
        let (data, _) = handshake(
            &mut m,
            clk,
            &[("s_axil_araddr", addr)],
            &["s_axil_arvalid"],
            "s_axil_rvalid",
            "s_axil_rready",
        )?;
        let text: String = data
            .to_be_bytes()
            .iter()
            .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
            .collect();
        println!("{name:<8} @ 0x{addr:03x} = 0x{data:08x}  \"{text}\"");
    }
    let cycles = (m.time_ps() - t0) / 4_000;
    println!(
        "{} register accesses in {cycles} cycles of axi_aclk ({} ns simulated)",
        REGISTERS.len() + 1,
        (m.time_ps() - t0) / 1_000
    );
    Ok(())
}

/// Drives `fields`, raises the `valids` until each handshakes, then takes one response on
/// `resp_valid`/`resp_ready`; returns the read data (zero for a write) and the cycles taken.
fn handshake(
    m: &mut Model,
    clk: ClockId,
    fields: &[(&str, u64)],
    valids: &[&str],
    resp_valid: &str,
    resp_ready: &str,
) -> Result<(u32, u64)> {
    for (name, value) in fields {
        let p = m.input(name)?;
        m.set(p, *value);
    }
    let mut pending: Vec<(Port, Port)> = Vec::new();
    for v in valids {
        let valid = m.input(v)?;
        let ready = m.port(&v.replace("valid", "ready"))?;
        m.set_bool(valid, true);
        pending.push((valid, ready));
    }
    let (rv, rr, rdata) = (
        m.port(resp_valid)?,
        m.input(resp_ready)?,
        m.port("s_axil_rdata")?,
    );
    m.set_bool(rr, true);
    m.eval()?;
    for cycle in 1..=LIMIT {
        let fired: Vec<Port> = pending
            .iter()
            .filter(|(v, r)| m.get_bool(*v) && m.get_bool(*r))
            .map(|(v, _)| *v)
            .collect();
        let done = m.get_bool(rv);
        let data = m.get(rdata) as u32;
        m.tick(clk)?;
        for v in fired {
            m.set_bool(v, false);
        }
        if done {
            m.set_bool(rr, false);
            m.eval()?;
            return Ok((
                if resp_valid == "s_axil_rvalid" {
                    data
                } else {
                    0
                },
                cycle,
            ));
        }
        m.eval()?;
    }
    Err(SimError::Timeout {
        clock: "axi_aclk".into(),
        cycles: LIMIT,
        what: resp_valid.to_string(),
    })
}
