//! Whose list of proofs is run: the card's (`hdl/formal`) or a crate's own (`<crate>/formal`,
//! `--crate NAME`), and where each keeps its wrappers, its replay files and its results. A leaf
//! that both the runner and the replay writer use.

use std::path::{Path, PathBuf};

/// The card's list of proofs, relative to the workspace root.
const PROOFS: &str = "hdl/formal/proofs.toml";

/// Whose list of proofs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum Place {
    /// The card's: modules of `hdl/rtl`, wrappers in `hdl/formal/wrappers`.
    #[default]
    Card,
    /// A crate's own: its list, wrappers and replays under `<dir>/formal`, its modules' Verilog
    /// wherever the list says, relative to the crate.
    Crate { name: String, dir: PathBuf },
}

impl Place {
    /// The list of proofs.
    pub(super) fn list(&self, root: &Path) -> PathBuf {
        match self {
            Place::Card => root.join(PROOFS),
            Place::Crate { dir, .. } => dir.join("formal/proofs.toml"),
        }
    }

    /// The list's path as a message shows it: relative to the workspace root.
    pub(super) fn list_name(&self, root: &Path) -> String {
        let list = self.list(root);
        list.strip_prefix(root)
            .unwrap_or(&list)
            .display()
            .to_string()
    }

    /// The proof wrapper of `module`.
    pub(super) fn wrapper(&self, root: &Path, module: &str) -> PathBuf {
        let file = format!("fw_{module}.v");
        match self {
            Place::Card => root.join("hdl/formal/wrappers").join(file),
            Place::Crate { dir, .. } => dir.join("formal").join(file),
        }
    }

    /// Where the list's replay files are kept, and read by its crate's build script.
    pub(super) fn replays(&self, root: &Path) -> PathBuf {
        match self {
            Place::Card => root.join("hdl/formal/replays"),
            Place::Crate { dir, .. } => dir.join("formal/replays"),
        }
    }

    /// Where the proofs run and their report goes.
    pub(super) fn out(&self, root: &Path) -> PathBuf {
        match self {
            Place::Card => root.join("target/formal"),
            Place::Crate { name, .. } => root.join("target/formal").join(name),
        }
    }

    /// The cargo test that replays the counterexample of proof `proof`.
    pub(super) fn replay_command(&self, proof: &str) -> String {
        match self {
            Place::Card => format!("cargo test -p rtl-tests --test formal_replay -- {proof}"),
            // A crate names its replay test target as it likes (target names are unique in a
            // workspace), so the filter on the proof's test name finds it in any target.
            Place::Crate { name, .. } => format!("cargo test -p {name} -- {proof}"),
        }
    }

    /// The `cargo xtask formal` that runs proof `proof` again.
    pub(super) fn rerun_command(&self, proof: &str) -> String {
        match self {
            Place::Card => format!("cargo xtask formal --module {proof}"),
            Place::Crate { name, .. } => {
                format!("cargo xtask formal --crate {name} --module {proof}")
            }
        }
    }
}
