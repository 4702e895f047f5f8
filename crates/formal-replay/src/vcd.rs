//! The VCD trace yosys-smtbmc writes for a counterexample: one step per solver step, marked by
//! its `smt_step` variable; between steps it only toggles the clocks. Signals are named by
//! their scope below the top (`dut.m_axis_tvalid`) or by their name at the top (`rst`).

use std::collections::HashMap;

use crate::error::ReplayError;

/// The values of every signal at every step.
pub(crate) struct Trace {
    /// Each signal's VCD identifier, by path.
    ids: HashMap<String, String>,
    /// Per step, the value of every identifier (binary, most significant bit first).
    steps: Vec<HashMap<String, String>>,
}

fn bad(problem: impl Into<String>) -> ReplayError {
    ReplayError::Trace {
        problem: problem.into(),
    }
}

impl Trace {
    /// Reads `text`, whose top scope must be `top`.
    pub(crate) fn parse(text: &str, top: &str) -> Result<Trace, ReplayError> {
        let (defs, changes) = text
            .split_once("$enddefinitions")
            .ok_or_else(|| bad("no `$enddefinitions`: not a VCD file"))?;
        let mut ids = HashMap::new();
        let mut scope: Vec<String> = Vec::new();
        let mut step_id = None;
        let mut tokens = defs.split_whitespace();
        while let Some(t) = tokens.next() {
            match t {
                "$scope" => {
                    let _kind = tokens.next();
                    let name = tokens.next().ok_or_else(|| bad("a `$scope` has no name"))?;
                    scope.push(name.to_string());
                }
                "$upscope" => {
                    scope.pop();
                }
                "$var" => {
                    let _kind = tokens.next();
                    let _width = tokens.next();
                    let id = tokens
                        .next()
                        .ok_or_else(|| bad("a `$var` has no identifier"))?;
                    let name = tokens.next().ok_or_else(|| bad("a `$var` has no name"))?;
                    if scope.is_empty() && name == "smt_step" {
                        step_id = Some(id.to_string());
                    } else if scope.first().map(String::as_str) == Some(top) {
                        let mut path = scope[1..].join(".");
                        if !path.is_empty() {
                            path.push('.');
                        }
                        path.push_str(name);
                        ids.insert(path, id.to_string());
                    }
                }
                _ => {}
            }
        }
        if ids.is_empty() {
            return Err(bad(format!("no signal under the top scope `{top}`")));
        }
        let step_id = step_id.ok_or_else(|| bad("no `smt_step` variable: not smtbmc's trace"))?;
        let mut steps = Vec::new();
        let mut values: HashMap<String, String> = HashMap::new();
        let mut stepped = false;
        // A vector's value and its identifier are two tokens: the value waits here for it.
        let mut pending: Option<&str> = None;
        for t in changes.split_whitespace() {
            let (value, id) = if let Some(bits) = pending.take() {
                (bits, t)
            } else if t.starts_with('#') {
                if stepped {
                    steps.push(values.clone());
                    stepped = false;
                }
                continue;
            } else if let Some(bits) = t.strip_prefix(['b', 'B']) {
                pending = Some(bits);
                continue;
            } else if let Some(id) = t.strip_prefix(['0', '1', 'x', 'z', 'X', 'Z']) {
                (&t[..1], id)
            } else {
                continue;
            };
            if id == step_id {
                stepped = true;
            }
            values.insert(id.to_string(), value.to_string());
        }
        if stepped {
            steps.push(values);
        }
        if steps.is_empty() {
            return Err(bad("the trace has no step"));
        }
        Ok(Trace { ids, steps })
    }

    pub(crate) fn steps(&self) -> usize {
        self.steps.len()
    }

    /// The value of `path` at `step` in hex, `width` bits wide (x and z read as 0).
    pub(crate) fn value(&self, step: usize, path: &str, width: u32) -> Result<String, ReplayError> {
        let id = self
            .ids
            .get(path)
            .ok_or_else(|| bad(format!("no signal `{path}` in the trace")))?;
        let bits = self
            .steps
            .get(step)
            .and_then(|s| s.get(id))
            .ok_or_else(|| bad(format!("`{path}` has no value at step {step}")))?;
        Ok(hex(bits, width))
    }
}

/// Binary digits (most significant first, shorter than `width` meaning leading zeros) as hex
/// of `width` bits.
fn hex(bits: &str, width: u32) -> String {
    let digits = width.div_ceil(4).max(1) as usize;
    let mut nibbles = vec![0u8; digits];
    for (i, c) in bits.chars().rev().enumerate().take(width as usize) {
        if c == '1' {
            nibbles[i / 4] |= 1 << (i % 4);
        }
    }
    nibbles
        .iter()
        .rev()
        .map(|n| char::from_digit(u32::from(*n), 16).unwrap_or('0'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VCD: &str = "$var integer 32 t smt_step $end\n$var event 1 ! smt_clock $end\n\
        $scope module top $end\n$var wire 1 n0 clk $end\n$var wire 12 n1 data $end\n\
        $scope module dut $end\n$var wire 1 n2 valid $end\n$upscope $end\n$upscope $end\n\
        $enddefinitions $end\n#0\n1!\nb0 t\nb1 n0\nb101 n1\nb0 n2\n#5\nb0 n0\n\
        #10\n1!\nb1 t\nb1 n0\nb1 n2\n#15\nb0 n0\n";

    #[test]
    fn steps_are_read_by_path() {
        let t = Trace::parse(VCD, "top").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.steps(), 2);
        assert_eq!(t.value(0, "data", 12).ok().as_deref(), Some("005"));
        // A value holds until it changes.
        assert_eq!(t.value(1, "data", 12).ok().as_deref(), Some("005"));
        assert_eq!(t.value(0, "dut.valid", 1).ok().as_deref(), Some("0"));
        assert_eq!(t.value(1, "dut.valid", 1).ok().as_deref(), Some("1"));
        let e = t.value(0, "nothing", 1).err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("no signal `nothing`")));
    }

    #[test]
    fn a_file_that_is_no_trace_is_refused() {
        let e = Trace::parse("hello", "top").err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("not a VCD file")));
        let e = Trace::parse(VCD, "other").err().map(|e| e.to_string());
        assert!(e.is_some_and(|e| e.contains("no signal under the top scope `other`")));
    }

    #[test]
    fn binary_becomes_hex() {
        assert_eq!(hex("1", 1), "1");
        assert_eq!(hex("10000", 5), "10");
        assert_eq!(hex("x1", 2), "1");
        assert_eq!(hex("1", 16), "0001");
    }
}
