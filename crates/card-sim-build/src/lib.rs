//! card-sim-build: verilates RTL tops from a build script and links them so that
//! `card_sim::Model` can drive them, in the spirit of the `cc` crate.
//!
//! The card's own tops (`sim/tops.txt`) are built through this API by card-sim's build script,
//! and any other crate builds its own modules the same way, from its own `build.rs`, without
//! touching card-sim:
//!
//! ```no_run
//! // build.rs of a user crate that depends on card-sim (and on card-sim-build for building).
//! use card_sim_build::{Build, Top};
//!
//! fn main() {
//!     let result = Build::new()
//!         .include("rtl/include")
//!         .define("VENDOR_SIM", None)
//!         .top(
//!             Top::new("vendor_axi_slave")
//!                 .file("rtl/VendorAxiSlave.v")
//!                 .param("C_S_AXI_DATA_WIDTH", "64"),
//!         )
//!         .top(Top::new("stream_fifo").file_list("rtl/fifo.f").assert(false))
//!         .compile();
//!     if let Err(e) = result {
//!         e.emit();
//!     }
//! }
//! ```
//!
//! and in the crate, `card_sim::include_tops!();` defines one `card_sim::TopDef` constant per
//! top (`VENDOR_AXI_SLAVE`, `STREAM_FIFO`), to build models from with `Model::new(TOP)`.
//!
//! Relative paths are relative to the crate's manifest folder; sources may live anywhere and
//! keep their own file names. Verilator runs with that folder as its working folder, so the
//! generated code holds no absolute path, and the compiled C++ is cached under
//! `<target>/card-sim-cache/`, keyed on the generated code's content, the compiler and the
//! flags: a copied checkout, a second crate or a switch between debug and release reuse it.

mod tops_file;

use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

pub use tops_file::{parse as parse_tops, parse_line as parse_top_line};
pub use verilator_find::Verilator;

/// What went wrong while building tops. [`BuildError::emit`] reports it to Cargo.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No usable Verilator.
    #[error("{0}")]
    NoVerilator(String),
    /// Verilator rejected the sources of a top; `diagnostics` is what it printed.
    #[error(
        "verilator failed on top `{top}` (module `{module}`):\n{diagnostics}\ncommand: {command}"
    )]
    Verilator {
        /// The top's name.
        top: String,
        /// Its module.
        module: String,
        /// Verilator's own messages (`%Error-MODMISSING: ...` and the like), every line.
        diagnostics: String,
        /// The command that was run, to reproduce it by hand.
        command: String,
    },
    /// A line of a tops list that cannot be read.
    #[error("{file}:{line}: {problem}")]
    TopsFile {
        /// The list's file.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// What is wrong and how to write it.
        problem: String,
    },
    /// A top described in a way that cannot be built.
    #[error("top `{top}`: {problem}")]
    BadTop {
        /// The top's name.
        top: String,
        /// What is wrong.
        problem: String,
    },
    /// The C++ compiler failed.
    #[error("compiling {what} failed: {message}")]
    Compile {
        /// What was being compiled.
        what: String,
        /// The compiler's message.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The build script does not run under Cargo, or card-sim is not a dependency.
    #[error("{0}")]
    Environment(String),
}

impl BuildError {
    /// Reports the error to Cargo, one `cargo::error=` line per line of the message, so that a
    /// multi-line Verilator diagnostic shows whole in `cargo build` output.
    pub fn emit(&self) {
        for line in cargo_error_lines(&self.to_string()) {
            println!("{line}");
        }
    }
}

/// The `cargo::error=` directives for a message: one per line, since Cargo reads a directive
/// up to the end of its line and would show only the first.
pub fn cargo_error_lines(message: &str) -> Vec<String> {
    message
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("cargo::error={l}"))
        .collect()
}

fn io(path: &Path, e: impl std::fmt::Display) -> BuildError {
    BuildError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// One top to verilate: a module, its sources and its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Top {
    name: String,
    module: String,
    files: Vec<PathBuf>,
    file_lists: Vec<PathBuf>,
    includes: Vec<PathBuf>,
    lib_dirs: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    pub(crate) params: Vec<(String, String)>,
    pub(crate) flags: Vec<String>,
    assert: bool,
}

impl Top {
    /// A top built from `module`; its name (the model's and the generated constant's) is the
    /// module's unless [`Top::name`] gives another.
    pub fn new(module: impl Into<String>) -> Top {
        let module = module.into();
        Top {
            name: module.clone(),
            module,
            files: Vec::new(),
            file_lists: Vec::new(),
            includes: Vec::new(),
            lib_dirs: Vec::new(),
            defines: Vec::new(),
            params: Vec::new(),
            flags: Vec::new(),
            assert: true,
        }
    }

    /// Names the top (for a variant of a module with other parameters or flags).
    pub fn name(mut self, name: impl Into<String>) -> Top {
        self.name = name.into();
        self
    }

    /// The top's name.
    pub fn top_name(&self) -> &str {
        &self.name
    }

    /// The module it builds.
    pub fn module_name(&self) -> &str {
        &self.module
    }

    /// The extra Verilator flags given so far, in order.
    pub fn flags(&self) -> &[String] {
        &self.flags
    }

    /// Adds a source file; any file name, any module inside.
    pub fn file(mut self, path: impl Into<PathBuf>) -> Top {
        self.files.push(path.into());
        self
    }

    /// Adds several source files.
    pub fn files<P: Into<PathBuf>>(mut self, paths: impl IntoIterator<Item = P>) -> Top {
        self.files.extend(paths.into_iter().map(Into::into));
        self
    }

    /// Adds a Verilator `.f` file list (`-f`): sources, `+incdir+`, `-D` lines as vendors ship
    /// them. Paths inside are relative to the working folder, the crate's manifest folder.
    pub fn file_list(mut self, path: impl Into<PathBuf>) -> Top {
        self.file_lists.push(path.into());
        self
    }

    /// Adds an include folder (`-I`) for this top.
    pub fn include(mut self, dir: impl Into<PathBuf>) -> Top {
        self.includes.push(dir.into());
        self
    }

    /// Adds a library folder (`-y`) searched for modules by file name, `<module>.v`.
    pub fn lib_dir(mut self, dir: impl Into<PathBuf>) -> Top {
        self.lib_dirs.push(dir.into());
        self
    }

    /// Defines a preprocessor macro (`-D`) for this top.
    pub fn define<'a>(mut self, name: &str, value: impl Into<Option<&'a str>>) -> Top {
        self.defines
            .push((name.to_string(), value.into().map(str::to_string)));
        self
    }

    /// Overrides a parameter of the top module (`-G<name>=<value>`).
    pub fn param(mut self, name: &str, value: &str) -> Top {
        self.params.push((name.to_string(), value.to_string()));
        self
    }

    /// Passes an extra flag to Verilator for this top (after the defaults, so that, for
    /// example, `--x-assign unique` wins over the default `fast`).
    pub fn flag(mut self, flag: impl Into<String>) -> Top {
        self.flags.push(flag.into());
        self
    }

    /// Turns assertions (immediate and concurrent) on (`--assert`) or off (`--no-assert`); on
    /// by default.
    pub fn assert(mut self, on: bool) -> Top {
        self.assert = on;
        self
    }
}

/// A verilated port of a top.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    /// Its name as Verilator gives it (the RTL name).
    pub name: String,
    /// Width in bits.
    pub width: u32,
    /// True for outputs (and inouts, which are read only).
    pub output: bool,
}

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
    /// The Rust file with one `TopDef` constant per top, for `card_sim::include_tops!()`.
    pub rust_file: PathBuf,
}

/// The Verilator runtime and card-sim's hooks; only card-sim's own build compiles it.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct Runtime {
    /// Extra include folders (zlib, lz4 for the FST writer).
    pub includes: Vec<PathBuf>,
}

/// A set of tops to verilate and compile, with options common to all of them.
#[derive(Debug, Clone)]
pub struct Build {
    tops: Vec<Top>,
    includes: Vec<PathBuf>,
    lib_dirs: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    flags: Vec<String>,
    base_dir: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    cpp_dir: Option<PathBuf>,
    verilator: Option<Verilator>,
    package: Option<String>,
    runtime: Option<Runtime>,
    rust_path_prefix: String,
    warnings: bool,
}

impl Default for Build {
    fn default() -> Self {
        Build::new()
    }
}

/// The Verilator runtime files card-sim always compiles, whatever its own tops list.
pub const RUNTIME_FILES: [&str; 4] = [
    "verilated.cpp",
    "verilated_dpi.cpp",
    "verilated_fst_c.cpp",
    "verilated_threads.cpp",
];

/// Bumped when the generated glue or the compile flags change meaning, to retire old cache
/// entries.
const CACHE_FORMAT: &str = "card-sim-build 1";

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
            package: None,
            runtime: None,
            rust_path_prefix: "::card_sim".to_string(),
            warnings: true,
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

    /// Uses this Verilator instead of the one card-sim was built with.
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

    /// card-sim's own build: its C++ folder, its package name, its Rust path, and the runtime.
    #[doc(hidden)]
    pub fn card_sim_internal(mut self, cpp_dir: PathBuf, runtime: Runtime) -> Build {
        self.cpp_dir = Some(cpp_dir);
        self.package = Some("card_sim".to_string());
        self.runtime = Some(runtime);
        self.rust_path_prefix = "crate".to_string();
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
        if let Some(rt) = &self.runtime {
            compile_runtime(&ctx, rt, &built)?;
        } else {
            let known = std::env::var("DEP_CARD_SIM_VERILATED_RUNTIME").unwrap_or_default();
            for (b, _) in &built {
                for f in &b.runtime_files {
                    if !known.split(',').any(|k| k == f) {
                        return Err(BuildError::BadTop {
                            top: b.name.clone(),
                            problem: format!("needs the Verilator runtime file {f}, which card-sim does not link (it links {known}); drop the option that asks for it (threads, coverage, VCD)"),
                        });
                    }
                }
            }
        }
        let libs = link_libs(&built);
        for lib in libs {
            println!("cargo::rustc-link-lib={lib}");
        }
        let rust_file = ctx.out.join("card_sim_tops.rs");
        write_if_changed(&rust_file, &rust_consts(&built, &self.rust_path_prefix))?;
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

    fn context(&self) -> Result<Ctx, BuildError> {
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
            None => env_path("DEP_CARD_SIM_VERILATED_CPP").ok_or_else(|| {
                BuildError::Environment(
                    "card-sim's C++ folder is unknown: add card-sim to [dependencies] (its build publishes DEP_CARD_SIM_VERILATED_CPP to this build script)".into(),
                )
            })?,
        };
        let verilator = match &self.verilator {
            Some(v) => v.clone(),
            None => find_verilator(&base)?,
        };
        let package = self.package.clone().unwrap_or_else(|| {
            std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "user".to_string())
        });
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
        let symbol = format!("card_sim_new_{}__{}", ctx.package, top.name);
        let glue = glue_cpp(&v, &symbol);
        let glue_path = v.mdir.join(format!("{}__card_sim_glue.cpp", v.class));
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
struct Ctx {
    base: PathBuf,
    out: PathBuf,
    cpp_dir: PathBuf,
    verilator: Verilator,
    package: String,
    cache: PathBuf,
    compiler: String,
    warnings: bool,
}

/// The Verilator card-sim was built with (so that the generated code matches its runtime),
/// else the one `verilator_find` finds from the crate's folder up.
fn find_verilator(base: &Path) -> Result<Verilator, BuildError> {
    if let Some(root) = std::env::var_os("DEP_CARD_SIM_VERILATED_VERILATOR_ROOT") {
        let root = PathBuf::from(root);
        let bin = root.join("bin").join("verilator");
        if let Some(version) = verilator_find::version_of(&root, &bin) {
            return Ok(Verilator {
                root,
                bin,
                version,
                origin: verilator_find::Origin::EnvRoot,
            });
        }
    }
    let mut last = None;
    for dir in base.ancestors() {
        match verilator_find::find(dir) {
            Ok(v) => return Ok(v),
            Err(e) => last = Some(e),
        }
    }
    Err(BuildError::NoVerilator(last.map_or_else(
        || "Verilator not found".to_string(),
        |e| e.to_string(),
    )))
}

/// The paths a build script should watch for this Verilator: only ones that exist, since Cargo
/// reruns a build script on every build while a watched path is missing.
pub fn verilator_watch_paths(v: &Verilator) -> Vec<PathBuf> {
    [v.bin.clone(), v.include_dir().join("verilated.h")]
        .into_iter()
        .filter(|p| p.exists())
        .collect()
}

struct Verilated {
    class: String,
    mdir: PathBuf,
    global: Vec<PathBuf>,
    fast: Vec<PathBuf>,
    slow: Vec<PathBuf>,
    ldflags: Vec<String>,
    ports: Vec<Port>,
}

fn resolve(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        // Inside the base folder, a relative path keeps the generated code free of absolute
        // paths, so the compile cache survives a copied checkout.
        p.strip_prefix(base)
            .map_or_else(|_| p.to_path_buf(), Path::to_path_buf)
    } else {
        p.to_path_buf()
    }
}

fn define_flag((k, v): &(String, Option<String>)) -> String {
    match v {
        Some(v) => format!("-D{k}={v}"),
        None => format!("-D{k}"),
    }
}

fn verilate(b: &Build, ctx: &Ctx, top: &Top) -> Result<Verilated, BuildError> {
    let class = format!("V{}__{}", ctx.package, top.name);
    let mdir = ctx.out.join("vl").join(&top.name);
    std::fs::create_dir_all(&mdir).map_err(|e| io(&mdir, e))?;
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
    let rel = |p: &PathBuf| resolve(&ctx.base, p).to_string_lossy().into_owned();
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
    args.extend([
        "--top-module".to_string(),
        top.module.clone(),
        "--prefix".to_string(),
        class.clone(),
        "-Mdir".to_string(),
        mdir.to_string_lossy().into_owned(),
    ]);
    let mut cmd = ctx.verilator.command();
    cmd.current_dir(&ctx.base).args(&args);
    let shown = format!("cd {} && verilator {}", ctx.base.display(), args.join(" "));
    let output = cmd.output().map_err(|e| {
        BuildError::Environment(format!("cannot run {}: {e}", ctx.verilator.bin.display()))
    })?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(BuildError::Verilator {
            top: top.name.clone(),
            module: top.module.clone(),
            diagnostics: stderr.trim_end().to_string(),
            command: shown,
        });
    }
    let log = mdir.join("verilator.log");
    write_if_changed(&log, &stderr)?;
    let warnings = stderr.lines().filter(|l| l.starts_with("%Warning")).count();
    if ctx.warnings && warnings > 0 {
        println!(
            "cargo::warning=top `{}`: Verilator gave {warnings} warning(s), first: {}; all in {}",
            top.name,
            stderr
                .lines()
                .find(|l| l.starts_with("%Warning"))
                .unwrap_or_default(),
            log.display()
        );
    }
    // Everything Verilator read: a change to any of them reruns the build script.
    let deps = mdir.join(format!("{class}__ver.d"));
    if let Ok(text) = std::fs::read_to_string(&deps) {
        let files = text.split_once(':').map_or("", |(_, f)| f);
        for f in files.split_whitespace() {
            let p = ctx.base.join(f);
            if p.exists() {
                println!("cargo::rerun-if-changed={}", p.display());
            }
        }
    }
    for f in top.file_lists.iter().chain(&top.files) {
        let p = ctx.base.join(f);
        if p.exists() {
            println!("cargo::rerun-if-changed={}", p.display());
        }
    }
    let json_path = mdir.join(format!("{class}.json"));
    let text = std::fs::read_to_string(&json_path).map_err(|e| io(&json_path, e))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| io(&json_path, format!("bad JSON: {e}")))?;
    let list = |key: &str| -> Vec<PathBuf> {
        json["sources"][key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str())
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut fast = list("classes_fast");
    fast.extend(list("support_fast"));
    let mut slow = list("classes_slow");
    slow.extend(list("support_slow"));
    let ldflags = json["options"]["ldflags"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let header = mdir.join(format!("{class}.h"));
    let ports = parse_ports(&std::fs::read_to_string(&header).map_err(|e| io(&header, e))?);
    if ports.is_empty() {
        return Err(BuildError::BadTop {
            top: top.name.clone(),
            problem: format!("no ports found in {}", header.display()),
        });
    }
    Ok(Verilated {
        class,
        mdir,
        global: list("global"),
        fast,
        slow,
        ldflags,
        ports,
    })
}

/// Reads `VL_IN8(&clk,0,0);`, `VL_OUTW(&data,127,0,4);` and the like from a top header.
pub fn parse_ports(header: &str) -> Vec<Port> {
    header
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let output = if line.starts_with("VL_OUT") {
                true
            } else if line.starts_with("VL_IN") {
                // VL_INOUT is listed as an output: Rust may read it, and it is never driven.
                line.starts_with("VL_INOUT")
            } else {
                return None;
            };
            let args = line.split_once("(&")?.1.split_once(')')?.0;
            let mut parts = args.split(',');
            let name = parts.next()?.trim().to_string();
            let msb: u32 = parts.next()?.trim().parse().ok()?;
            let lsb: u32 = parts.next()?.trim().parse().ok()?;
            Some(Port {
                name,
                width: msb - lsb + 1,
                output,
            })
        })
        .collect()
}

/// The C++ glue of one top: its port table and the `extern "C"` factory Rust calls.
fn glue_cpp(v: &Verilated, symbol: &str) -> String {
    let mut s = format!(
        "// Generated by card-sim-build: the port table and factory of {c}.\n\
         #include \"model_impl.h\"\n#include \"{c}.h\"\n\nnamespace {{\n\
         void ports({c}& t, std::vector<card_sim::PortInfo>& v) {{\n",
        c = v.class
    );
    for p in &v.ports {
        // Wide ports are VlWide arrays; their first word is where the storage starts.
        let addr = if p.width > 64 {
            format!("&t.{}.at(0)", p.name)
        } else {
            format!("&t.{}", p.name)
        };
        let _ = writeln!(
            s,
            "    v.push_back(card_sim::PortInfo{{\"{}\", {}, {}, {addr}}});",
            p.name, p.width, p.output
        );
    }
    let _ = write!(
        s,
        "}}\n}}  // namespace\n\n\
         extern \"C\" void* {symbol}(const card_sim::ModelOptions* opts) {{\n\
         \x20   return card_sim::new_model_impl<{c}>(ports, opts);\n}}\n",
        c = v.class
    );
    s
}

/// What to tell a crate that builds its tops at `opt_level` (Cargo's `OPT_LEVEL` for the
/// build script's crate), when its simulation will run slowly. The verilated C++ is optimised
/// whatever the profile, but the Rust side of every cycle is not: a build script cannot set
/// its dependencies' optimisation, so it can only say how.
fn slow_profile_hint(opt_level: Option<&str>) -> Option<String> {
    (opt_level == Some("0")).then(|| {
        "this crate builds at opt-level 0: the Rust side of its simulations (card-sim, axi-bfm and its monitors) then runs several times slower; set `[profile.dev] opt-level = 1` and `[profile.dev.package.\"*\"] opt-level = 2` in the workspace's Cargo.toml (docs/own-rtl.md)".to_string()
    })
}

fn base_cc(ctx: &Ctx, v: Option<&Verilated>) -> cc::Build {
    let vl = &ctx.verilator;
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++20")
        .include(vl.include_dir())
        .include(vl.include_dir().join("vltstd"))
        .include(&ctx.cpp_dir)
        .define("VERILATOR", "1")
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TIMING", "0")
        .define("VM_TRACE", "1")
        .define("VM_TRACE_FST", "1")
        .define("VM_TRACE_VCD", "0")
        .define("VM_TRACE_SAIF", "0")
        .flag_if_supported("-faligned-new")
        .flag_if_supported("-fcf-protection=none")
        // The same objects in every profile, so the cache serves debug and release alike.
        .debug(false)
        .cargo_metadata(false)
        // Generated code trips many harmless warnings; the RTL is linted separately.
        .warnings(false)
        .extra_warnings(false);
    if let Some(v) = v {
        b.include(&v.mdir);
    }
    b
}

/// Hashes file contents under their file names only: the key must not change with the
/// checkout's or the build's folder.
fn hash_files(h: &mut DefaultHasher, files: &[PathBuf]) -> Result<(), BuildError> {
    for f in files {
        f.file_name().hash(h);
        std::fs::read(f).map_err(|e| io(f, e))?.hash(h);
    }
    Ok(())
}

fn files_in(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
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

fn compile_top(ctx: &Ctx, v: &Verilated, glue: &Path) -> Result<(), BuildError> {
    let mut h = DefaultHasher::new();
    (
        CACHE_FORMAT,
        &ctx.compiler,
        ctx.verilator.version.to_string(),
    )
        .hash(&mut h);
    // Every generated file, headers included, and card-sim's headers the glue uses.
    hash_files(&mut h, &files_in(&v.mdir, &["cpp", "h"]))?;
    hash_files(&mut h, &files_in(&ctx.cpp_dir, &["h"]))?;
    let key = format!("{:016x}", h.finish());
    let lib_name = format!("card_sim_vl_{}", v.class);
    cached_lib(ctx, &lib_name, &key, |tmp| {
        let mut objs = Vec::new();
        // Per-cycle code gets full optimisation (tests spend their time there); slow code
        // (constructors, initial blocks) runs once, and optimising it only costs build time.
        let mut fast = base_cc(ctx, Some(v));
        fast.opt_level(3).files(&v.fast).file(glue).out_dir(tmp);
        objs.extend(try_objects(&fast, &v.class)?);
        let mut slow = base_cc(ctx, Some(v));
        slow.opt_level(0).files(&v.slow).out_dir(tmp);
        objs.extend(try_objects(&slow, &v.class)?);
        Ok((objs, fast))
    })
}

fn try_objects(b: &cc::Build, what: &str) -> Result<Vec<PathBuf>, BuildError> {
    b.try_compile_intermediates()
        .map_err(|e| BuildError::Compile {
            what: what.to_string(),
            message: e.to_string(),
        })
}

/// Links `lib<name>.a` for the key, compiling it with `make` on a cache miss. `make` returns
/// the objects and a build whose archiver to use.
fn cached_lib(
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

fn compile_runtime(
    ctx: &Ctx,
    rt: &Runtime,
    built: &[(BuiltTop, Vec<String>)],
) -> Result<(), BuildError> {
    let inc = ctx.verilator.include_dir();
    let mut files: Vec<String> = RUNTIME_FILES.iter().map(|s| (*s).to_string()).collect();
    for (b, _) in built {
        for f in &b.runtime_files {
            if !files.contains(f) {
                files.push(f.clone());
            }
        }
    }
    let mut sources: Vec<PathBuf> = files.iter().map(|f| inc.join(f)).collect();
    sources.push(ctx.cpp_dir.join("hooks.cpp"));
    sources.push(ctx.cpp_dir.join("ddr3_mem.cpp"));
    let mut h = DefaultHasher::new();
    (
        CACHE_FORMAT,
        &ctx.compiler,
        ctx.verilator.version.to_string(),
    )
        .hash(&mut h);
    hash_files(&mut h, &sources)?;
    hash_files(&mut h, &files_in(&ctx.cpp_dir, &["h"]))?;
    let key = format!("{:016x}", h.finish());
    cached_lib(ctx, "card_sim_vl_runtime", &key, |tmp| {
        let mut b = base_cc(ctx, None);
        b.opt_level(2)
            .define("VL_USER_STOP", None)
            .define("VL_USER_FATAL", None)
            .define("VL_USER_FINISH", None)
            .define("VL_PRINTF", "card_sim_vl_printf")
            .flag("-include")
            .flag(ctx.cpp_dir.join("hooks.h").to_string_lossy().as_ref())
            .files(&sources)
            .out_dir(tmp);
        for d in &rt.includes {
            b.include(d);
        }
        Ok((try_objects(&b, "the Verilator runtime")?, b))
    })?;
    // Tells dependents' build scripts what they need to build tops of their own.
    println!("cargo::metadata=cpp={}", ctx.cpp_dir.display());
    println!(
        "cargo::metadata=verilator_root={}",
        ctx.verilator.root.display()
    );
    println!("cargo::metadata=runtime={}", files.join(","));
    // The generated code of card-sim's own tops, for benches that drive one from plain C++.
    println!("cargo::metadata=vl={}", ctx.out.join("vl").display());
    Ok(())
}

/// The system libraries the tops ask for; zlib and lz4 (for FST) come from card-sim's own
/// dependencies instead.
fn link_libs(built: &[(BuiltTop, Vec<String>)]) -> Vec<String> {
    let mut libs: Vec<String> = built
        .iter()
        .flat_map(|(_, f)| f.iter().filter_map(|f| f.strip_prefix("-l")))
        .filter(|l| !matches!(*l, "z" | "lz4"))
        .map(str::to_string)
        .collect();
    libs.push("pthread".into());
    libs.sort_unstable();
    libs.dedup();
    libs
}

fn rust_consts(built: &[(BuiltTop, Vec<String>)], krate: &str) -> String {
    let mut s = String::from(
        "// Generated by card-sim-build: one TopDef per verilated top of this crate.\n\
         unsafe extern \"C\" {\n",
    );
    for (b, _) in built {
        let _ = writeln!(
            s,
            "    fn {}(opts: *const {krate}::ModelOptions) -> *mut ::core::ffi::c_void;",
            b.symbol
        );
    }
    s.push_str("}\n\n");
    for (b, _) in built {
        let _ = writeln!(
            s,
            "/// The verilated top `{n}` (module `{m}`).\npub const {c}: {krate}::TopDef = {krate}::TopDef::from_raw(\"{n}\", \"{m}\", {sym});",
            n = b.name,
            m = b.module,
            c = b.constant,
            sym = b.symbol
        );
    }
    s.push_str("\n/// Every top this crate's build script built.\npub const ALL_TOPS: &[");
    let _ = write!(s, "{krate}::TopDef] = &[");
    for (b, _) in built {
        let _ = write!(s, "{}, ", b.constant);
    }
    s.push_str("];\n");
    s
}

/// A C identifier from a package name.
fn ident(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// `<target>/card-sim-cache`, from `OUT_DIR` = `<target>/<profile>/build/<pkg>-<hash>/out`,
/// shared by every profile and crate of the target folder; `CARD_SIM_CACHE_DIR` overrides it.
fn cache_dir(out: &Path) -> PathBuf {
    println!("cargo::rerun-if-env-changed=CARD_SIM_CACHE_DIR");
    if let Some(d) = std::env::var_os("CARD_SIM_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    out.ancestors()
        .nth(4)
        .map_or_else(|| out.join("cache"), |t| t.join("card-sim-cache"))
}

/// The compiler, its version and the flags the environment adds to it (`CXXFLAGS` and the
/// like, which cc reads): part of every cache key.
fn compiler_id() -> String {
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

/// Keeps a file's timestamp when its text is unchanged, so nothing downstream rebuilds.
pub fn write_if_changed(path: &Path, text: &str) -> Result<(), BuildError> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_unoptimised_crate_is_told_how_to_speed_its_simulations_up() {
        let hint = slow_profile_hint(Some("0")).expect("opt-level 0 is slow");
        assert!(hint.contains("profile.dev.package"), "{hint}");
        assert!(!hint.contains('\n'), "one warning line: {hint}");
        for level in ["1", "2", "3", "s", "z"] {
            assert_eq!(slow_profile_hint(Some(level)), None, "opt-level {level}");
        }
        assert_eq!(slow_profile_hint(None), None, "not in a build script");
    }

    #[test]
    fn every_line_of_an_error_becomes_its_own_directive() {
        let e = BuildError::Verilator {
            top: "x".into(),
            module: "x".into(),
            diagnostics: "%Error-MODMISSING: x.v:3:5: Cannot find file containing module: 'sub'\n        : ... note\n%Error: Exiting due to 1 error(s)".into(),
            command: "verilator x.v".into(),
        };
        let lines = cargo_error_lines(&e.to_string());
        assert!(lines.iter().all(|l| l.starts_with("cargo::error=")));
        assert!(
            lines.iter().any(|l| l.contains("%Error-MODMISSING")),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.contains("Exiting due to")),
            "{lines:?}"
        );
        assert!(lines.len() >= 4);
    }

    #[test]
    fn ports_come_from_the_header() {
        let p =
            parse_ports("  VL_IN8(&clk,0,0);\n  VL_OUTW(&data,127,0,4);\n  VL_INOUT(&io,3,0);\n");
        assert_eq!(p.len(), 3);
        assert_eq!(
            (p[1].name.as_str(), p[1].width, p[1].output),
            ("data", 128, true)
        );
        assert!(p[2].output);
    }

    #[test]
    fn paths_inside_the_base_become_relative() {
        assert_eq!(
            resolve(Path::new("/a/b"), Path::new("/a/b/rtl/x.v")),
            PathBuf::from("rtl/x.v")
        );
        assert_eq!(
            resolve(Path::new("/a/b"), Path::new("/c/x.v")),
            PathBuf::from("/c/x.v")
        );
    }

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
        assert_eq!(a, PathBuf::from("/t/target/card-sim-cache"));
    }
}
