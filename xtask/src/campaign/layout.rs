//! Where a campaign's files go and what its shards run: a leaf that every step of the campaign
//! imports, so that no step imports the campaign's entry back.

use std::path::{Path, PathBuf};

use crate::build;

/// The folder under the target folder where everything of a campaign goes.
pub(super) const OUT: &str = "campaign";
/// The archive's file name in that folder.
pub(super) const ARCHIVE: &str = "campaign-archive.tar.zst";
/// The nextest profile of `.config/nextest.toml` that the shards run with.
pub(super) const PROFILE: &str = "campaign";
/// The test targets the campaign's tests live in (one per crate, unique in the workspace).
pub(super) const TARGETS: &[&str] = &["campaign", "campaign_protocol", "soak", "whatif"];

/// The campaign's folder.
pub fn out_dir(root: &Path) -> PathBuf {
    build::target_dir(root).join(OUT)
}

/// One shard's folder.
pub(super) fn shard_dir(root: &Path, i: u32) -> PathBuf {
    out_dir(root).join(format!("shard-{i}"))
}
