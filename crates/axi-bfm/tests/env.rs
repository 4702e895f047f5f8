//! The environment's edge ordering across two clock domains, wide ports, and its waits.

use std::cell::RefCell;
use std::rc::Rc;

use axi_bfm::{Agent, BfmError, Cx, Env};
use card_sim::{ClockId, Model, Port, Top};

/// What a probe saw before one edge: cycle, counter value, time in ps, and whether the wide
/// register held what the probe drove two edges earlier.
type Seen = (u64, u64, u64, bool);

/// A probe's record, shared between the probe and the test.
type SeenLog = Rc<RefCell<Vec<Seen>>>;

/// Records what it samples before each edge of its clock, and drives a wide input from the
/// cycle number after each edge.
struct Probe {
    count: Port,
    wide_in: Option<Port>,
    wide_out: Option<Port>,
    seen: SeenLog,
}

fn wide(cycle: u64) -> [u32; 16] {
    std::array::from_fn(|i| (cycle as u32).wrapping_mul(0x9e37_79b9) ^ (i as u32) << 24)
}

impl Agent for Probe {
    fn sample(&mut self, m: &Model, cx: &Cx) -> axi_bfm::Result<()> {
        // The wide register copied our input at the previous edge; before this edge it must
        // hold what we drove after the edge before that.
        let ok = match self.wide_out {
            Some(p) if cx.cycle > 2 => {
                let mut got = [0u32; 16];
                m.get_words(p, &mut got);
                got == wide(cx.cycle - 2)
            }
            _ => true,
        };
        self.seen
            .borrow_mut()
            .push((cx.cycle, m.get(self.count), cx.time_ps, ok));
        Ok(())
    }

    fn drive(&mut self, m: &mut Model, cx: &Cx) -> axi_bfm::Result<()> {
        if let Some(p) = self.wide_in {
            m.set_words(p, &wide(cx.cycle));
        }
        Ok(())
    }
}

fn probe(env: &mut Env, clk: ClockId, count: &str, wide: bool) -> SeenLog {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let m = env.model();
    let p = Probe {
        count: m.port(count).expect("port"),
        wide_in: wide.then(|| m.input("wide_in").expect("port")),
        wide_out: wide.then(|| m.port("wide_out").expect("port")),
        seen: seen.clone(),
    };
    env.add_agent(clk, Rc::new(RefCell::new(p)));
    seen
}

#[test]
fn agents_sample_before_and_drive_after_their_own_edges_in_two_domains() {
    let mut env = Env::new(Model::new(Top::DualClockProbe).expect("model"));
    let axi = env.add_clock("axi_aclk", 250_000_000).expect("clock");
    let ddr = env.add_clock("ddr_clk", 200_000_000).expect("clock");
    let a = probe(&mut env, axi, "axi_count", true);
    let d = probe(&mut env, ddr, "ddr_count", false);
    env.run(axi, 100).expect("runs");
    let a = a.borrow();
    let d = d.borrow();
    assert_eq!(a.len(), 100);
    // 100 cycles of 4 ns end at 398 ns; the 5 ns clock rose 80 times by then.
    assert_eq!(d.len(), 80);
    for (cycle, count, t, wide_ok) in a.iter() {
        assert_eq!(
            *count,
            cycle - 1,
            "sampled before edge {cycle}: the counter holds the edges before it"
        );
        assert_eq!(*t, cycle * 4_000 - 2_000);
        assert!(
            wide_ok,
            "512-bit value driven after an edge is registered at the next one (cycle {cycle})"
        );
    }
    for (cycle, count, t, _) in d.iter() {
        assert_eq!(*count, cycle - 1);
        assert_eq!(*t, cycle * 5_000 - 2_500);
    }
}

#[test]
fn run_until_ends_in_a_typed_timeout() {
    let mut env = Env::new(Model::new(Top::DualClockProbe).expect("model"));
    let axi = env.add_clock("axi_aclk", 250_000_000).expect("clock");
    match env.run_until(axi, 25, "something that never happens", |_| false) {
        Err(BfmError::Timeout { cycles, what, .. }) => {
            assert_eq!(cycles, 25);
            assert!(what.contains("never happens"));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(env.cycles(axi), 25);
    let n = env
        .run_until(axi, 100, "ten more cycles", |e| e.cycles(axi) >= 35)
        .expect("ends");
    assert_eq!(n, 10);
}

#[test]
fn stepping_a_model_without_clocks_is_an_error() {
    let mut env = Env::new(Model::new(Top::DualClockProbe).expect("model"));
    assert!(matches!(env.step(), Err(BfmError::BadRequest { .. })));
}

#[test]
fn reset_is_released_on_a_clock_without_agents() {
    // No agent is attached yet when the reset runs; the release must still happen.
    let mut env =
        axi_bfm::Env::new(card_sim::Model::new(card_sim::Top::AxiPassthrough).expect("model"));
    let clk = env.add_clock("clk", 250_000_000).expect("clock");
    env.add_reset(clk, "rst", axi_bfm::ResetPolarity::ActiveHigh)
        .expect("reset");
    env.reset(clk, 3).expect("reset");
    let rst = env.model().port("rst").expect("port");
    assert!(
        !env.model().get_bool(rst),
        "reset released after the last reset cycle"
    );
}
