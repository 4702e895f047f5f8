//! Running Verilator on one top: finding it, its arguments, its diagnostics, the files it
//! generated and the sources it read.

use std::path::{Path, PathBuf};

use crate::cache::write_if_changed;
use crate::error::io;
use crate::ports::parse_ports;
use crate::{BuildError, Port, Verilator};

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
    /// Every source file Verilator read, absolute.
    pub(crate) deps: Vec<PathBuf>,
    /// Verilator's warning lines.
    pub(crate) warnings: Vec<String>,
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

/// The arguments with every path inside the folder `strip` (relative to the base) pointed at
/// `stripped`, the copy without `reg` initialisers.
pub(crate) fn redirect(args: &[String], strip: &Path, stripped: &Path) -> Vec<String> {
    let strip = strip.to_string_lossy();
    let strip = strip.trim_end_matches('/');
    args.iter()
        .map(|a| {
            let (flag, path) = a.strip_prefix("-I").map_or(("", a.as_str()), |p| ("-I", p));
            if path == strip {
                format!("{flag}{}", stripped.display())
            } else if let Some(rest) = path.strip_prefix(strip).and_then(|r| r.strip_prefix('/')) {
                format!("{flag}{}", stripped.join(rest).display())
            } else {
                a.clone()
            }
        })
        .collect()
}

/// One run of Verilator: the generated model in `mdir`.
pub(crate) struct Run<'a> {
    pub(crate) verilator: &'a Verilator,
    pub(crate) base: &'a Path,
    pub(crate) args: Vec<String>,
    pub(crate) top: &'a str,
    pub(crate) module: &'a str,
    pub(crate) class: String,
    pub(crate) mdir: PathBuf,
    pub(crate) coverage: bool,
}

impl Run<'_> {
    /// Runs Verilator and reads what it generated: the file lists, the ports, and every
    /// source it read (with its content, the key of the next build).
    pub(crate) fn verilate(&self) -> Result<Verilated, BuildError> {
        let mdir = &self.mdir;
        std::fs::create_dir_all(mdir).map_err(|e| io(mdir, e))?;
        let mut args = self.args.clone();
        if self.coverage {
            args.extend(
                ["--coverage-line", "--coverage-toggle", "--coverage-user"]
                    .iter()
                    .map(|s| (*s).to_string()),
            );
        }
        args.extend([
            "--prefix".to_string(),
            self.class.clone(),
            "-Mdir".to_string(),
            mdir.to_string_lossy().into_owned(),
        ]);
        let coverage = self.coverage || args.iter().any(|f| f.starts_with("--coverage"));
        let mut cmd = self.verilator.command();
        cmd.current_dir(self.base).args(&args);
        let shown = format!("cd {} && verilator {}", self.base.display(), args.join(" "));
        let output = cmd.output().map_err(|e| {
            BuildError::Environment(format!("cannot run {}: {e}", self.verilator.bin.display()))
        })?;
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        if !output.status.success() {
            return Err(BuildError::Verilator {
                top: self.top.to_string(),
                module: self.module.to_string(),
                diagnostics: stderr.trim_end().to_string(),
                command: shown,
            });
        }
        let log = mdir.join("verilator.log");
        write_if_changed(&log, &stderr)?;
        let class = &self.class;
        // Everything Verilator read, for the next build's key.
        let deps_file = mdir.join(format!("{class}__ver.d"));
        let mut deps: Vec<PathBuf> = std::fs::read_to_string(&deps_file)
            .map(|text| {
                let files = text.split_once(':').map_or("", |(_, f)| f);
                files
                    .split_whitespace()
                    .map(|f| self.base.join(f))
                    .filter(|p| p.is_file())
                    .collect()
            })
            .unwrap_or_default();
        deps.sort();
        deps.dedup();
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
                top: self.top.to_string(),
                problem: format!("no ports found in {}", header.display()),
            });
        }
        Ok(Verilated {
            class: class.clone(),
            mdir: mdir.clone(),
            global: list("global"),
            fast,
            slow,
            ldflags,
            ports,
            coverage,
            deps,
            warnings: stderr
                .lines()
                .filter(|l| l.starts_with("%Warning"))
                .map(str::to_string)
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stripped_folder_is_read_from_its_copy() {
        let args: Vec<String> = [
            "-y",
            "src/rtl",
            "-y",
            "src/sim",
            "-Isrc/rtl",
            "src/rtl/a.v",
            "src/rtlx/b.v",
        ]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
        let out = redirect(&args, Path::new("src/rtl"), Path::new("/c/copy"));
        assert_eq!(
            out,
            [
                "-y",
                "/c/copy",
                "-y",
                "src/sim",
                "-I/c/copy",
                "/c/copy/a.v",
                "src/rtlx/b.v"
            ]
        );
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
}
