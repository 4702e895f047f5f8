//! The plan: what a slice runs, read from the `CAMPAIGN_*` variables, and the seed rule.
//!
//! The split does not depend on how many shards run it: case `i` of a campaign of
//! `CAMPAIGN_CASES` belongs to slice `i % SLICES`, and its random generator is seeded from
//! `(CAMPAIGN_SEED, i)` alone. Shards that take disjoint sets of slices therefore run disjoint
//! sets of cases, their union is the whole campaign, and a failing case replays anywhere from
//! the campaign's seed and its index (`CAMPAIGN_CASE`), or from its shrunk sequence with the
//! `replay` example.
//!
//! Without any `CAMPAIGN_*` variable the slices run a few cases only ([`DEFAULT_CASES`]), so
//! that they stay cheap in the per-push test run.

use std::path::{Path, PathBuf};

/// How many fuzz slices the campaign is cut into: the most shards that still all get work.
pub const SLICES: u64 = 16;

/// Folder for this shard's records; none are written when it is unset.
pub const OUT_ENV: &str = "CAMPAIGN_OUT";
/// Model-based cases in the whole campaign, over all slices.
pub const CASES_ENV: &str = "CAMPAIGN_CASES";
/// The campaign's seed, from which every case's seed is derived.
pub const SEED_ENV: &str = "CAMPAIGN_SEED";
/// The simulated top the model-based cases run on, or a deliberately broken card (a fault of
/// `sim_top` turned on at run time, such as `sim_top_fault_rd_beat`).
pub const TOP_ENV: &str = "CAMPAIGN_TOP";
/// Runs only the case of this index (a replay); every other case is left out.
pub const CASE_ENV: &str = "CAMPAIGN_CASE";
/// Protocol fuzz cases per protocol in the whole campaign, over all slices.
pub const PROTOCOL_ENV: &str = "CAMPAIGN_PROTOCOL_CASES";
/// The most shrink steps a failing case takes (each re-runs a case on a fresh card).
pub const SHRINK_ENV: &str = "CAMPAIGN_SHRINK_ITERS";

/// Model-based cases when `CAMPAIGN_CASES` is unset: one each for the first slices, about
/// 2.5 s of card time per case, which keeps the per-push test run's share small.
pub const DEFAULT_CASES: u64 = 4;
/// Protocol fuzz cases per protocol when `CAMPAIGN_PROTOCOL_CASES` is unset: two per slice, a
/// few milliseconds each on the pass-throughs.
pub const DEFAULT_PROTOCOL_CASES: u64 = 32;
/// The campaign seed when `CAMPAIGN_SEED` is unset.
pub const DEFAULT_SEED: u64 = 0x0c4a_d5ee_d025;
/// Shrink steps when `CAMPAIGN_SHRINK_ITERS` is unset: as the model-based test's bound.
pub const DEFAULT_SHRINK_ITERS: u32 = 400;

/// What a slice runs, read from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The campaign's seed.
    pub seed: u64,
    /// Model-based cases over all slices.
    pub cases: u64,
    /// Protocol fuzz cases per protocol over all slices.
    pub protocol_cases: u64,
    /// The simulated top, when not the suite's.
    pub top: Option<String>,
    /// The one case to run, for a replay.
    pub only: Option<u64>,
    /// Shrink steps of a failing case.
    pub shrink_iters: u32,
    /// Where this shard's records go.
    pub out: Option<PathBuf>,
    /// Whether any `CAMPAIGN_*` variable was set: a campaign, rather than the per-push run.
    pub in_campaign: bool,
}

/// A number from the environment: decimal, `0x` hexadecimal, `_` separators allowed.
fn number(vars: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<Option<u64>, String> {
    let Some(v) = vars(name).filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    let t = v.trim().replace('_', "");
    let parsed = match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    parsed
        .map(Some)
        .map_err(|_| format!("{name}={v} is not a number (decimal or 0x hexadecimal)"))
}

impl Plan {
    /// The plan the process's environment describes.
    pub fn from_env() -> Result<Plan, String> {
        Plan::from_vars(&|k| std::env::var(k).ok())
    }

    /// The plan that `vars` (an environment) describes; a variable that does not parse is an
    /// error naming it.
    pub fn from_vars(vars: &dyn Fn(&str) -> Option<String>) -> Result<Plan, String> {
        let in_campaign = [
            OUT_ENV,
            CASES_ENV,
            SEED_ENV,
            TOP_ENV,
            CASE_ENV,
            PROTOCOL_ENV,
        ]
        .iter()
        .any(|k| vars(k).is_some_and(|v| !v.trim().is_empty()));
        let shrink = number(vars, SHRINK_ENV)?.unwrap_or(u64::from(DEFAULT_SHRINK_ITERS));
        Ok(Plan {
            seed: number(vars, SEED_ENV)?.unwrap_or(DEFAULT_SEED),
            cases: number(vars, CASES_ENV)?.unwrap_or(DEFAULT_CASES),
            protocol_cases: number(vars, PROTOCOL_ENV)?.unwrap_or(DEFAULT_PROTOCOL_CASES),
            top: vars(TOP_ENV).filter(|t| !t.trim().is_empty()),
            only: number(vars, CASE_ENV)?,
            shrink_iters: u32::try_from(shrink)
                .map_err(|_| format!("{SHRINK_ENV}={shrink} is too large"))?,
            out: vars(OUT_ENV)
                .filter(|p| !p.trim().is_empty())
                .map(PathBuf::from),
            in_campaign,
        })
    }

    /// The indices of the model-based cases of `slice`, in order.
    pub fn slice_cases(&self, slice: u64) -> Vec<u64> {
        (slice..self.cases)
            .step_by(SLICES as usize)
            .filter(|i| self.only.is_none_or(|o| o == *i))
            .collect()
    }

    /// The protocol fuzz cases (per protocol) of `slice`: an even share of the total, the
    /// first slices taking one more when it does not divide. None during a replay of one
    /// model-based case.
    pub fn protocol_share(&self, slice: u64) -> u64 {
        if self.only.is_some() {
            return 0;
        }
        self.protocol_cases / SLICES + u64::from(slice < self.protocol_cases % SLICES)
    }
}

/// SplitMix64's step: a well-mixed 64-bit value from any input, so that neighbouring indices
/// give unrelated seeds.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A 64-bit seed for draw `index` of stream `stream` (one stream per use: the model-based
/// cases, each protocol) of the campaign seeded with `seed`.
pub fn mix(seed: u64, stream: u64, index: u64) -> u64 {
    splitmix(splitmix(seed ^ splitmix(stream)) ^ index)
}

/// The stream of the model-based cases in [`mix`].
pub const MODEL_STREAM: u64 = 0;
/// The stream of the AXI4 pass-through's protocol fuzz cases in [`mix`].
pub const AXI_STREAM: u64 = 1;
/// The stream of the AXI-Stream pass-through's protocol fuzz cases in [`mix`].
pub const AXIS_STREAM: u64 = 2;
/// The stream of the AXI4-Lite pass-through's protocol fuzz cases in [`mix`].
pub const AXIL_STREAM: u64 = 3;

/// The 32-byte seed of proptest's ChaCha generator for model-based case `index`.
pub fn case_seed(seed: u64, index: u64) -> [u8; 32] {
    let mut out = [0u8; 32];
    let first = mix(seed, MODEL_STREAM, index);
    for (k, chunk) in out.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&splitmix(first ^ k as u64).to_le_bytes());
    }
    out
}

/// The command that runs model-based case `index` of the campaign seeded with `seed` again,
/// alone, in the slice test that owns it (on `top` when given).
pub fn seed_replay_command(seed: u64, index: u64, top: Option<&str>) -> String {
    let slice = index % SLICES;
    format!(
        "{}{SEED_ENV}={seed:#x} {CASES_ENV}={} {CASE_ENV}={index} {PROTOCOL_ENV}=0 cargo nextest run --workspace -E 'test(=campaign_fuzz_slice_{slice:02})'",
        top.map(|t| format!("{TOP_ENV}={t} ")).unwrap_or_default(),
        index + 1,
    )
}

/// The command that replays a shrunk sequence saved in `file` (on `top` when given).
pub fn sequence_replay_command(file: &Path, top: Option<&str>) -> String {
    format!(
        "cargo run --example replay -- {}{}",
        top.map(|t| format!("--top {t} ")).unwrap_or_default(),
        file.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn plan(vars: &[(&str, &str)]) -> Result<Plan, String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Plan::from_vars(&move |k| {
            vars.iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
        })
    }

    /// Every case of a campaign falls in exactly one slice, whatever the count of cases.
    #[test]
    fn the_slices_cut_the_campaign_into_disjoint_parts() {
        for cases in [0u64, 1, 15, 16, 17, 64, 1000] {
            let p = plan(&[(CASES_ENV, &cases.to_string())]).expect("a plan");
            let mut seen = BTreeSet::new();
            for s in 0..SLICES {
                for i in p.slice_cases(s) {
                    assert!(seen.insert(i), "case {i} in two slices");
                }
            }
            assert_eq!(seen, (0..cases).collect::<BTreeSet<_>>(), "{cases} cases");
            let protocol = plan(&[(PROTOCOL_ENV, &cases.to_string())]).expect("a plan");
            let shares: u64 = (0..SLICES).map(|s| protocol.protocol_share(s)).sum();
            assert_eq!(shares, cases);
        }
    }

    #[test]
    fn a_replay_runs_its_one_case_in_its_own_slice() {
        let p = plan(&[(CASES_ENV, "100"), (CASE_ENV, "37")]).expect("a plan");
        for s in 0..SLICES {
            let want: Vec<u64> = if s == 37 % SLICES { vec![37] } else { vec![] };
            assert_eq!(p.slice_cases(s), want);
            assert_eq!(p.protocol_share(s), 0);
        }
        let cmd = seed_replay_command(0x25, 37, Some("sim_top_fault_seq"));
        assert!(cmd.contains("CAMPAIGN_CASE=37") && cmd.contains("campaign_fuzz_slice_05"));
        assert!(cmd.contains("CAMPAIGN_TOP=sim_top_fault_seq") && cmd.contains("0x25"));
    }

    #[test]
    fn seeds_depend_on_the_campaign_and_the_index_only() {
        assert_eq!(case_seed(7, 3), case_seed(7, 3));
        assert_ne!(case_seed(7, 3), case_seed(7, 4));
        assert_ne!(case_seed(7, 3), case_seed(8, 3));
        assert_ne!(mix(7, 1, 3), mix(7, 2, 3));
    }

    #[test]
    fn bad_numbers_are_named() {
        let e = plan(&[(CASES_ENV, "many")]).expect_err("not a number");
        assert!(e.contains("CAMPAIGN_CASES=many"), "{e}");
        let p = plan(&[]).expect("defaults");
        assert!(!p.in_campaign);
        assert_eq!(p.cases, DEFAULT_CASES);
        let p = plan(&[(SEED_ENV, "0x1_0")]).expect("hex");
        assert_eq!(p.seed, 16);
        assert!(p.in_campaign);
    }
}
