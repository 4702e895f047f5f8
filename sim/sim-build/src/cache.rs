//! The compile cache: libraries keyed on the generated code's content, the compiler and the
//! flags, shared by every profile and crate of a target folder.

use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::Hash;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::builder::Ctx;
use crate::error::io;
use crate::BuildError;

/// Bumped when the generated glue or the compile flags change meaning, to retire old cache
/// entries.
pub(crate) const CACHE_FORMAT: &str = "sim-build 1";

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

/// Links `lib<name>.a` for the key, compiling it with `make` on a cache miss. `make` returns
/// the objects and a build whose archiver to use.
pub(crate) fn cached_lib(
    ctx: &Ctx,
    name: &str,
    key: &str,
    make: impl FnOnce(&Path) -> Result<(Vec<PathBuf>, cc::Build), BuildError>,
) -> Result<(), BuildError> {
    let cached = ctx.cache.join(format!("{name}-{key}.a"));
    let lib = ctx.out.join(format!("lib{name}.a"));
    if !cached.is_file() {
        let tmp = ctx
            .cache
            .join(format!("tmp-{name}-{key}-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).map_err(|e| io(&tmp, e))?;
        let (objs, build) = make(&tmp)?;
        let staged = tmp.join("lib.a");
        let mut ar = build.try_get_archiver().map_err(|e| BuildError::Compile {
            what: name.to_string(),
            message: e.to_string(),
        })?;
        let status = ar
            .arg("crs")
            .arg(&staged)
            .args(&objs)
            .status()
            .map_err(|e| BuildError::Compile {
                what: name.to_string(),
                message: format!("cannot run the archiver: {e}"),
            })?;
        if !status.success() {
            return Err(BuildError::Compile {
                what: name.to_string(),
                message: format!("the archiver failed ({status})"),
            });
        }
        // A rename is atomic: two builds filling the same entry at once both leave a whole one.
        std::fs::rename(&staged, &cached).map_err(|e| io(&cached, e))?;
        std::fs::remove_dir_all(&tmp).ok();
    }
    std::fs::remove_file(&lib).ok();
    if std::fs::hard_link(&cached, &lib).is_err() {
        std::fs::copy(&cached, &lib).map_err(|e| io(&lib, e))?;
    }
    println!("cargo::rustc-link-search=native={}", ctx.out.display());
    println!("cargo::rustc-link-lib=static={name}");
    Ok(())
}

/// `<target>/sim-cache`, from `OUT_DIR` = `<target>/<profile>/build/<pkg>-<hash>/out`,
/// shared by every profile and crate of the target folder; `SIM_CACHE_DIR` overrides it.
pub(crate) fn cache_dir(out: &Path) -> PathBuf {
    println!("cargo::rerun-if-env-changed=SIM_CACHE_DIR");
    if let Some(d) = std::env::var_os("SIM_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    out.ancestors()
        .nth(4)
        .map_or_else(|| out.join("cache"), |t| t.join("sim-cache"))
}

/// The compiler, its version and the flags the environment adds to it (`CXXFLAGS` and the
/// like, which cc reads): part of every cache key.
pub(crate) fn compiler_id() -> String {
    let tool = cc::Build::new()
        .cpp(true)
        .cargo_metadata(false)
        .get_compiler();
    let version = Command::new(tool.path())
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut id = format!("{} {version}", tool.path().display());
    let target = std::env::var("TARGET").unwrap_or_default();
    let keys = [
        "CXXFLAGS".to_string(),
        "TARGET_CXXFLAGS".to_string(),
        format!("CXXFLAGS_{target}"),
        format!("CXXFLAGS_{}", target.replace('-', "_")),
        "CRATE_CC_NO_DEFAULTS".to_string(),
    ];
    for k in keys {
        println!("cargo::rerun-if-env-changed={k}");
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
