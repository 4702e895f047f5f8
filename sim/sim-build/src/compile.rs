//! Compiling a top's generated C++ (and a crate's own C++ beside its tops) with `cc`.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use crate::builder::Ctx;
use crate::cache::{cached_lib, files_in, hash_files, CACHE_FORMAT};
use crate::verilate::Verilated;
use crate::{BuildError, BuiltTop};

/// What to tell a crate that builds its tops at `opt_level` (Cargo's `OPT_LEVEL` for the
/// build script's crate), when its simulation will run slowly. The verilated C++ is optimised
/// whatever the profile, but the Rust side of every cycle is not: a build script cannot set
/// its dependencies' optimisation, so it can only say how.
pub(crate) fn slow_profile_hint(opt_level: Option<&str>) -> Option<String> {
    (opt_level == Some("0")).then(|| {
        "this crate builds at opt-level 0: the Rust side of its simulations (sim-runtime, axi-bfm and its monitors) then runs several times slower; set `[profile.dev] opt-level = 1` and `[profile.dev.package.\"*\"] opt-level = 2` in the workspace's Cargo.toml (docs/own-rtl.md)".to_string()
    })
}

pub(crate) fn base_cc(ctx: &Ctx, v: Option<&Verilated>) -> cc::Build {
    let vl = &ctx.verilator;
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++20")
        .include(vl.include_dir())
        .include(vl.include_dir().join("vltstd"))
        .include(&ctx.cpp_dir)
        .define("VERILATOR", "1")
        // Only a top's own code is built for coverage; the runtime serves both kinds.
        .define(
            "VM_COVERAGE",
            if v.is_some_and(|v| v.coverage) {
                "1"
            } else {
                "0"
            },
        )
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

pub(crate) fn compile_top(ctx: &Ctx, v: &Verilated, glue: &Path) -> Result<(), BuildError> {
    let mut h = DefaultHasher::new();
    (
        CACHE_FORMAT,
        &ctx.compiler,
        ctx.verilator.version.to_string(),
    )
        .hash(&mut h);
    // Every generated file, headers included, and sim-runtime's headers the glue uses.
    hash_files(&mut h, &files_in(&v.mdir, &["cpp", "h"]))?;
    hash_files(&mut h, &files_in(&ctx.cpp_dir, &["h"]))?;
    let key = format!("{:016x}", h.finish());
    let lib_name = format!("sim_vl_{}", v.class);
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

pub(crate) fn try_objects(b: &cc::Build, what: &str) -> Result<Vec<PathBuf>, BuildError> {
    b.try_compile_intermediates()
        .map_err(|e| BuildError::Compile {
            what: what.to_string(),
            message: e.to_string(),
        })
}

/// The system libraries the tops ask for; zlib and lz4 (for FST) come from sim-runtime's own
/// dependencies instead.
pub(crate) fn link_libs(built: &[(BuiltTop, Vec<String>)]) -> Vec<String> {
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

/// Compiles a build's own C and C++ sources ([`crate::Build::cpp`]) into one cached library.
pub(crate) fn compile_sources(ctx: &Ctx, sources: &[PathBuf]) -> Result<(), BuildError> {
    if sources.is_empty() {
        return Ok(());
    }
    let files: Vec<PathBuf> = sources.iter().map(|f| ctx.base.join(f)).collect();
    let mut h = DefaultHasher::new();
    (
        CACHE_FORMAT,
        &ctx.compiler,
        ctx.verilator.version.to_string(),
    )
        .hash(&mut h);
    hash_files(&mut h, &files)?;
    hash_files(&mut h, &files_in(&ctx.cpp_dir, &["h"]))?;
    let mut dirs: Vec<&Path> = files.iter().filter_map(|f| f.parent()).collect();
    dirs.dedup();
    for d in &dirs {
        hash_files(&mut h, &files_in(d, &["h", "hpp"]))?;
        println!("cargo::rerun-if-changed={}", d.display());
    }
    let key = format!("{:016x}", h.finish());
    let lib = format!("sim_cpp_{}", ctx.package);
    cached_lib(ctx, &lib, &key, |tmp| {
        let mut b = base_cc(ctx, None);
        b.opt_level(2).files(&files).out_dir(tmp);
        for d in &dirs {
            b.include(d);
        }
        Ok((try_objects(&b, "the build's own C++ sources")?, b))
    })
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
}
