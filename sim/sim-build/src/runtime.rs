//! The Verilator runtime with sim-runtime's hooks, compiled once by sim-runtime's build script
//! for every crate that builds tops.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use crate::builder::Build;
use crate::cache::{cached_lib, files_in, hash_files, CACHE_FORMAT};
use crate::compile::{base_cc, try_objects};
use crate::{BuildError, Verilator};

/// The Verilator runtime with sim-runtime's hooks and named memories; only sim-runtime's build
/// compiles it.
#[derive(Debug, Clone)]
pub struct Runtime {
    /// sim-runtime's C++ folder (the hooks, the named memories, the model interface).
    pub cpp_dir: PathBuf,
    /// Extra include folders (zlib, lz4 for the FST writer).
    pub includes: Vec<PathBuf>,
}

/// The Verilator runtime files sim-runtime compiles: every top of every crate links against
/// these and may need no other (a top that asks for threads or VCD is refused with a message
/// that says so). The coverage counters are here for every top: a top built without coverage
/// never calls them.
pub const RUNTIME_FILES: [&str; 5] = [
    "verilated.cpp",
    "verilated_cov.cpp",
    "verilated_dpi.cpp",
    "verilated_fst_c.cpp",
    "verilated_threads.cpp",
];

/// Compiles the runtime into sim-runtime's build and tells dependents' build scripts what
/// they need to build tops of their own (`DEP_SIM_RUNTIME_*`).
pub fn compile_runtime(verilator: &Verilator, rt: &Runtime) -> Result<(), BuildError> {
    let ctx = Build::new()
        .verilator(verilator.clone())
        .with_cpp_dir(rt.cpp_dir.clone())
        .context()?;
    let ctx = &ctx;
    let inc = ctx.verilator.include_dir();
    let files: Vec<String> = RUNTIME_FILES.iter().map(|s| (*s).to_string()).collect();
    let mut sources: Vec<PathBuf> = files.iter().map(|f| inc.join(f)).collect();
    sources.push(ctx.cpp_dir.join("hooks.cpp"));
    sources.push(ctx.cpp_dir.join("sim_memory.cpp"));
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
    cached_lib(ctx, "sim_vl_runtime", &key, |tmp| {
        let mut b = base_cc(ctx, None);
        b.opt_level(2)
            .define("VL_USER_STOP", None)
            .define("VL_USER_FATAL", None)
            .define("VL_USER_FINISH", None)
            .define("VL_PRINTF", "sim_runtime_vl_printf")
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
    Ok(())
}
