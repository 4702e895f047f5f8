//! The compile cache: libraries keyed on the generated code's content, the compiler and the
//! flags, shared by every profile, crate and test process of a target folder, with the locks
//! and atomic renames that make it safe to fill from several processes at once.

use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::io;
use crate::BuildError;

/// Bumped when the generated glue or the compile flags change meaning, to retire old cache
/// entries.
pub(crate) const CACHE_FORMAT: &str = "sim-build 3";

/// Hashes file contents under their file names only: the key must not change with the
/// checkout's or the build's folder.
pub(crate) fn hash_files(h: &mut DefaultHasher, files: &[PathBuf]) -> Result<(), BuildError> {
    for f in files {
        f.file_name().hash(h);
        std::fs::read(f).map_err(|e| io(f, e))?.hash(h);
    }
    Ok(())
}

pub(crate) fn files_in(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| exts.contains(&e))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// An exclusive lock on `path` (created if missing), held until the file is dropped: one
/// process or thread at a time builds a given entry; the others wait and then find it built.
/// The lock is the operating system's (`flock`), so a build that dies releases it.
pub(crate) fn lock(path: &Path) -> Result<std::fs::File, BuildError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| io(path, e))?;
    file.lock().map_err(|e| io(path, e))?;
    Ok(file)
}

/// A temporary folder for one build of a cache entry, removed when dropped, whether the build
/// succeeded or not.
#[derive(Debug)]
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        std::fs::remove_dir_all(&self.0).ok();
    }
}

/// A temporary folder for one build of a cache entry, unique to this process and thread.
pub(crate) fn scratch(cache: &Path, what: &str) -> Result<Scratch, BuildError> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = cache
        .join("tmp")
        .join(format!("{what}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    Ok(Scratch(dir))
}

/// Moves a finished file to its cache entry. A rename is atomic: a reader sees no entry or a
/// whole one, never a half-written file.
pub(crate) fn publish(staged: &Path, entry: &Path) -> Result<(), BuildError> {
    if let Some(dir) = entry.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    }
    std::fs::rename(staged, entry).map_err(|e| io(entry, e))
}

/// Writes `text` to `path` through a temporary file and a rename, so that a concurrent reader
/// never sees it half written.
pub(crate) fn write_atomic(path: &Path, text: &str) -> Result<(), BuildError> {
    let tmp = path.with_extension(format!(
        "tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&tmp, text).map_err(|e| io(&tmp, e))?;
    publish(&tmp, path)
}

/// Keeps a file's timestamp when its text is unchanged, so nothing downstream rebuilds.
pub fn write_if_changed(path: &Path, text: &str) -> Result<(), BuildError> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| io(path, e))
}

/// Archives objects into a static library at `out` with the archiver `build` would use.
pub(crate) fn archive(
    build: &cc::Build,
    what: &str,
    out: &Path,
    objs: &[PathBuf],
) -> Result<(), BuildError> {
    let mut ar = build.try_get_archiver().map_err(|e| BuildError::Compile {
        what: what.to_string(),
        message: e.to_string(),
    })?;
    let status = ar
        .arg("crs")
        .arg(out)
        .args(objs)
        .status()
        .map_err(|e| BuildError::Compile {
            what: what.to_string(),
            message: format!("cannot run the archiver: {e}"),
        })?;
    if !status.success() {
        return Err(BuildError::Compile {
            what: what.to_string(),
            message: format!("the archiver failed ({status})"),
        });
    }
    Ok(())
}

/// `<target>/sim-cache`, from `OUT_DIR` = `<target>/<profile>/build/<pkg>-<hash>/out`,
/// shared by every profile and crate of the target folder; `SIM_CACHE_DIR` overrides it.
pub(crate) fn cache_dir(out: &Path) -> PathBuf {
    if let Some(d) = std::env::var_os("SIM_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    out.ancestors()
        .nth(4)
        .map_or_else(|| out.join("cache"), |t| t.join("sim-cache"))
}

/// The compiler, its version and the flags the environment adds to it (`CXXFLAGS` and the
/// like, which cc reads): part of every cache key.
pub(crate) fn compiler_id(target: &str, host: &str) -> String {
    let tool = cc::Build::new()
        .cpp(true)
        .target(target)
        .host(host)
        .opt_level(2)
        .cargo_metadata(false)
        .emit_rerun_if_env_changed(false)
        .get_compiler();
    let version = Command::new(tool.path())
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut id = format!("{} {version}", tool.path().display());
    let keys = [
        "CXXFLAGS".to_string(),
        "TARGET_CXXFLAGS".to_string(),
        format!("CXXFLAGS_{target}"),
        format!("CXXFLAGS_{}", target.replace('-', "_")),
        "CRATE_CC_NO_DEFAULTS".to_string(),
    ];
    for k in keys {
        // Only flags that are set enter the key, so an unset environment keeps it as it was.
        if let Some(v) = std::env::var(&k).ok().filter(|v| !v.is_empty()) {
            let _ = write!(id, " {k}={v}");
        }
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hasher;

    #[test]
    fn the_cache_key_ignores_the_folder() {
        let a = std::env::temp_dir().join(format!("csb-a-{}", std::process::id()));
        let b = std::env::temp_dir().join(format!("csb-b-{}", std::process::id()));
        for d in [&a, &b] {
            std::fs::create_dir_all(d).expect("mkdir");
            std::fs::write(d.join("Vx.cpp"), "int x;").expect("write");
        }
        let key = |d: &Path| {
            let mut h = DefaultHasher::new();
            hash_files(&mut h, &[d.join("Vx.cpp")]).expect("hash");
            h.finish()
        };
        assert_eq!(
            key(&a),
            key(&b),
            "same content in another checkout, same key"
        );
        std::fs::write(b.join("Vx.cpp"), "int y;").expect("write");
        assert_ne!(key(&a), key(&b), "other content, other key");
        std::fs::remove_dir_all(&a).ok();
        std::fs::remove_dir_all(&b).ok();
    }

    #[test]
    fn the_cache_is_shared_by_profiles() {
        let a = cache_dir(Path::new("/t/target/debug/build/p-1/out"));
        let b = cache_dir(Path::new("/t/target/release/build/p-2/out"));
        assert_eq!(a, b);
        assert_eq!(a, PathBuf::from("/t/target/sim-cache"));
    }
}
