//! The card's registers read through its simulated AXI4-Lite bus: the pipeline's first demo.
//!
//! Builds `card_core`, resets it, writes the scratch register and reads every register of the
//! map back through the AXI4-Lite bus model (with its protocol monitor on), then prints what the
//! bus returned and the simulated time it took.

use axi_bfm::{AxilMaster, BfmError, Env, ResetPolarity};
use card_sim::{Model, Top};

fn main() {
    if let Err(e) = run() {
        eprintln!("demo failed: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), BfmError> {
    let mut env = Env::new(Model::builder(Top::CardCore).name("demo").build()?);
    let clk = env.add_clock("axi_aclk", 250_000_000)?;
    env.add_reset(clk, "axi_aresetn", ResetPolarity::ActiveLow)?;
    let bar = AxilMaster::attach(&mut env, "s_axil", clk)?;
    env.reset(clk, 8)?;

    let (t0, c0) = (env.time_ps(), env.cycles(clk));
    bar.write(&mut env, u64::from(card_regs::SCRATCH), 0x00c0_ffee)?;
    println!("wrote SCRATCH = 0x00c0ffee");
    for reg in card_regs::REGISTERS {
        let data = bar.read(&mut env, u64::from(reg.offset))? as u32;
        let text: String = data
            .to_be_bytes()
            .iter()
            .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
            .collect();
        println!(
            "{:<16} @ 0x{:03x} = 0x{data:08x}  \"{text}\"",
            reg.name, reg.offset
        );
    }
    println!(
        "{} register accesses in {} cycles of axi_aclk ({} ns simulated)",
        card_regs::REGISTERS.len() + 1,
        env.cycles(clk) - c0,
        (env.time_ps() - t0) / 1_000
    );
    Ok(())
}
