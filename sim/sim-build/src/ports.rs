//! A verilated top's ports, read from the header Verilator generates.

/// A verilated port of a top.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    /// Its name as Verilator gives it (the RTL name).
    pub name: String,
    /// Width in bits.
    pub width: u32,
    /// True for outputs (and inouts, which are read only).
    pub output: bool,
}

/// Reads `VL_IN8(&clk,0,0);`, `VL_OUTW(&data,127,0,4);` and the like from a top header.
pub fn parse_ports(header: &str) -> Vec<Port> {
    header
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let output = if line.starts_with("VL_OUT") {
                true
            } else if line.starts_with("VL_IN") {
                // VL_INOUT is listed as an output: Rust may read it, and it is never driven.
                line.starts_with("VL_INOUT")
            } else {
                return None;
            };
            let args = line.split_once("(&")?.1.split_once(')')?.0;
            let mut parts = args.split(',');
            let name = parts.next()?.trim().to_string();
            let msb: u32 = parts.next()?.trim().parse().ok()?;
            let lsb: u32 = parts.next()?.trim().parse().ok()?;
            Some(Port {
                name,
                width: msb - lsb + 1,
                output,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_come_from_the_header() {
        let p =
            parse_ports("  VL_IN8(&clk,0,0);\n  VL_OUTW(&data,127,0,4);\n  VL_INOUT(&io,3,0);\n");
        assert_eq!(p.len(), 3);
        assert_eq!(
            (p[1].name.as_str(), p[1].width, p[1].output),
            ("data", 128, true)
        );
        assert!(p[2].output);
    }
}
