//! Replays a model-based test case from its printed form (one operation per line, as a failing
//! property test prints it) on the card the environment names, with every operation traced:
//! `cargo run -p card-tests --example replay -- case.txt` (or `-` for standard input).
//! `--top NAME` runs it on another simulated top of sim/card-sim/tops.txt, or on a deliberately
//! broken card that a campaign was run on (`cargo xtask campaign --top`): `sim_top_fault_rd_beat`
//! and `sim_top_fault_seq` are `sim_top` with one of its faults turned on at run time.

use std::io::Read as _;

use card_tests::ops::{self, Case};

const USAGE: &str =
    "usage: replay [--top SIM_TOP] FILE|-  (a case as the model-based tests print it)";

fn main() {
    let mut args = std::env::args().skip(1);
    let mut top = None;
    let mut path = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--top" => match args.next() {
                Some(t) => top = Some(t),
                None => {
                    eprintln!("--top needs the name of a simulated top\n{USAGE}");
                    std::process::exit(2);
                }
            },
            _ if path.is_none() => path = Some(a),
            _ => {
                eprintln!("`{a}`: one case file only\n{USAGE}");
                std::process::exit(2);
            }
        }
    }
    let Some(path) = path else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let mut text = String::new();
    let read = if path == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(&path).map(|t| text = t)
    };
    if let Err(e) = read {
        eprintln!("cannot read {path}: {e}");
        std::process::exit(2);
    }
    let case = match Case::parse(&text) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    if std::env::var_os(ops::TRACE_ENV).is_none() {
        eprintln!("(set {}=1 to see every operation)", ops::TRACE_ENV);
    }
    let mut base = card_tests::fixture::config();
    if let Some(top) = top {
        if base.backend != xdma::BackendKind::Sim {
            eprintln!(
                "--top {top} names a simulated card; XDMA_BACKEND={} serves whatever card is behind it",
                base.backend.name()
            );
            std::process::exit(2);
        }
        ops::edit_sim(&mut base, |s| s.top = top);
    }
    let started = std::time::Instant::now();
    match ops::run_case(&case, &base) {
        Ok(()) => println!(
            "the card agreed with the model on all {} operations ({:.1} s)",
            case.ops.len(),
            started.elapsed().as_secs_f64()
        ),
        Err(f) => {
            println!("{f}");
            std::process::exit(1);
        }
    }
}
