//! How proptest draws cases: the strategies for operations and their arguments, and the
//! property tests' proptest configuration.

use card_regs::REGISTERS;
use proptest::prelude::*;

use super::op::{op_settable, Case, Fault, Op, Pauses, Settable};
use crate::caps::Mode;
use crate::model::{Win, WINDOW};

fn win() -> impl Strategy<Value = Win> {
    prop_oneof![Just(Win::Low), Just(Win::High)]
}

fn mm_len() -> impl Strategy<Value = u64> {
    prop_oneof![3 => 1u64..=64, 3 => 1u64..=4096, 1 => 4096u64..=65536]
}

/// Offsets in a window: mostly in its first and last 2 KiB, so that the writes and reads of a
/// case overlap often enough for the reads to check bytes the case wrote.
fn offset() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => 0..WINDOW,
        2 => 0u64..2048,
        1 => (WINDOW - 2048)..WINDOW,
    ]
}

fn settable() -> impl Strategy<Value = Op> {
    let regs = op_settable();
    (0..regs.len(), any::<u32>(), 0u32..4, 0usize..5).prop_map(move |(i, v, small, pick)| {
        let reg = regs[i];
        // Lengths and gaps are drawn where the sources stay quick (a gap of 2^32 cycles is
        // 17 s of card time); every value is legal.
        let value = if reg.name.ends_with("_FRAME_LEN") {
            [0, 64, 4096, v % 0x2_0000, v % 1024][pick]
        } else if reg.name.ends_with("_GAP") {
            v % 2000
        } else if reg.name.ends_with("_PATTERN") || reg.name.ends_with("_POLICY") {
            small
        } else {
            v
        };
        Op::RegWrite {
            reg: Settable(reg),
            value,
        }
    })
}

fn op() -> impl Strategy<Value = Op> {
    let modes = prop_oneof![
        Just(Mode::Off),
        Just(Mode::Loop),
        Just(Mode::Gen),
        Just(Mode::Echo),
        Just(Mode::Check)
    ];
    let faults = proptest::sample::select(Fault::ALL.to_vec());
    prop_oneof![
        3 => (win(), offset(), mm_len(), any::<u32>())
            .prop_map(|(win, off, len, seed)| Op::Write { win, off, len, seed }),
        3 => (win(), offset(), mm_len()).prop_map(|(win, off, len)| Op::Read { win, off, len }),
        2 => (win(), offset(), mm_len(), any::<u32>())
            .prop_map(|(win, off, len, seed)| Op::WriteRead { win, off, len, seed }),
        1 => (win(), offset(), mm_len(), any::<u32>(), win(), offset(), mm_len()).prop_map(
            |(ww, wo, wl, ws, rw, ro, rl)| Op::Both {
                write: (ww, wo, wl, ws),
                read: (rw, ro, rl)
            }
        ),
        2 => settable(),
        2 => (0..REGISTERS.len()).prop_map(|i| Op::RegRead { reg: &REGISTERS[i] }),
        1 => modes.prop_map(Op::Mode),
        2 => (prop_oneof![3 => 1usize..=256, 2 => 1usize..=8192, 1 => 1usize..=65536], any::<u32>())
            .prop_map(|(len, seed)| Op::Loop { len, seed }),
        2 => (0usize..2, 0u32..=6).prop_map(|(src, frames)| Op::Gen { src, frames }),
        1 => (0u32..=4).prop_map(|frames| Op::Gen2 { frames }),
        2 => (any::<u32>(), 64usize..=2048).prop_map(|(seq, len)| Op::Echo { seq, len }),
        2 => (0u32..64, 64usize..=4096, faults)
            .prop_map(|(seq, len, fault)| Op::Check { seq, len, fault }),
        // Mostly a few frames; now and then more than a thousand, the scale at which a fault
        // that strikes once in many frames shows.
        2 => prop_oneof![4 => 1u32..=40, 1 => 1000u32..=1100]
            .prop_map(|frames| Op::Capture { frames }),
        1 => Just(Op::Clear),
        1 => (1u64..=50).prop_map(|us| Op::Wait { us }),
    ]
}

/// Cases of up to `max_ops` operations, with random pauses (0 to 40 % of cycles) on half of
/// them.
pub fn case(max_ops: usize) -> impl Strategy<Value = Case> {
    (
        proptest::option::of((0u64..1 << 62, 0u8..=40)),
        any::<bool>(),
        proptest::collection::vec(op(), 1..=max_ops),
    )
        .prop_map(|(p, reference_host, ops)| Case {
            pauses: p.map(|(seed, percent)| Pauses { seed, percent }),
            reference_host,
            ops,
        })
}

/// The proptest configuration for the model-based tests: `PROPTEST_CASES` cases (default
/// `default_cases`), failures persisted to `regressions` (relative to the crate's folder).
pub fn proptest_config(default_cases: u32, regressions: &'static str) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct(regressions),
        )),
        // Shrinking re-runs whole cases on the card; a bound keeps a failing run finite.
        max_shrink_iters: 400,
        ..ProptestConfig::default()
    }
}
