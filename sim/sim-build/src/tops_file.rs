//! The line syntax of a tops list such as `sim/tops.txt`: the declarative list of a crate's own
//! tops, each line turned into a [`TopSpec`].
//!
//! ```text
//! # a comment
//! my_top                                   # a module built as it is
//! axi512 = axi_passthrough DATA_WIDTH=512   # a variant: parameters overridden
//! my_top_xu = my_top -- --x-assign unique --x-initial unique
//! ```
//!
//! After `name = module`, words of the form `PARAM=value` override parameters; everything after
//! a bare `--` is passed to Verilator as it is, for this top only.

use crate::{BuildError, TopSpec};

/// Parses one line (already stripped of comments and blank lines).
pub fn parse_line(line: &str) -> Result<TopSpec, String> {
    let (spec, flags) = match line.split_once(" -- ") {
        Some((s, f)) => (s.trim(), f.split_whitespace().collect::<Vec<_>>()),
        None => match line.strip_suffix(" --") {
            Some(s) => (s.trim(), Vec::new()),
            None => (line.trim(), Vec::new()),
        },
    };
    let mut top = match spec.split_once('=') {
        None => {
            if spec.split_whitespace().count() != 1 {
                return Err(format!(
                    "`{line}`: a line is a module name, or `name = module PARAM=value ... [-- flags]`"
                ));
            }
            TopSpec::new(spec)
        }
        Some((name, rest)) => {
            let name = name.trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return Err(format!(
                    "`{line}`: the top's name before `=` must be one word"
                ));
            }
            let mut words = rest.split_whitespace();
            let module = words
                .next()
                .ok_or_else(|| format!("`{line}` names no module after `=`"))?;
            let mut top = TopSpec::new(module).name(name);
            for w in words {
                let (k, v) = w
                    .split_once('=')
                    .ok_or_else(|| format!("`{w}` in `{line}` is not a PARAM=value override (Verilator flags go after ` -- `)"))?;
                top = top.param(k, v);
            }
            top
        }
    };
    for f in flags {
        top = top.flag(f);
    }
    Ok(top)
}

/// Parses a whole tops list; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<Vec<TopSpec>, BuildError> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i, l.split_once('#').map_or(l, |(a, _)| a).trim()))
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            parse_line(l).map_err(|problem| BuildError::TopsFile {
                file: origin.to_string(),
                line: i + 1,
                problem,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_variant_and_flag_lines() {
        let tops = parse(
            "# c\nmy_top\n\naxi512 = axi_passthrough DATA_WIDTH=512 # wide\nxu = my_top -- --x-assign unique --x-initial unique\n",
            "list.txt",
        )
        .expect("parses");
        assert_eq!(tops.len(), 3);
        assert_eq!(tops[0].top_name(), "my_top");
        assert_eq!(tops[0].module_name(), "my_top");
        assert_eq!(tops[1].top_name(), "axi512");
        assert_eq!(tops[1].module_name(), "axi_passthrough");
        assert_eq!(tops[1].params, vec![("DATA_WIDTH".into(), "512".into())]);
        assert_eq!(
            tops[2].flags,
            ["--x-assign", "unique", "--x-initial", "unique"]
        );
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = parse("ok\nx = m NOTANOVERRIDE\n", "list.txt").expect_err("bad override");
        let text = e.to_string();
        assert!(text.contains("list.txt:2"), "{text}");
        assert!(text.contains("NOTANOVERRIDE"), "{text}");
        assert!(parse("a b\n", "t").is_err());
        assert!(parse("x =\n", "t").is_err());
    }
}
