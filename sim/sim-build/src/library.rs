//! A top's shared library, built the first time a model of the top is made and then found in
//! the cache: Verilator runs only when a source it read, its arguments or its version changed,
//! and the compiler only when the generated code changed.
//!
//! The cache holds, per top and set of arguments, a folder with the generated code, a lock, and
//! manifests: each lists every file the top was built from with a hash of its content, and the
//! library built from them. A manifest whose files all still hash the same names the library
//! to load without running Verilator (so undoing an edit finds the earlier library at once);
//! else, under the lock, Verilator runs, and the library is keyed on what it generated, so an
//! edit that changes no generated code (a comment) compiles nothing.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::cache::{
    compiler_id, files_in, hash_files, lock, publish, scratch, write_atomic, CACHE_FORMAT,
};
use crate::codegen::glue_cpp;
use crate::compile::{compile_top, fast_opt_level, link_library};
use crate::ctx::Ctx;
use crate::error::io;
use crate::recipe::{coverage_requested, Recipe};
use crate::runtime::{runtime_lib, RUNTIME_FILES};
use crate::strip::strip_dir;
use crate::verilate::{find_verilator, redirect, Run, Verilated};
use crate::{BuildError, Verilator};

/// How many manifests a top keeps per set of arguments: the states of its sources most
/// recently built, so that switching between a few edits finds each one built.
const MANIFESTS_KEPT: usize = 8;

/// The files a library was built from, with their contents' hashes, and the library.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    /// Every file read (Verilator's sources, the crate's C++, sim-runtime's C++), with a hash.
    files: Vec<(PathBuf, String)>,
    /// Every library folder (`-y`) with a hash of its file names: a new file there may change
    /// which file a module comes from.
    dirs: Vec<(PathBuf, String)>,
    /// The library's key (see [`lib_path`]).
    lib: String,
}

/// What [`build_library`] did to give a top's library.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryBuild {
    /// The library.
    pub path: PathBuf,
    /// Whether Verilator ran (no manifest of the cache matched the sources).
    pub verilated: bool,
    /// Whether the C++ was compiled and linked (no library of the generated code was cached).
    pub compiled: bool,
}

/// The shared library of `recipe`'s top, with the extra C++ sources `extra` compiled in (a
/// companion that drives the model from C++, say): found in the cache, or built now. Errors
/// carry Verilator's or the compiler's whole text, as a build script's did.
pub fn build_library(recipe: &Recipe, extra: &[PathBuf]) -> Result<LibraryBuild, BuildError> {
    missing_source(recipe)?;
    let ctx = Ctx {
        recipe,
        verilator: verilator_for(recipe)?,
        compiler: compiler_for(recipe),
    };
    let coverage = recipe.coverage || coverage_requested();
    let mut args = recipe.args.clone();
    if let Some(strip) = &recipe.strip {
        let copy = recipe
            .cache
            .join("src")
            .join(format!("{}__{}", recipe.package, recipe.name));
        strip_dir(&recipe.base.join(strip), &copy)?;
        args = redirect(&args, strip, &copy);
    }
    let mut h = DefaultHasher::new();
    (
        CACHE_FORMAT,
        &args,
        coverage,
        ctx.verilator.version.to_string(),
        &ctx.compiler,
        fast_opt_level(),
        recipe.class(),
    )
        .hash(&mut h);
    let top_dir = recipe.cache.join("tops").join(format!(
        "{}__{}-{:016x}",
        recipe.package,
        recipe.name,
        h.finish()
    ));
    let extra_key = extra_key(extra)?;
    let found = |path| LibraryBuild {
        path,
        verilated: false,
        compiled: false,
    };
    if let Some(lib) = lookup(recipe, &top_dir, &extra_key) {
        return Ok(found(lib));
    }
    let _held = lock(&top_dir.join("lock"))?;
    if let Some(lib) = lookup(recipe, &top_dir, &extra_key) {
        return Ok(found(lib));
    }
    let mdir = top_dir.join("vl");
    std::fs::remove_dir_all(&mdir).ok();
    let run = Run {
        verilator: &ctx.verilator,
        base: &recipe.base,
        args: args.clone(),
        top: &recipe.name,
        module: &recipe.module,
        class: recipe.class(),
        mdir: mdir.clone(),
        coverage,
    };
    let v = run.verilate()?;
    report_warnings(recipe, &v);
    check_runtime_files(recipe, &v)?;
    let files = inputs(recipe, &v);
    let mut h = DefaultHasher::new();
    (
        CACHE_FORMAT,
        &ctx.compiler,
        ctx.verilator.version.to_string(),
        fast_opt_level(),
    )
        .hash(&mut h);
    // Every generated file, headers included, and every other input but Verilator's sources,
    // which are what the generated code already says.
    hash_files(&mut h, &files_in(&v.mdir, &["cpp", "h"]))?;
    let others: Vec<PathBuf> = files
        .iter()
        .filter(|f| !v.deps.contains(f))
        .cloned()
        .collect();
    hash_files(&mut h, &others)?;
    let key = format!("{:016x}", h.finish());
    let lib = lib_path(recipe, &key, &extra_key);
    let compiled = !lib.is_file();
    if compiled {
        build(&ctx, &v, extra, &lib)?;
    }
    write_manifest(&top_dir, &recipe.base, &args, &files, &key)?;
    Ok(LibraryBuild {
        path: lib,
        verilated: true,
        compiled,
    })
}

/// Refuses a top whose listed source files are not all there, naming the first missing one,
/// before Verilator says only that it cannot find it. A file under a `target` folder is
/// generated (card-sim's netlist tops read what `cargo xtask synth` writes), so the error says
/// to make it first.
fn missing_source(recipe: &Recipe) -> Result<(), BuildError> {
    let mut after_flag = false;
    for a in &recipe.args {
        let is_source = [".v", ".sv", ".vlt", ".f"].iter().any(|e| a.ends_with(e));
        if is_source && !after_flag && !recipe.base.join(a).exists() {
            let hint = if Path::new(a).starts_with("target") {
                "; it is generated: run what writes it first (for target/synth, `cargo xtask synth`)"
            } else {
                ""
            };
            return Err(BuildError::BadTop {
                top: recipe.name.clone(),
                problem: format!("its source {a} does not exist{hint}"),
            });
        }
        after_flag = a == "-y" || a == "-I";
    }
    Ok(())
}

/// Compiles and links one library.
fn build(ctx: &Ctx, v: &Verilated, extra: &[PathBuf], lib: &Path) -> Result<(), BuildError> {
    let runtime = runtime_lib(ctx)?;
    let scratch = scratch(&ctx.recipe.cache, &ctx.recipe.name)?;
    let tmp = scratch.path();
    let glue = v.mdir.join(format!("{}__sim_glue.cpp", v.class));
    write_atomic(&glue, &glue_cpp(v, &ctx.recipe.factory_symbol()))?;
    let objs = compile_top(ctx, v, &glue, extra, tmp)?;
    let staged = tmp.join("lib.so");
    link_library(ctx, v, &objs, &runtime, tmp, &staged)?;
    publish(&staged, lib)?;
    Ok(())
}

fn lib_path(recipe: &Recipe, key: &str, extra_key: &str) -> PathBuf {
    let extra = if extra_key.is_empty() {
        String::new()
    } else {
        format!("+{extra_key}")
    };
    recipe.cache.join("lib").join(format!(
        "{}__{}-{key}{extra}.so",
        recipe.package, recipe.name
    ))
}

fn extra_key(extra: &[PathBuf]) -> Result<String, BuildError> {
    if extra.is_empty() {
        return Ok(String::new());
    }
    let mut h = DefaultHasher::new();
    hash_files(&mut h, extra)?;
    Ok(format!("{:016x}", h.finish()))
}

/// The library a manifest names whose files all hash as they did, if it is there.
fn lookup(recipe: &Recipe, top_dir: &Path, extra_key: &str) -> Option<PathBuf> {
    manifests(top_dir).into_iter().find_map(|(path, m)| {
        let lib = lib_path(recipe, &m.lib, extra_key);
        (still_holds(&m) && lib.is_file()).then(|| {
            // The newest manifest is tried first next time.
            touch(&path);
            lib
        })
    })
}

/// The manifests of a top's folder, newest first.
fn manifests(top_dir: &Path) -> Vec<(PathBuf, Manifest)> {
    let dir = top_dir.join("manifests");
    let mut found: Vec<(std::time::SystemTime, PathBuf, Manifest)> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let path = e.path();
                    let time = e.metadata().ok()?.modified().ok()?;
                    let text = std::fs::read_to_string(&path).ok()?;
                    let m: Manifest = serde_json::from_str(&text).ok()?;
                    Some((time, path, m))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, p, m)| (p, m)).collect()
}

fn still_holds(m: &Manifest) -> bool {
    m.files
        .iter()
        .all(|(f, hash)| content_hash(f).as_deref() == Some(hash.as_str()))
        && m.dirs
            .iter()
            .all(|(d, hash)| listing_hash(d).as_deref() == Some(hash.as_str()))
}

fn touch(path: &Path) {
    if let Ok(f) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

fn content_hash(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    Some(format!("{:016x}", h.finish()))
}

fn listing_hash(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut h = DefaultHasher::new();
    names.hash(&mut h);
    Some(format!("{:016x}", h.finish()))
}

/// Every file a top's library is built from: what Verilator read, the crate's C++ and the
/// headers beside it, and sim-runtime's C++.
fn inputs(recipe: &Recipe, v: &Verilated) -> Vec<PathBuf> {
    let mut files = v.deps.clone();
    files.extend(recipe.cpp.iter().cloned());
    for dir in recipe.cpp.iter().filter_map(|f| f.parent()) {
        files.extend(files_in(dir, &["h", "hpp"]));
    }
    files.extend(files_in(&recipe.runtime.cpp_dir, &["h", "cpp"]));
    files.sort();
    files.dedup();
    files
}

fn write_manifest(
    top_dir: &Path,
    base: &Path,
    args: &[String],
    files: &[PathBuf],
    lib: &str,
) -> Result<(), BuildError> {
    let hashed = |f: &PathBuf| -> Result<(PathBuf, String), BuildError> {
        let hash =
            content_hash(f).ok_or_else(|| io(f, "cannot read a file the top was built from"))?;
        Ok((f.clone(), hash))
    };
    let dirs = args
        .windows(2)
        .filter(|w| w[0] == "-y")
        .filter_map(|w| {
            let d = base.join(&w[1]);
            listing_hash(&d).map(|h| (d, h))
        })
        .collect();
    let m = Manifest {
        files: files.iter().map(hashed).collect::<Result<_, _>>()?,
        dirs,
        lib: lib.to_string(),
    };
    let text = serde_json::to_string(&m).map_err(|e| io(top_dir, e))?;
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    let dir = top_dir.join("manifests");
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    write_atomic(&dir.join(format!("{:016x}.json", h.finish())), &text)?;
    for (path, _) in manifests(top_dir).into_iter().skip(MANIFESTS_KEPT) {
        std::fs::remove_file(path).ok();
    }
    Ok(())
}

fn report_warnings(recipe: &Recipe, v: &Verilated) {
    if recipe.warnings && !v.warnings.is_empty() {
        eprintln!(
            "sim-build: top `{}`: Verilator gave {} warning(s), first: {}; all in {}",
            recipe.name,
            v.warnings.len(),
            v.warnings[0],
            v.mdir.join("verilator.log").display()
        );
    }
}

fn check_runtime_files(recipe: &Recipe, v: &Verilated) -> Result<(), BuildError> {
    for f in v
        .global
        .iter()
        .filter_map(|p| p.file_name().and_then(|n| n.to_str()))
    {
        if !RUNTIME_FILES.contains(&f) {
            return Err(BuildError::BadTop {
                top: recipe.name.clone(),
                problem: format!(
                    "needs the Verilator runtime file {f}, which sim-runtime does not link (it links {}); drop the option that asks for it (threads, VCD)",
                    RUNTIME_FILES.join(",")
                ),
            });
        }
    }
    Ok(())
}

/// The Verilator of sim-runtime's build if it is still there, else the one found from the
/// recipe's folder up; looked up once per process.
fn verilator_for(recipe: &Recipe) -> Result<Verilator, BuildError> {
    static FOUND: OnceLock<Mutex<HashMap<PathBuf, Verilator>>> = OnceLock::new();
    let root = &recipe.runtime.verilator_root;
    let map = FOUND.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(v) = map.lock().ok().and_then(|m| m.get(root).cloned()) {
        return Ok(v);
    }
    let bin = root.join("bin").join("verilator");
    let v = match verilator_find::version_of(root, &bin) {
        Some(version) if !root.as_os_str().is_empty() => Verilator {
            root: root.clone(),
            bin,
            version,
            origin: verilator_find::Origin::EnvRoot,
        },
        _ => find_verilator(&recipe.base)?,
    };
    if let Ok(mut m) = map.lock() {
        m.insert(root.clone(), v.clone());
    }
    Ok(v)
}

/// The compiler's identity for the cache key, asked once per process.
fn compiler_for(recipe: &Recipe) -> String {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| compiler_id(&recipe.target, &recipe.host))
        .clone()
}
