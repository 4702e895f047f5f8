//! The merged campaign's report: its Markdown, and both files written.

use std::path::Path;

use ::campaign::Record;

use super::error::CampaignError;
use super::layout::out_dir;
use super::merge::{find_shards, merge, read_shard, Report, ShardOutput};

/// The report as Markdown: shards, protocol coverage, soak and what-if figures, failures with
/// their replay commands, and the problems of the merge.
pub(super) fn markdown(r: &Report) -> String {
    let mut m = String::new();
    m += &format!(
        "# Campaign: {}\n\n{} shards, {} model-based cases in all.\n\n",
        if r.passed { "passed" } else { "FAILED" },
        r.shards,
        r.model_cases
    );
    m += "| shard | tests | failed | skipped | model-based cases | protocol fuzz cases | time (s) |\n|---|---|---|---|---|---|---|\n";
    for s in &r.per_shard {
        m += &format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            s.shard,
            s.tests,
            s.failed,
            s.skipped,
            s.model_cases,
            s.protocol_cases,
            s.secs.map_or("-".into(), |t| format!("{t:.1}"))
        );
    }
    if !r.protocol.is_empty() {
        m += "\n## Protocol fuzzing: functional coverage\n\n| protocol | cases | situations reached | not reached |\n|---|---|---|---|\n";
        for p in &r.protocol {
            m += &format!(
                "| {} | {} | {} of {} | {} |\n",
                p.protocol,
                p.cases,
                p.reached,
                p.situations,
                if p.missing.is_empty() {
                    "-".to_string()
                } else {
                    p.missing.join(", ")
                }
            );
        }
    }
    let soak: Vec<_> = r
        .soak
        .iter()
        .filter_map(|s| match s {
            Record::Soak(s) => Some(s),
            _ => None,
        })
        .collect();
    if !soak.is_empty() {
        m += "\n## Soak\n\n| phase | frames | MM bytes | time (s) |\n|---|---|---|---|\n";
        for s in soak {
            m += &format!(
                "| {} | {} | {} | {:.1} |\n",
                s.phase, s.frames, s.mm_bytes, s.secs
            );
        }
    }
    let whatif: Vec<_> = r
        .whatif
        .iter()
        .filter_map(|w| match w {
            Record::Whatif(w) => Some(w),
            _ => None,
        })
        .collect();
    if !whatif.is_empty() {
        m += "\n## What-if grid\n\n| point | settings | figures (MB/s) |\n|---|---|---|\n";
        for w in whatif {
            let figures: Vec<String> = w
                .figures
                .iter()
                .map(|f| {
                    format!(
                        "{} {}",
                        f.scenario,
                        f.mb_s.map_or("-".into(), |v| format!("{v:.1}"))
                    )
                })
                .collect();
            m += &format!(
                "| {} | {} | {} |\n",
                w.test,
                if w.settings.is_empty() {
                    "default".to_string()
                } else {
                    w.settings.join(", ")
                },
                figures.join("; ")
            );
        }
    }
    if !r.failures.is_empty() {
        m += &format!("\n## Failures ({})\n", r.failures.len());
        for f in &r.failures {
            m += &format!(
                "\n### {} (shard {}){}\n\n{}\n",
                f.test,
                f.shard,
                f.failure
                    .case()
                    .map(|c| format!(", case {c}"))
                    .unwrap_or_default(),
                f.failure.error()
            );
            if let Some(seq) = f.failure.sequence() {
                m += &format!("\nShrunk to:\n\n```\n{}\n```\n", seq.trim());
            }
            m += &format!("\nReplay from its seed: `{}`\n", f.failure.replay_seed());
            if let Some(c) = f.failure.replay_sequence() {
                m += &format!("\nReplay the sequence: `{c}`\n");
            }
        }
    }
    if !r.problems.is_empty() {
        m += "\n## Problems\n\n";
        for p in &r.problems {
            m += &format!("- {p}\n");
        }
    }
    m
}

/// Merges the shards under `target/campaign/` into `campaign.md` and `campaign.json`, prints
/// the Markdown, and fails when the campaign did.
pub(super) fn merge_and_report(root: &Path, expected: u32) -> Result<(), CampaignError> {
    let dir = out_dir(root);
    let shards: Vec<ShardOutput> = find_shards(&dir)
        .into_iter()
        .map(|(i, p)| read_shard(&p, i))
        .collect();
    let report = merge(&shards, expected);
    let markdown = markdown(&report);
    // Through a JSON value, whose objects keep their keys sorted, as the report always had.
    let text = serde_json::to_value(&report)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .map_err(|e| CampaignError::Step(format!("the merged report: {e}")))?;
    for (name, body) in [("campaign.json", &text), ("campaign.md", &markdown)] {
        let p = dir.join(name);
        std::fs::write(&p, body)
            .map_err(|e| CampaignError::Step(format!("cannot write {}: {e}", p.display())))?;
    }
    print!("{markdown}");
    println!(
        "campaign: report in {} and {}",
        dir.join("campaign.md").display(),
        dir.join("campaign.json").display()
    );
    if report.passed {
        Ok(())
    } else {
        Err(CampaignError::Failed(format!(
            "the campaign failed: {} failure(s), {} problem(s); see {}",
            report.failures.len(),
            report.problems.len(),
            dir.join("campaign.md").display()
        )))
    }
}
