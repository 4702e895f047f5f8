//! Model-based property tests: random sequences of memory-mapped transfers, register accesses,
//! mode changes, stream frames in every mode and waits, run on the card and on the plain Rust
//! model of `card_tests::model`, which must agree after every step. On the simulated card each
//! case also draws random bus pauses (the protocol monitors stay on) and the host driver's
//! costs. `PROPTEST_CASES` sets the number of cases; failures shrink to a short sequence,
//! printed one operation per line (replay it with `cargo run -p card-tests --example replay`),
//! and their seeds are kept in `tests/regressions/model.txt`, which proptest replays first on
//! every later run: commit it with the fix. The sequences the deliberately broken cards shrank
//! to are committed beside it (`broken-*.txt`, see `tests/broken.rs`).

use card_tests::{ops, Fixture};
use proptest::prelude::*;

/// Cases per run when PROPTEST_CASES is not set: what fits the CI budget on both runs.
const CASES: u32 = 24;

proptest! {
    #![proptest_config(ops::proptest_config(CASES, "tests/regressions/model.txt"))]

    #[test]
    fn the_card_agrees_with_the_model(case in ops::case(24)) {
        let base = card_tests::fixture::config();
        if let Err(f) = ops::run_case(&case, &base) {
            prop_assert!(false, "{f}");
        }
    }
}

/// The property needs the register map; say so rather than pass on a card without it. A card
/// without some path runs the operations it has (a stream operation on a card without that
/// mode does nothing), and the modes it lacks are printed here.
#[test]
fn the_model_applies_to_this_card() {
    let b = Fixture::open();
    if let Some(why) = b.caps.lacks_registers() {
        b.skip(&why);
        return;
    }
    let lacking: Vec<_> = card_tests::Mode::ALL
        .into_iter()
        .filter(|&m| !b.caps.has_mode(m))
        .collect();
    if !lacking.is_empty() || b.caps.mm().is_err() {
        eprintln!(
            "the model-based cases run without {lacking:?}{}",
            if b.caps.mm().is_err() {
                " and memory-mapped transfers"
            } else {
                ""
            }
        );
    }
}
