//! Tidy checks: project rules that a reviewer would otherwise have to remember, run as tests.

use std::path::{Path, PathBuf};

use crate::{codegen, root, rtl_files};

fn files_with_ext(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "target" | ".git" | ".tools") && !name.starts_with('.') {
                files_with_ext(&path, ext, out);
            }
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_crate_states_its_job_first() {
    let mut manifests = Vec::new();
    files_with_ext(&root(), "toml", &mut manifests);
    let mut bad = Vec::new();
    for manifest in manifests.iter().filter(|m| m.ends_with("Cargo.toml")) {
        let dir = manifest.parent().expect("a manifest has a folder");
        for entry in ["src/lib.rs", "src/main.rs"] {
            let file = dir.join(entry);
            if file.is_file() && !read(&file).starts_with("//!") {
                bad.push(rel(&file));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "these crate roots must start with `//!` stating the crate's job: {bad:?}"
    );
}

#[test]
fn every_crate_has_a_row_in_the_architecture() {
    // The architecture's crate table is where a newcomer learns what each crate owns; a crate
    // without a row is one nobody can place.
    let doc = read(&root().join("docs/architecture.md"));
    let mut manifests = Vec::new();
    files_with_ext(&root(), "toml", &mut manifests);
    let mut missing = Vec::new();
    for manifest in manifests.iter().filter(|m| m.ends_with("Cargo.toml")) {
        let text = read(manifest);
        let Some(name) = text
            .lines()
            .skip_while(|l| l.trim() != "[package]")
            .find_map(|l| l.trim().strip_prefix("name = "))
        else {
            continue;
        };
        let name = name.trim_matches('"');
        if !doc.contains(&format!("| `{name}` |")) {
            missing.push(name.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "crates without a row in docs/architecture.md's crate table: {missing:?}"
    );
}

#[test]
fn rtl_files_follow_the_house_header() {
    let mut bad = Vec::new();
    for file in rtl_files(&root()).expect("hdl folders") {
        let text = read(&file);
        let stem = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        for needed in ["`resetall", "`timescale 1ns / 1ps", "`default_nettype none"] {
            if !text.contains(needed) {
                bad.push(format!("{}: missing {needed}", rel(&file)));
            }
        }
        let modules = crate::rtl_dirs::modules_in(&text);
        if modules != [stem] {
            bad.push(format!(
                "{}: holds modules {modules:?}; one module per file, named after it",
                rel(&file)
            ));
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn lint_waivers_say_why() {
    let mut bad = Vec::new();
    for file in rtl_files(&root()).expect("hdl folders") {
        let text = read(&file);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.contains("lint_off") {
                // A line comment, or the end of a block comment, right above the waiver.
                let commented_before = i > 0 && {
                    let above = lines[i - 1].trim();
                    above.starts_with("//") || above.ends_with("*/")
                };
                let commented_here = line.split("*/").nth(1).is_some_and(|r| r.contains("//"));
                if !commented_before && !commented_here {
                    bad.push(format!("{}:{}", rel(&file), i + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "waivers need a comment saying why, on the line before: {bad:?}"
    );
}

// Spelled in two pieces so that this file does not match its own check.
const UNSAFE_BLOCK: &str = concat!("unsafe", " {");
const UNSAFE_IMPL: &str = concat!("unsafe", " impl");

#[test]
fn every_unsafe_block_has_a_safety_comment() {
    let mut files = Vec::new();
    for dir in ["sim", "crates", "xtask"] {
        files_with_ext(&root().join(dir), "rs", &mut files);
    }
    let mut bad = Vec::new();
    for file in files {
        let text = read(&file);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if !code.contains(UNSAFE_BLOCK) && !code.contains(UNSAFE_IMPL) {
                continue;
            }
            // The comment may sit a few lines up when the block is an argument or a match arm.
            let start = i.saturating_sub(6);
            if !lines[start..=i].iter().any(|l| l.contains("SAFETY:")) {
                bad.push(format!("{}:{}", rel(&file), i + 1));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "unsafe without a `// SAFETY:` comment: {bad:?}"
    );
}

#[test]
fn ci_runs_exactly_the_readme_test_command() {
    let readme = read(&root().join("README.md"));
    let commands: Vec<&str> = readme
        .lines()
        .take(20)
        .filter(|l| l.starts_with("cargo xtask"))
        .collect();
    assert_eq!(
        commands,
        ["cargo xtask demo", "cargo xtask test"],
        "the README opens with the two commands"
    );
    let ci = read(&root().join(".ci/run"));
    let run: Vec<&str> = ci
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter(|l| !l.starts_with("set ") && !l.starts_with("cd "))
        .collect();
    assert_eq!(
        run,
        ["cargo xtask test"],
        ".ci/run must call exactly the README's test command"
    );
}

/// The register files that `cargo xtask codegen` writes must match `hdl/regs.toml`, so a change
/// to the table without regenerating (or a hand edit of a generated file) fails here.
#[test]
fn generated_register_files_are_fresh() {
    let root = crate::root();
    if let Err(e) = codegen::codegen(&root, true) {
        panic!("{e}");
    }
}

/// The check itself must be able to fail: a rendered file that differs from the one on disk is
/// reported as stale.
#[test]
fn a_stale_file_is_detected() {
    let root = crate::root();
    let outputs = codegen::render(&root).expect("the table renders");
    let dir = tempfile_dir();
    for out in &outputs {
        let rel = out.path.strip_prefix(&root).expect("inside the root");
        let dest = dir.join(rel);
        std::fs::create_dir_all(dest.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(&dest, &out.text).expect("write");
    }
    let table = dir.join(codegen::TABLE);
    std::fs::create_dir_all(table.parent().expect("has a parent")).expect("mkdir");
    let src = std::fs::read_to_string(root.join(codegen::TABLE)).expect("read table");
    std::fs::write(&table, &src).expect("write table");
    codegen::codegen(&dir, true).expect("a fresh copy passes");
    // Change one reset value in the copy of the table: every generated file is now stale.
    let changed = src.replacen("reset = 0x44415131", "reset = 0x44415132", 1);
    assert_ne!(changed, src, "the table holds the identifier's reset value");
    std::fs::write(&table, changed).expect("write table");
    let err = codegen::codegen(&dir, true).expect_err("stale files are detected");
    assert!(
        err.contains("card_regs.vh") && err.contains("generated.rs"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scratch folder under the target directory, unique to this process.
fn tempfile_dir() -> std::path::PathBuf {
    let dir = crate::root()
        .join("target")
        .join(format!("xtask-tidy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The crates of the simulated world and the driver's: none may be a dependency of the host API
/// crate, and the facade may have them only behind a feature.
const BACKEND_CRATES: &[&str] = &[
    "sim-runtime",
    "sim-build",
    "card-sim",
    "axi-bfm",
    "card-harness",
    "xdma-sim",
    "xdma-hw",
    "verilator-find",
];

/// A crate's `[dependencies]`: (name, optional).
fn dependencies(manifest: &Path) -> Vec<(String, bool)> {
    let doc: toml::Table = toml::from_str(&read(manifest)).expect("a manifest parses");
    doc.get("dependencies")
        .and_then(|d| d.as_table())
        .map(|t| {
            t.iter()
                .map(|(name, spec)| {
                    let optional = spec
                        .get("optional")
                        .and_then(toml::Value::as_bool)
                        .unwrap_or(false);
                    (name.clone(), optional)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_host_api_knows_no_backend() {
    let core = dependencies(&root().join("crates/xdma-core/Cargo.toml"));
    let bad: Vec<&String> = core
        .iter()
        .map(|(n, _)| n)
        .filter(|n| BACKEND_CRATES.contains(&n.as_str()))
        .collect();
    assert!(
        bad.is_empty(),
        "xdma-core must build without a simulator or a driver, but depends on {bad:?}"
    );
    let facade = dependencies(&root().join("crates/xdma/Cargo.toml"));
    let bad: Vec<&String> = facade
        .iter()
        .filter(|(n, optional)| BACKEND_CRATES.contains(&n.as_str()) && !optional)
        .map(|(n, _)| n)
        .collect();
    assert!(
        bad.is_empty(),
        "xdma may depend on a backend only behind a feature, but always depends on {bad:?}"
    );
}

/// The XDMA IP's engine identifiers (H2C, C2H) and descriptor magic as hex literals, spelled in
/// pieces so that this file does not match its own check.
const IP_LITERALS: &[&str] = &[
    concat!("0x", "1fc0"),
    concat!("0x", "1fc1"),
    concat!("0x", "ad4b"),
];

/// The lines (from 1) of `text` whose code, comments left out, writes one of [`IP_LITERALS`],
/// in either case and with or without digit separators.
fn ip_literal_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let code = line
                .split("//")
                .next()
                .unwrap_or("")
                .to_ascii_lowercase()
                .replace('_', "");
            IP_LITERALS.iter().any(|l| code.contains(l))
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// The IP's contract has one home, `xdma-regmap`: every other crate takes the identifiers and
/// the descriptor magic from there instead of writing its own copy. Integration tests (files
/// under a `tests` folder) may write PG195's values to check a model against the document.
#[test]
fn only_the_register_map_writes_the_ips_identifiers() {
    let mut files = Vec::new();
    for dir in ["sim", "crates", "xtask"] {
        files_with_ext(&root().join(dir), "rs", &mut files);
    }
    let home = root().join("crates/xdma-regmap");
    let is_test = |f: &Path| {
        f.strip_prefix(root())
            .unwrap_or(f)
            .components()
            .any(|c| c.as_os_str() == "tests")
    };
    let mut bad = Vec::new();
    for file in files
        .iter()
        .filter(|f| !f.starts_with(&home) && !is_test(f))
    {
        for line in ip_literal_lines(&read(file)) {
            bad.push(format!("{}:{line}", rel(file)));
        }
    }
    assert!(
        bad.is_empty(),
        "engine identifiers or the descriptor magic written as literals; use xdma_regmap (Target::identifier, Target::id_base, DESC_MAGIC): {bad:?}"
    );
}

/// The check itself must be able to fail: a literal in code is found, one in a comment is not.
#[test]
fn an_identifier_literal_is_found() {
    let text = concat!(
        "let id = 0x1F",
        "C1_8106;\n",
        "// the H2C identifier is 0x1fc",
        "0_0006\n",
        "const MAGIC: u32 = 0xAD",
        "4B_0000;\n",
        "let h2c = 0x1f",
        "c0; // H2C\n",
    );
    assert_eq!(ip_literal_lines(text), [1, 3, 4]);
}

/// The register map is what the driver's world shares with the simulated one, so it has no
/// dependency at all, and the driver backend that uses it still knows no simulator.
#[test]
fn the_register_map_keeps_the_driver_free_of_the_simulator() {
    let regmap = dependencies(&root().join("crates/xdma-regmap/Cargo.toml"));
    assert!(
        regmap.is_empty(),
        "xdma-regmap must have no dependencies, but has {regmap:?}"
    );
    let hw = dependencies(&root().join("crates/xdma-hw/Cargo.toml"));
    let bad: Vec<&String> = hw
        .iter()
        .map(|(n, _)| n)
        .filter(|n| BACKEND_CRATES.contains(&n.as_str()) || n.as_str() == "xdma-ip")
        .collect();
    assert!(
        bad.is_empty(),
        "xdma-hw must build without a simulator, but depends on {bad:?}"
    );
}

/// One IP model: the simulated card and the FUSE nodes reach the card only through the
/// register-level IP (and the driver model in front of it), never through the card harness
/// itself; and the FUSE nodes take the driver's contract from the register map, not from the
/// driver backend.
#[test]
fn the_simulated_card_reaches_the_card_only_through_the_ip() {
    for c in ["xdma-sim", "xdma-fuse"] {
        let deps = dependencies(&root().join(format!("crates/{c}/Cargo.toml")));
        let names: Vec<&str> = deps.iter().map(|(n, _)| n.as_str()).collect();
        assert!(
            !names.contains(&"card-harness"),
            "{c} must drive the card through xdma-ip, but depends on card-harness"
        );
        assert!(
            !names.contains(&"xdma-hw"),
            "{c} must take the driver's contract from xdma-regmap, but depends on xdma-hw"
        );
    }
    let sim = dependencies(&root().join("crates/xdma-sim/Cargo.toml"));
    for needed in ["xdma-ip", "xdma-driver"] {
        assert!(
            sim.iter().any(|(n, _)| n == needed),
            "the simulated card runs on {needed}"
        );
    }
}

#[test]
fn ci_runs_fmt_and_clippy() {
    let wf = read(&root().join(".github/workflows/ci.yml"));
    let main = read(&root().join("xtask/src/main.rs"));
    for text in [&wf, &main] {
        assert!(
            text.contains("fmt") && text.contains("--check"),
            "cargo fmt --check is not run"
        );
        assert!(
            text.contains("clippy") && text.contains("warnings"),
            "clippy -D warnings is not run"
        );
    }
}

/// Words of code that name the card or one of its models; the simulation runtime and the build
/// API serve any design, so none may appear in their code (comments aside).
const CARD_WORDS: &[&str] = &[
    "ddr",
    "card_core",
    "sim_top",
    "card_sim::",
    "tops.txt",
    "hdl/",
];

/// The lines (from 1) of `text` whose code, comments left out, names one of [`CARD_WORDS`].
fn card_word_lines(text: &str) -> Vec<(usize, &'static str)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let code = line.split("//").next().unwrap_or("").to_ascii_lowercase();
            CARD_WORDS
                .iter()
                .find(|w| starts_a_word(&code, w))
                .map(|w| (i + 1, *w))
        })
        .collect()
}

/// Whether `word` occurs in `code` where no letter or digit comes just before it (so that `ddr`
/// finds `ddr3` and `m.ddr_read`, never `addr`).
fn starts_a_word(code: &str, word: &str) -> bool {
    code.match_indices(word).any(|(at, _)| {
        code[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric())
    })
}

#[test]
fn the_simulation_runtime_knows_no_card() {
    let mut files = Vec::new();
    for dir in ["sim/sim-runtime", "sim/sim-build/src"] {
        files_with_ext(&root().join(dir), "rs", &mut files);
        for ext in ["h", "cpp"] {
            files_with_ext(&root().join(dir), ext, &mut files);
        }
    }
    assert!(
        files.len() > 10,
        "the runtime's sources were found: {files:?}"
    );
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| {
            card_word_lines(&read(f))
                .into_iter()
                .map(move |(line, w)| format!("{}:{line} names `{w}`", rel(f)))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "sim-runtime and sim-build must know no card (a design's tops and models belong to the crate that builds them, card-sim for the card): {bad:?}"
    );
    // And the crates that serve any design do not pull the card in.
    for krate in [
        "sim/sim-runtime",
        "sim/sim-build",
        "crates/axi-bfm",
        "crates/own-rtl-example",
    ] {
        let deps = dependencies(&root().join(krate).join("Cargo.toml"));
        assert!(
            !deps.iter().any(|(n, _)| n == "card-sim"),
            "{krate} must not depend on card-sim (a dev-dependency for its own tests is fine)"
        );
    }
}

#[test]
fn a_card_word_in_the_runtime_is_found() {
    let text = "let m = 1; // card_core in a comment is fine\nlet t = Top::SimTop; m.ddr_read(0)\n";
    assert_eq!(card_word_lines(text), vec![(2, "ddr")]);
    assert!(card_word_lines("memory_read(kind, addr)\n").is_empty());
}
