//! A failed formal proof's counterexample as a file the project owns, and what replays it.
//!
//! `cargo xtask formal` proves a module inside its proof wrapper (`fw_<module>.v`, which binds
//! the property modules generated from `hdl/formal/rules.toml` to the module's ports and states
//! what the module promises). When a proof fails, SymbiYosys writes the counterexample as a VCD
//! trace; [`from_trace`] turns it, with the shape of the wrapper that Yosys elaborated, into a
//! [`Replay`]: per cycle, the value of every input of the wrapper (and, to check that the
//! simulation follows the trace, every output of the module under proof).
//!
//! A replay runs under Verilator in a shell module ([`shell_verilog`]) around the very same
//! wrapper, built with `FORMAL` defined so that the wrapper's promises and the property
//! modules' assertions are compiled in. The shell registers the inputs it is given, one cycle
//! ahead, so that the wrapper sees each cycle's inputs change on the same clock edge as its
//! state, as the solver's steps do (an input driven between two edges would show the wrapper
//! a state with the last cycle's inputs, which no step of the proof has). It brings out, by
//! hierarchical reference, every bus that a property module watches, so that axi-bfm's
//! protocol monitors watch the same signals the proof did (`axi_bfm::replay` drives it), and
//! the module's outputs, for the comparison with the trace.
//!
//! This crate holds only the format and the text it is made of: serde, no simulator, so that
//! `xtask` and build scripts can use it. Its `build` feature adds, for build scripts, the one
//! function that turns a folder of replay files into sim-build tops ([`build::top_specs`]).

#[cfg(feature = "build")]
pub mod build;
mod design;
mod error;
mod shell;
mod vcd;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use design::Shape;
pub use error::ReplayError;
pub use shell::{replay_tests, replay_tops, shell_verilog, ShellTop};

/// The first line of every replay file's `format` field; a file with another is refused.
pub const FORMAT: &str = "card-sim formal replay 1";

/// The prefix of the shell's inputs: `next_<input>` is what the wrapper's `<input>` becomes at
/// the next rising edge.
pub const NEXT_PREFIX: &str = "next_";

/// The prefix of the shell's outputs that carry the module's outputs: `dut_<output>`.
pub const DUT_PREFIX: &str = "dut_";

/// A multiclock replay's shell clock: one rising edge per step of the solver, at which the
/// shell loads the wrapper's clocks from the trace.
pub const STEP_CLOCK: &str = "replay_step";

/// The suffix of a multiclock shell's output per bus, `<instance>_edge`: high when the bus's
/// clock rises at the coming step, so that its monitor samples only then.
pub const EDGE_SUFFIX: &str = "_edge";

/// One failed proof's counterexample: what the proof was, the shape of its wrapper and the
/// trace, cycle by cycle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    /// [`FORMAT`].
    pub format: String,
    /// The proof's name: its module's, or a seeded bug's own name.
    pub proof: String,
    /// The module under proof.
    pub module: String,
    /// The proof wrapper, the top the solver worked on.
    pub wrapper: String,
    /// Parameters the proof set on the wrapper (a seeded bug's `BUG`), as Verilog values.
    pub params: BTreeMap<String, String>,
    /// The Verilog the proof read, relative to the workspace root: property modules, the
    /// module and what it uses, the wrapper.
    pub files: Vec<String>,
    /// True for a seeded bug, whose failure is what its test expects; false for a real
    /// counterexample, which its test reports until the RTL is fixed and then keeps as a
    /// regression test.
    pub seeded: bool,
    /// The assertions the proof reported failed, by label relative to the wrapper
    /// (`promise_order_kept`, or `f_out.valid_held_until_handshake__t` for a property module's).
    pub failed: Vec<String>,
    /// The cycle (0 = the first, in reset) at which they failed: the trace's last.
    pub step: usize,
    /// The shell's clock: the wrapper's clock input, or for a multiclock proof [`STEP_CLOCK`].
    pub clock: String,
    /// The wrapper's other inputs (for a multiclock proof, its clocks among them), in the order
    /// the shell declares them.
    pub inputs: Vec<Signal>,
    /// A proof whose property modules run on more than one clock (sby's `multiclock on`):
    /// which input is a clock, and which clock loads each other input. Absent for one clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiclock: Option<Multiclock>,
    /// The buses the property modules watch, one per instance.
    pub buses: Vec<Bus>,
    /// The instance name of the module under proof inside the wrapper.
    pub dut: String,
    /// The module's outputs.
    pub outputs: Vec<Signal>,
    /// The labels of the assertions and assumptions that a clock edge triggers (written in
    /// `always @(posedge clk)`); the others are checked at every step as they stand. A
    /// simulator reports a clocked one at the edge that ends the cycle it looked at, an
    /// unclocked one as soon as the cycle's values settle, so the replay needs to know which.
    pub clocked: Vec<String>,
    /// The trace: one entry per cycle, the inputs and the module's outputs by name, in hex.
    pub cycles: Vec<Cycle>,
}

/// A port and its width in bits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signal {
    pub name: String,
    pub width: u32,
}

/// How a multiclock replay's shell drives its wrapper. The solver steps a global clock, and the
/// wrapper's clocks and inputs are values of the trace like any other; the wrapper assumes that
/// each input changes only at the rising edge of its side's clock. So the shell loads the
/// clocks at each step (a rising edge of [`STEP_CLOCK`]) and each other input at the rising
/// edge of its own clock, where the module's registers on that clock sample the input's old
/// value, as the solver's do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Multiclock {
    /// The wrapper's clock inputs.
    pub clocks: Vec<String>,
    /// For each other input, the clock whose rising edge loads it: the first clock that rises
    /// at every step where the input changes in the trace.
    pub loaded_by: BTreeMap<String, String>,
    /// Each bus's clock, by property module instance.
    pub bus_clocks: BTreeMap<String, String>,
}

/// The protocol a property module checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// AXI4 (`faxi_master`, `faxi_slave`).
    Axi4,
    /// AXI4-Lite (`faxil_*`).
    Axil,
    /// AXI-Stream (`faxis_*`).
    Axis,
}

/// Which side of its bus a property module checks: the one whose rules it asserts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Master,
    Slave,
}

/// One property module instance of the wrapper: the bus it watches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bus {
    /// The instance name (`f_in`); the shell brings its signals out as `<instance>_<signal>`,
    /// which is also the prefix a monitor attaches by.
    pub instance: String,
    pub protocol: Protocol,
    pub side: Side,
    /// The property module's ports but its clock: the bus signals and `rst` (active high).
    pub signals: Vec<Signal>,
    /// AXI-Stream only: the property module checks the XDMA packing of TKEEP.
    pub keep_packed: bool,
}

/// One cycle of the trace: values in hex, most significant digit first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cycle {
    pub inputs: BTreeMap<String, String>,
    pub outputs: BTreeMap<String, String>,
}

/// What [`from_trace`] needs to know of the proof besides its trace and its design.
#[derive(Debug, Clone)]
pub struct Source {
    pub proof: String,
    pub module: String,
    pub params: BTreeMap<String, String>,
    pub files: Vec<String>,
    pub seeded: bool,
    /// The failed assertions as sby's log names them (`fw_x.promise_y`).
    pub failed: Vec<String>,
    /// The step at which they failed, as sby's log says; the trace may go on a step beyond it,
    /// which the replay leaves out.
    pub step: usize,
}

impl Replay {
    /// Reads and checks a replay file.
    pub fn load(path: &Path) -> Result<Replay, ReplayError> {
        let text = std::fs::read_to_string(path).map_err(|source| ReplayError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Replay::parse(&text).map_err(|e| ReplayError::File {
            path: path.to_path_buf(),
            problem: e.to_string(),
        })
    }

    /// Parses and checks a replay from its text.
    pub fn parse(text: &str) -> Result<Replay, ReplayError> {
        let r: Replay = serde_json::from_str(text).map_err(|e| ReplayError::Format {
            problem: e.to_string(),
        })?;
        r.check()?;
        Ok(r)
    }

    /// The file's text: the header fields pretty-printed, each cycle on a line of its own so
    /// that a trace reads (and diffs) as a table.
    pub fn to_text(&self) -> Result<String, ReplayError> {
        let mut head = serde_json::to_value(self).map_err(|e| ReplayError::Format {
            problem: e.to_string(),
        })?;
        if let Some(obj) = head.as_object_mut() {
            obj.remove("cycles");
        }
        let head = serde_json::to_string_pretty(&head).map_err(|e| ReplayError::Format {
            problem: e.to_string(),
        })?;
        let mut cycles = Vec::with_capacity(self.cycles.len());
        for c in &self.cycles {
            cycles.push(serde_json::to_string(c).map_err(|e| ReplayError::Format {
                problem: e.to_string(),
            })?);
        }
        // The pretty header ends in `}`: the cycles go in before it.
        let body = head.trim_end().trim_end_matches('}').trim_end();
        Ok(format!(
            "{body},\n  \"cycles\": [\n    {}\n  ]\n}}\n",
            cycles.join(",\n    ")
        ))
    }

    /// Writes the file, and its folder if missing.
    pub fn save(&self, path: &Path) -> Result<(), ReplayError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| ReplayError::Io {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(path, self.to_text()?).map_err(|source| ReplayError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The name of the shell top that replays this proof's counterexamples.
    pub fn top_name(&self) -> String {
        top_name(&self.proof)
    }

    /// Whether the check `label` (relative to the wrapper) is triggered by the clock.
    pub fn is_clocked(&self, label: &str) -> bool {
        let base = label.rsplit('.').next().unwrap_or(label);
        self.clocked.iter().any(|c| c == base)
    }

    fn check(&self) -> Result<(), ReplayError> {
        let bad = |problem: String| Err(ReplayError::Format { problem });
        if self.format != FORMAT {
            return bad(format!(
                "format `{}` is not `{FORMAT}`; write the file again with `cargo xtask formal`",
                self.format
            ));
        }
        if self.cycles.is_empty() {
            return bad("the trace has no cycle".into());
        }
        if self.step >= self.cycles.len() {
            return bad(format!(
                "step {} is past the trace's {} cycles",
                self.step,
                self.cycles.len()
            ));
        }
        if !is_identifier(&self.proof) {
            return bad(format!(
                "proof name `{}` is not a Verilog identifier (letters, digits, `_`)",
                self.proof
            ));
        }
        if let Some(mc) = &self.multiclock {
            let is_input = |n: &str| self.inputs.iter().any(|s| s.name == n);
            if let Some(c) = mc.clocks.iter().find(|c| !is_input(c)) {
                return bad(format!("clock `{c}` is not one of the inputs"));
            }
            for s in self.inputs.iter().filter(|s| !mc.clocks.contains(&s.name)) {
                match mc.loaded_by.get(&s.name) {
                    Some(c) if mc.clocks.contains(c) => {}
                    Some(c) => {
                        return bad(format!(
                            "input `{}` is loaded by `{c}`, not a clock",
                            s.name
                        ))
                    }
                    None => return bad(format!("input `{}` has no clock to load it", s.name)),
                }
            }
            for b in &self.buses {
                if !mc
                    .bus_clocks
                    .get(&b.instance)
                    .is_some_and(|c| mc.clocks.contains(c))
                {
                    return bad(format!("bus `{}` has no clock", b.instance));
                }
            }
        }
        for (i, c) in self.cycles.iter().enumerate() {
            for s in &self.inputs {
                let Some(v) = c.inputs.get(&s.name) else {
                    return bad(format!("cycle {i} has no value for input `{}`", s.name));
                };
                words(v, s.width).map_err(|problem| ReplayError::Format {
                    problem: format!("cycle {i}, input `{}`: {problem}", s.name),
                })?;
            }
            for s in &self.outputs {
                let Some(v) = c.outputs.get(&s.name) else {
                    return bad(format!("cycle {i} has no value for output `{}`", s.name));
                };
                words(v, s.width).map_err(|problem| ReplayError::Format {
                    problem: format!("cycle {i}, output `{}`: {problem}", s.name),
                })?;
            }
        }
        Ok(())
    }
}

/// The shell top's name for proof `proof`.
pub fn top_name(proof: &str) -> String {
    format!("fr_{proof}")
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// A hex value of a `width`-bit signal as 32-bit words, least significant first. Refuses a
/// digit that is not hex and a value wider than the signal.
pub fn words(hex: &str, width: u32) -> Result<Vec<u32>, String> {
    let n = width.div_ceil(32).max(1) as usize;
    let mut out = vec![0u32; n];
    for (i, c) in hex.chars().rev().enumerate() {
        let d = c
            .to_digit(16)
            .ok_or_else(|| format!("`{hex}` is not a hex number"))?;
        if d == 0 {
            continue;
        }
        let bit = i as u64 * 4 + u64::from(32 - d.leading_zeros()) - 1;
        if bit >= u64::from(width) {
            return Err(format!("`{hex}` does not fit in {width} bits"));
        }
        out[i / 8] |= d << ((i % 8) * 4);
    }
    Ok(out)
}

/// Builds a replay from a failed proof: its design as Yosys's `write_json` wrote it after
/// `prep -top <wrapper>` with the proof's parameters, and sby's VCD counterexample.
pub fn from_trace(src: Source, design_json: &str, vcd_text: &str) -> Result<Replay, ReplayError> {
    let shape = Shape::from_json(design_json)?;
    let trace = vcd::Trace::parse(vcd_text, &shape.wrapper)?;
    if src.step >= trace.steps() {
        return Err(ReplayError::Trace {
            problem: format!(
                "the proof failed at step {}, but the trace has {} steps",
                src.step,
                trace.steps()
            ),
        });
    }
    let mut cycles = Vec::with_capacity(src.step + 1);
    for step in 0..=src.step {
        let mut inputs = BTreeMap::new();
        for s in &shape.inputs {
            inputs.insert(s.name.clone(), trace.value(step, &s.name, s.width)?);
        }
        let mut outputs = BTreeMap::new();
        for s in &shape.outputs {
            let path = format!("{}.{}", shape.dut, s.name);
            outputs.insert(s.name.clone(), trace.value(step, &path, s.width)?);
        }
        cycles.push(Cycle { inputs, outputs });
    }
    let multiclock = if shape.is_multiclock() {
        Some(multiclock_of(&shape, &cycles)?)
    } else {
        None
    };
    let clock = if multiclock.is_some() {
        STEP_CLOCK.to_string()
    } else {
        shape.clock.clone()
    };
    let prefix = format!("{}.", shape.wrapper);
    let failed = src
        .failed
        .iter()
        .map(|f| f.strip_prefix(&prefix).unwrap_or(f).to_string())
        .collect();
    let replay = Replay {
        format: FORMAT.to_string(),
        proof: src.proof,
        module: src.module,
        wrapper: shape.wrapper,
        params: src.params,
        files: src.files,
        seeded: src.seeded,
        failed,
        step: src.step,
        clock,
        inputs: shape.inputs,
        multiclock,
        buses: shape.buses,
        dut: shape.dut,
        outputs: shape.outputs,
        clocked: shape.clocked,
        cycles,
    };
    replay.check()?;
    Ok(replay)
}

/// Which clock loads each input of a multiclock trace: the first clock (in the order of the
/// property modules) that rises at every step where the input's value changes.
fn multiclock_of(shape: &Shape, cycles: &[Cycle]) -> Result<Multiclock, ReplayError> {
    let clocks = shape.clocks();
    let value = |c: &Cycle, name: &str| c.inputs.get(name).cloned().unwrap_or_default();
    let rose = |clock: &str, step: usize| {
        step > 0 && value(&cycles[step - 1], clock) == "0" && value(&cycles[step], clock) == "1"
    };
    let mut loaded_by = BTreeMap::new();
    for s in shape.inputs.iter().filter(|s| !clocks.contains(&s.name)) {
        let changes: Vec<usize> = (1..cycles.len())
            .filter(|&t| value(&cycles[t - 1], &s.name) != value(&cycles[t], &s.name))
            .collect();
        let clock = clocks
            .iter()
            .find(|c| changes.iter().all(|&t| rose(c, t)))
            .ok_or_else(|| ReplayError::Trace {
                problem: format!(
                    "input `{}` changes at step {} where none of the clocks {clocks:?} rises; the wrapper must assume that each input changes only at its clock's rising edge",
                    s.name,
                    changes
                        .iter()
                        .find(|&&t| !clocks.iter().any(|c| rose(c, t)))
                        .or(changes.first())
                        .copied()
                        .unwrap_or(0)
                ),
            })?;
        loaded_by.insert(s.name.clone(), clock.clone());
    }
    Ok(Multiclock {
        clocks,
        loaded_by,
        bus_clocks: shape.bus_clocks.iter().cloned().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two clocks `a` and `b` alternating, then both low; `x` changes where `a` rises, `y` and
    /// `k` where `b` does, and `z` (when it changes) at the last step, where neither does.
    fn two_clocks(z_changes: bool) -> (Shape, Vec<Cycle>) {
        let sig = |n: &str| Signal {
            name: n.into(),
            width: 1,
        };
        let shape = Shape {
            wrapper: "fw".into(),
            clock: "a".into(),
            bus_clocks: vec![("f_in".into(), "a".into()), ("f_out".into(), "b".into())],
            inputs: ["a", "b", "x", "y", "k", "z"].map(sig).to_vec(),
            buses: Vec::new(),
            dut: "dut".into(),
            outputs: Vec::new(),
            clocked: Vec::new(),
        };
        // Steps: a b x y k z
        let rows = [
            "000000", "100000", "010000", "101000", "011110", "100110", "010010", "000011",
        ];
        let cycles = rows
            .iter()
            .map(|r| {
                let mut v: Vec<char> = r.chars().collect();
                if !z_changes {
                    v[5] = '0';
                }
                Cycle {
                    inputs: ["a", "b", "x", "y", "k", "z"]
                        .iter()
                        .zip(v)
                        .map(|(n, c)| (n.to_string(), c.to_string()))
                        .collect(),
                    outputs: BTreeMap::new(),
                }
            })
            .collect();
        (shape, cycles)
    }

    #[test]
    fn each_input_is_loaded_by_the_clock_that_rises_where_it_changes() {
        let (shape, cycles) = two_clocks(false);
        assert!(shape.is_multiclock());
        let mc = multiclock_of(&shape, &cycles).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mc.clocks, ["a", "b"]);
        let by = |n: &str| mc.loaded_by.get(n).map(String::as_str);
        // x changes at steps 3 and 5, where a rises; y at 4 and 6, where b rises (and k at
        // 4); z not at all, so the first clock will do.
        assert_eq!(by("x"), Some("a"));
        assert_eq!(by("y"), Some("b"));
        assert_eq!(by("k"), Some("b"));
        assert_eq!(by("z"), Some("a"));
        assert_eq!(mc.bus_clocks.get("f_out").map(String::as_str), Some("b"));
        let (shape, cycles) = two_clocks(true);
        let e = multiclock_of(&shape, &cycles).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("input `z` changes at step 7")),
            "{e:?}"
        );
    }

    #[test]
    fn hex_values_become_words() {
        assert_eq!(words("0", 1), Ok(vec![0]));
        assert_eq!(words("1", 1), Ok(vec![1]));
        assert_eq!(words("00ff", 16), Ok(vec![0xff]));
        assert_eq!(
            words("1_0000_0002".replace('_', "").as_str(), 33),
            Ok(vec![2, 1])
        );
        assert!(words("2", 1)
            .expect_err("too wide")
            .contains("does not fit"));
        assert!(words("g", 8).expect_err("not hex").contains("not a hex"));
    }
}
