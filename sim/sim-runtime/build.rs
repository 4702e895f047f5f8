//! Compiles the Verilator runtime with sim-runtime's hooks and named memories once for every
//! crate that builds tops (through sim-build), and binds the model interface to Rust through
//! `cxx`. No RTL is verilated here: each crate verilates its own tops.

use std::path::{Path, PathBuf};

use sim_build::{BuildError, Runtime};

fn main() {
    if let Err(e) = run() {
        e.emit();
    }
}

fn run() -> Result<(), BuildError> {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env("OUT_DIR"));
    let cpp_dir = manifest.join("cpp");

    println!("cargo::rerun-if-changed=cpp");
    println!("cargo::rerun-if-changed=src/ffi.rs");
    println!("cargo::rerun-if-env-changed=VERILATOR_ROOT");
    println!("cargo::rerun-if-env-changed=VERILATOR_VERSION");

    let verilator = verilator_find::find(&workspace_root(&manifest)).map_err(|e| {
        // The local install appears after `cargo xtask setup`; watching its folder (only now,
        // when nothing usable exists) lets this build succeed once it is there.
        let dir = verilator_find::local_install_dir(&workspace_root(&manifest));
        if let Some(parent) = dir.ancestors().find(|p| p.exists()) {
            println!("cargo::rerun-if-changed={}", parent.display());
        }
        BuildError::NoVerilator(e.to_string())
    })?;
    // Watching only paths that exist: a missing one makes Cargo rerun this script every build.
    for p in sim_build::verilator_watch_paths(&verilator) {
        println!("cargo::rerun-if-changed={}", p.display());
    }

    let runtime = Runtime {
        cpp_dir: cpp_dir.clone(),
        includes: ["DEP_LZ4_INCLUDE", "DEP_Z_INCLUDE"]
            .iter()
            .flat_map(|k| {
                env(k)
                    .split(',')
                    .filter(|d| !d.is_empty())
                    .map(PathBuf::from)
                    .collect::<Vec<_>>()
            })
            .collect(),
    };
    sim_build::compile_runtime(&verilator, &runtime)?;

    // The bridge: the model interface's Rust side.
    let mut bridge = cxx_build::bridge("src/ffi.rs");
    bridge
        .std("c++20")
        .include(&cpp_dir)
        .file(cpp_dir.join("bridge.cpp"))
        .warnings(false)
        .opt_level(2);
    bridge
        .try_compile("sim_runtime_bridge")
        .map_err(|e| BuildError::Compile {
            what: "the cxx bridge".into(),
            message: e.to_string(),
        })?;
    // Tells the Rust side where its build keeps waveforms (`<target>/waves` by default).
    println!("cargo::rustc-env=SIM_RUNTIME_OUT_DIR={}", out.display());
    Ok(())
}

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_default()
}

/// The workspace root from this crate's folder (`sim/sim-runtime`), where `cargo xtask setup`
/// installs Verilator; for a copy of the crate elsewhere, its own folder.
fn workspace_root(manifest: &Path) -> PathBuf {
    manifest
        .ancestors()
        .nth(2)
        .map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}
