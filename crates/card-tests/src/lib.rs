//! card-tests: system tests of the card through the host API on either backend (the RTL's
//! block- and card-level tests are rtl-tests'), written once against the `xdma` traits and run
//! on whichever card the environment names: the simulated card (`XDMA_BACKEND=sim`, the default)
//! or a board on the XDMA driver (`XDMA_BACKEND=hw XDMA_DEVICE=/dev/xdma0`), which
//! `cargo xtask test` also plays with an `xdma-fuse` mount of the simulated card.
//!
//! The library is the suite's harness; the tests are under `tests/`:
//! - [`Fixture`] opens the card from the environment with the suite's configuration
//!   (`suite.toml` unless `XDMA_CONFIG` names another file), finds what it has
//!   ([`Capabilities`], the one place that decides), skips a test that needs what the card
//!   lacks with a printed reason ([`Fixture::skip`]), and puts every register it may have
//!   changed back to its reset value when the test ends, so that tests on one board follow
//!   each other from the same state;
//! - [`regs`] reads and writes the register table's registers (64-bit counters included);
//! - [`stream`] sends and receives frames whole on either backend and drains a stream;
//! - [`mm`] moves memory-mapped data at any card address on any engine, and [`capture`]
//!   takes the frames of the CAPTURE ring;
//! - [`model`] is a plain Rust model of what the card holds and emits (memory, frame
//!   sequences and payloads, counters), and [`ops`] the operations of the model-based
//!   property tests, their strategies, the runner that checks card and model against each
//!   other after every step, and the replayable text form of a failing sequence, which the
//!   campaign's model-based slices (`tests/campaign.rs`, planned and recorded by the
//!   `campaign` crate) run in seeded shares.
//!
//! No test asks which backend it runs on: what differs between cards is in [`Capabilities`],
//! and what differs between backends is only what the API itself says (a stream wait that a
//! backend cannot honour, [`stream::Waits`]).

pub mod caps;
pub mod capture;
pub mod fixture;
pub mod mm;
pub mod model;
pub mod ops;
pub mod regs;
pub mod stream;

pub use caps::{Capabilities, Mode};
pub use fixture::{Fixture, SKIP_LOG_ENV, WAIT_ENV};

use rand::{Rng as _, SeedableRng};
use rand_xorshift::XorShiftRng;

/// Fills `buf` with test data that differs from byte to byte and from seed to seed, so that a
/// byte moved to the wrong place or a stale byte shows: the bytes of the workspace's one
/// generator (`XorShiftRng`) seeded with `seed`, so the same seed and length give the same
/// bytes on every run and every backend.
pub fn pattern(seed: u32, buf: &mut [u8]) {
    XorShiftRng::seed_from_u64(u64::from(seed)).fill_bytes(buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_differs_by_seed_and_position() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        pattern(1, &mut a);
        pattern(2, &mut b);
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        assert!(same < 64, "{same} equal bytes");
        // Every 16-byte beat differs from the next, so that a repeated beat is visible.
        for w in a.chunks(16).collect::<Vec<_>>().windows(2) {
            assert_ne!(w[0], w[1]);
        }
        let mut c = vec![0u8; 4096];
        pattern(1, &mut c);
        assert_eq!(a, c, "deterministic");
    }
}
