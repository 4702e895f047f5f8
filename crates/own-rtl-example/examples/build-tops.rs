//! Builds every top of this crate into the cache (`cargo xtask tops`), so that the tests after
//! it find them built: for CI, or before working offline.

fn main() -> std::process::ExitCode {
    match sim_runtime::build_tops(own_rtl_example::ALL_TOPS) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("build-tops: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
