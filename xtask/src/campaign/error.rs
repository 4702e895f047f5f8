//! What was wrong with a campaign's options or its run, and the usage text it shows: a leaf
//! that every step of the campaign imports, so that no step imports the campaign's entry back.

use std::fmt;

pub(super) const USAGE: &str = "\
usage: cargo xtask campaign --shards N [--which soak,fuzz,what-if] [--cases K] [--top SIM_TOP]
                            [--seed S] [--protocol-cases P] [--archive-only | --shard I | --merge-only]
  --shards N          partitions of the campaign's tests (count:i/N), run as parallel processes
  --which LIST        the parts to run (default all): soak (needs CARD_SOAK_FRAMES and
                      CARD_SOAK_MM_BYTES to be shorter than a million frames and 1 GiB per phase),
                      fuzz (model-based cases and protocol fuzzing), what-if (the grid's points)
  --cases K           model-based cases in the whole campaign (default 64), over 16 fuzz slices
  --protocol-cases P  protocol fuzz cases per protocol in the whole campaign (default: 16 K)
  --top SIM_TOP       the simulated top of the model-based cases, or a fault of sim_top turned
                      on at run time: sim_top_fault_rd_beat, sim_top_fault_seq
  --seed S            the campaign's seed (default: the slices' fixed seed)
  --archive-only      only build the nextest archive and check its N partitions (the CI's build job)
  --shard I           only run partition I of N from the archive (a CI matrix job)
  --merge-only        only merge the shards found under target/campaign/ (the CI's last job)";

/// What was wrong with a campaign's options or its run, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CampaignError {
    /// An option the task does not know, or one without its value.
    Usage(String),
    /// `--shards 0`, or a shard outside 1..=N.
    Shards(String),
    /// A part of `--which` that is none of soak, fuzz, what-if.
    Which(String),
    /// cargo-nextest cannot be run.
    NoNextest(String),
    /// A step's command failed or could not be started.
    Step(String),
    /// The partitions do not list every test exactly once.
    Partition(String),
    /// The merged campaign has failures.
    Failed(String),
}

impl fmt::Display for CampaignError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CampaignError::Usage(m) => write!(f, "{m}\n{USAGE}"),
            CampaignError::Shards(m) => write!(f, "{m}: give --shards N with N at least 1 (and --shard I with 1 <= I <= N)"),
            CampaignError::Which(w) => write!(
                f,
                "--which `{w}`: the parts are soak, fuzz and what-if, comma-separated (e.g. --which fuzz,what-if)"
            ),
            CampaignError::NoNextest(m) => write!(
                f,
                "cargo-nextest is needed to split a campaign ({m}); install it with `cargo install cargo-nextest --locked` or a pre-built binary from https://nexte.st"
            ),
            CampaignError::Step(m) | CampaignError::Partition(m) | CampaignError::Failed(m) => {
                write!(f, "{m}")
            }
        }
    }
}

impl From<CampaignError> for String {
    fn from(e: CampaignError) -> String {
        e.to_string()
    }
}
