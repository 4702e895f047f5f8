//! The frame source feeding the frame checker directly (`hdl/sim/frame_loop_tb.v`, a source
//! with a 64-beat FIFO) for many frames under random backpressure: under the stall policy
//! every frame arrives good; under the drop policy the checker's missing count equals the
//! source's drops.

use card_sim::{ClockId, Model, Port, Result, Top};
use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;
use rstest::rstest;

struct Loop {
    m: Model,
    clk: ClockId,
    link_ready: Port,
    enable: Port,
}

impl Loop {
    fn new(len: u64, gap: u64, pattern: bool, drop: bool) -> Result<Loop> {
        let mut m = Model::new(Top::FrameLoopTb)?;
        let clk = m.add_clock("clk", 250_000_000)?;
        let rst = m.input("rst")?;
        m.set_bool(rst, true);
        m.ticks(clk, 4)?;
        m.set_bool(rst, false);
        let cfg = [
            ("channel", 6),
            ("frame_len", len),
            ("gap_cycles", gap),
            ("pattern", u64::from(pattern)),
            ("seed", 0x0BAD_F00D),
            ("drop_policy", u64::from(drop)),
        ];
        for (name, v) in cfg {
            let p = m.input(name)?;
            m.set(p, v);
        }
        let enable = m.input("enable")?;
        m.set_bool(enable, true);
        m.eval()?;
        Ok(Loop {
            link_ready: m.input("link_ready")?,
            enable,
            clk,
            m,
        })
    }

    fn get(&self, name: &str) -> Result<u64> {
        Ok(self.m.get(self.m.port(name)?))
    }

    /// Runs `cycles` with link_ready high `percent`% of the time (seeded, the same every run),
    /// then stops the source and drains the link.
    fn run(&mut self, cycles: u64, percent: u64) -> Result<()> {
        let mut rng = XorShiftRng::seed_from_u64(0x2545_F491_4F6C_DD1D);
        for _ in 0..cycles {
            self.m
                .set_bool(self.link_ready, rng.random_range(0..100u64) < percent);
            self.m.eval()?;
            self.m.tick(self.clk)?;
        }
        self.m.set_bool(self.enable, false);
        self.m.set_bool(self.link_ready, true);
        self.m.eval()?;
        let valid = self.m.port("link_valid")?;
        let mut quiet = 0;
        self.m
            .wait_until(self.clk, 100_000, "the link to drain", |m| {
                quiet = if m.get_bool(valid) { 0 } else { quiet + 1 };
                quiet > 16
            })?;
        Ok(())
    }
}

#[rstest]
#[case::counter_half(100, 0, false, 50)]
#[case::prbs_sparse(77, 3, true, 20)]
#[case::prbs_dense(1024, 0, true, 85)]
fn stall_policy_every_frame_good(
    #[case] len: u64,
    #[case] gap: u64,
    #[case] pattern: bool,
    #[case] percent: u64,
) -> Result<()> {
    let mut l = Loop::new(len, gap, pattern, false)?;
    l.run(12_000, percent)?;
    let sent = l.get("frames_sent")?;
    assert!(
        sent > 50,
        "enough frames for the test to mean something: {sent}"
    );
    assert_eq!(l.get("frames_good")?, sent);
    assert_eq!(l.get("frames_dropped")?, 0);
    for name in [
        "frames_bad",
        "frames_missing",
        "err_magic",
        "err_length",
        "err_crc",
        "err_version",
    ] {
        assert_eq!(l.get(name)?, 0, "{name}");
    }
    assert_eq!(l.get("last_seq")?, sent - 1);
    Ok(())
}

#[rstest]
#[case::counter(100, 0, false, 40)]
#[case::prbs(333, 2, true, 60)]
fn drop_policy_drops_appear_as_missing(
    #[case] len: u64,
    #[case] gap: u64,
    #[case] pattern: bool,
    #[case] percent: u64,
) -> Result<()> {
    let mut l = Loop::new(len, gap, pattern, true)?;
    l.run(12_000, percent)?;
    let sent = l.get("frames_sent")?;
    let dropped = l.get("frames_dropped")?;
    let last = l.get("last_seq")?;
    eprintln!(
        "drop policy, {len} B frames, link ready {percent}%: {sent} sent, {dropped} dropped, {} missing at the checker",
        l.get("frames_missing")?
    );
    assert!(sent > 50 && dropped > 50, "sent {sent}, dropped {dropped}");
    assert_eq!(l.get("frames_good")?, sent);
    assert_eq!(l.get("frames_bad")?, 0);
    // Frames dropped after the last one sent leave no gap the checker can see yet.
    let trailing = sent + dropped - 1 - last;
    assert_eq!(l.get("frames_missing")? + trailing, dropped);
    Ok(())
}
