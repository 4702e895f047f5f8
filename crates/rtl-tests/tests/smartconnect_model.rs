//! The SmartConnect model of the reference path (`axi_smartconnect_model`) on its own: a
//! 128-bit AXI4 master bus model on its slave port (`s_clk`, 250 MHz) and a 512-bit slave
//! memory on its master port (`m_clk`, 200 MHz), monitors on both. What PG247 documents and
//! the model claims: data arrives intact, bursts are packed and never split, writes pass
//! cut-through (the address goes on before the burst's data has all come), and at most
//! OUTSTANDING (32) reads are in flight.

use axi_bfm::{
    AxiMaster, AxiMasterConfig, AxiMonitorConfig, AxiSlave, AxiSlaveConfig, Channel, Env,
    PauseSpec, ResetPolarity, Result,
};
use card_sim::{ClockId, Model, Top};
use rand::SeedableRng;
use rand_xorshift::XorShiftRng;
use rtl_tests::{incr, random_bytes, record_axi, AXI_HZ, DDR_HZ};

/// Read bursts the model keeps in flight: SmartConnect's read acceptance (PG247, and the
/// generated parameters of a 1x1 SmartConnect), the module's default.
const OUTSTANDING: usize = 32;

struct Tb {
    env: Env,
    s_clk: ClockId,
    m_clk: ClockId,
    m: AxiMaster,
    s: AxiSlave,
}

fn tb(slave: AxiSlaveConfig) -> Result<Tb> {
    let mut env = Env::new(Model::new(Top::AxiSmartconnectModel)?);
    let s_clk = env.add_clock("s_clk", AXI_HZ)?;
    let m_clk = env.add_clock("m_clk", DDR_HZ)?;
    env.add_reset(s_clk, "s_rst", ResetPolarity::ActiveHigh)?;
    env.add_reset(s_clk, "m_rst", ResetPolarity::ActiveHigh)?;
    let m = AxiMaster::attach_with(
        &mut env,
        "s_axi",
        s_clk,
        AxiMasterConfig {
            max_outstanding_reads: 64,
            max_outstanding_writes: 64,
            ..AxiMasterConfig::default()
        },
    )?;
    let s = AxiSlave::attach_with(&mut env, "m_axi", m_clk, slave)?;
    card_harness::settle_in_reset(&mut env, s_clk)?;
    env.reset(s_clk, 10)?;
    env.run(s_clk, 5)?;
    Ok(Tb {
        env,
        s_clk,
        m_clk,
        m,
        s,
    })
}

#[test]
fn unaligned_transfers_arrive_intact_under_random_pauses() -> Result<()> {
    let mut b = tb(AxiSlaveConfig {
        max_queued: 16,
        ..AxiSlaveConfig::default()
    })?;
    b.env.set_pauses(&PauseSpec::random(0x5c, 30));
    let mut rng = XorShiftRng::seed_from_u64(0x5c);
    for i in 0..12u64 {
        let addr = 0x1_0000 + i * 0x2345 + (i * 7) % 64;
        let data = random_bytes(&mut rng, 64 + 211 * i as usize);
        b.m.write(&mut b.env, addr, &data)?;
        assert_eq!(
            b.s.mem_read(addr, data.len()),
            data,
            "write {i} at {addr:#x}"
        );
        assert_eq!(b.m.read(&mut b.env, addr, data.len())?, data, "read {i}");
    }
    assert!(b.env.violations().is_empty(), "{:?}", b.env.violations());
    Ok(())
}

#[test]
fn bursts_are_packed_and_writes_cut_through() -> Result<()> {
    let mut b = tb(AxiSlaveConfig::default())?;
    let s_log = record_axi(&mut b.env, "s_axi", b.s_clk)?;
    let m_log = record_axi(&mut b.env, "m_axi", b.m_clk)?;
    let len_port = b.env.model().port("m_axi_awlen")?;
    let lens = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let l = lens.clone();
    let (v, r) = (
        b.env.model().port("m_axi_awvalid")?,
        b.env.model().port("m_axi_awready")?,
    );
    rtl_tests::on_sample(&mut b.env, b.m_clk, move |m, cx| {
        if !cx.in_reset && rtl_tests::fires(m, v, r) {
            l.borrow_mut().push(m.get(len_port));
        }
    });
    // A 16-beat aligned 128-bit burst whose data comes one beat every eight cycles: the
    // 512-bit burst's address reaches the memory long before the slave side's last beat.
    b.m.set_channel_pauses(Channel::W, &PauseSpec::pattern("11111110"));
    let burst = incr(0, 0x4000, 4, 16);
    let data = vec![0xa5u8; 256];
    let keep = vec![true; 256];
    b.m.start_write_burst_strobed(burst, &data, &keep)?;
    b.m.wait_idle(&mut b.env)?;
    // Edges of the two clocks compare as times: s_clk edges are 4 ns apart, m_clk's 5 ns.
    let s_ns = |edge: u64| edge as f64 * 1e9 / AXI_HZ as f64;
    let m_ns = |edge: u64| edge as f64 * 1e9 / DDR_HZ as f64;
    let m_aw = m_log.borrow().aw[0];
    let s_b = s_log.borrow().b[0].cycle;
    assert_eq!(
        lens.borrow().as_slice(),
        [3],
        "16 x 16 bytes packed into 4 x 64, one burst"
    );
    // The slave side's last W beat is at least 15 x 8 cycles after its first; its B follows
    // it. The memory's AW came before half of that had passed.
    assert!(
        m_ns(m_aw) < s_ns(s_b) - 60.0 * 4.0,
        "AW at the memory at {:.0} ns, B at {:.0} ns: the write waited for its data",
        m_ns(m_aw),
        s_ns(s_b)
    );
    assert!(b.env.violations().is_empty(), "{:?}", b.env.violations());
    Ok(())
}

#[test]
fn at_most_outstanding_reads_are_in_flight() -> Result<()> {
    // A memory that takes every address and answers none for a long time: the reads that
    // reach it are those the model lets through.
    let mut b = tb(AxiSlaveConfig {
        read_latency: 3_000,
        max_queued: 256,
        ..AxiSlaveConfig::default()
    })?;
    // The 33rd read's address waits for READY until the first answer, far longer than the
    // monitor's default bound; legal, so the bound is raised.
    if let Some(mon) = b.m.monitor() {
        mon.set_config(AxiMonitorConfig {
            stall_bound: 100_000,
            ..mon.config()
        });
    }
    let m_log = record_axi(&mut b.env, "m_axi", b.m_clk)?;
    let mut ids = Vec::new();
    for i in 0..(OUTSTANDING as u64 + 8) {
        ids.push(b.m.start_read(i as u32 % 16, 0x8000 + i * 64, 16)?);
    }
    b.env.run(b.s_clk, 2_000)?;
    assert_eq!(
        m_log.borrow().ar.len(),
        OUTSTANDING,
        "reads at the memory while none is answered"
    );
    for t in ids {
        b.m.wait(&mut b.env, t)?;
    }
    assert_eq!(m_log.borrow().ar.len(), OUTSTANDING + 8);
    assert!(b.env.violations().is_empty(), "{:?}", b.env.violations());
    Ok(())
}
