//! `sim-trace-diff A B`: compares two output traces, or two folders of them pair by pair (see
//! `sim_runtime::trace`), and prints per trace where the two runs first differ. Exits with 1
//! when any pair differs, 2 when the traces cannot be read.

use std::path::Path;
use std::process::ExitCode;

use sim_runtime::trace::{compare, compare_dirs, Comparison};

/// How many outputs are listed after the first difference.
const LISTED: usize = 8;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [a, b] = args.as_slice() else {
        eprintln!("usage: sim-trace-diff A B (two trace files, or two folders of traces)");
        return ExitCode::from(2);
    };
    let (a, b) = (Path::new(a), Path::new(b));
    let pairs = if a.is_dir() && b.is_dir() {
        compare_dirs(a, b)
    } else {
        compare(a, b).map(|c| vec![(b.display().to_string(), c)])
    };
    let pairs = match pairs {
        Ok(p) => p,
        Err(e) => {
            eprintln!("sim-trace-diff: {e}");
            return ExitCode::from(2);
        }
    };
    let mut differ = false;
    for (name, c) in &pairs {
        differ |= c.first().is_some();
        println!("{}", describe(name, c));
    }
    if differ {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The lines that say where one pair differs.
fn describe(name: &str, c: &Comparison) -> String {
    let Some(first) = c.first() else {
        return format!(
            "{name}: no output differs up to {} ps (the runs end at {} ps and {} ps)",
            c.compared_to_ps, c.ends_ps.0, c.ends_ps.1
        );
    };
    let mut s = format!("{name}: first differing cycle: {first}");
    let rest = &c.differences[1..];
    if !rest.is_empty() {
        s.push_str(&format!("\n  then {} more outputs part:", rest.len()));
        for d in rest.iter().take(LISTED) {
            s.push_str(&format!("\n    {d}"));
        }
        if rest.len() > LISTED {
            s.push_str("\n    ...");
        }
    }
    s.push_str(&format!(
        "\n  (compared up to {} ps; the runs end at {} ps and {} ps)",
        c.compared_to_ps, c.ends_ps.0, c.ends_ps.1
    ));
    s
}
