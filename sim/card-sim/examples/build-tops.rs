//! Builds the tops of card-sim into the cache (`cargo xtask tops`), every one or those named
//! as arguments, so that what runs after it finds them built: CI, a guest run whose device
//! must answer at once, or work offline.

use std::process::ExitCode;

fn main() -> ExitCode {
    let names: Vec<String> = std::env::args().skip(1).collect();
    let mut tops = Vec::new();
    for t in card_sim::Top::ALL {
        // The netlist tops need `cargo xtask synth`'s output and are built by `cargo xtask
        // netlist`, only when named here.
        let every = names.is_empty() && !t.name().ends_with("_nl");
        if every || names.iter().any(|n| n == t.name()) {
            tops.push(t.def());
        }
    }
    if let Some(n) = names
        .iter()
        .find(|n| !card_sim::Top::ALL.iter().any(|t| t.name() == n.as_str()))
    {
        eprintln!(
            "build-tops: card-sim has no top `{n}`; its tops are: {}",
            card_sim::built_tops().join(", ")
        );
        return ExitCode::FAILURE;
    }
    match card_sim::build_tops(&tops) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("build-tops: {e}");
            ExitCode::FAILURE
        }
    }
}
