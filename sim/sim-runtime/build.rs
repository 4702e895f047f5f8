//! Binds the model interface to Rust through `cxx`, and publishes to the build scripts of the
//! crates that describe tops (through sim-build) what their tops' libraries are built with:
//! this crate's C++ folder, the FST writer's compressors and the Verilator found. No C++ of a
//! model and no Verilator runtime is compiled here: each top's library is built on first use.

use std::path::{Path, PathBuf};

use sim_build::BuildError;

fn main() {
    if let Err(e) = run() {
        e.emit();
    }
}

fn run() -> Result<(), BuildError> {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR"));
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

    // The FST writer's compressors, built from source by lz4-sys and libz-sys; every top's
    // library links their static libraries.
    let mut includes = Vec::new();
    let mut libs = Vec::new();
    for (dep, lib) in [("LZ4", "liblz4.a"), ("Z", "libz.a")] {
        includes.extend(
            env(&format!("DEP_{dep}_INCLUDE"))
                .split(',')
                .filter(|d| !d.is_empty())
                .map(str::to_string),
        );
        let root = PathBuf::from(env(&format!("DEP_{dep}_ROOT")));
        let found = [
            root.clone(),
            root.join("lib"),
            root.join("lib64"),
            root.join("build"),
        ]
        .into_iter()
        .map(|d| d.join(lib))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            BuildError::Environment(format!(
                "{lib} is not under {} (DEP_{dep}_ROOT): the FST writer needs it",
                root.display()
            ))
        })?;
        libs.push(found.display().to_string());
    }

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
    println!("cargo::metadata=cpp={}", cpp_dir.display());
    println!("cargo::metadata=includes={}", includes.join(","));
    println!("cargo::metadata=libs={}", libs.join(","));
    println!(
        "cargo::metadata=verilator_root={}",
        verilator.root.display()
    );
    // Tells the Rust side where its build keeps waveforms (`<target>/waves` by default).
    println!("cargo::rustc-env=SIM_RUNTIME_OUT_DIR={}", env("OUT_DIR"));
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
