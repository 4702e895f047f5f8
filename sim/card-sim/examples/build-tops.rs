//! Builds every top of card-sim into the cache (`cargo xtask tops`), so that the tests after it
//! find them built: for CI, or before working offline.

fn main() -> std::process::ExitCode {
    let tops: Vec<card_sim::TopDef> = card_sim::Top::ALL.iter().map(|t| t.def()).collect();
    match card_sim::build_tops(&tops) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("build-tops: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
