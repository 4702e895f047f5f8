//! The AXI4-Lite register file of `card_core`, driven with valid/ready handshakes.

use card_sim::{ClockId, Model, Port, Result, Top};
use rstest::rstest;

// The map's table is the source of truth: these come from it through card-regs.
const CARD_ID: u32 = card_regs::id::RESET as u32;
const CARD_VERSION: u32 = card_regs::version::RESET as u32;
const REG_ID: u64 = card_regs::ID as u64;
const REG_VERSION: u64 = card_regs::VERSION as u64;
const REG_SCRATCH: u64 = card_regs::SCRATCH as u64;

/// A minimal AXI4-Lite master: enough to prove the pipeline end to end. The full bus models
/// with monitors live in axi-bfm.
struct Lite {
    clk: ClockId,
    awaddr: Port,
    awvalid: Port,
    awready: Port,
    wdata: Port,
    wstrb: Port,
    wvalid: Port,
    wready: Port,
    bvalid: Port,
    bready: Port,
    bresp: Port,
    araddr: Port,
    arvalid: Port,
    arready: Port,
    rdata: Port,
    rvalid: Port,
    rready: Port,
    rresp: Port,
}

const LIMIT: u64 = 100;

impl Lite {
    fn attach(m: &mut Model) -> Result<Lite> {
        let clk = m.add_clock("axi_aclk", 250_000_000)?;
        let rstn = m.input("axi_aresetn")?;
        m.set_bool(rstn, false);
        m.ticks(clk, 4)?;
        m.set_bool(rstn, true);
        m.eval()?;
        m.tick(clk)?;
        Ok(Lite {
            clk,
            awaddr: m.input("s_axil_awaddr")?,
            awvalid: m.input("s_axil_awvalid")?,
            awready: m.port("s_axil_awready")?,
            wdata: m.input("s_axil_wdata")?,
            wstrb: m.input("s_axil_wstrb")?,
            wvalid: m.input("s_axil_wvalid")?,
            wready: m.port("s_axil_wready")?,
            bvalid: m.port("s_axil_bvalid")?,
            bready: m.input("s_axil_bready")?,
            bresp: m.port("s_axil_bresp")?,
            araddr: m.input("s_axil_araddr")?,
            arvalid: m.input("s_axil_arvalid")?,
            arready: m.port("s_axil_arready")?,
            rdata: m.port("s_axil_rdata")?,
            rvalid: m.port("s_axil_rvalid")?,
            rready: m.input("s_axil_rready")?,
            rresp: m.port("s_axil_rresp")?,
        })
    }

    /// Holds each VALID until its handshake at a rising edge, as AXI requires; `w_delay`
    /// presents the data phase that many cycles after the address phase.
    fn write(&self, m: &mut Model, addr: u64, data: u32, strb: u8, w_delay: u64) -> Result<u64> {
        m.set(self.awaddr, addr);
        m.set_bool(self.awvalid, true);
        m.set(self.wdata, u64::from(data));
        m.set(self.wstrb, u64::from(strb));
        m.set_bool(self.wvalid, w_delay == 0);
        m.set_bool(self.bready, true);
        m.eval()?;
        let (mut aw_done, mut w_done) = (false, false);
        for cycle in 0..LIMIT {
            if cycle == w_delay && !w_done {
                m.set_bool(self.wvalid, true);
                m.eval()?;
            }
            // Sample the handshakes that the coming edge completes.
            let aw_fire = m.get_bool(self.awvalid) && m.get_bool(self.awready);
            let w_fire = m.get_bool(self.wvalid) && m.get_bool(self.wready);
            let b_fire = m.get_bool(self.bvalid) && m.get_bool(self.bready);
            let bresp = m.get(self.bresp);
            m.tick(self.clk)?;
            aw_done |= aw_fire;
            w_done |= w_fire;
            if aw_fire {
                m.set_bool(self.awvalid, false);
            }
            if w_fire {
                m.set_bool(self.wvalid, false);
            }
            if b_fire {
                assert!(
                    aw_done && w_done,
                    "response before both address and data phases"
                );
                assert_eq!(bresp, 0, "write response must be OKAY");
                m.set_bool(self.bready, false);
                m.eval()?;
                return Ok(cycle + 1);
            }
            m.eval()?;
        }
        panic!("write to {addr:#x} not answered in {LIMIT} cycles");
    }

    fn read(&self, m: &mut Model, addr: u64) -> Result<u32> {
        m.set(self.araddr, addr);
        m.set_bool(self.arvalid, true);
        m.set_bool(self.rready, true);
        m.eval()?;
        for _ in 0..LIMIT {
            let ar_fire = m.get_bool(self.arvalid) && m.get_bool(self.arready);
            let r_fire = m.get_bool(self.rvalid) && m.get_bool(self.rready);
            let (data, resp) = (m.get(self.rdata) as u32, m.get(self.rresp));
            m.tick(self.clk)?;
            if ar_fire {
                m.set_bool(self.arvalid, false);
            }
            if r_fire {
                assert_eq!(resp, 0, "read response must be OKAY");
                m.set_bool(self.rready, false);
                m.eval()?;
                return Ok(data);
            }
            m.eval()?;
        }
        panic!("read of {addr:#x} not answered in {LIMIT} cycles");
    }
}

fn card() -> Result<(Model, Lite)> {
    let mut m = Model::new(Top::CardCore)?;
    let lite = Lite::attach(&mut m)?;
    Ok((m, lite))
}

#[test]
fn identifier_and_version_read_back() -> Result<()> {
    let (mut m, lite) = card()?;
    assert_eq!(lite.read(&mut m, REG_ID)?, CARD_ID);
    assert_eq!(lite.read(&mut m, REG_VERSION)?, CARD_VERSION);
    assert_eq!(lite.read(&mut m, 0xffc)?, 0, "unmapped words read as zero");
    Ok(())
}

#[rstest]
#[case::data_with_address(0)]
#[case::data_after_address(3)]
fn scratch_is_read_write(#[case] w_delay: u64) -> Result<()> {
    let (mut m, lite) = card()?;
    assert_eq!(lite.read(&mut m, REG_SCRATCH)?, 0, "scratch resets to zero");
    lite.write(&mut m, REG_SCRATCH, 0xdead_beef, 0xf, w_delay)?;
    assert_eq!(lite.read(&mut m, REG_SCRATCH)?, 0xdead_beef);
    // Byte strobes write only the lanes they select.
    lite.write(&mut m, REG_SCRATCH, 0x1122_3344, 0b0101, w_delay)?;
    assert_eq!(lite.read(&mut m, REG_SCRATCH)?, 0xde22_be44);
    // Read-only registers ignore writes.
    lite.write(&mut m, REG_ID, 0, 0xf, w_delay)?;
    assert_eq!(lite.read(&mut m, REG_ID)?, CARD_ID);
    Ok(())
}

#[test]
fn reset_clears_scratch() -> Result<()> {
    let (mut m, lite) = card()?;
    lite.write(&mut m, REG_SCRATCH, 0x5a5a_5a5a, 0xf, 0)?;
    let rstn = m.input("axi_aresetn")?;
    m.set_bool(rstn, false);
    m.ticks(lite.clk, 2)?;
    m.set_bool(rstn, true);
    m.eval()?;
    assert_eq!(lite.read(&mut m, REG_SCRATCH)?, 0);
    Ok(())
}

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
