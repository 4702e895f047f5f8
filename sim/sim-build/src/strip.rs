//! The randomized build's sources: a folder of Verilog read without the initialisers of its
//! `reg` declarations ([`crate::TopSpec::strip_initialisers`]).

use std::path::Path;

use crate::cache::write_atomic;
use crate::error::io;
use crate::BuildError;

/// Copies the Verilog files of `src` into `dst` with the initialisers of `reg` declarations
/// removed. A file whose stripped text is unchanged keeps its timestamp.
pub(crate) fn strip_dir(src: &Path, dst: &Path) -> Result<(), BuildError> {
    std::fs::create_dir_all(dst).map_err(|e| io(dst, e))?;
    let entries = std::fs::read_dir(src).map_err(|e| io(src, e))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path
            .extension()
            .is_none_or(|e| e != "v" && e != "sv" && e != "vh")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
        let out: String = text.lines().map(|l| strip_line(l) + "\n").collect();
        let target = dst.join(entry.file_name());
        // Written only when it changed, and atomically: another test process may be reading
        // the copy at the same moment.
        if std::fs::read_to_string(&target).ok().as_deref() != Some(out.as_str()) {
            write_atomic(&target, &out)?;
        }
    }
    Ok(())
}

/// One line of RTL with any `= value` of a `reg` declaration dropped (brace-aware, so a
/// concatenation's commas do not end the value).
pub(crate) fn strip_line(line: &str) -> String {
    let (code, comment) = match line.find("//") {
        Some(i) => line.split_at(i),
        None => (line, ""),
    };
    let t = code.trim_start();
    let is_reg = t.starts_with("reg ") || (t.starts_with("(*") && t.contains(" reg "));
    if !is_reg || !t.trim_end().ends_with(';') {
        return line.to_string();
    }
    let mut out = String::new();
    let mut depth = 0i32;
    let mut skipping = false;
    for c in code.chars() {
        match c {
            '{' | '(' => depth += 1,
            '}' | ')' => depth -= 1,
            _ => {}
        }
        if skipping {
            if depth == 0 && (c == ',' || c == ';') {
                skipping = false;
                out.push(c);
            }
            continue;
        }
        if c == '=' && depth == 0 {
            skipping = true;
            while out.ends_with(' ') {
                out.pop();
            }
            continue;
        }
        out.push(c);
    }
    out + comment
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialisers_go_and_everything_else_stays() {
        assert_eq!(strip_line("reg [3:0] a = 4'd0, b;"), "reg [3:0] a, b;");
        assert_eq!(
            strip_line("reg [7:0] c = {4'h1, 4'h2}, d = 8'd3; // why"),
            "reg [7:0] c, d; // why"
        );
        assert_eq!(strip_line("(* keep *) reg x = 1'b1;"), "(* keep *) reg x;");
        assert_eq!(strip_line("wire w = a & b;"), "wire w = a & b;");
        assert_eq!(strip_line("assign q = r;"), "assign q = r;");
    }
}
