//! Running Verilator on one top: finding it, its arguments, its diagnostics, the files it
//! generated and the sources it read.

use std::path::{Path, PathBuf};

use crate::builder::{Build, Ctx};
use crate::codegen::write_if_changed;
use crate::error::io;
use crate::ports::parse_ports;
use crate::{BuildError, Port, Top, Verilator};

/// The Verilator sim-runtime was built with (so that the generated code matches its runtime),
/// else the one `verilator_find` finds from the crate's folder up.
pub(crate) fn find_verilator(base: &Path) -> Result<Verilator, BuildError> {
    if let Some(root) = std::env::var_os("DEP_SIM_RUNTIME_VERILATOR_ROOT") {
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

pub(crate) struct Verilated {
    pub(crate) class: String,
    pub(crate) mdir: PathBuf,
    pub(crate) global: Vec<PathBuf>,
    pub(crate) fast: Vec<PathBuf>,
    pub(crate) slow: Vec<PathBuf>,
    pub(crate) ldflags: Vec<String>,
    pub(crate) ports: Vec<Port>,
    /// Built with coverage: for the whole build, or by the top's own `--coverage*` flag.
    pub(crate) coverage: bool,
}

pub(crate) fn resolve(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        // Inside the base folder, a relative path keeps the generated code free of absolute
        // paths, so the compile cache survives a copied checkout.
        p.strip_prefix(base)
            .map_or_else(|_| p.to_path_buf(), Path::to_path_buf)
    } else {
        p.to_path_buf()
    }
}

pub(crate) fn define_flag((k, v): &(String, Option<String>)) -> String {
    match v {
        Some(v) => format!("-D{k}={v}"),
        None => format!("-D{k}"),
    }
}

pub(crate) fn verilate(b: &Build, ctx: &Ctx, top: &Top) -> Result<Verilated, BuildError> {
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
    let coverage = ctx.coverage
        || b.flags
            .iter()
            .chain(&top.flags)
            .any(|f| f.starts_with("--coverage"));
    if ctx.coverage {
        args.extend(
            ["--coverage-line", "--coverage-toggle", "--coverage-user"]
                .iter()
                .map(|s| (*s).to_string()),
        );
    }
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
        coverage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
