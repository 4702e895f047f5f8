//! Synthesis/simulation mismatches seeded into the card's frame-source FIFO, which the netlist
//! run must catch and the RTL tests cannot.
//!
//! `frame_source_fifo`'s `MISMATCH` parameter (never set by the card) codes one piece of the
//! FIFO so that simulation runs it as the card's FIFO and synthesis builds something else: a
//! `full_case` pragma on a case that is not full (1), an `x` in a case taken for a don't-care
//! (2), an incomplete sensitivity list (3), and a read of the word being written that relies
//! on the memory's write coming first in simulation where the block RAM reads first (4).
//! `fifo_mismatch_tb` holds the card's FIFO and the four side by side on the same inputs.
//!
//! - On the RTL, every one passes the FIFO's own test: what comes out is what went in, in
//!   order, nothing lost (the frame source's drop held low, as its tests without the drop
//!   policy run it).
//! - On the netlists `cargo xtask synth` wrote (`SIM_NETLIST=1`, as `cargo xtask netlist` and
//!   the test command's netlist subset run it), the same random traffic (now with drops)
//!   drives the RTL build and the netlist build in lockstep: the card's FIFO never differs,
//!   and each seeded one differs, named with its first differing cycle and output.

use card_sim::{ClockId, Model, Port, Top};
use rand::{RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;

/// The FIFOs of `fifo_mismatch_tb`, by their `MISMATCH` value: what each seeds.
const FIFOS: [&str; 5] = [
    "the card's FIFO",
    "a full_case pragma on a case that is not full",
    "an x default taken for a don't-care",
    "an incomplete sensitivity list",
    "a RAM read-during-write assumption",
];

/// The outputs of one FIFO of the top, in the order they are compared.
const OUTPUTS: [&str; 4] = ["m_data", "m_valid", "s_ready", "count"];

/// One build of `fifo_mismatch_tb` with its ports looked up.
struct Bench {
    model: Model,
    clk: ClockId,
    rst: Port,
    s_data: Port,
    s_valid: Port,
    m_ready: Port,
    drop: Port,
    /// Per FIFO, its outputs in the order of [`OUTPUTS`].
    outputs: Vec<[Port; 4]>,
}

impl Bench {
    fn new(top: Top) -> Bench {
        Bench::with(top, Model::builder(top))
    }

    /// A bench whose model writes its output trace to `trace`.
    fn traced(top: Top, trace: &std::path::Path) -> Bench {
        Bench::with(top, Model::builder(top).trace(trace))
    }

    fn with(top: Top, builder: sim_runtime::ModelBuilder) -> Bench {
        let mut model = builder.build().unwrap_or_else(|e| panic!("{top:?}: {e}"));
        let clk = model.add_clock("clk", 250_000_000).expect("clk");
        let port = |m: &Model, n: &str| m.port(n).unwrap_or_else(|e| panic!("{n}: {e}"));
        let outputs = (0..FIFOS.len())
            .map(|k| OUTPUTS.map(|o| port(&model, &format!("{o}_{k}"))))
            .collect();
        Bench {
            rst: port(&model, "rst"),
            s_data: port(&model, "s_data"),
            s_valid: port(&model, "s_valid"),
            m_ready: port(&model, "m_ready"),
            drop: port(&model, "drop"),
            outputs,
            clk,
            model,
        }
    }

    /// Drives one cycle's inputs, leaving the outputs of the cycle readable.
    fn drive(&mut self, i: &Inputs) {
        self.model.set_bool(self.rst, i.rst);
        self.model.set(self.s_data, u64::from(i.s_data));
        self.model.set_bool(self.s_valid, i.s_valid);
        self.model.set_bool(self.m_ready, i.m_ready);
        self.model.set_bool(self.drop, i.drop);
        self.model.eval().expect("eval");
    }

    fn outputs(&self, k: usize) -> [u64; 4] {
        self.outputs[k].map(|p| self.model.get(p))
    }

    fn tick(&mut self) {
        self.model.tick(self.clk).expect("tick");
    }
}

/// One cycle's inputs.
#[derive(Debug, Clone, Copy)]
struct Inputs {
    rst: bool,
    s_data: u16,
    s_valid: bool,
    m_ready: bool,
    drop: bool,
}

/// `cycles` cycles of random traffic from `seed`: a reset first, words counting up with a
/// random last-of-frame bit, random valid and ready; with `drops`, the drop input high in
/// random stretches.
fn traffic(seed: u64, cycles: usize, drops: bool) -> Vec<Inputs> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut dropping = false;
    (0..cycles)
        .map(|c| {
            if drops && rng.random_ratio(1, 40) {
                dropping = !dropping;
            }
            Inputs {
                rst: c < 4,
                s_data: (c as u16 & 0xff) | if rng.random_ratio(1, 8) { 0x100 } else { 0 },
                s_valid: rng.random_ratio(2, 3),
                m_ready: rng.random_ratio(1, 2),
                drop: dropping,
            }
        })
        .collect()
}

/// The FIFO's own test on the RTL: per FIFO, every word delivered is the next one accepted,
/// and every word accepted is delivered once the traffic stops and the reader drains it.
#[test]
fn every_seeded_fifo_passes_the_rtl_test() {
    let mut b = Bench::new(Top::FifoMismatchTb);
    let mut plan = traffic(1, 20_000, false);
    // Long enough to drain a full FIFO.
    plan.extend((0..4200).map(|_| Inputs {
        rst: false,
        s_data: 0,
        s_valid: false,
        m_ready: true,
        drop: false,
    }));
    let mut accepted = vec![Vec::new(); FIFOS.len()];
    let mut delivered = vec![Vec::new(); FIFOS.len()];
    for i in &plan {
        b.drive(i);
        for k in 0..FIFOS.len() {
            let [m_data, m_valid, s_ready, _] = b.outputs(k);
            if !i.rst && i.s_valid && s_ready == 1 {
                accepted[k].push(u64::from(i.s_data));
            }
            if !i.rst && i.m_ready && m_valid == 1 {
                delivered[k].push(m_data);
            }
        }
        b.tick();
    }
    for (k, what) in FIFOS.iter().enumerate() {
        assert!(
            accepted[k].len() > 5_000,
            "MISMATCH={k} ({what}) took only {} words",
            accepted[k].len()
        );
        if let Some(at) =
            (0..accepted[k].len()).find(|&n| delivered[k].get(n) != Some(&accepted[k][n]))
        {
            panic!(
                "MISMATCH={k} ({what}) on the RTL: word {at} delivered as {:?}, accepted as {:#x}",
                delivered[k].get(at),
                accepted[k][at]
            );
        }
        assert_eq!(
            delivered[k].len(),
            accepted[k].len(),
            "MISMATCH={k} ({what})"
        );
    }
}

/// The first difference between the RTL and the netlist of one FIFO.
#[derive(Debug)]
struct Difference {
    cycle: usize,
    output: &'static str,
    rtl: u64,
    netlist: u64,
}

/// The netlist run: the same traffic on the RTL build and the netlist build in lockstep, per
/// FIFO its first difference. The card's FIFO must have none, each seeded one must have one.
///
/// Both builds also write their output traces, and the comparison of the traces, which is how
/// `cargo xtask netlist` finds the first differing cycle of a card test that fails on the
/// netlist, must find per FIFO the difference the lockstep found.
#[test]
fn the_netlist_run_names_every_seeded_mismatch() {
    if !sim_runtime::netlist_build_requested() {
        eprintln!(
            "not run: the seeded FIFOs' netlists are `cargo xtask synth`'s, which `cargo xtask netlist` \
             and the test command's netlist subset run this with (SIM_NETLIST=1)"
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("netlist-seeded-{}", std::process::id()));
    let traces = [dir.join("rtl.trace"), dir.join("netlist.trace")];
    let mut rtl = Bench::traced(Top::FifoMismatchTb, &traces[0]);
    let mut netlist = Bench::traced(Top::FifoMismatchTbNetlist, &traces[1]);
    let mut first: Vec<Option<Difference>> = (0..FIFOS.len()).map(|_| None).collect();
    for (cycle, i) in traffic(2, 20_000, true).iter().enumerate() {
        rtl.drive(i);
        netlist.drive(i);
        for (k, seen) in first.iter_mut().enumerate() {
            if seen.is_some() {
                continue;
            }
            let (r, n) = (rtl.outputs(k), netlist.outputs(k));
            if let Some(o) = (0..OUTPUTS.len()).find(|&o| r[o] != n[o]) {
                *seen = Some(Difference {
                    cycle,
                    output: OUTPUTS[o],
                    rtl: r[o],
                    netlist: n[o],
                });
            }
        }
        rtl.tick();
        netlist.tick();
    }
    // The traces are complete once their models are gone.
    drop((rtl, netlist));
    let traced = sim_runtime::trace::compare(&traces[0], &traces[1]).expect("the traces compare");
    let _ = std::fs::remove_dir_all(&dir);
    let mut wrong = Vec::new();
    for (k, (what, d)) in FIFOS.iter().zip(&first).enumerate() {
        match d {
            Some(d) => println!(
                "MISMATCH={k} ({what}): the netlist differs from the RTL at cycle {} on {}_{k} (RTL {:#x}, netlist {:#x})",
                d.cycle, d.output, d.rtl, d.netlist
            ),
            None => println!("MISMATCH={k} ({what}): the netlist runs as the RTL for 20000 cycles"),
        }
        if (k == 0) != d.is_none() {
            wrong.push(format!("MISMATCH={k} ({what})"));
        }
        // The traces' first difference among this FIFO's outputs, and every output of it
        // that parts then.
        let own: Vec<&sim_runtime::trace::Difference> = traced
            .differences
            .iter()
            .filter(|t| {
                t.port
                    .rsplit_once('_')
                    .is_some_and(|(_, n)| n == k.to_string())
            })
            .collect();
        let at = own.first().map(|t| t.cycles.first().map_or(0, |c| c.1));
        let parting: Vec<&str> = own
            .iter()
            .filter(|t| Some(t.cycles.first().map_or(0, |c| c.1)) == at)
            .map(|t| t.port.as_str())
            .collect();
        let agrees = match d {
            None => own.is_empty(),
            Some(d) => {
                at == Some(d.cycle as u64)
                    && parting.contains(&format!("{}_{k}", d.output).as_str())
            }
        };
        if !agrees {
            wrong.push(format!(
                "MISMATCH={k}: the traces part at cycle {at:?} on {parting:?}, the lockstep at {:?}",
                d.as_ref().map(|d| (d.cycle, d.output))
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "the netlist run judged these wrongly (the card's FIFO must match, the seeded ones differ): {}",
        wrong.join(", ")
    );
}
