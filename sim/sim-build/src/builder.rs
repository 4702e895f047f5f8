//! The builder API: a set of tops and the options they share, compiled into the crate.

use std::path::{Path, PathBuf};

use crate::built::{Built, BuiltTop};
use crate::cache::{cache_dir, write_if_changed};
use crate::codegen::{ident, rust_consts};
use crate::compile::slow_profile_hint;
use crate::error::io;
use crate::recipe::{coverage_requested, Recipe, RuntimeInfo, RECIPE_FORMAT};
use crate::verilate::{define_flag, find_verilator, resolve, Run};
use crate::{BuildError, Port, TopSpec, Verilator};

/// A set of tops to verilate and compile, with options common to all of them.
#[derive(Debug, Clone)]
pub struct Build {
    pub(crate) tops: Vec<TopSpec>,
    pub(crate) includes: Vec<PathBuf>,
    pub(crate) lib_dirs: Vec<PathBuf>,
    pub(crate) defines: Vec<(String, Option<String>)>,
    pub(crate) flags: Vec<String>,
    pub(crate) base_dir: Option<PathBuf>,
    pub(crate) out_dir: Option<PathBuf>,
    pub(crate) cache_dir: Option<PathBuf>,
    pub(crate) like: Option<Box<Recipe>>,
    pub(crate) verilator: Option<Verilator>,
    pub(crate) cpp_sources: Vec<PathBuf>,
    pub(crate) warnings: bool,
    pub(crate) coverage: bool,
}

impl Default for Build {
    fn default() -> Self {
        Build::new()
    }
}

impl Build {
    /// An empty build: add tops with [`Build::top`].
    pub fn new() -> Build {
        Build {
            tops: Vec::new(),
            includes: Vec::new(),
            lib_dirs: Vec::new(),
            defines: Vec::new(),
            flags: Vec::new(),
            base_dir: None,
            out_dir: None,
            cache_dir: None,
            like: None,
            verilator: None,
            cpp_sources: Vec::new(),
            warnings: true,
            coverage: false,
        }
    }

    /// Adds a top.
    pub fn top(mut self, top: TopSpec) -> Build {
        self.tops.push(top);
        self
    }

    /// Adds several tops (from [`parse_tops`], say).
    pub fn tops(mut self, tops: impl IntoIterator<Item = TopSpec>) -> Build {
        self.tops.extend(tops);
        self
    }

    /// Adds an include folder for every top.
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Build {
        self.includes.push(dir.into());
        self
    }

    /// Adds a library folder (`-y`) for every top.
    pub fn lib_dir(mut self, dir: impl Into<PathBuf>) -> Build {
        self.lib_dirs.push(dir.into());
        self
    }

    /// Defines a macro for every top.
    pub fn define<'a>(mut self, name: &str, value: impl Into<Option<&'a str>>) -> Build {
        self.defines
            .push((name.to_string(), value.into().map(str::to_string)));
        self
    }

    /// Passes a Verilator flag (a waiver file, `-Wno-...`) for every top, before each top's own.
    pub fn flag(mut self, flag: impl Into<String>) -> Build {
        self.flags.push(flag.into());
        self
    }

    /// The folder relative paths start from and Verilator runs in (default: the crate's
    /// manifest folder).
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Build {
        self.base_dir = Some(dir.into());
        self
    }

    /// Where generated files go (default `OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Build {
        self.out_dir = Some(dir.into());
        self
    }

    /// Where the tops' libraries are cached (default `<target>/sim-cache`, or `SIM_CACHE_DIR`).
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Build {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Takes what sim-runtime provides, and the target, from an existing recipe instead of
    /// the build script's environment: for describing tops outside a build script (a tool, a
    /// test of the cache itself).
    pub fn runtime_of(mut self, recipe: &Recipe) -> Build {
        self.like = Some(Box::new(recipe.clone()));
        self
    }

    /// Uses this Verilator instead of the one sim-runtime was built with.
    pub fn verilator(mut self, v: Verilator) -> Build {
        self.verilator = Some(v);
        self
    }

    /// Reports Verilator's warnings on standard error when a top is built (default on; off for
    /// RTL linted elsewhere).
    pub fn warnings(mut self, on: bool) -> Build {
        self.warnings = on;
        self
    }

    /// Builds every top with coverage (default off): Verilator counts each line and branch
    /// (`--coverage-line`), each bit's toggles (`--coverage-toggle`) and the RTL's own `cover`
    /// statements (`--coverage-user`), and a model writes what it counted when it is dropped
    /// (`sim_runtime::COVERAGE_DIR_ENV`). The environment variable [`COVERAGE_ENV`] turns it on
    /// for every crate's build at once, as `cargo xtask coverage` does; a coverage build runs
    /// slower, so keep it in a target folder of its own.
    ///
    /// [`COVERAGE_ENV`]: crate::COVERAGE_ENV
    pub fn coverage(mut self, on: bool) -> Build {
        self.coverage = on;
        self
    }

    /// Adds a C or C++ source compiled and linked with the tops: the DPI-C functions a model
    /// imports, say. It sees Verilator's headers (`svdpi.h`), sim-runtime's (`sim_memory.h`,
    /// to register a memory the model keeps, for backdoor access) and its own folder.
    pub fn cpp(mut self, path: impl Into<PathBuf>) -> Build {
        self.cpp_sources.push(path.into());
        self
    }

    /// Describes every top to the crate being built: writes the Rust constants, one
    /// `TopDef` per top carrying its recipe (`sim_runtime::include_tops!()`). Nothing is
    /// verilated or compiled here: a top is built the first time a model of it is made, and
    /// found in the cache after that (see [`crate::build_library`]), so a build script's
    /// output does not depend on the RTL and editing it rebuilds no crate.
    pub fn compile(&self) -> Result<Built, BuildError> {
        if let Some(hint) = slow_profile_hint(std::env::var("OPT_LEVEL").ok().as_deref()) {
            println!("cargo::warning={hint}");
        }
        // A build script that names no file of its own would be rerun for any change in its
        // crate; the RTL is the runtime's business now.
        println!("cargo::rerun-if-changed=build.rs");
        println!("cargo::rerun-if-env-changed={}", crate::COVERAGE_ENV);
        println!("cargo::rerun-if-env-changed=SIM_CACHE_DIR");
        let (_, out) = self.folders()?;
        let built = self.describe()?;
        let rust_file = out.join("top_defs.rs");
        write_if_changed(&rust_file, &rust_consts(&built, "::sim_runtime")?)?;
        Ok(Built {
            tops: built,
            rust_file,
        })
    }

    /// The recipe of every top, as [`Build::compile`] records them, without writing anything.
    pub fn recipes(&self) -> Result<Vec<Recipe>, BuildError> {
        Ok(self.describe()?.into_iter().map(|b| b.recipe).collect())
    }

    fn describe(&self) -> Result<Vec<BuiltTop>, BuildError> {
        let (base, out) = self.folders()?;
        let (mut runtime, target, host) = match &self.like {
            Some(r) => (r.runtime.clone(), r.target.clone(), r.host.clone()),
            None => {
                let target = std::env::var("TARGET").unwrap_or_default();
                let host = std::env::var("HOST").unwrap_or_else(|_| target.clone());
                (RuntimeInfo::from_env()?, target, host)
            }
        };
        if let Some(v) = &self.verilator {
            runtime.verilator_root = v.root.clone();
        }
        let package =
            ident(&std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "user".to_string()));
        let cache = self.cache_dir.clone().unwrap_or_else(|| cache_dir(&out));
        let mut built = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        for top in &self.tops {
            check_name(top)?;
            if names.contains(&top.name.as_str()) {
                return Err(BuildError::BadTop {
                    top: top.name.clone(),
                    problem: "two tops have this name; name variants with TopSpec::name".into(),
                });
            }
            names.push(&top.name);
            let recipe = Recipe {
                format: RECIPE_FORMAT,
                package: package.clone(),
                name: top.name.clone(),
                module: top.module.clone(),
                base: base.clone(),
                args: build_args(self, &base, top)?,
                strip: top.strip.as_ref().map(|p| resolve(&base, p)),
                coverage: self.coverage || coverage_requested(),
                warnings: self.warnings,
                cpp: self.cpp_sources.iter().map(|f| base.join(f)).collect(),
                runtime: runtime.clone(),
                cache: cache.clone(),
                target: target.clone(),
                host: host.clone(),
            };
            built.push(BuiltTop {
                name: top.name.clone(),
                module: top.module.clone(),
                symbol: recipe.factory_symbol(),
                constant: top.name.to_ascii_uppercase(),
                recipe,
            });
        }
        Ok(built)
    }

    /// Runs Verilator on every top without compiling anything, and returns each top's ports:
    /// a quick check of the sources and options (Verilator's messages come back whole).
    pub fn compile_verilate_only(&self) -> Result<Vec<Vec<Port>>, BuildError> {
        let (base, out) = self.folders()?;
        let verilator = match &self.verilator {
            Some(v) => v.clone(),
            None => find_verilator(&base)?,
        };
        let package =
            ident(&std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "user".to_string()));
        self.tops
            .iter()
            .map(|t| {
                check_name(t)?;
                let run = Run {
                    verilator: &verilator,
                    base: &base,
                    args: build_args(self, &base, t)?,
                    top: &t.name,
                    module: &t.module,
                    class: format!("V{package}__{}", t.name),
                    mdir: out.join("vl").join(&t.name),
                    coverage: self.coverage,
                };
                run.verilate().map(|v| v.ports)
            })
            .collect()
    }

    /// The base folder (absolute) and the output folder.
    fn folders(&self) -> Result<(PathBuf, PathBuf), BuildError> {
        let env_path = |k: &str| std::env::var_os(k).map(PathBuf::from);
        let manifest = env_path("CARGO_MANIFEST_DIR");
        let base = self.base_dir.clone().or(manifest).ok_or_else(|| {
            BuildError::Environment(
                "CARGO_MANIFEST_DIR is not set: run from a build script, or set Build::base_dir"
                    .into(),
            )
        })?;
        let base = if base.is_absolute() {
            base
        } else {
            std::env::current_dir()
                .map_err(|e| io(&base, e))?
                .join(base)
        };
        let out = self
            .out_dir
            .clone()
            .or_else(|| env_path("OUT_DIR"))
            .ok_or_else(|| {
                BuildError::Environment(
                    "OUT_DIR is not set: run from a build script, or set Build::out_dir".into(),
                )
            })?;
        Ok((base, out))
    }
}

/// Verilator's arguments for `top` of build `b`, but the model's class, its output folder and
/// the coverage flags: what a recipe records. Paths stay relative to the base folder, so the
/// generated code holds none of the checkout's absolute paths.
pub(crate) fn build_args(b: &Build, base: &Path, top: &TopSpec) -> Result<Vec<String>, BuildError> {
    let mut args: Vec<String> = [
        "--cc",
        "--make",
        "json",
        "--trace-fst",
        "--no-timing",
        // Warnings are the lint task's job; here they must not stop a build.
        "-Wno-fatal",
        "-O3",
        "--x-assign",
        "fast",
        "--x-initial",
        "fast",
        "--quiet",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect();
    // Verilator 5 keeps immediate assertions without `--assert`, so off must be said.
    args.push(
        if top.assert {
            "--assert"
        } else {
            "--no-assert"
        }
        .into(),
    );
    let rel = |p: &PathBuf| resolve(base, p).to_string_lossy().into_owned();
    for d in b.includes.iter().chain(&top.includes) {
        args.push(format!("-I{}", rel(d)));
    }
    for d in b.lib_dirs.iter().chain(&top.lib_dirs) {
        args.push("-y".into());
        args.push(rel(d));
    }
    for d in b.defines.iter().chain(&top.defines) {
        args.push(define_flag(d));
    }
    for (k, v) in &top.params {
        args.push(format!("-G{k}={v}"));
    }
    args.extend(b.flags.iter().chain(&top.flags).cloned());
    for f in &top.file_lists {
        args.push("-f".into());
        args.push(rel(f));
    }
    for f in &top.files {
        args.push(rel(f));
    }
    if top.files.is_empty()
        && top.file_lists.is_empty()
        && b.lib_dirs.is_empty()
        && top.lib_dirs.is_empty()
    {
        return Err(BuildError::BadTop {
            top: top.name.clone(),
            problem: "no sources: give files, a .f list or a library folder".into(),
        });
    }
    args.extend(["--top-module".to_string(), top.module.clone()]);
    Ok(args)
}

/// A top's name names a C++ class and a Rust constant.
fn check_name(top: &TopSpec) -> Result<(), BuildError> {
    if top.name.is_empty()
        || !top
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return Err(BuildError::BadTop {
            top: top.name.clone(),
            problem:
                "a top's name is letters, digits and `_` (it names a C++ class and a Rust constant)"
                    .into(),
        });
    }
    Ok(())
}
