//! The shape of a proof wrapper as Yosys elaborated it (`write_json` after `prep -top`): its
//! inputs and clock, the property modules it instantiates and the buses they watch, the module
//! under proof and its outputs, and which of its checks a clock edge triggers.

use serde_json::{Map, Value};

use crate::error::ReplayError;
use crate::{Bus, Protocol, Side, Signal};

/// What a replay needs to know of a wrapper besides its trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub wrapper: String,
    /// The clock of the first property module.
    pub clock: String,
    /// Each property module's clock, by instance: the wrapper input its `clk` is wired to.
    pub bus_clocks: Vec<(String, String)>,
    /// The wrapper's inputs but its clock; for a wrapper whose property modules run on more
    /// than one clock ([`Shape::is_multiclock`]), its clocks among them.
    pub inputs: Vec<Signal>,
    pub buses: Vec<Bus>,
    pub dut: String,
    pub outputs: Vec<Signal>,
    pub clocked: Vec<String>,
}

fn bad(problem: impl Into<String>) -> ReplayError {
    ReplayError::Design {
        problem: problem.into(),
    }
}

/// A module's name without Yosys's `$paramod$<hash>\` in front.
fn base_name(ty: &str) -> &str {
    ty.rsplit('\\').next().unwrap_or(ty)
}

/// The property module kinds that `cargo xtask codegen` writes.
fn property_kind(base: &str) -> Option<(Protocol, Side)> {
    Some(match base {
        "faxi_master" => (Protocol::Axi4, Side::Master),
        "faxi_slave" => (Protocol::Axi4, Side::Slave),
        "faxil_master" => (Protocol::Axil, Side::Master),
        "faxil_slave" => (Protocol::Axil, Side::Slave),
        "faxis_master" => (Protocol::Axis, Side::Master),
        "faxis_slave" => (Protocol::Axis, Side::Slave),
        _ => return None,
    })
}

/// A Verilog constant as Yosys writes it in JSON (binary digits, or a number) is nonzero.
fn truthy(v: Option<&Value>) -> bool {
    match v {
        Some(Value::String(s)) => s.contains('1'),
        Some(Value::Number(n)) => n.as_u64().is_some_and(|n| n != 0),
        _ => false,
    }
}

/// A module's ports of one direction, in the JSON's order.
fn ports(module: &Map<String, Value>, direction: &str) -> Vec<(Signal, Vec<Value>)> {
    let Some(ports) = module.get("ports").and_then(Value::as_object) else {
        return Vec::new();
    };
    ports
        .iter()
        .filter(|(_, p)| p.get("direction").and_then(Value::as_str) == Some(direction))
        .map(|(name, p)| {
            let bits = p
                .get("bits")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            (
                Signal {
                    name: name.clone(),
                    width: bits.len() as u32,
                },
                bits,
            )
        })
        .collect()
}

impl Shape {
    /// Whether the property modules run on more than one clock.
    pub fn is_multiclock(&self) -> bool {
        self.bus_clocks.iter().any(|(_, c)| *c != self.clock)
    }

    /// The distinct clocks of the property modules, in the order of their first module.
    pub fn clocks(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (_, c) in &self.bus_clocks {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
        out
    }

    /// Reads the design Yosys wrote for the wrapper.
    pub fn from_json(text: &str) -> Result<Shape, ReplayError> {
        let doc: Value = serde_json::from_str(text)
            .map_err(|e| bad(format!("not Yosys's JSON netlist: {e}")))?;
        let modules = doc
            .get("modules")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("no `modules`: not Yosys's JSON netlist"))?;
        let (wrapper, top) = modules
            .iter()
            .find(|(_, m)| truthy(m.pointer("/attributes/top")))
            .ok_or_else(|| bad("no module is marked top; write it after `prep -top <wrapper>`"))?;
        let top = top
            .as_object()
            .ok_or_else(|| bad(format!("module `{wrapper}` is not an object")))?;
        let module_of = |ty: &str| modules.get(ty).and_then(Value::as_object);
        let cells = top
            .get("cells")
            .and_then(Value::as_object)
            .ok_or_else(|| bad(format!("`{wrapper}` has no cells")))?;
        let inputs = ports(top, "input");
        let mut buses = Vec::new();
        let mut bus_clock_bits = Vec::new();
        let mut dut = None;
        for (name, cell) in cells {
            let ty = cell.get("type").and_then(Value::as_str).unwrap_or_default();
            let base = base_name(ty);
            let Some(module) = module_of(ty) else {
                continue;
            };
            if let Some((protocol, side)) = property_kind(base) {
                let bits = cell
                    .pointer("/connections/clk")
                    .cloned()
                    .ok_or_else(|| bad(format!("property module `{name}` has no clock")))?;
                bus_clock_bits.push((name.clone(), bits));
                let signals = ports(module, "input")
                    .into_iter()
                    .map(|(s, _)| s)
                    .filter(|s| s.name != "clk")
                    .collect();
                let keep_packed = protocol == Protocol::Axis
                    && truthy(
                        module
                            .get("parameter_default_values")
                            .and_then(|p| p.get("KEEP_PACKED")),
                    );
                buses.push(Bus {
                    instance: name.clone(),
                    protocol,
                    side,
                    signals,
                    keep_packed,
                });
            } else if !ty.starts_with('$') || ty.starts_with("$paramod") {
                // The one instance that is neither a property module nor a Yosys cell is the
                // module under proof; two would leave the replay no way to tell which.
                if let Some((other, _)) = &dut {
                    return Err(bad(format!(
                        "`{wrapper}` instantiates `{other}` and `{name}`; a proof wrapper holds the module under proof and property modules only"
                    )));
                }
                dut = Some((name.clone(), ports(module, "output")));
            }
        }
        if buses.is_empty() {
            return Err(bad(format!(
                "`{wrapper}` instantiates no property module (faxi_*, faxil_*, faxis_*)"
            )));
        }
        let (dut, outputs) =
            dut.ok_or_else(|| bad(format!("`{wrapper}` instantiates no module under proof")))?;
        let mut bus_clocks = Vec::new();
        for (bus, bits) in bus_clock_bits {
            let clock = inputs
                .iter()
                .find(|(_, b)| Value::Array(b.clone()) == bits)
                .map(|(s, _)| s.name.clone())
                .ok_or_else(|| {
                    bad(format!(
                        "the clock of property module `{bus}` is not an input of `{wrapper}`"
                    ))
                })?;
            bus_clocks.push((bus, clock));
        }
        let clock = bus_clocks
            .first()
            .map(|(_, c)| c.clone())
            .ok_or_else(|| bad("the property modules have no clock"))?;
        let multiclock = bus_clocks.iter().any(|(_, c)| *c != clock);
        let inputs = inputs
            .into_iter()
            .map(|(s, _)| s)
            .filter(|s| multiclock || s.name != clock)
            .collect();
        let mut clocked: Vec<String> = modules
            .values()
            .filter_map(|m| m.get("cells").and_then(Value::as_object))
            .flat_map(|cells| cells.iter())
            .filter(|(_, c)| c.get("type").and_then(Value::as_str) == Some("$check"))
            .filter(|(_, c)| {
                matches!(
                    c.pointer("/parameters/FLAVOR").and_then(Value::as_str),
                    Some("assert" | "assume")
                ) && truthy(c.pointer("/parameters/TRG_WIDTH"))
            })
            .map(|(n, _)| n.trim_start_matches('\\').to_string())
            // Unnamed checks get names such as `$assert$file.v:12$3`; only labels are reported.
            .filter(|n| !n.starts_with('$'))
            .collect();
        clocked.sort();
        clocked.dedup();
        Ok(Shape {
            wrapper: wrapper.clone(),
            clock,
            bus_clocks,
            inputs,
            buses,
            dut,
            outputs: outputs.into_iter().map(|(s, _)| s).collect(),
            clocked,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wrapper `fw_x` with clock `clk`, input `rst` and `v`, a module `x` with output `o`
    /// and a stream property module on it; one clocked and one unclocked check.
    const DESIGN: &str = r#"{"modules": {
        "$paramod$1\\faxis_master": {"attributes": {}, "parameter_default_values": {"KEEP_PACKED": "00000000000000000000000000000001"},
            "ports": {"clk": {"direction": "input", "bits": [2]}, "rst": {"direction": "input", "bits": [3]},
                      "tvalid": {"direction": "input", "bits": [4]}},
            "cells": {"valid_low_in_reset__t": {"type": "$check", "parameters": {"FLAVOR": "assert", "TRG_WIDTH": "00000000000000000000000000000001"}}}},
        "x": {"attributes": {}, "ports": {"clk": {"direction": "input", "bits": [2]}, "o": {"direction": "output", "bits": [5, 6]}}},
        "fw_x": {"attributes": {"top": "00000000000000000000000000000001"},
            "ports": {"clk": {"direction": "input", "bits": [2]}, "rst": {"direction": "input", "bits": [3]}, "v": {"direction": "input", "bits": [4]}},
            "cells": {"dut": {"type": "x", "connections": {}},
                      "f_out": {"type": "$paramod$1\\faxis_master", "connections": {"clk": [2], "rst": [3], "tvalid": [4]}},
                      "promise_p": {"type": "$check", "parameters": {"FLAVOR": "assert", "TRG_WIDTH": "00000000000000000000000000000000"}}}}
    }}"#;

    #[test]
    fn a_wrapper_is_read() {
        let s = Shape::from_json(DESIGN).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.wrapper, "fw_x");
        assert_eq!(s.clock, "clk");
        assert_eq!(
            s.inputs.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(),
            ["rst", "v"]
        );
        assert_eq!(s.dut, "dut");
        assert_eq!(
            s.outputs,
            [Signal {
                name: "o".into(),
                width: 2
            }]
        );
        assert_eq!(s.buses.len(), 1);
        assert_eq!(s.buses[0].instance, "f_out");
        assert_eq!(s.buses[0].protocol, Protocol::Axis);
        assert_eq!(s.buses[0].side, Side::Master);
        assert!(s.buses[0].keep_packed);
        assert_eq!(s.clocked, ["valid_low_in_reset__t"]);
    }

    #[test]
    fn a_design_without_property_modules_is_refused() {
        let e = Shape::from_json(&DESIGN.replace("faxis_master", "plain"))
            .err()
            .map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("instantiates `dut` and `f_out`")),
            "{e:?}"
        );
        let e = Shape::from_json("{}").err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("not Yosys's JSON netlist")));
    }
}
