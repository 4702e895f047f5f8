//! Replays a model-based test case from its printed form (one operation per line, as a failing
//! property test prints it) on the card the environment names, with every operation traced:
//! `cargo run -p card-tests --example replay -- case.txt` (or `-` for standard input).

use std::io::Read as _;

use card_tests::ops::{self, Case};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: replay FILE|-  (a case as the model-based tests print it)");
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
    let base = card_tests::bench::config();
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
