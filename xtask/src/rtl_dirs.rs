//! Where the project's RTL lives (`rtl.toml`): its own folders and the third-party ones, and
//! the workspace root found at run time.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// A third-party folder and the defines its files need.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ThirdParty {
    /// The folder, relative to the workspace root; searched recursively.
    pub dir: PathBuf,
    /// `NAME` or `NAME=value`, passed as `-D`.
    #[serde(default)]
    pub defines: Vec<String>,
}

/// The contents of `rtl.toml`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct RtlDirs {
    /// The project's own RTL folders.
    pub own: Vec<PathBuf>,
    /// Third-party folders.
    #[serde(default)]
    pub third_party: Vec<ThirdParty>,
}

impl RtlDirs {
    /// Reads `<root>/rtl.toml`.
    pub fn load(root: &Path) -> Result<RtlDirs, String> {
        let path = root.join("rtl.toml");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Verilog and SystemVerilog files under `dir`, recursively, sorted.
pub fn rtl_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "v" || e == "sv") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The names of the modules a Verilog text declares, however the keyword is followed
/// (`module name`, `module<TAB>name`, `module name #(`), skipping comments.
pub fn modules_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let mut l = line;
        if in_block {
            match l.find("*/") {
                Some(i) => {
                    l = &l[i + 2..];
                    in_block = false;
                }
                None => continue,
            }
        }
        if let Some(i) = l.find("/*") {
            if !l[i..].contains("*/") {
                in_block = true;
            }
            l = &l[..i];
        }
        let l = l.split("//").next().unwrap_or("");
        let mut words = l.split_whitespace();
        while let Some(w) = words.next() {
            if w == "module" || w == "macromodule" {
                if let Some(name) = words.next() {
                    let name: String = name
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
                        .collect();
                    if !name.is_empty() {
                        out.push(name);
                    }
                }
            }
        }
    }
    out
}

/// The workspace root: the nearest folder, from the current one up, whose `Cargo.toml` has a
/// `[workspace]` table. Found at run time, so that a copied checkout works on itself, not on
/// the folder its xtask binary was first built in.
pub fn workspace_root_from(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|d| {
        let manifest = d.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).ok()?;
        text.lines()
            .any(|l| l.trim() == "[workspace]")
            .then(|| d.to_path_buf())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_names_survive_tabs_parameters_and_comments() {
        let text = "// module not_this\n/* module nor_this\n */ module\tvendor_top #(\n) ();\nendmodule\nmodule  second(input wire a);\nendmodule\n";
        assert_eq!(modules_in(text), ["vendor_top", "second"]);
    }

    #[test]
    fn the_root_is_found_from_where_the_task_runs() {
        let dir = tempdir();
        let ws = dir.join("copy");
        std::fs::create_dir_all(ws.join("crates/a/src")).expect("mkdir");
        std::fs::write(ws.join("Cargo.toml"), "[workspace]\nmembers = []\n").expect("write");
        std::fs::write(ws.join("crates/a/Cargo.toml"), "[package]\nname = \"a\"\n").expect("write");
        assert_eq!(
            workspace_root_from(&ws.join("crates/a/src")),
            Some(ws.clone())
        );
        assert_eq!(workspace_root_from(&ws), Some(ws.clone()));
        std::fs::remove_dir_all(&dir).ok();
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("xtask-root-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    #[test]
    fn the_project_declares_its_folders() {
        let root = crate::root();
        let dirs = RtlDirs::load(&root).expect("rtl.toml");
        assert!(dirs.own.iter().all(|d| root.join(d).is_dir()), "{dirs:?}");
        assert!(
            dirs.third_party.iter().all(|t| root.join(&t.dir).is_dir()),
            "{dirs:?}"
        );
    }
}
