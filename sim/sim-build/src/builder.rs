//! The builder API: a set of tops and the options they share, compiled into the crate.

use std::path::PathBuf;

use crate::cache::{cache_dir, compiler_id};
use crate::codegen::{glue_cpp, ident, rust_consts, write_if_changed};
use crate::compile::{compile_sources, compile_top, link_libs, slow_profile_hint};
use crate::error::io;
use crate::verilate::{find_verilator, verilate};
use crate::{BuildError, Port, Top, Verilator};

/// A top that was built.
#[derive(Debug, Clone)]
pub struct BuiltTop {
    /// The top's name.
    pub name: String,
    /// The module.
    pub module: String,
    /// The C symbol of its model factory.
    pub symbol: String,
    /// The Rust constant generated for it (`UPPER_SNAKE` of the name).
    pub constant: String,
    /// Its ports.
    pub ports: Vec<Port>,
    /// The Verilator runtime sources it needs (file names).
    pub runtime_files: Vec<String>,
}

/// What [`Build::compile`] made.
#[derive(Debug, Clone)]
pub struct Built {
    /// The tops, in the order they were added.
    pub tops: Vec<BuiltTop>,
    /// The Rust file with one `TopDef` constant per top, for `sim_runtime::include_tops!()`.
    pub rust_file: PathBuf,
}

/// A set of tops to verilate and compile, with options common to all of them.
#[derive(Debug, Clone)]
pub struct Build {
    pub(crate) tops: Vec<Top>,
    pub(crate) includes: Vec<PathBuf>,
    pub(crate) lib_dirs: Vec<PathBuf>,
    pub(crate) defines: Vec<(String, Option<String>)>,
    pub(crate) flags: Vec<String>,
    pub(crate) base_dir: Option<PathBuf>,
    pub(crate) out_dir: Option<PathBuf>,
    pub(crate) cpp_dir: Option<PathBuf>,
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
            cpp_dir: None,
            verilator: None,
            cpp_sources: Vec::new(),
            warnings: true,
            coverage: false,
        }
    }

    /// Adds a top.
    pub fn top(mut self, top: Top) -> Build {
        self.tops.push(top);
        self
    }

    /// Adds several tops (from [`parse_tops`], say).
    pub fn tops(mut self, tops: impl IntoIterator<Item = Top>) -> Build {
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

    /// Uses this Verilator instead of the one sim-runtime was built with.
    pub fn verilator(mut self, v: Verilator) -> Build {
        self.verilator = Some(v);
        self
    }

    /// Reports Verilator's warnings as Cargo warnings (default on; off for RTL linted
    /// elsewhere).
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

    /// The build that compiles sim-runtime's own C++ (its folder given, not read from the
    /// dependency's metadata).
    pub(crate) fn with_cpp_dir(mut self, dir: PathBuf) -> Build {
        self.cpp_dir = Some(dir);
        self
    }

    /// Verilates and compiles every top, links them into the crate being built and writes the
    /// Rust constants. Errors carry Verilator's or the compiler's full text.
    pub fn compile(&self) -> Result<Built, BuildError> {
        let ctx = self.context()?;
        if let Some(hint) = slow_profile_hint(std::env::var("OPT_LEVEL").ok().as_deref()) {
            println!("cargo::warning={hint}");
        }
        let mut built = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        for top in &self.tops {
            if names.contains(&top.name.as_str()) {
                return Err(BuildError::BadTop {
                    top: top.name.clone(),
                    problem: "two tops have this name; name variants with Top::name".into(),
                });
            }
            names.push(&top.name);
            built.push(self.build_top(&ctx, top)?);
        }
        let known = std::env::var("DEP_SIM_RUNTIME_RUNTIME").unwrap_or_default();
        for (b, _) in &built {
            for f in &b.runtime_files {
                if !known.split(',').any(|k| k == f) {
                    return Err(BuildError::BadTop {
                        top: b.name.clone(),
                        problem: format!("needs the Verilator runtime file {f}, which sim-runtime does not link (it links {known}); drop the option that asks for it (threads, VCD)"),
                    });
                }
            }
        }
        compile_sources(&ctx, &self.cpp_sources)?;
        let libs = link_libs(&built);
        for lib in libs {
            println!("cargo::rustc-link-lib={lib}");
        }
        let rust_file = ctx.out.join("top_defs.rs");
        write_if_changed(&rust_file, &rust_consts(&built, "::sim_runtime"))?;
        Ok(Built {
            tops: built.into_iter().map(|(t, _)| t).collect(),
            rust_file,
        })
    }

    /// Runs Verilator on every top without compiling anything, and returns each top's ports:
    /// a quick check of the sources and options (Verilator's messages come back whole).
    pub fn compile_verilate_only(&self) -> Result<Vec<Vec<Port>>, BuildError> {
        let ctx = self.context_with(false)?;
        self.tops
            .iter()
            .map(|t| verilate(self, &ctx, t).map(|v| v.ports))
            .collect()
    }

    pub(crate) fn context(&self) -> Result<Ctx, BuildError> {
        self.context_with(true)
    }

    fn context_with(&self, need_cpp: bool) -> Result<Ctx, BuildError> {
        let env_path = |k: &str| std::env::var_os(k).map(PathBuf::from);
        let manifest = env_path("CARGO_MANIFEST_DIR");
        let base = self.base_dir.clone().or(manifest).ok_or_else(|| {
            BuildError::Environment(
                "CARGO_MANIFEST_DIR is not set: run from a build script, or set Build::base_dir"
                    .into(),
            )
        })?;
        let out = self
            .out_dir
            .clone()
            .or_else(|| env_path("OUT_DIR"))
            .ok_or_else(|| {
                BuildError::Environment(
                    "OUT_DIR is not set: run from a build script, or set Build::out_dir".into(),
                )
            })?;
        let cpp_dir = match &self.cpp_dir {
            Some(d) => d.clone(),
            None if !need_cpp => PathBuf::new(),
            None => env_path("DEP_SIM_RUNTIME_CPP").ok_or_else(|| {
                BuildError::Environment(
                    "sim-runtime's C++ folder is unknown: add sim-runtime to [dependencies] (its build publishes DEP_SIM_RUNTIME_CPP to this build script)".into(),
                )
            })?,
        };
        let verilator = match &self.verilator {
            Some(v) => v.clone(),
            None => find_verilator(&base)?,
        };
        let package = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "user".to_string());
        let cache = cache_dir(&out);
        let compiler = if need_cpp {
            std::fs::create_dir_all(&cache).map_err(|e| io(&cache, e))?;
            compiler_id()
        } else {
            String::new()
        };
        Ok(Ctx {
            base,
            out,
            cpp_dir,
            verilator,
            package: ident(&package),
            cache,
            compiler,
            warnings: self.warnings,
            coverage: self.coverage || coverage_requested(),
        })
    }

    fn build_top(&self, ctx: &Ctx, top: &Top) -> Result<(BuiltTop, Vec<String>), BuildError> {
        if top.name.is_empty()
            || !top
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(BuildError::BadTop {
                top: top.name.clone(),
                problem: "a top's name is letters, digits and `_` (it names a C++ class and a Rust constant)".into(),
            });
        }
        let v = verilate(self, ctx, top)?;
        let symbol = format!("sim_new_{}__{}", ctx.package, top.name);
        let glue = glue_cpp(&v, &symbol);
        let glue_path = v.mdir.join(format!("{}__sim_glue.cpp", v.class));
        write_if_changed(&glue_path, &glue)?;
        compile_top(ctx, &v, &glue_path)?;
        Ok((
            BuiltTop {
                name: top.name.clone(),
                module: top.module.clone(),
                symbol,
                constant: top.name.to_ascii_uppercase(),
                ports: v.ports,
                runtime_files: v
                    .global
                    .iter()
                    .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string))
                    .collect(),
            },
            v.ldflags,
        ))
    }
}

/// What every top of one build shares.
pub(crate) struct Ctx {
    pub(crate) base: PathBuf,
    pub(crate) out: PathBuf,
    pub(crate) cpp_dir: PathBuf,
    pub(crate) verilator: Verilator,
    pub(crate) package: String,
    pub(crate) cache: PathBuf,
    pub(crate) compiler: String,
    pub(crate) warnings: bool,
    pub(crate) coverage: bool,
}

/// Whether [`crate::COVERAGE_ENV`] asks for coverage builds (any value but empty or `0`).
fn coverage_requested() -> bool {
    println!("cargo::rerun-if-env-changed={}", crate::COVERAGE_ENV);
    std::env::var(crate::COVERAGE_ENV).is_ok_and(|v| !v.is_empty() && v != "0")
}
