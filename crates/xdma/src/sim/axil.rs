//! The XDMA IP's AXI4-Lite master towards the card's user BAR (`s_axil_*`), as the simulated
//! card drives it: VALID held until its handshake at a rising edge, handshakes sampled before
//! the edge, inputs changed after it.

use card_sim::{ClockId, Model, Port};

use crate::error::{Error, Result};

/// Cycles a register access may take before the card counts as not answering. An AXI-Lite
/// slave answers within a few cycles; a thousand leaves room for any sane wait state.
pub const LIMIT_CYCLES: u64 = 1000;

/// AXI response code OKAY.
const RESP_OKAY: u64 = 0;

/// The `s_axil_*` ports of the card, resolved once.
#[derive(Debug)]
pub struct AxiLite {
    awaddr: Port,
    awprot: Port,
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
    arprot: Port,
    arvalid: Port,
    arready: Port,
    rdata: Port,
    rvalid: Port,
    rready: Port,
    rresp: Port,
    /// Bytes of the address space (2 to the address width).
    pub bar_size: u64,
}

impl AxiLite {
    /// Resolves the ports and leaves every master output idle.
    pub fn attach(m: &mut Model) -> Result<AxiLite> {
        let awaddr = m.input("s_axil_awaddr")?;
        let bar_size = 1u64 << awaddr.width().min(63);
        let a = AxiLite {
            awaddr,
            awprot: m.input("s_axil_awprot")?,
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
            arprot: m.input("s_axil_arprot")?,
            arvalid: m.input("s_axil_arvalid")?,
            arready: m.port("s_axil_arready")?,
            rdata: m.port("s_axil_rdata")?,
            rvalid: m.port("s_axil_rvalid")?,
            rready: m.input("s_axil_rready")?,
            rresp: m.port("s_axil_rresp")?,
            bar_size,
        };
        for p in [
            a.awvalid, a.wvalid, a.bready, a.arvalid, a.rready, a.awprot, a.arprot,
        ] {
            m.set(p, 0);
        }
        m.eval()?;
        Ok(a)
    }

    /// Writes one 32-bit word with all byte strobes; address and data phases are presented
    /// together, as the XDMA bridge does, and each VALID drops after its own handshake.
    pub fn write(&self, m: &mut Model, clk: ClockId, addr: u64, data: u32) -> Result<()> {
        m.set(self.awaddr, addr);
        m.set_bool(self.awvalid, true);
        m.set(self.wdata, u64::from(data));
        m.set(self.wstrb, 0xf);
        m.set_bool(self.wvalid, true);
        m.set_bool(self.bready, true);
        m.eval()?;
        let (mut aw_done, mut w_done) = (false, false);
        for _ in 0..LIMIT_CYCLES {
            let aw_fire = m.get_bool(self.awvalid) && m.get_bool(self.awready);
            let w_fire = m.get_bool(self.wvalid) && m.get_bool(self.wready);
            let b_fire = m.get_bool(self.bvalid) && m.get_bool(self.bready);
            let bresp = m.get(self.bresp);
            m.tick(clk)?;
            aw_done |= aw_fire;
            w_done |= w_fire;
            if aw_fire {
                m.set_bool(self.awvalid, false);
            }
            if w_fire {
                m.set_bool(self.wvalid, false);
            }
            if b_fire {
                m.set_bool(self.bready, false);
                m.eval()?;
                if !(aw_done && w_done) {
                    return Err(Error::Bus(format!(
                        "AXI-Lite write to {addr:#x}: the card answered before taking both the address and the data (a protocol violation in the RTL)"
                    )));
                }
                if bresp != RESP_OKAY {
                    return Err(Error::Bus(format!(
                        "AXI-Lite write to {addr:#x}: the card answered BRESP={bresp} (2 SLVERR, 3 DECERR) instead of OKAY"
                    )));
                }
                return Ok(());
            }
            m.eval()?;
        }
        self.idle(m)?;
        Err(Error::Bus(format!(
            "AXI-Lite write to {addr:#x}: no write response within {LIMIT_CYCLES} cycles (awready/wready/bvalid never came)"
        )))
    }

    /// Reads one 32-bit word.
    pub fn read(&self, m: &mut Model, clk: ClockId, addr: u64) -> Result<u32> {
        m.set(self.araddr, addr);
        m.set_bool(self.arvalid, true);
        m.set_bool(self.rready, true);
        m.eval()?;
        for _ in 0..LIMIT_CYCLES {
            let ar_fire = m.get_bool(self.arvalid) && m.get_bool(self.arready);
            let r_fire = m.get_bool(self.rvalid) && m.get_bool(self.rready);
            let (data, resp) = (m.get(self.rdata) as u32, m.get(self.rresp));
            m.tick(clk)?;
            if ar_fire {
                m.set_bool(self.arvalid, false);
            }
            if r_fire {
                m.set_bool(self.rready, false);
                m.eval()?;
                if resp != RESP_OKAY {
                    return Err(Error::Bus(format!(
                        "AXI-Lite read of {addr:#x}: the card answered RRESP={resp} (2 SLVERR, 3 DECERR) instead of OKAY"
                    )));
                }
                return Ok(data);
            }
            m.eval()?;
        }
        self.idle(m)?;
        Err(Error::Bus(format!(
            "AXI-Lite read of {addr:#x}: no read data within {LIMIT_CYCLES} cycles (arready/rvalid never came)"
        )))
    }

    /// Drops every VALID and READY after a failed access, so the next one starts clean.
    fn idle(&self, m: &mut Model) -> Result<()> {
        for p in [
            self.awvalid,
            self.wvalid,
            self.bready,
            self.arvalid,
            self.rready,
        ] {
            m.set(p, 0);
        }
        m.eval()?;
        Ok(())
    }
}
