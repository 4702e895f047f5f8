//! Compiling a top's generated C++ (and a crate's own C++ beside its tops) with `cc`, and
//! linking it with the Verilator runtime into the top's shared library.

use std::path::{Path, PathBuf};

use crate::ctx::Ctx;
use crate::error::io;
use crate::verilate::Verilated;
use crate::BuildError;

/// What to tell a crate that builds its tops at `opt_level` (Cargo's `OPT_LEVEL` for the
/// build script's crate), when its simulation will run slowly. The verilated C++ is optimised
/// whatever the profile, but the Rust side of every cycle is not: a build script cannot set
/// its dependencies' optimisation, so it can only say how.
pub(crate) fn slow_profile_hint(opt_level: Option<&str>) -> Option<String> {
    (opt_level == Some("0")).then(|| {
        "this crate builds at opt-level 0: the Rust side of its simulations (sim-runtime, axi-bfm and its monitors) then runs several times slower; set `[profile.dev] opt-level = 1` and `[profile.dev.package.\"*\"] opt-level = 2` in the workspace's Cargo.toml (docs/own-rtl.md)".to_string()
    })
}

/// The optimisation of the per-cycle code: `SIM_OPT_LEVEL` (0 to 3, `s`), else
/// [`DEFAULT_FAST_OPT`]. It enters the cache key, so a comparison of levels builds each once.
pub(crate) fn fast_opt_level() -> String {
    std::env::var(crate::OPT_LEVEL_ENV)
        .ok()
        .filter(|v| matches!(v.as_str(), "0" | "1" | "2" | "3" | "s"))
        .unwrap_or_else(|| DEFAULT_FAST_OPT.to_string())
}

/// The per-cycle code's optimisation unless `SIM_OPT_LEVEL` says otherwise; chosen by
/// measurement (docs/own-rtl.md, "Compiler settings").
pub(crate) const DEFAULT_FAST_OPT: &str = "3";

pub(crate) fn base_cc(ctx: &Ctx, v: Option<&Verilated>) -> cc::Build {
    let vl = &ctx.verilator;
    let mut b = cc::Build::new();
    b.cpp(true)
        .target(&ctx.recipe.target)
        .host(&ctx.recipe.host)
        .std("c++20")
        .include(vl.include_dir())
        .include(vl.include_dir().join("vltstd"))
        .include(&ctx.recipe.runtime.cpp_dir)
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
        // Every library is loaded into the test process, so its code must be
        // position-independent.
        .pic(true)
        // The same objects in every profile, so the cache serves debug and release alike.
        .debug(false)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .emit_rerun_if_env_changed(false)
        // Generated code trips many harmless warnings; the RTL is linted separately.
        .warnings(false)
        .extra_warnings(false);
    if let Some(v) = v {
        b.include(&v.mdir);
    }
    b
}

/// Compiles one top's generated code, its glue, the crate's own sources and `extra` into
/// objects under `tmp`.
///
/// Verilator's files are compiled as two units, one including every per-cycle file and the
/// glue, the other every slow file, not one unit per file: each file includes `verilated.h`
/// and the model's headers, whose parsing alone costs a second or more, so that a small top's
/// nine files spent most of their build reading the same headers nine times (measured on
/// frame_source: 15 CPU-s one file at a time, 6 as two units; sim_top 23 and 12.5). The two
/// units compile side by side, as the files did.
pub(crate) fn compile_top(
    ctx: &Ctx,
    v: &Verilated,
    glue: &Path,
    extra: &[PathBuf],
    tmp: &Path,
) -> Result<Vec<PathBuf>, BuildError> {
    let mut fast_files = v.fast.clone();
    fast_files.push(glue.to_path_buf());
    let fast_unit = unit(tmp, &format!("{}__fast_unit.cpp", v.class), &fast_files)?;
    let slow_unit = unit(tmp, &format!("{}__slow_unit.cpp", v.class), &v.slow)?;
    // Per-cycle code gets full optimisation (tests spend their time there); slow code
    // (constructors, initial blocks) runs once, and optimising it only costs build time.
    let mut fast = base_cc(ctx, Some(v));
    fast.opt_level_str(&fast_opt_level())
        .out_dir(tmp.join("fast"));
    if let Some(u) = &fast_unit {
        fast.file(u);
    }
    let mut slow = base_cc(ctx, Some(v));
    slow.opt_level(0).out_dir(tmp.join("slow"));
    if let Some(u) = &slow_unit {
        slow.file(u);
    }
    let (fast_objs, slow_objs) = std::thread::scope(|s| {
        let slow_objs = s.spawn(|| match slow_unit {
            Some(_) => try_objects(&slow, &v.class),
            None => Ok(Vec::new()),
        });
        let fast_objs = try_objects(&fast, &v.class);
        (fast_objs, slow_objs.join())
    });
    let mut objs = fast_objs?;
    objs.extend(slow_objs.map_err(|_| BuildError::Compile {
        what: v.class.clone(),
        message: "the compiler's thread panicked".into(),
    })??);
    let own: Vec<PathBuf> = ctx.recipe.cpp.iter().chain(extra).cloned().collect();
    if !own.is_empty() {
        let mut b = base_cc(ctx, Some(v));
        b.opt_level(2).files(&own).out_dir(tmp.join("own"));
        let mut dirs: Vec<&Path> = own.iter().filter_map(|f| f.parent()).collect();
        dirs.sort();
        dirs.dedup();
        for d in dirs {
            b.include(d);
        }
        objs.extend(try_objects(&b, "the build's own C++ sources")?);
    }
    Ok(objs)
}

/// Writes `name` under `dir`, a unit that includes each of `files`; `None` when there are none.
fn unit(dir: &Path, name: &str, files: &[PathBuf]) -> Result<Option<PathBuf>, BuildError> {
    if files.is_empty() {
        return Ok(None);
    }
    let text: String = files
        .iter()
        .map(|f| format!("#include \"{}\"\n", f.display()))
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| io(&path, e))?;
    Ok(Some(path))
}

pub(crate) fn try_objects(b: &cc::Build, what: &str) -> Result<Vec<PathBuf>, BuildError> {
    b.try_compile_intermediates()
        .map_err(|e| BuildError::Compile {
            what: what.to_string(),
            message: e.to_string(),
        })
}

/// Links a top's objects with the runtime into the shared library `out`. Only the factories
/// (`sim_new_*`) and a companion source's `sim_export_*` functions are visible outside it, and
/// the library binds its own symbols to itself, so several tops' libraries, each with its own
/// copy of the Verilator runtime, live side by side in one process.
pub(crate) fn link_library(
    ctx: &Ctx,
    v: &Verilated,
    objs: &[PathBuf],
    runtime: &Path,
    tmp: &Path,
    out: &Path,
) -> Result<(), BuildError> {
    let script = tmp.join("exports.map");
    std::fs::write(
        &script,
        "{\n  global:\n    sim_new_*;\n    sim_export_*;\n  local:\n    *;\n};\n",
    )
    .map_err(|e| io(&script, e))?;
    let tool = base_cc(ctx, None)
        .opt_level(2)
        .try_get_compiler()
        .map_err(|e| BuildError::Compile {
            what: format!("{} (finding the linker)", v.class),
            message: e.to_string(),
        })?;
    let mut cmd = tool.to_command();
    cmd.arg("-shared")
        .arg("-o")
        .arg(out)
        .args(objs)
        .arg(runtime)
        .args(&ctx.recipe.runtime.libs)
        .arg(format!("-Wl,--version-script={}", script.display()))
        .arg("-Wl,-Bsymbolic")
        .arg("-Wl,--as-needed");
    for l in link_libs(&v.ldflags) {
        cmd.arg(format!("-l{l}"));
    }
    let output = cmd.output().map_err(|e| BuildError::Compile {
        what: format!("{} (linking)", v.class),
        message: format!("cannot run the linker: {e}"),
    })?;
    if !output.status.success() {
        return Err(BuildError::Compile {
            what: format!("{} (linking)", v.class),
            message: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    Ok(())
}

/// The system libraries a top asks for; zlib and lz4 (for FST) come from sim-runtime's own
/// dependencies instead.
pub(crate) fn link_libs(ldflags: &[String]) -> Vec<String> {
    let mut libs: Vec<String> = ldflags
        .iter()
        .filter_map(|f| f.strip_prefix("-l"))
        .filter(|l| !matches!(*l, "z" | "lz4"))
        .map(str::to_string)
        .collect();
    libs.push("pthread".into());
    libs.sort_unstable();
    libs.dedup();
    libs
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
    fn zlib_and_lz4_come_from_the_runtime_and_pthread_always() {
        let libs = link_libs(&["-lz".into(), "-llz4".into(), "-lm".into()]);
        assert_eq!(libs, ["m", "pthread"]);
    }
}
