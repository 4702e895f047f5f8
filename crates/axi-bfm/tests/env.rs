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
fn rising_and_driving_without_settling_saves_evaluations_and_changes_nothing_agents_see() {
    // Two identical benches, one ticked (settled after every edge) and one risen and driven
    // edge by edge (settled only by the next step): the
    // agents must see the same values at every edge of both clocks, and the advanced bench
    // must skip the settling evaluation after its agents' drive wherever nothing else settles.
    let bench = || {
        let mut env = Env::new(Model::new(Top::DualClockProbe).expect("model"));
        let axi = env.add_clock("axi_aclk", 250_000_000).expect("clock");
        let ddr = env.add_clock("ddr_clk", 200_000_000).expect("clock");
        let a = probe(&mut env, axi, "axi_count", true);
        let d = probe(&mut env, ddr, "ddr_count", false);
        (env, axi, a, d)
    };
    let (mut ticked, axi_t, a_t, d_t) = bench();
    let (mut advanced, axi_a, a_a, d_a) = bench();
    let before = (ticked.model().evaluations(), advanced.model().evaluations());
    const CYCLES: u64 = 200;
    for _ in 0..CYCLES {
        ticked.tick(axi_t).expect("tick");
        advanced.rise(axi_a).expect("rises");
        advanced.drive().expect("drives");
    }
    assert_eq!(*a_t.borrow(), *a_a.borrow());
    assert_eq!(*d_t.borrow(), *d_a.borrow());
    assert!(
        a_a.borrow().iter().all(|s| s.3),
        "the wide register kept its timing"
    );
    let spent = (
        ticked.model().evaluations() - before.0,
        advanced.model().evaluations() - before.1,
    );
    // The settling is saved where the next edge is a falling one; where it is the other
    // clock's rising edge, that step settles first anyway. axi_aclk rises at 4c - 2 ns, falls
    // 2 ns later; ddr_clk rises at 5k - 2.5 ns and falls at 5k ns.
    let saved = (1..=CYCLES)
        .filter(|c| {
            let rise = 4_000 * c - 2_000;
            let next_ddr_rise = (rise + 2_500).div_ceil(5_000) * 5_000 - 2_500;
            let next_ddr_fall = (rise / 5_000 + 1) * 5_000;
            next_ddr_rise > (rise + 2_000).min(next_ddr_fall)
        })
        .count() as u64;
    assert_eq!(saved, CYCLES * 3 / 5, "three of every five axi_aclk cycles");
    assert_eq!(
        spent.0 - spent.1,
        saved,
        "ticked {} evaluations, advanced {}",
        spent.0,
        spent.1
    );
    // The advanced bench settles on request, and then reads what the ticked one reads.
    advanced.settle().expect("settles");
    let count = |env: &Env| {
        env.model()
            .get(env.model().port("axi_count").expect("port"))
    };
    assert_eq!(count(&ticked), count(&advanced));
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
