//! `cargo xtask campaign --shards N [--which soak,fuzz,what-if] [--cases K] [--top SIM_TOP]`:
//! long campaigns (soak phases, fuzz seeds, what-if grid points) split over shards by
//! cargo-nextest, merged into one report.
//!
//! The campaign's tests are ordinary tests that nextest can partition: `campaign_fuzz_slice_NN`
//! (crates/card-tests/tests/campaign.rs, the model-based property) and
//! `campaign_fuzz_protocol_NN` (crates/axi-bfm/tests/campaign_protocol.rs, the protocol
//! fuzzers with their functional coverage), each slice a disjoint share of the campaign's
//! seeds, `campaign_soak_*`
//! (crates/card-tests/tests/soak.rs, a soak phase each) and `campaign_whatif_*`
//! (crates/xdma-bench/tests/whatif.rs, a grid point each). Environment variables size them
//! (`CAMPAIGN_CASES`, `CAMPAIGN_SEED`, `CAMPAIGN_TOP`, `CAMPAIGN_PROTOCOL_CASES`,
//! `CARD_SOAK=1` with `CARD_SOAK_FRAMES` and `CARD_SOAK_MM_BYTES`, `CAMPAIGN_WHATIF=1`), and
//! each writes a JSON record into `CAMPAIGN_OUT`. The plan, the seed rule and the records'
//! types are the `campaign` crate's, which the tests and this task share.
//!
//! By concern: [`cli`] the options, `nextest` the archive, the partitions and the shards,
//! `junit` nextest's JUnit files, `merge` the shards' outputs folded into one report, and
//! `report` its Markdown and files; `error` (the typed error and the usage text) and `layout`
//! (where the files go, what the shards run) are leaves that every step imports.
//!
//! The task builds one nextest archive of those test targets, checks that the N partitions
//! (`--partition count:i/N` with the campaign's filter) list every test exactly once, runs the
//! N partitions as parallel processes (each test process has its own simulated card, so they
//! are independent), and merges each shard's JUnit (nextest's own, profile `campaign` of
//! `.config/nextest.toml`) and records into `target/campaign/campaign.{md,json}`: shards,
//! cases, protocol coverage, soak and what-if figures, and every failure with its replay
//! command. The CI workflow `.github/workflows/campaign.yml` runs the same steps on several
//! machines: `--archive-only` in one job, `--shard I` in a matrix, `--merge-only` at the end.

use std::path::Path;
use std::time::Instant;

mod cli;
mod error;
mod junit;
mod layout;
mod merge;
mod nextest;
mod report;

use cli::{filter, parse_options, Steps};
pub use error::CampaignError;
use error::USAGE;
pub use layout::out_dir;
use layout::ARCHIVE;
use merge::find_shards;
use nextest::{archive, check_nextest, partitions, run_shards};
use report::merge_and_report;

/// `cargo xtask campaign ...`.
pub fn campaign(root: &Path, args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return Ok(());
    }
    let o = parse_options(args)?;
    let started = Instant::now();
    let archive_file = out_dir(root).join(ARCHIVE);
    match o.steps {
        Steps::Merge => return Ok(merge_and_report(root, o.shards)?),
        Steps::Archive => {
            let version = check_nextest(root)?;
            eprintln!("campaign: {version}");
            let file = archive(root)?;
            // The shard jobs that take the archive run one partition each; they are checked
            // here, once, to list every test exactly once.
            let (whole, parts) = partitions(root, Some(&file), &filter(&o.which), o.shards)?;
            println!(
                "campaign: archive {}: {} tests in {} partitions, each once: {:?}",
                file.display(),
                whole.len(),
                o.shards,
                parts.iter().map(Vec::len).collect::<Vec<_>>()
            );
            return Ok(());
        }
        Steps::Shard(i) => {
            check_nextest(root)?;
            if !archive_file.is_file() {
                return Err(CampaignError::Step(format!(
                    "no archive at {}: build it first with `cargo xtask campaign --archive-only`",
                    archive_file.display()
                ))
                .into());
            }
            // A shard's own failures are in its outputs; the merge judges the campaign.
            let r = run_shards(root, &o, &archive_file, &[i]);
            eprintln!(
                "campaign: shard {i}/{} done in {:.1} s",
                o.shards,
                started.elapsed().as_secs_f64()
            );
            return Ok(r?);
        }
        Steps::All => {}
    }
    let version = check_nextest(root)?;
    eprintln!("campaign: {version}");
    // Outputs of an earlier campaign would be merged with this one's.
    for (_, p) in find_shards(&out_dir(root)) {
        let _ = std::fs::remove_dir_all(p);
    }
    let file = archive(root)?;
    let listed = Instant::now();
    let (whole, parts) = partitions(root, Some(&file), &filter(&o.which), o.shards)?;
    eprintln!(
        "campaign: {} tests in {} partitions, each once ({:.1} s to list): {:?}",
        whole.len(),
        o.shards,
        listed.elapsed().as_secs_f64(),
        parts.iter().map(Vec::len).collect::<Vec<_>>()
    );
    let shards: Vec<u32> = (1..=o.shards).collect();
    let ran = run_shards(root, &o, &file, &shards);
    let merged = merge_and_report(root, o.shards);
    eprintln!(
        "campaign: {} shards, {:.1} s in all",
        o.shards,
        started.elapsed().as_secs_f64()
    );
    // The report says what failed; a shard that could not run at all is said after it.
    merged?;
    Ok(ran?)
}
