//! A campaign's home: the plan each slice reads from the `CAMPAIGN_*` variables, the seed rule
//! that makes a case's seed depend on the campaign's seed and the case's index only, and the
//! records that the slices, soak phases and what-if points write and `cargo xtask campaign`
//! merges.
//!
//! The campaign's tests are ordinary tests that cargo-nextest partitions over processes and
//! machines: card-tests' model-based slices (`tests/campaign.rs`) and soak phases
//! (`tests/soak.rs`), axi-bfm's protocol slices over the pass-throughs
//! (`tests/campaign_protocol.rs`) and xdma-bench's what-if grid (`tests/whatif.rs`). This crate
//! depends on serde alone, so that xtask can read the records through the same types.

mod plan;
mod record;

pub use plan::*;
pub use record::*;

/// Defines one test per slice, `name = slice;`, each calling `run(slice)`, and a test that the
/// list names every slice exactly once.
#[macro_export]
macro_rules! campaign_slices {
    ($run:ident; $($name:ident = $slice:expr;)*) => {
        $(
            #[test]
            fn $name() {
                $run($slice);
            }
        )*
        /// The slice tests above cover every slice, each once.
        #[test]
        fn every_slice_has_its_test() {
            let mut slices = vec![$($slice),*];
            slices.sort_unstable();
            assert_eq!(slices, (0..$crate::SLICES).collect::<Vec<u64>>());
        }
    };
}
