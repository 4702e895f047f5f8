//! The Verilator runtime with sim-runtime's hooks and named memories, compiled once per
//! Verilator, compiler and runtime sources into the cache, and linked into every top's library.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use crate::cache::{archive, files_in, hash_files, lock, publish, scratch, CACHE_FORMAT};
use crate::compile::{base_cc, try_objects};
use crate::ctx::Ctx;
use crate::BuildError;

/// The Verilator runtime files every top links against; a top may need no other (one that
/// asks for threads or VCD is refused with a message that says so). The coverage counters are
/// here for every top: a top built without coverage never calls them.
pub const RUNTIME_FILES: [&str; 5] = [
    "verilated.cpp",
    "verilated_cov.cpp",
    "verilated_dpi.cpp",
    "verilated_fst_c.cpp",
    "verilated_threads.cpp",
];

/// The runtime's static library in the cache, compiled on the first call that misses it.
pub(crate) fn runtime_lib(ctx: &Ctx) -> Result<PathBuf, BuildError> {
    let inc = ctx.verilator.include_dir();
    let cpp_dir = &ctx.recipe.runtime.cpp_dir;
    let mut sources: Vec<PathBuf> = RUNTIME_FILES.iter().map(|f| inc.join(f)).collect();
    sources.push(cpp_dir.join("hooks.cpp"));
    sources.push(cpp_dir.join("sim_memory.cpp"));
    let mut h = DefaultHasher::new();
    (
        CACHE_FORMAT,
        &ctx.compiler,
        ctx.verilator.version.to_string(),
        &ctx.recipe.runtime.includes,
    )
        .hash(&mut h);
    hash_files(&mut h, &sources)?;
    hash_files(&mut h, &files_in(cpp_dir, &["h"]))?;
    let key = format!("{:016x}", h.finish());
    let entry = ctx
        .recipe
        .cache
        .join("rt")
        .join(format!("sim_vl_runtime-{key}.a"));
    if entry.is_file() {
        return Ok(entry);
    }
    let _held = lock(&entry.with_extension("lock"))?;
    if entry.is_file() {
        return Ok(entry);
    }
    let scratch = scratch(&ctx.recipe.cache, "runtime")?;
    let tmp = scratch.path();
    let mut b = base_cc(ctx, None);
    b.opt_level(2)
        .define("VL_USER_STOP", None)
        .define("VL_USER_FATAL", None)
        .define("VL_USER_FINISH", None)
        .define("VL_PRINTF", "sim_runtime_vl_printf")
        .flag("-include")
        .flag(cpp_dir.join("hooks.h").to_string_lossy().as_ref())
        .files(&sources)
        .out_dir(tmp);
    for d in &ctx.recipe.runtime.includes {
        b.include(d);
    }
    let objs = try_objects(&b, "the Verilator runtime")?;
    let staged = tmp.join("lib.a");
    archive(&b, "the Verilator runtime", &staged, &objs)?;
    publish(&staged, &entry)?;
    Ok(entry)
}
