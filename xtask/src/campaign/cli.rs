//! The campaign's command line: its options, the parts it runs and their nextest filters.

use std::collections::BTreeSet;

use super::error::CampaignError;

/// The campaign's default count of model-based cases.
const DEFAULT_CASES: u64 = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Which {
    /// The soak's phases.
    Soak,
    /// The fuzz slices.
    Fuzz,
    /// The what-if grid.
    WhatIf,
}

impl Which {
    pub(super) const ALL: [Which; 3] = [Which::Soak, Which::Fuzz, Which::WhatIf];

    pub(super) fn name(self) -> &'static str {
        match self {
            Which::Soak => "soak",
            Which::Fuzz => "fuzz",
            Which::WhatIf => "what-if",
        }
    }

    /// The nextest filter of this part's tests.
    pub(super) fn filter(self) -> &'static str {
        match self {
            Which::Soak => "test(/^campaign_soak_/)",
            Which::Fuzz => "test(/^campaign_fuzz_/)",
            Which::WhatIf => "test(/^campaign_whatif_/)",
        }
    }
}

/// Which steps of a campaign this invocation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Steps {
    /// Archive, check the partitions, run every shard, merge.
    All,
    /// The archive only.
    Archive,
    /// One shard from an existing archive.
    Shard(u32),
    /// The merge only.
    Merge,
}

/// A campaign's options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Options {
    pub(super) shards: u32,
    pub(super) which: Vec<Which>,
    pub(super) cases: u64,
    pub(super) protocol_cases: Option<u64>,
    pub(super) top: Option<String>,
    pub(super) seed: Option<u64>,
    pub(super) steps: Steps,
}

fn parse_number(opt: &str, v: &str) -> Result<u64, CampaignError> {
    let t = v.trim().replace('_', "");
    let parsed = match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    parsed.map_err(|_| CampaignError::Usage(format!("{opt} `{v}` is not a number")))
}

fn parse_which(v: &str) -> Result<Vec<Which>, CampaignError> {
    let mut out = BTreeSet::new();
    for part in v.split(',').map(str::trim) {
        let w = match part {
            "soak" => Which::Soak,
            "fuzz" => Which::Fuzz,
            "what-if" | "whatif" => Which::WhatIf,
            other => return Err(CampaignError::Which(other.to_string())),
        };
        out.insert(w);
    }
    Ok(out.into_iter().collect())
}

pub(super) fn parse_options(args: &[String]) -> Result<Options, CampaignError> {
    let mut o = Options {
        shards: 0,
        which: Which::ALL.to_vec(),
        cases: DEFAULT_CASES,
        protocol_cases: None,
        top: None,
        seed: None,
        steps: Steps::All,
    };
    let mut shards = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |opt: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| CampaignError::Usage(format!("{opt} needs a value")))
        };
        match a.as_str() {
            "--shards" => shards = Some(parse_number("--shards", &value("--shards")?)?),
            "--which" => o.which = parse_which(&value("--which")?)?,
            "--cases" => o.cases = parse_number("--cases", &value("--cases")?)?,
            "--protocol-cases" => {
                o.protocol_cases = Some(parse_number(
                    "--protocol-cases",
                    &value("--protocol-cases")?,
                )?);
            }
            "--top" => o.top = Some(value("--top")?),
            "--seed" => o.seed = Some(parse_number("--seed", &value("--seed")?)?),
            "--archive-only" => o.steps = Steps::Archive,
            "--merge-only" => o.steps = Steps::Merge,
            "--shard" => {
                let i = parse_number("--shard", &value("--shard")?)?;
                o.steps = Steps::Shard(u32::try_from(i).unwrap_or(u32::MAX));
            }
            other => {
                return Err(CampaignError::Usage(format!(
                    "unknown campaign option `{other}`"
                )))
            }
        }
    }
    let shards = match (shards, o.steps) {
        (Some(n), _) => n,
        // The archive does not depend on the count of shards; without one, the partition
        // check is of one partition.
        (None, Steps::Archive) => 1,
        (None, _) => return Err(CampaignError::Shards("no --shards given".into())),
    };
    o.shards = u32::try_from(shards)
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| CampaignError::Shards(format!("--shards {shards}")))?;
    if let Steps::Shard(i) = o.steps {
        if i == 0 || i > o.shards {
            return Err(CampaignError::Shards(format!(
                "--shard {i} of --shards {}",
                o.shards
            )));
        }
    }
    Ok(o)
}

/// The nextest filter of the chosen parts.
pub(super) fn filter(which: &[Which]) -> String {
    which
        .iter()
        .map(|w| w.filter())
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn bad_options_say_what_to_do() {
        let e = parse_options(&args("--shards 0")).expect_err("no shards");
        assert!(matches!(e, CampaignError::Shards(_)), "{e}");
        assert!(e.to_string().contains("at least 1"), "{e}");
        let e = parse_options(&args("--shards 2 --which fuzz,chaos")).expect_err("bad part");
        assert_eq!(e, CampaignError::Which("chaos".into()));
        assert!(e.to_string().contains("soak, fuzz and what-if"));
        let e = parse_options(&args("--shards 2 --shard 3")).expect_err("no such shard");
        assert!(matches!(e, CampaignError::Shards(_)), "{e}");
        let e = parse_options(&args("--which fuzz")).expect_err("no count");
        assert!(matches!(e, CampaignError::Shards(_)), "{e}");
        let e = parse_options(&args("--shards 2 --cases")).expect_err("no value");
        assert!(matches!(e, CampaignError::Usage(_)), "{e}");
        let e = parse_options(&args("--shards two")).expect_err("not a number");
        assert!(e.to_string().contains("`two` is not a number"), "{e}");
        let o = parse_options(&args(
            "--shards 3 --which what-if,fuzz --cases 10 --top sim_top_fault_seq",
        ))
        .expect("good options");
        assert_eq!(o.which, vec![Which::Fuzz, Which::WhatIf]);
        assert_eq!((o.shards, o.cases), (3, 10));
        assert_eq!(
            filter(&o.which),
            "test(/^campaign_fuzz_/) | test(/^campaign_whatif_/)"
        );
        assert_eq!(
            parse_options(&args("--archive-only"))
                .expect("no count needed")
                .steps,
            Steps::Archive
        );
    }
}
