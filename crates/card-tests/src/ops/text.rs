//! The replayable text form of a case: one operation per line, as a case's `Debug` prints it
//! and [`Case::parse`] reads it back.

use card_regs::REGISTERS;

use super::op::{op_settable, Case, Fault, Op, Pauses, Settable};
use crate::caps::Mode;
use crate::model::Win;

fn parse_num(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let r = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("`{s}` is not a number"))
}

fn parse_at(s: &str) -> Result<(Win, u64), String> {
    let (w, off) = s
        .split_once('+')
        .ok_or_else(|| format!("`{s}`: expected low+OFFSET or high+OFFSET"))?;
    let win = match w {
        "low" => Win::Low,
        "high" => Win::High,
        _ => return Err(format!("`{w}`: the windows are low and high")),
    };
    Ok((win, parse_num(off)?))
}

fn key<'a>(s: &'a str, k: &str) -> Result<&'a str, String> {
    s.strip_prefix(k)
        .and_then(|r| r.strip_prefix('='))
        .ok_or_else(|| format!("`{s}`: expected {k}=..."))
}

impl Op {
    /// Reads one operation in the form [`Op`]'s `Display` writes.
    pub fn parse(line: &str) -> Result<Op, String> {
        let w: Vec<&str> = line.split_whitespace().collect();
        let n = |i: usize| -> Result<&str, String> {
            w.get(i)
                .copied()
                .ok_or_else(|| format!("`{line}`: too few words"))
        };
        let reg = |name: &str| {
            REGISTERS
                .iter()
                .find(|r| r.name == name)
                .ok_or_else(|| format!("`{name}` is not in the register table"))
        };
        let op = match n(0)? {
            kind @ ("write" | "write_read") => {
                let (win, off) = parse_at(n(1)?)?;
                let len = parse_num(n(2)?)?;
                let seed = parse_num(key(n(3)?, "seed")?)? as u32;
                if kind == "write" {
                    Op::Write {
                        win,
                        off,
                        len,
                        seed,
                    }
                } else {
                    Op::WriteRead {
                        win,
                        off,
                        len,
                        seed,
                    }
                }
            }
            "read" => {
                let (win, off) = parse_at(n(1)?)?;
                Op::Read {
                    win,
                    off,
                    len: parse_num(n(2)?)?,
                }
            }
            "both" => {
                let (ww, wo) = parse_at(n(2)?)?;
                let (rw, ro) = parse_at(n(6)?)?;
                Op::Both {
                    write: (
                        ww,
                        wo,
                        parse_num(n(3)?)?,
                        parse_num(key(n(4)?, "seed")?)? as u32,
                    ),
                    read: (rw, ro, parse_num(n(7)?)?),
                }
            }
            "reg_write" => {
                let r = reg(n(1)?)?;
                if !op_settable().contains(&r) {
                    return Err(format!("{} is not one of the registers cases set", r.name));
                }
                Op::RegWrite {
                    reg: Settable(r),
                    value: parse_num(n(2)?)? as u32,
                }
            }
            "reg_read" => Op::RegRead { reg: reg(n(1)?)? },
            "mode" => {
                Op::Mode(Mode::from_name(n(1)?).ok_or_else(|| format!("`{}` is not a mode", w[1]))?)
            }
            "loop" => Op::Loop {
                len: parse_num(n(1)?)? as usize,
                seed: parse_num(key(n(2)?, "seed")?)? as u32,
            },
            "gen" => Op::Gen {
                src: parse_num(n(1)?)? as usize,
                frames: parse_num(key(n(2)?, "frames")?)? as u32,
            },
            "gen2" => Op::Gen2 {
                frames: parse_num(key(n(1)?, "frames")?)? as u32,
            },
            "echo" => Op::Echo {
                seq: parse_num(key(n(1)?, "seq")?)? as u32,
                len: parse_num(key(n(2)?, "len")?)? as usize,
            },
            "check" => {
                let f = key(n(3)?, "fault")?;
                Op::Check {
                    seq: parse_num(key(n(1)?, "seq")?)? as u32,
                    len: parse_num(key(n(2)?, "len")?)? as usize,
                    fault: Fault::ALL
                        .into_iter()
                        .find(|x| x.name() == f)
                        .ok_or_else(|| format!("`{f}` is not a fault"))?,
                }
            }
            "capture" => Op::Capture {
                frames: parse_num(key(n(1)?, "frames")?)? as u32,
            },
            "clear" => Op::Clear,
            "wait" => Op::Wait {
                us: parse_num(n(1)?.trim_end_matches("us"))?,
            },
            other => return Err(format!("`{other}` is not an operation")),
        };
        Ok(op)
    }
}

impl Case {
    /// Reads a case in the form its `Debug` writes (blank lines and `#` comments skipped).
    pub fn parse(text: &str) -> Result<Case, String> {
        let mut case = Case {
            pauses: None,
            reference_host: false,
            ops: Vec::new(),
        };
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let at = |e: String| format!("line {}: {e}", i + 1);
            if let Some(rest) = line.strip_prefix("pauses ") {
                case.pauses = if rest.trim() == "none" {
                    None
                } else {
                    let w: Vec<&str> = rest.split_whitespace().collect();
                    let seed =
                        parse_num(key(w.first().copied().unwrap_or(""), "seed").map_err(at)?)
                            .map_err(at)?;
                    let percent =
                        parse_num(key(w.get(1).copied().unwrap_or(""), "percent").map_err(at)?)
                            .map_err(at)?;
                    Some(Pauses {
                        seed,
                        percent: percent.min(90) as u8,
                    })
                };
            } else if let Some(rest) = line.strip_prefix("host ") {
                case.reference_host = match rest.trim() {
                    "reference" => true,
                    "zero" => false,
                    other => return Err(at(format!("`{other}`: host is reference or zero"))),
                };
            } else {
                case.ops.push(Op::parse(line).map_err(at)?);
            }
        }
        Ok(case)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::{Strategy, ValueTree};

    use crate::ops::strategy::case;

    #[test]
    fn every_operation_prints_as_it_parses() {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        for _ in 0..200 {
            let c = case(20).new_tree(&mut runner).expect("a case").current();
            let text = format!("{c:?}");
            let back = Case::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(back, c, "{text}");
        }
    }
}
