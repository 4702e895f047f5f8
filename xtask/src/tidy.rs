//! Tidy checks: project rules that a reviewer would otherwise have to remember, run as tests.

use std::path::{Path, PathBuf};

use crate::{codegen, root, rtl_files, rule_table};

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
    let rules = dir.join(crate::rule_table::RULES);
    std::fs::create_dir_all(rules.parent().expect("has a parent")).expect("mkdir");
    let rules_src =
        std::fs::read_to_string(root.join(crate::rule_table::RULES)).expect("read rules");
    std::fs::write(&rules, &rules_src).expect("write rules");
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
    std::fs::write(&table, &src).expect("write table");
    // Change one rule's meaning in the copy of the rule table: the Rust list and the property
    // modules are now stale.
    let changed = rules_src.replacen(
        "No VALID while the bus is in reset.",
        "VALID stays low while the bus is in reset.",
        1,
    );
    assert_ne!(changed, rules_src, "the rule table holds the reset rule");
    std::fs::write(&rules, changed).expect("write rules");
    let err = codegen::codegen(&dir, true).expect_err("stale rule files are detected");
    assert!(
        err.contains("rule_table.rs") && err.contains("faxis_master.v"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The rule table, the monitors and the property modules agree: every rule a protocol lists is
/// reported by that protocol's monitor (and no monitor reports a rule the table does not give
/// its protocol), every formal form is in its property modules, and every property names a
/// rule of the table.
#[test]
fn every_rule_has_a_monitor_check_and_a_property() {
    let root = crate::root();
    let table = rule_table::load(&root).unwrap_or_else(|e| panic!("{e}"));
    let monitors = rule_table::monitor_sources(&root).unwrap_or_else(|e| panic!("{e}"));
    let props = rule_table::property_sources(&root).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        props.len(),
        6,
        "six property modules under hdl/formal: {props:?}"
    );
    let bad = rule_table::audit(&table, &monitors, &props);
    assert!(bad.is_empty(), "{bad:#?}");
}

/// The checks above can fail: a planted table and planted property files with each mistake.
#[test]
fn a_bad_rule_table_is_caught() {
    let head = "[[rule]]\nname = \"made_up\"\nvariant = \"MadeUp\"\nprotocols = [\"axis\"]\nmeaning = \"A rule no monitor checks.\"\n";
    // No formal form and no reason why not.
    let err = rule_table::parse(head).expect_err("a rule without a formal form or a reason");
    assert!(err.contains("no `no_formal` reason"), "{err}");
    // A formal form on a channel driven by the other side.
    let wrong_side = format!(
        "{head}[[rule.formal]]\nprotocols = [\"axis\"]\nchannels = [\"t\"]\nside = \"slave\"\nexpr = \"1\"\n"
    );
    let err = rule_table::parse(&wrong_side).expect_err("the wrong side");
    assert!(err.contains("driven by the master"), "{err}");
    // A reason given, but no monitor reports the rule, and the property files hold a property
    // without a label and one that names no rule.
    let table = rule_table::parse(&format!("{head}no_formal = \"planted\"\n")).expect("parses");
    let monitors = vec![
        ("mod.rs".to_string(), String::new()),
        ("axis.rs".to_string(), "Rule::Other".to_string()),
    ];
    let props = vec![(
        "faxis_master".to_string(),
        "            assert (tvalid);\n            not_a_rule__t: assert (1);\n".to_string(),
    )];
    let bad = rule_table::audit(&table, &monitors, &props);
    assert!(
        bad.iter().any(|b| b.contains("never reports Rule::MadeUp")),
        "{bad:#?}"
    );
    assert!(
        bad.iter().any(|b| b.contains("without a rule label")),
        "{bad:#?}"
    );
    assert!(
        bad.iter()
            .any(|b| b.contains("`not_a_rule__t` names no rule")),
        "{bad:#?}"
    );
    // A monitor that reports the rule for a protocol the table does not list.
    let monitors = vec![
        ("mod.rs".to_string(), String::new()),
        ("axis.rs".to_string(), "Rule::MadeUp".to_string()),
        ("axi.rs".to_string(), "Rule::MadeUp".to_string()),
    ];
    let bad = rule_table::audit(&table, &monitors, &[]);
    assert!(
        bad.iter().any(|b| b.contains("does not list axi4")),
        "{bad:#?}"
    );
}

/// A scratch folder under the target directory, unique to this process.
fn tempfile_dir() -> std::path::PathBuf {
    let dir = crate::root()
        .join("target")
        .join(format!("xtask-tidy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
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

// Layering (docs/architecture.md, "Layering rules"): which crate may depend on which, and which
// code looks the card's ports up. Each crate's name is written once below, so that renaming a
// crate is a one-line edit here.

/// The crate that puts the card's top in an environment, the one that names its ports.
const HARNESS: &str = "card-harness";
/// The simulation beneath the card's ports: the verilated model's runtime and its build,
/// finding Verilator, the bus models and the card's harness.
const SIMULATION_CRATES: &[&str] = &[
    "sim-runtime",
    "sim-build",
    "card-sim",
    "verilator-find",
    "axi-bfm",
    HARNESS,
];
/// The register-level XDMA IP in front of the card.
const IP_MODEL: &str = "xdma-ip";
/// The Linux driver's work per call, on the IP.
const DRIVER_MODEL: &str = "xdma-driver";
/// The models the simulated backend runs on.
const MODEL_CRATES: &[&str] = &[IP_MODEL, DRIVER_MODEL];
/// The simulated card behind the API.
const SIM_BACKEND: &str = "xdma-sim";
/// A board behind the Linux driver's nodes.
const HW_BACKEND: &str = "xdma-hw";
/// The backends, which the facade holds behind its cargo features.
const BACKEND_CRATES: &[&str] = &[SIM_BACKEND, HW_BACKEND];
/// The simulated card served as the driver's nodes.
const FUSE: &str = "xdma-fuse";
/// The front ends that serve the simulated card to other programs (FUSE nodes, a guest).
const FRONT_END_CRATES: &[&str] = &[FUSE, "xdma-vm"];
/// The card's RTL tests, which drive tops (blocks and the card) directly.
const RTL_TEST_CRATES: &[&str] = &["rtl-tests"];
/// The card's test suite over the API.
const API_TEST_CRATES: &[&str] = &["card-tests"];
/// A campaign's plan, seed rule and records, which its tests write and xtask reads.
const CAMPAIGN: &str = "campaign";
/// The crate every workspace crate depends on for one feature resolution of third-party crates.
const WORKSPACE_HACK: &str = "workspace-hack";
/// The host API with no backend.
const API_CORE: &str = "xdma-core";
/// The facade programs depend on, which picks a backend at run time.
const FACADE: &str = "xdma";
/// The IP's contract with its driver, shared by the driver's world and the simulated one.
const REGMAP: &str = "xdma-regmap";
/// The tools, which know the card through the facade only.
const TOOL_CRATES: &[&str] = &["xdma-bench", "xdma-record"];
/// Beside the harness, crates that drive or constrain tops themselves: the speed benchmark
/// (the bare model against plain C++), the worked example of one's own RTL, and xtask (the
/// synthesis constraints name the board's clocks).
const RTL_LEVEL_CRATES: &[&str] = &["sim-bench", "own-rtl-example", "xtask"];
/// What the simulated backend may take from the harness: the card's own LOOP rate, measured
/// on a card_core of its own, and the names that select a card (`[sim] top`: a top, or a
/// deliberate fault of sim_top that the IP's harness turns on); its calls reach the card
/// through the IP.
/// It also takes the harness's names for the card's buses and the DDR controller's settings,
/// which it sets through the IP (`XdmaIp::card_setup`).
const SIM_BACKEND_HARNESS_USES: &[&str] = &[
    "loop_rate",
    "LoopRate",
    "CardTop",
    "Fault",
    "CardBus",
    "CardBuses",
    "DdrController",
];
/// The card's tops: their ports are the card's ports.
const CARD_TOPS: &[&str] = &["hdl/rtl/card_core.v", "hdl/sim/sim_top.v"];
/// The calls that look a port up by its name: card-sim's `Model::port`, `input` and
/// `add_clock`, axi-bfm's `Env::add_clock`, `add_reset` and every bus model's `attach`, the
/// harness's stream finder and the RTL tests' handshake recorder.
const PORT_LOOKUPS: &[&str] = &[
    "port",
    "input",
    "add_clock",
    "add_reset",
    "attach",
    "attach_with",
    "stream_ports",
    "record_axi",
];

/// The lists joined.
fn joined(lists: &[&[&'static str]]) -> Vec<&'static str> {
    lists.iter().flat_map(|l| l.iter().copied()).collect()
}

/// What no part of the host API and no tool may reach: backend internals (the models, the
/// backends other than through the facade's features, the front ends), the simulation with
/// the harness, and the test crates.
fn not_for_the_api() -> Vec<&'static str> {
    joined(&[
        SIMULATION_CRATES,
        MODEL_CRATES,
        BACKEND_CRATES,
        FRONT_END_CRATES,
        RTL_TEST_CRATES,
        API_TEST_CRATES,
    ])
}

/// One dependency of a crate, by its package name.
#[derive(Debug, Clone)]
struct Dep {
    name: String,
    optional: bool,
    /// The features the dependency turns on.
    features: Vec<String>,
}

/// A crate's normal and dev dependencies, every target's included.
#[derive(Debug, Clone, Default)]
struct Deps {
    normal: Vec<Dep>,
    dev: Vec<Dep>,
}

/// Every workspace crate's dependencies, by package name.
type Graph = std::collections::BTreeMap<String, Deps>;

/// A manifest's dependencies of one kind (`dependencies`, `dev-dependencies`), those under
/// `[target.'cfg(..)'.*]` too, each by the package it names.
fn deps_of(doc: &toml::Table, kind: &str) -> Vec<Dep> {
    let mut tables: Vec<&toml::Table> = doc
        .get(kind)
        .and_then(|d| d.as_table())
        .into_iter()
        .collect();
    if let Some(targets) = doc.get("target").and_then(|t| t.as_table()) {
        tables.extend(
            targets
                .values()
                .filter_map(|t| t.get(kind).and_then(|d| d.as_table())),
        );
    }
    tables
        .into_iter()
        .flat_map(|t| {
            t.iter().map(|(key, spec)| Dep {
                name: spec
                    .get("package")
                    .and_then(toml::Value::as_str)
                    .unwrap_or(key)
                    .to_string(),
                optional: spec
                    .get("optional")
                    .and_then(toml::Value::as_bool)
                    .unwrap_or(false),
                features: spec
                    .get("features")
                    .and_then(toml::Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(toml::Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// Every crate's folder and package name, from the manifests under the root.
fn crate_dirs() -> Vec<(PathBuf, String, toml::Table)> {
    let mut manifests = Vec::new();
    files_with_ext(&root(), "toml", &mut manifests);
    manifests
        .into_iter()
        .filter(|m| m.ends_with("Cargo.toml"))
        .filter_map(|m| {
            let doc: toml::Table = toml::from_str(&read(&m))
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", rel(&m)));
            let name = doc.get("package")?.get("name")?.as_str()?.to_string();
            Some((m.parent()?.to_path_buf(), name, doc))
        })
        .collect()
}

/// The workspace's dependency graph, from its manifests.
fn workspace_graph() -> Graph {
    crate_dirs()
        .into_iter()
        .map(|(_, name, doc)| {
            let deps = Deps {
                normal: deps_of(&doc, "dependencies"),
                dev: deps_of(&doc, "dev-dependencies"),
            };
            (name, deps)
        })
        .collect()
}

/// The one edge a walk does not follow: the facade's backends behind its features.
fn through_a_feature(from: &str, dep: &Dep) -> bool {
    from == FACADE && dep.optional && BACKEND_CRATES.contains(&dep.name.as_str())
}

/// The chains (`a -> b -> c`) by which `start` reaches any crate of `forbidden` through normal
/// dependencies (optional ones too, but for the facade's features), starting from its dev
/// dependencies as well when `dev`.
fn forbidden_reach(g: &Graph, start: &str, dev: bool, forbidden: &[&str]) -> Vec<String> {
    let mut chains = std::collections::BTreeMap::<String, String>::new();
    let mut todo: Vec<(String, String)> = vec![(start.to_string(), start.to_string())];
    let mut first = true;
    while let Some((from, chain)) = todo.pop() {
        let Some(d) = g.get(&from) else {
            continue;
        };
        let dev_edges = if first && dev { &d.dev[..] } else { &[] };
        first = false;
        for dep in d.normal.iter().chain(dev_edges) {
            if through_a_feature(&from, dep) || chains.contains_key(&dep.name) {
                continue;
            }
            let next = format!("{chain} -> {}", dep.name);
            chains.insert(dep.name.clone(), next.clone());
            todo.push((dep.name.clone(), next));
        }
    }
    chains
        .into_iter()
        .filter(|(name, _)| forbidden.contains(&name.as_str()))
        .map(|(_, chain)| chain)
        .collect()
}

/// The host API: `xdma-core` (tests included) reaches no backend, model, simulation, front end
/// or test crate; nor does the facade, except its backends through its features.
fn host_api_violations(g: &Graph) -> Vec<String> {
    let bad = not_for_the_api();
    let mut v = forbidden_reach(g, API_CORE, true, &bad);
    v.extend(forbidden_reach(g, FACADE, false, &bad));
    v
}

#[test]
fn the_host_api_knows_no_backend() {
    let v = host_api_violations(&workspace_graph());
    assert!(
        v.is_empty(),
        "{API_CORE} builds and tests with neither a simulator nor a driver, and {FACADE} reaches a backend only through a cargo feature; these dependencies break that: {v:?}"
    );
}

/// Adds the dependency `from -> to` to a copy of the workspace's graph.
fn with_dep(g: &Graph, from: &str, to: &str, optional: bool, dev: bool) -> Graph {
    let mut g = g.clone();
    let d = g.entry(from.to_string()).or_default();
    let dep = Dep {
        name: to.to_string(),
        optional,
        features: Vec::new(),
    };
    if dev {
        d.dev.push(dep);
    } else {
        d.normal.push(dep);
    }
    g
}

/// The check itself must be able to fail.
#[test]
fn a_host_api_that_reaches_a_backend_is_caught() {
    let g = workspace_graph();
    assert!(!host_api_violations(&with_dep(&g, API_CORE, "card-sim", false, false)).is_empty());
    assert!(
        !host_api_violations(&with_dep(&g, API_CORE, RTL_TEST_CRATES[0], false, true)).is_empty()
    );
    // A backend the facade always links, not behind a feature.
    let v = host_api_violations(&with_dep(&g, FACADE, SIM_BACKEND, false, false));
    assert!(v.iter().any(|c| c.ends_with(SIM_BACKEND)), "{v:?}");
    // A crate between the facade and a harness.
    let g2 = with_dep(
        &with_dep(&g, FACADE, "middle", false, false),
        "middle",
        HARNESS,
        false,
        false,
    );
    let v = host_api_violations(&g2);
    assert!(
        v.contains(&format!("{FACADE} -> middle -> {HARNESS}")),
        "{v:?}"
    );
}

/// The tools, and the facade's examples (with the facade's dev dependencies), reach the card
/// through the facade only: no backend internals, no simulation or harness, no test crate,
/// tests included.
fn tool_violations(g: &Graph) -> Vec<String> {
    let bad = not_for_the_api();
    let mut v: Vec<String> = TOOL_CRATES
        .iter()
        .flat_map(|t| forbidden_reach(g, t, true, &bad))
        .collect();
    v.extend(forbidden_reach(g, FACADE, true, &bad));
    v
}

#[test]
fn the_tools_know_the_card_through_the_api_only() {
    let v = tool_violations(&workspace_graph());
    assert!(
        v.is_empty(),
        "the tools ({TOOL_CRATES:?}) and {FACADE}'s examples reach a backend only through {FACADE}'s features, and no harness or test crate; these dependencies break that: {v:?}"
    );
}

#[test]
fn a_tool_that_links_a_harness_is_caught() {
    let g = workspace_graph();
    let v = tool_violations(&with_dep(
        &g,
        TOOL_CRATES[0],
        RTL_TEST_CRATES[0],
        false,
        false,
    ));
    assert!(
        v.contains(&format!("{} -> {}", TOOL_CRATES[0], RTL_TEST_CRATES[0])),
        "{v:?}"
    );
    assert!(!tool_violations(&with_dep(&g, TOOL_CRATES[1], IP_MODEL, false, false)).is_empty());
    assert!(!tool_violations(&with_dep(&g, TOOL_CRATES[0], SIM_BACKEND, true, false)).is_empty());
    assert!(!tool_violations(&with_dep(&g, FACADE, HARNESS, false, true)).is_empty());
}

/// No crate's normal dependencies reach a test crate: tests depend on code, never the reverse.
fn test_crate_violations(g: &Graph) -> Vec<String> {
    let tests = joined(&[RTL_TEST_CRATES, API_TEST_CRATES]);
    g.keys()
        .filter(|c| !tests.contains(&c.as_str()))
        .flat_map(|c| forbidden_reach(g, c, false, &tests))
        .collect()
}

#[test]
fn no_crate_depends_on_a_test_crate() {
    let v = test_crate_violations(&workspace_graph());
    assert!(
        v.is_empty(),
        "only dev dependencies may name a test crate: {v:?}"
    );
}

#[test]
fn a_dependency_on_a_test_crate_is_caught() {
    let g = workspace_graph();
    let v = test_crate_violations(&with_dep(&g, SIM_BACKEND, API_TEST_CRATES[0], false, false));
    assert!(!v.is_empty(), "{v:?}");
    assert!(
        test_crate_violations(&with_dep(&g, SIM_BACKEND, API_TEST_CRATES[0], false, true))
            .is_empty()
    );
}

/// The campaign crate depends on no other workspace crate (serde only), so that xtask reads
/// the campaign's records through their types without reaching the simulation or the card.
fn campaign_violations(g: &Graph) -> Vec<String> {
    let others: Vec<&str> = g
        .keys()
        .map(String::as_str)
        .filter(|c| *c != CAMPAIGN && *c != WORKSPACE_HACK)
        .collect();
    forbidden_reach(g, CAMPAIGN, true, &others)
}

#[test]
fn the_campaign_crate_depends_on_serde_only() {
    let v = campaign_violations(&workspace_graph());
    assert!(v.is_empty(), "{v:?}");
}

#[test]
fn a_campaign_crate_that_reaches_the_card_is_caught() {
    let g = workspace_graph();
    let v = campaign_violations(&with_dep(&g, CAMPAIGN, API_TEST_CRATES[0], false, true));
    assert!(
        v.contains(&format!("{CAMPAIGN} -> {}", API_TEST_CRATES[0])),
        "{v:?}"
    );
    assert!(!campaign_violations(&with_dep(&g, CAMPAIGN, HARNESS, false, false)).is_empty());
}

/// The IP model knows neither a driver nor a guest nor the API's backends; the driver model
/// knows no backend and no front end: they are what the backends and front ends run on.
fn model_violations(g: &Graph) -> Vec<String> {
    let above = joined(&[BACKEND_CRATES, FRONT_END_CRATES]);
    let mut v = forbidden_reach(g, IP_MODEL, false, &joined(&[&[DRIVER_MODEL], &above]));
    v.extend(forbidden_reach(g, DRIVER_MODEL, false, &above));
    v
}

#[test]
fn the_models_know_no_backend_and_no_front_end() {
    let v = model_violations(&workspace_graph());
    assert!(v.is_empty(), "{v:?}");
}

#[test]
fn a_model_that_knows_a_front_end_is_caught() {
    let g = workspace_graph();
    assert!(!model_violations(&with_dep(&g, IP_MODEL, DRIVER_MODEL, false, false)).is_empty());
    assert!(!model_violations(&with_dep(&g, DRIVER_MODEL, FUSE, false, false)).is_empty());
}

/// The register map has no dependency at all, and the driver backend that uses it reaches no
/// simulation, model, simulated backend or front end.
fn driver_world_violations(g: &Graph) -> Vec<String> {
    let mut v: Vec<String> = g
        .get(REGMAP)
        .map(|d| {
            d.normal
                .iter()
                .map(|d| format!("{REGMAP} -> {}", d.name))
                .collect()
        })
        .unwrap_or_default();
    let sim = joined(&[
        SIMULATION_CRATES,
        MODEL_CRATES,
        &[SIM_BACKEND],
        FRONT_END_CRATES,
    ]);
    v.extend(forbidden_reach(g, HW_BACKEND, false, &sim));
    v
}

/// The register map is what the driver's world shares with the simulated one, so it has no
/// dependency at all, and the driver backend that uses it still knows no simulator.
#[test]
fn the_register_map_keeps_the_driver_free_of_the_simulator() {
    let v = driver_world_violations(&workspace_graph());
    assert!(v.is_empty(), "{v:?}");
}

#[test]
fn a_driver_world_that_pulls_in_a_simulator_is_caught() {
    let g = workspace_graph();
    assert!(!driver_world_violations(&with_dep(&g, REGMAP, "serde", false, false)).is_empty());
    assert!(!driver_world_violations(&with_dep(&g, HW_BACKEND, IP_MODEL, false, false)).is_empty());
}

/// The names `text` takes from the crate `krate` (`krate::a`, `krate::{a, b::c}`), comments
/// left out.
fn names_taken_from(text: &str, krate: &str) -> Vec<String> {
    let (code, _) = scan(text);
    let prefix = format!("{}::", krate.replace('-', "_"));
    let ident = |s: &str| -> String {
        s.trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out = Vec::new();
    for (i, _) in code.match_indices(&prefix) {
        let rest = &code[i + prefix.len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = group.split('}').next().unwrap_or("");
                out.extend(group.split(',').map(ident).filter(|n| !n.is_empty()));
            }
            None => out.push(ident(rest)),
        }
    }
    out
}

/// What the simulated card and the FUSE nodes may know: the card only through the IP and the
/// driver model (the simulated backend takes from the harness its LOOP measurement alone), and
/// the driver's contract from the register map rather than the driver backend.
fn sim_backend_violations(g: &Graph, sim_sources: &[(String, String)]) -> Vec<String> {
    let mut v = Vec::new();
    let direct = |c: &str| -> Vec<String> {
        g.get(c)
            .map(|d| d.normal.iter().map(|d| d.name.clone()).collect())
            .unwrap_or_default()
    };
    if direct(FUSE).iter().any(|n| n == HARNESS) {
        v.push(format!("{FUSE} depends on {HARNESS}"));
    }
    for c in [SIM_BACKEND, FUSE] {
        if direct(c).iter().any(|n| n == HW_BACKEND) {
            v.push(format!("{c} depends on {HW_BACKEND}"));
        }
    }
    for needed in MODEL_CRATES {
        if !direct(SIM_BACKEND).iter().any(|n| n == needed) {
            v.push(format!("{SIM_BACKEND} does not run on {needed}"));
        }
    }
    for (file, text) in sim_sources {
        for name in names_taken_from(text, HARNESS) {
            if !SIM_BACKEND_HARNESS_USES.contains(&name.as_str()) {
                v.push(format!("{file} takes `{name}` from {HARNESS}"));
            }
        }
    }
    v
}

/// The `.rs` files of a crate's folder, as (path from the root, text).
fn sources_of(krate: &str) -> Vec<(String, String)> {
    let Some((dir, _, _)) = crate_dirs().into_iter().find(|(_, n, _)| n == krate) else {
        panic!("no crate {krate} in the workspace");
    };
    let mut files = Vec::new();
    files_with_ext(&dir, "rs", &mut files);
    files.iter().map(|f| (rel(f), read(f))).collect()
}

/// One IP model: the simulated card and the FUSE nodes reach the card only through the
/// register-level IP (and the driver model in front of it), never through the card harness
/// itself, but for the card's own LOOP rate, which the simulated backend measures on a
/// card_core of its own; and the FUSE nodes take the driver's contract from the register map,
/// not from the driver backend.
#[test]
fn the_simulated_card_reaches_the_card_only_through_the_ip() {
    let v = sim_backend_violations(&workspace_graph(), &sources_of(SIM_BACKEND));
    assert!(v.is_empty(), "{v:?}");
}

#[test]
fn a_simulated_card_that_drives_the_harness_is_caught() {
    let g = workspace_graph();
    let ok = vec![(
        "ok.rs".to_string(),
        "use card_harness::{loop_rate, LoopRate};\n// card_harness::CardHarness in a comment\nlet r = card_harness::loop_rate(4132, 8);\n".to_string(),
    )];
    assert!(sim_backend_violations(&g, &ok).is_empty());
    let bad = vec![(
        "bad.rs".to_string(),
        "use card_harness::{loop_rate, CardHarness};\nlet c = card_harness::CardHarness::new(top, true);\n".to_string(),
    )];
    assert_eq!(sim_backend_violations(&g, &bad).len(), 2);
    assert!(!sim_backend_violations(&with_dep(&g, FUSE, HARNESS, false, false), &[]).is_empty());
    assert!(
        !sim_backend_violations(&with_dep(&g, SIM_BACKEND, HW_BACKEND, false, false), &[])
            .is_empty()
    );
}

/// The crates whose test hooks sit behind a cargo feature: the harness's environment (and
/// through it the model, where the card's ports are named) and the IP's whole harness
/// (`XdmaIp::card`), and the crates above them whose feature of the same name passes them on.
const TEST_HOOK_CRATES: &[&str] = &[HARNESS, IP_MODEL, SIM_BACKEND, FACADE];
/// The feature that turns the test hooks on, as tokio names its own.
const TEST_HOOK_FEATURE: &str = "test-util";

/// Every place that turns a test hook on outside a dev-dependency: a normal dependency on a
/// crate of [`TEST_HOOK_CRATES`] with [`TEST_HOOK_FEATURE`], the workspace's shared
/// dependency table doing so for every member, or a crate's own feature (other than its own
/// `test-util`) that turns it on. `manifests` are (crate, manifest) pairs.
fn test_hook_violations(g: &Graph, manifests: &[(String, toml::Table)]) -> Vec<String> {
    let mut v = Vec::new();
    for (krate, deps) in g {
        for d in &deps.normal {
            if TEST_HOOK_CRATES.contains(&d.name.as_str())
                && d.features.iter().any(|f| f == TEST_HOOK_FEATURE)
            {
                v.push(format!(
                    "{krate} turns on {}'s {TEST_HOOK_FEATURE} in a normal dependency",
                    d.name
                ));
            }
        }
    }
    let hooks: Vec<String> = TEST_HOOK_CRATES
        .iter()
        .map(|c| format!("{c}/{TEST_HOOK_FEATURE}"))
        .collect();
    for (krate, doc) in manifests {
        let Some(features) = doc.get("features").and_then(|f| f.as_table()) else {
            continue;
        };
        for (name, enables) in features {
            let turns_on = enables
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(toml::Value::as_str)
                .any(|e| hooks.iter().any(|h| *h == e.replacen("?/", "/", 1)));
            if turns_on && name != TEST_HOOK_FEATURE {
                v.push(format!(
                    "{krate}'s feature `{name}` turns on a {TEST_HOOK_FEATURE} feature of {TEST_HOOK_CRATES:?}"
                ));
            }
        }
    }
    v
}

/// The workspace's shared dependency table as a crate of its own (`workspace`), so that a
/// `test-util` set there for every member is seen as a normal dependency.
fn workspace_table_as_graph() -> Graph {
    let doc: toml::Table = toml::from_str(&read(&root().join("Cargo.toml")))
        .unwrap_or_else(|e| panic!("Cargo.toml does not parse: {e}"));
    let shared = doc
        .get("workspace")
        .and_then(|w| w.as_table())
        .cloned()
        .unwrap_or_default();
    let mut g = Graph::new();
    g.insert(
        "workspace".to_string(),
        Deps {
            normal: deps_of(&shared, "dependencies"),
            dev: Vec::new(),
        },
    );
    g
}

/// The card's ports stay the harness's in every build but a test build: the harness's
/// environment and the IP's `card()` exist only with the `test-util` feature, which only
/// dev-dependencies turn on (the type system then keeps every other build from reaching a
/// port: the harness's fields are private).
#[test]
fn test_hooks_are_turned_on_only_by_dev_dependencies() {
    let mut g = workspace_graph();
    g.extend(workspace_table_as_graph());
    let manifests: Vec<(String, toml::Table)> = crate_dirs()
        .into_iter()
        .map(|(_, name, doc)| (name, doc))
        .collect();
    let v = test_hook_violations(&g, &manifests);
    assert!(v.is_empty(), "{v:?}");
}

#[test]
fn a_test_hook_turned_on_for_a_normal_build_is_caught() {
    let g = workspace_graph();
    let mut bad = with_dep(&g, SIM_BACKEND, IP_MODEL, false, false);
    if let Some(d) = bad.get_mut(SIM_BACKEND).and_then(|d| d.normal.last_mut()) {
        d.features.push(TEST_HOOK_FEATURE.to_string());
    }
    assert_eq!(test_hook_violations(&bad, &[]).len(), 1);
    let mut dev_only = with_dep(&g, SIM_BACKEND, IP_MODEL, false, true);
    if let Some(d) = dev_only.get_mut(SIM_BACKEND).and_then(|d| d.dev.last_mut()) {
        d.features.push(TEST_HOOK_FEATURE.to_string());
    }
    assert!(test_hook_violations(&dev_only, &[]).is_empty());
    let feature = |name: &str| -> (String, toml::Table) {
        let doc = format!("[features]\n{name} = [\"{HARNESS}/{TEST_HOOK_FEATURE}\"]\n");
        (
            SIM_BACKEND.to_string(),
            toml::from_str(&doc).expect("the manifest parses"),
        )
    };
    assert_eq!(
        test_hook_violations(&Graph::new(), &[feature("sim")]).len(),
        1
    );
    assert!(test_hook_violations(&Graph::new(), &[feature(TEST_HOOK_FEATURE)]).is_empty());
}

/// `text` with comments, and the contents of string and character literals, blanked (lengths
/// kept, so that offsets agree), and the string literals with their offsets.
fn scan(text: &str) -> (String, Vec<(usize, String)>) {
    let b = text.as_bytes();
    let mut code = b.to_vec();
    let mut lits = Vec::new();
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut code[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                blank(&mut code, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
                blank(&mut code, i, end);
                i = end;
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                let open = i + 1 + hashes;
                if b.get(open) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let end = text[open + 1..]
                    .find(&close)
                    .map_or(b.len(), |n| open + 1 + n);
                lits.push((open + 1, text[open + 1..end].to_string()));
                blank(&mut code, open + 1, end);
                i = end + close.len();
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(b.len());
                lits.push((i + 1, text[i + 1..end].to_string()));
                blank(&mut code, i + 1, end);
                i = end + 1;
            }
            b'\'' => {
                // A character literal ('x', '\n', '"'), or a lifetime.
                if b.get(i + 1) == Some(&b'\\') {
                    let end = text[i + 2..].find('\'').map_or(b.len(), |n| i + 2 + n);
                    blank(&mut code, i + 1, end);
                    i = end + 1;
                } else if b.get(i + 2) == Some(&b'\'') {
                    blank(&mut code, i + 1, i + 2);
                    i += 3;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    (String::from_utf8_lossy(&code).into_owned(), lits)
}

/// The ports of the card's tops, from their Verilog.
fn card_ports() -> Vec<String> {
    let mut ports: Vec<String> = CARD_TOPS
        .iter()
        .flat_map(|f| verilog_ports(&read(&root().join(f))))
        .collect();
    ports.sort();
    ports.dedup();
    ports
}

/// The names of a module's ports declared one per line (`input wire [7:0] name,`).
fn verilog_ports(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let code = l.split("//").next().unwrap_or("").trim();
            let first = code.split_whitespace().next()?;
            if !matches!(first, "input" | "output" | "inout") {
                return None;
            }
            code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .rfind(|t| !t.is_empty())
                .map(str::to_string)
        })
        .collect()
}

/// True when the string literal `lit` names one of `ports` or a bus of them: the whole name
/// (`s_axil_awaddr`, `axi_aclk`) or a prefix of whole words, with or without a channel number
/// (`s_axil`, `m_axis_c2h`, `m_axis_c2h0`); a format string counts by its text before the
/// first `{`.
fn names_a_port(lit: &str, ports: &[String]) -> bool {
    let key = lit.split('{').next().unwrap_or("").trim_end_matches('_');
    key.contains('_')
        && ports.iter().any(|p| {
            p == key
                || p.strip_prefix(key).is_some_and(|rest| {
                    rest.trim_start_matches(|c: char| c.is_ascii_digit())
                        .starts_with('_')
                })
        })
}

/// The call whose argument list holds offset `at` of `code` (comments and literals blanked):
/// the name before the nearest unclosed `(`, looking through `format!` and references.
fn enclosing_call(code: &str, at: usize) -> Option<String> {
    let b = code.as_bytes();
    let mut depth = 0usize;
    let mut i = at;
    while i > 0 {
        i -= 1;
        match b[i] {
            b')' | b']' => depth += 1,
            b'(' | b'[' if depth > 0 => depth -= 1,
            b'[' => return None,
            b'(' => {
                let head = code[..i].trim_end();
                let head = head.strip_suffix('!').unwrap_or(head);
                let name: String = head
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                if name == "format" {
                    continue;
                }
                return Some(name);
            }
            b';' | b'{' | b'}' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The lines (from 1) of `text` where a string literal naming one of `ports` is an argument of
/// a port look-up ([`PORT_LOOKUPS`]).
fn port_lookup_lines(text: &str, ports: &[String]) -> Vec<usize> {
    let (code, lits) = scan(text);
    let mut lines: Vec<usize> = lits
        .iter()
        .filter(|(_, lit)| names_a_port(lit, ports))
        .filter(|(at, _)| {
            enclosing_call(&code, *at).is_some_and(|call| PORT_LOOKUPS.contains(&call.as_str()))
        })
        .map(|(at, _)| text[..*at].matches('\n').count() + 1)
        .collect();
    lines.dedup();
    lines
}

/// The crates that may look the card's ports up by name: the harness, what lies beneath it,
/// the RTL tests and the RTL-level crates beside it.
fn port_namers() -> Vec<&'static str> {
    joined(&[SIMULATION_CRATES, RTL_TEST_CRATES, RTL_LEVEL_CRATES])
}

/// Only the card harness looks the card's ports up by name: every other crate reaches them
/// through the harness's bus models (the IP model, the simulated backend) or through the API.
/// A message may still name the bus a failure was on.
#[test]
fn only_the_card_harness_looks_the_cards_ports_up() {
    let ports = card_ports();
    assert!(
        ports.iter().any(|p| p == "s_axil_awaddr") && ports.len() > 50,
        "the card's ports were not read from {CARD_TOPS:?}: {ports:?}"
    );
    let allowed = port_namers();
    let mut bad = Vec::new();
    for (dir, name, _) in crate_dirs() {
        if allowed.contains(&name.as_str()) {
            continue;
        }
        let mut files = Vec::new();
        files_with_ext(&dir, "rs", &mut files);
        for f in files {
            for line in port_lookup_lines(&read(&f), &ports) {
                bad.push(format!("{}:{line}", rel(&f)));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the card's ports are looked up by name outside {HARNESS} (and the crates of {allowed:?}); use the harness's bus models: {bad:?}"
    );
}

#[test]
fn a_port_look_up_is_found() {
    let ports = card_ports();
    let text = concat!(
        "let a = env.model().port(\n",
        "    \"s_axil_awaddr\",\n",
        ")?;\n",
        "// m.port(\"usr_irq_req\")\n",
        "let e = BfmError::Timeout { clock: \"axi_aclk\".into() };\n",
        "let m = AxiMaster::attach(&mut env, \"s_axi\", clk)?;\n",
        "let s = m.port(&format!(\"m_axis_c2h{k}_tdata\"))?;\n",
        "let q = '\"'; let t = m.port(\"s_axis\")?;\n",
        "let r = r#\"m.port(\"axi_aresetn\")\"#;\n",
        "let c = env.add_clock(\"ddr_clk\", 200)?;\n",
    );
    assert_eq!(port_lookup_lines(text, &ports), [2, 6, 7, 8, 10]);
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

#[test]
fn the_coverage_job_checks_the_floors_and_keeps_the_report() {
    let wf = read(&root().join(".github/workflows/coverage.yml"));
    assert!(
        wf.contains("cargo xtask coverage --check"),
        "the coverage workflow must run the floor check"
    );
    assert!(
        wf.contains("upload-artifact") && wf.contains("target/coverage/html"),
        "the coverage workflow must keep the HTML report as an artifact"
    );
    assert!(
        root().join("hdl/coverage.toml").is_file(),
        "the floors the check compares with are committed"
    );
}

#[test]
fn the_vendor_scripts_workflow_runs_them_all_in_every_mode() {
    let wf = read(&root().join(".github/workflows/vendor-scripts.yml"));
    assert!(
        wf.contains("cargo xtask vm ") && wf.contains("--mode all") && wf.contains("--vendor full"),
        "the workflow must run the check list with the full vendor scripts in every mode"
    );
    for variant in crate::vm::VARIANTS {
        assert!(
            wf.contains(variant),
            "the workflow leaves out the {variant} card"
        );
    }
    // Every one of the vendor's scripts is a step of the full check list.
    let guest = read(&root().join("xtask/guest/vendor.sh"));
    let full = guest
        .split("        full)")
        .nth(1)
        .and_then(|rest| rest.split(";;").next())
        .expect("vendor.sh has a `full)` case");
    for step in [
        "vendor_run_test",
        "vendor_mm_test",
        "vendor_stream_test",
        "vendor_perform",
        "vendor_unaligned",
        "vendor_io_sweep",
    ] {
        assert!(full.contains(step), "the full vendor scripts lack {step}");
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
    let g = workspace_graph();
    for krate in ["sim-runtime", "sim-build", "axi-bfm", "own-rtl-example"] {
        let deps = g.get(krate).map(|d| d.normal.clone()).unwrap_or_default();
        assert!(g.contains_key(krate), "{krate} is a workspace crate");
        assert!(
            !deps.iter().any(|d| d.name == "card-sim"),
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

// Feature unification (docs/architecture.md, "Unified features"): with resolver 2, a build of
// one package (`cargo test -p X`) resolves features for that package alone, so a dependency
// that the workspace's build (`cargo test --workspace --all-targets`) compiled with more
// features is compiled again, and so is everything above it. `cargo tree` resolves features
// exactly as those builds do, offline and in a fraction of a second, so the check compares
// its output rather than timing builds.

/// The packages of one resolved build, as `cargo tree` names them (name, version, and the
/// folder of a path package), each with the feature sets it is built with: one set, or two
/// when the copy that build scripts and proc macros use is resolved apart from the rest.
type Resolved = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// The edges a test build follows: a `-p X` test build takes X's dev-dependencies and no
/// other member's, as `cargo tree` does with these edges.
const TREE_EDGES: &str = "features,normal,dev,build";

/// The packages and feature sets of `cargo tree -f '{p}|{f}'` output: feature nodes (`serde
/// feature "std"`) are left out, and a package printed twice (marked `(*)`) counts once.
fn parse_tree(text: &str) -> Resolved {
    let mut out = Resolved::new();
    for line in text.lines() {
        let line = line.trim();
        let line = line.strip_suffix("(*)").unwrap_or(line).trim_end();
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        out.entry(package.trim().to_string())
            .or_default()
            .insert(features.trim().to_string());
    }
    out
}

/// The resolved packages of the test build of the packages that `selection` picks
/// (`--workspace`, or `-p X`), for the workspace at `root`.
fn resolve(root: &Path, selection: &[&str]) -> Result<Resolved, String> {
    let mut cmd = crate::cargo();
    cmd.current_dir(root)
        .args(["tree", "--locked", "--prefix", "none", "-e", TREE_EDGES])
        .args(["-f", "{p}|{f}"])
        .args(selection);
    Ok(parse_tree(&String::from_utf8_lossy(&crate::stdout_of(
        cmd,
    )?)))
}

/// The names of the workspace's members at `root`, from `cargo metadata`.
fn member_names(root: &Path) -> Result<Vec<String>, String> {
    let mut cmd = crate::cargo();
    cmd.current_dir(root)
        .args(["metadata", "--locked", "--no-deps", "--format-version", "1"]);
    let meta: serde_json::Value = serde_json::from_slice(&crate::stdout_of(cmd)?)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let names = meta["packages"]
        .as_array()
        .ok_or("cargo metadata lists no packages")?
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    Ok(names)
}

/// What `cargo test -p package` (resolved as `alone`) would compile again after the
/// workspace's build (resolved as `workspace`): every package it builds with a feature set
/// that the workspace's build does not have for that package.
fn divergences(package: &str, alone: &Resolved, workspace: &Resolved) -> Vec<String> {
    let none = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for (dep, sets) in alone {
        let have = workspace.get(dep).unwrap_or(&none);
        for set in sets.iter().filter(|s| !have.contains(*s)) {
            out.push(format!(
                "cargo test -p {package} builds {dep} with [{set}], the workspace with {have:?}"
            ));
        }
    }
    out
}

/// Every dependency that a `-p` test build of some member of the workspace at `root` would
/// resolve with other features than the workspace's test build does, and so compile again.
/// The members' `cargo tree` runs are spread over a few threads, as each one mostly waits on
/// reading the lock file and the registry's index.
fn feature_divergences(root: &Path) -> Result<Vec<String>, String> {
    let workspace = resolve(root, &["--workspace"])?;
    let members = member_names(root)?;
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    let chunk = members.len().div_ceil(threads).max(1);
    let results: Vec<Result<Vec<String>, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = members
            .chunks(chunk)
            .map(|names| {
                let workspace = &workspace;
                s.spawn(move || {
                    let mut out = Vec::new();
                    for name in names {
                        let alone = resolve(root, &["-p", name])?;
                        out.extend(divergences(name, &alone, workspace));
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a cargo tree thread panicked".to_string()))
            })
            .collect()
    });
    let mut out = Vec::new();
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

/// A `-p` test build of any member compiles nothing that the workspace's test build already
/// compiled: every dependency resolves with the workspace's features, which the
/// `workspace-hack` crate (third-party crates, kept by `cargo hakari generate`) and
/// `[workspace.dependencies]` (the workspace's own crates) state for every member.
#[test]
fn a_package_build_reuses_the_workspace_build() {
    let v = feature_divergences(&root()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        v.is_empty(),
        "these dependencies would be compiled again by a `-p` test build after the workspace's, with other features; run `cargo hakari generate` for third-party crates, or state the features in [workspace.dependencies] for the workspace's own: {v:#?}"
    );
}

/// The check itself must be able to fail: in a workspace of two members, one enabling a
/// feature of a shared dependency that the other does not, the second member's `-p` build is
/// reported, and the first's is not.
#[test]
fn a_package_build_with_other_features_is_caught() {
    // A folder of its own: the other checks' scratch folder is removed when they start.
    let dir = crate::root()
        .join("target")
        .join(format!("xtask-tidy-features-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    };
    write(
        "Cargo.toml",
        "[workspace]\nresolver = \"2\"\nmembers = [\"a\", \"b\", \"shared\"]\n",
    );
    let member = |name: &str, dep: &str| {
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n{dep}\n")
    };
    write(
        "a/Cargo.toml",
        &member(
            "a",
            "shared = { path = \"../shared\", features = [\"extra\"] }",
        ),
    );
    write(
        "b/Cargo.toml",
        &member("b", "shared = { path = \"../shared\" }"),
    );
    write(
        "shared/Cargo.toml",
        "[package]\nname = \"shared\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[features]\nextra = []\n",
    );
    for krate in ["a", "b", "shared"] {
        write(&format!("{krate}/src/lib.rs"), "//! A member.\n");
    }
    let mut lock = crate::cargo();
    lock.current_dir(&dir)
        .args(["generate-lockfile", "--offline", "--quiet"]);
    let status = lock.status().expect("cargo runs");
    assert!(status.success(), "the lock file of the copy is written");
    let v = feature_divergences(&dir).expect("the copy resolves");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        v.iter()
            .any(|d| d.starts_with("cargo test -p b builds shared v0.1.0")),
        "{v:#?}"
    );
    assert!(
        v.iter()
            .any(|d| d.starts_with("cargo test -p shared builds shared v0.1.0")),
        "{v:#?}"
    );
    assert!(
        !v.iter().any(|d| d.starts_with("cargo test -p a ")),
        "{v:#?}"
    );
    // Output as `cargo tree` prints it: one set for the package, feature nodes left out, and
    // a repeated package counted once.
    let tree = "shared v0.1.0 (/w/shared)|extra\nshared feature \"extra\"\nshared v0.1.0 (/w/shared)|extra (*)\n";
    let parsed = parse_tree(tree);
    assert_eq!(parsed.len(), 1, "{parsed:?}");
    assert_eq!(
        parsed.get("shared v0.1.0 (/w/shared)").map(|s| s.len()),
        Some(1)
    );
}

// Import circles inside a crate (issue: each file's imports should run one way, so that a
// file can be read, and changed, knowing only what it imports).
//
// A file's module is its path under `src`: `src/engine/mm.rs` is `engine::mm` and
// `src/engine/mod.rs` is `engine`; the root (`lib.rs`, `main.rs`) is `crate`. Files under
// `src/bin` are crate roots of their own and are left out. An edge runs from a file to the
// deepest module a path in its code names (`crate::a::b::Item` is `a::b` when `a/b.rs` exists),
// with `super::` and `self::` taken relative to the file's module (and to any inline `mod`
// block the path sits in), a child named by its bare name (`mm::run()` in `engine/mod.rs`), and
// an item that the root or a `mod.rs` re-exports (`pub use b::Item`) counted as the module it
// comes from. A parent declaring its child (`mod mm;`) is no import, so a child importing its
// parent (`use super::Shared` in `engine/mm.rs`) is an edge like any other, and a parent and
// child that import each other through their code are a circle. The root is left out: it
// declares every module and its `main` calls into them, so it would close a circle with every
// module that uses one of its helpers.

/// The root's module name.
const CRATE_ROOT: &str = "crate";

/// The files of a crate's `src` folder as (module, text), the root named `crate`; files under
/// `src/bin` are other crates' roots and are left out.
fn crate_sources(src: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    files_with_ext(src, "rs", &mut files);
    files
        .iter()
        .filter(|f| !f.starts_with(src.join("bin")))
        .filter_map(|f| {
            let rel = f.strip_prefix(src).ok()?.with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
                parts.clear();
            }
            let module = if parts.is_empty() {
                CRATE_ROOT.to_string()
            } else {
                parts.join("::")
            };
            Some((module, read(f)))
        })
        .collect()
}

/// The text with comments, string literals and character literals blanked to spaces (line
/// breaks kept), so that a path or a brace inside them is not read as code.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0usize;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || next == Some('#'))
            && !(i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
        {
            // A raw string: r"..." or r#"..."#, ended by a quote and as many hashes.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (0..hashes).all(|h| chars.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.extend(chars[i..j.min(chars.len())].iter().map(|&c| blank(c)));
            i = j;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            out.extend(chars[i..end].iter().map(|&c| blank(c)));
            i = end;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{7f}'), not a lifetime ('a).
            let end = if next == Some('\\') {
                chars[i + 2..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|p| i + 2 + p + 1)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 3)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.extend(chars[i..end].iter().map(|&c| blank(c)));
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The paths that start at `s` (just after a leading segment's `::`): each a list of
/// segments, a `{...}` group giving one path per item, nested groups included; `Item as Alias`
/// ends in the two segments `as` and `Alias`.
fn paths_at(s: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group_end(group)];
            return group_items(group)
                .into_iter()
                .flat_map(paths_at)
                .map(|tail| segments.iter().cloned().chain(tail).collect())
                .collect();
        }
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        segments.push(rest[..end].to_string());
        let after = rest[end..].trim_start();
        if let Some(alias) = after.strip_prefix("as ") {
            // `Item as Alias` binds `Alias`: kept as two last segments, `as` and the alias.
            let alias = alias.trim_start();
            let end = alias
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(alias.len());
            segments.push("as".to_string());
            segments.push(alias[..end].to_string());
            break;
        }
        match after.strip_prefix("::") {
            Some(after) => rest = after,
            None => break,
        }
    }
    vec![segments]
}

/// The items of a `use` group's text (`a::B, c::{d, e}, F`), split at its top-level commas.
fn group_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&group[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items
}

/// Where a `use` group that starts just after its `{` ends: at its matching `}`.
fn group_end(group: &str) -> usize {
    let mut depth = 1usize;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    group.len()
}

/// For each byte of a file's code, how many inline `mod name { ... }` blocks it sits in (so
/// that `super::` inside a file's `mod inner` names the file's own module), and whether one of
/// them is a `#[cfg(test)]` module.
fn inline_mod_depths(code: &str) -> Vec<(usize, bool)> {
    let bytes = code.as_bytes();
    let mut depths = vec![(0, false); bytes.len()];
    // The brace depths at which an inline module's block opened, and whether it is for tests.
    let mut opened: Vec<(usize, bool)> = Vec::new();
    let mut braces = 0usize;
    let mut pending_mod = false;
    let mut pending_test = false;
    for i in 0..bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if starts_word && code[i..].starts_with("mod") {
            if bytes.get(i + 3).is_some_and(|c| c.is_ascii_whitespace()) {
                pending_mod = true;
            }
        } else if code[i..].starts_with("#[cfg(test)]") {
            pending_test = true;
        }
        match bytes[i] {
            b'{' => {
                braces += 1;
                if pending_mod {
                    opened.push((braces, pending_test));
                }
                pending_mod = false;
                pending_test = false;
            }
            b'}' => {
                if opened.last().is_some_and(|(at, _)| *at == braces) {
                    opened.pop();
                }
                braces = braces.saturating_sub(1);
            }
            b';' => {
                pending_mod = false;
                pending_test = false;
            }
            _ => {}
        }
        depths[i] = (opened.len(), opened.iter().any(|(_, test)| *test));
    }
    depths
}

/// The byte ranges of a file's re-exports (`pub use ...;`, `pub(crate) use ...;`): a
/// re-export only forwards a name for other files, which resolve through it to the module the
/// item comes from, so it is no import of the file's own.
fn reexport_spans(code: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut start = 0;
    for stmt in code.split_inclusive([';', '{', '}']) {
        let trimmed = stmt.trim_start();
        let is_reexport = trimmed
            .strip_prefix("pub")
            .map(|r| match r.trim_start().strip_prefix('(') {
                Some(vis) => vis.split_once(')').map_or("", |(_, r)| r),
                None => r,
            })
            .is_some_and(|r| r.trim_start().starts_with("use "));
        if is_reexport {
            // A re-export's group holds braces, so its span runs to its `;`.
            let end = code[start..]
                .find(';')
                .map_or(code.len(), |e| start + e + 1);
            spans.push(start..end);
        }
        start += stmt.len();
    }
    spans
}

/// Which modules each file of a crate imports (see the section's comment for what counts).
fn module_imports(files: &[(String, String)]) -> Resolved {
    let modules: std::collections::BTreeSet<&str> = files.iter().map(|(m, _)| m.as_str()).collect();
    let join = |parent: &str, child: &str| -> String {
        if parent == CRATE_ROOT {
            child.to_string()
        } else {
            format!("{parent}::{child}")
        }
    };
    let parent_of = |module: &str| -> String {
        match module.rsplit_once("::") {
            Some((parent, _)) => parent.to_string(),
            None => CRATE_ROOT.to_string(),
        }
    };
    let codes: Vec<(String, String)> = files
        .iter()
        .map(|(m, t)| (m.clone(), code_only(t)))
        .collect();
    // Each module's re-exports: (module, item) -> the path the item comes from.
    let mut reexported = std::collections::BTreeMap::<(String, String), Vec<String>>::new();
    for (module, code) in &codes {
        for span in reexport_spans(code) {
            let stmt = code[span].trim_end_matches(';');
            let Some((_, rest)) = stmt.split_once("use ") else {
                continue;
            };
            for mut path in paths_at(rest) {
                // `pub use a::Item as Other` re-exports `Other`, from `a::Item`.
                let Some(last) = path.last().cloned() else {
                    continue;
                };
                if path.len() >= 3 && path[path.len() - 2] == "as" {
                    path.truncate(path.len() - 2);
                }
                reexported.insert((module.clone(), last.to_string()), path.clone());
            }
        }
    }
    // The module a path names, from the module `at` whose code holds it.
    fn resolve(
        path: &[String],
        at: &str,
        modules: &std::collections::BTreeSet<&str>,
        reexported: &std::collections::BTreeMap<(String, String), Vec<String>>,
        join: &dyn Fn(&str, &str) -> String,
        parent_of: &dyn Fn(&str) -> String,
        hops: usize,
    ) -> String {
        let mut module = at.to_string();
        let mut segments = path.iter().peekable();
        match segments.peek().map(|s| s.as_str()) {
            Some("crate") => {
                module = CRATE_ROOT.to_string();
                segments.next();
            }
            Some("self") => {
                segments.next();
            }
            _ => {}
        }
        while segments.peek().is_some_and(|s| *s == "super") {
            module = parent_of(&module);
            segments.next();
        }
        for segment in segments {
            if segment == "self" {
                continue;
            }
            let child = join(&module, segment);
            if modules.contains(child.as_str()) {
                module = child;
                continue;
            }
            if let Some(from) = reexported.get(&(module.clone(), segment.clone())) {
                // A re-export's path is relative to the module that re-exports it; a chain
                // of re-exports is followed a few steps, which no real crate exceeds.
                if hops < 8 {
                    module = resolve(
                        from,
                        &module,
                        modules,
                        reexported,
                        join,
                        parent_of,
                        hops + 1,
                    );
                }
            }
            break;
        }
        module
    }
    let mut imports = Resolved::new();
    for (module, code) in &codes {
        if module == CRATE_ROOT {
            continue;
        }
        let depths = inline_mod_depths(code);
        let reexports = reexport_spans(code);
        let bytes = code.as_bytes();
        let mut found = std::collections::BTreeSet::new();
        for (at, _) in code.match_indices("::") {
            // The path's first segment: the identifier just before this `::`, unless a `::`
            // comes before it (then it is a later segment of a path already read).
            let head_start = code[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |p| p + 1);
            let head = &code[head_start..at];
            if head.is_empty() || code[..head_start].trim_end().ends_with("::") {
                continue;
            }
            if head_start > 0 && bytes[head_start - 1] == b'$' {
                continue;
            }
            if reexports.iter().any(|r| r.contains(&head_start)) {
                continue;
            }
            // A test module's paths are left out: no path names a test module (each resolves
            // to a file's module), so nothing imports it and it cannot close a circle.
            let (inline, in_test) = depths.get(head_start).copied().unwrap_or((0, false));
            if in_test {
                continue;
            }
            // A visibility (`pub(in crate::a)`) names a module without importing it.
            if code[..head_start].trim_end().ends_with("(in") {
                continue;
            }
            let mut path = vec![head.to_string()];
            let tails = paths_at(&code[at + 2..]);
            let first = match head {
                "crate" => true,
                "super" | "self" => {
                    // Inside an inline module, its own `super`s climb back to the file's
                    // module first, and `self` is the file's module for our purpose.
                    if head == "super" {
                        let climbed = tails
                            .first()
                            .map_or(0, |t| t.iter().take_while(|s| *s == "super").count())
                            + 1;
                        if climbed <= inline {
                            continue;
                        }
                        path = vec!["super".to_string(); climbed - inline];
                    } else {
                        path = vec!["self".to_string()];
                    }
                    true
                }
                child => modules.contains(join(module, child).as_str()),
            };
            if !first {
                continue;
            }
            for tail in tails {
                let tail = tail.into_iter().skip_while(|s| s == "super");
                let full: Vec<String> = path.iter().cloned().chain(tail).collect();
                let target = resolve(&full, module, &modules, &reexported, &join, &parent_of, 0);
                if target != *module && target != CRATE_ROOT {
                    found.insert(target);
                }
            }
        }
        imports.insert(module.clone(), found);
    }
    imports
}

/// The modules that reach themselves again through the imports: those in a circle.
fn modules_in_circles(imports: &Resolved) -> Vec<String> {
    let none = std::collections::BTreeSet::new();
    imports
        .keys()
        .filter(|start| {
            let mut seen = std::collections::BTreeSet::new();
            let mut todo: Vec<&String> = imports.get(*start).unwrap_or(&none).iter().collect();
            while let Some(m) = todo.pop() {
                if m == *start {
                    return true;
                }
                if seen.insert(m) {
                    todo.extend(imports.get(m).unwrap_or(&none).iter());
                }
            }
            false
        })
        .cloned()
        .collect()
}

/// Each workspace crate's files that import each other in a circle, by crate.
fn workspace_import_circles() -> Vec<(String, Vec<String>)> {
    let root = root();
    crate_dirs()
        .into_iter()
        .filter(|(dir, _, _)| {
            let rel = dir.strip_prefix(&root).unwrap_or(dir);
            rel.starts_with("crates") || rel.starts_with("sim") || rel == Path::new("xtask")
        })
        .filter_map(|(dir, name, _)| {
            let files = crate_sources(&dir.join("src"));
            let circle = modules_in_circles(&module_imports(&files));
            (!circle.is_empty()).then_some((name, circle))
        })
        .collect()
}

#[test]
fn no_file_of_a_workspace_crate_imports_in_a_circle() {
    let circles = workspace_import_circles();
    assert!(
        circles.is_empty(),
        "these files import each other in a circle, by crate: {circles:?}; move what several of them share into a leaf module that imports none of them"
    );
}

/// A crate's files from (module, text) pairs.
fn files(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(m, t)| (m.to_string(), t.to_string()))
        .collect()
}

#[test]
fn an_import_circle_is_found_through_groups_and_re_exports() {
    let with_b = |b_imports: &str| -> Vec<(String, String)> {
        files(&[
            (
                "crate",
                "mod a;\nmod b;\nmod c;\npub use a::{Alpha, Other as Renamed};\n",
            ),
            (
                "a",
                "use crate::c::Gamma; // crate::b in a comment is no import\nconst S: &str = \"crate::b\";\n",
            ),
            ("c", "use crate::{b::Beta, error};\n"),
            ("b", b_imports),
        ])
    };
    // b -> a (through the root's re-export) -> c -> b.
    let circle = modules_in_circles(&module_imports(&with_b(
        "fn f() -> crate::Alpha { todo() }\n",
    )));
    assert_eq!(circle, ["a", "b", "c"]);
    let circle = modules_in_circles(&module_imports(&with_b("use crate::{x::{Y, Z}, c::G};\n")));
    assert_eq!(
        circle,
        ["b", "c"],
        "a nested group's head and a later item both count"
    );
    assert!(modules_in_circles(&module_imports(&with_b("use std::fmt;\n"))).is_empty());
}

#[test]
fn an_import_circle_is_found_between_nested_modules() {
    // engine::mm -> engine::stream (by its full path) -> engine::mm (through a group).
    let nested = |stream: &str| {
        files(&[
            ("crate", "mod engine;\n"),
            ("engine", "mod mm;\nmod stream;\n"),
            ("engine::mm", "use crate::engine::stream::Stream;\n"),
            ("engine::stream", stream),
        ])
    };
    let circle = modules_in_circles(&module_imports(&nested(
        "use crate::engine::{mm::{Mm, Desc}, Other};\n",
    )));
    assert_eq!(circle, ["engine::mm", "engine::stream"]);
    assert!(
        modules_in_circles(&module_imports(&nested("use crate::engine::Other;\n"))).is_empty(),
        "naming the parent is no circle while the parent imports nothing"
    );
}

#[test]
fn an_import_circle_is_found_through_super_and_self() {
    let circle = modules_in_circles(&module_imports(&files(&[
        ("crate", "mod engine;\n"),
        ("engine", "mod mm;\nmod stream;\nuse self::mm::Mm;\n"),
        ("engine::mm", "fn f() { super::stream::run() }\n"),
        ("engine::stream", "use super::Shared;\n"),
    ])));
    assert_eq!(
        circle,
        ["engine", "engine::mm", "engine::stream"],
        "a child importing its parent counts when the parent's code imports it back"
    );
    // `super::*` inside a file's `mod inner` names the file's own module, not its parent; a
    // test module's imports and a `pub(in path)` visibility are no imports of the file.
    let tests_only = files(&[
        ("crate", "mod engine;\n"),
        ("engine", "mod mm;\nfn f() { mm::run() }\n"),
        (
            "engine::mm",
            "fn run() {}\nmod inner {\n    use super::*;\n    fn t() { let c = '{'; run() }\n}\n#[cfg(test)]\nmod tests {\n    use crate::engine::Shared;\n}\npub(in crate::engine) fn g() {}\n",
        ),
    ]);
    assert!(modules_in_circles(&module_imports(&tests_only)).is_empty());
    let mut child_uses_parent = tests_only.clone();
    child_uses_parent[2].1.push_str("use super::Shared;\n");
    assert_eq!(
        modules_in_circles(&module_imports(&child_uses_parent)),
        ["engine", "engine::mm"],
        "a parent calling its child by its bare name is an import"
    );
}

#[test]
fn an_import_circle_is_found_through_a_mod_rs_re_export() {
    let circle = modules_in_circles(&module_imports(&files(&[
        ("crate", "mod engine;\nmod report;\n"),
        ("engine", "mod mm;\npub use mm::{Mm, Desc as Descriptor};\n"),
        ("engine::mm", "use crate::report::Line;\n"),
        ("report", "fn f(d: crate::engine::Descriptor) {}\n"),
    ])));
    assert_eq!(circle, ["engine::mm", "report"]);
}

#[test]
fn a_file_module_is_named_by_its_path() {
    // A folder of its own, since `tempfile_dir` is one per process and other tests use it.
    let dir = root()
        .join("target")
        .join(format!("xtask-tidy-modules-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("engine")).expect("make a src tree");
    std::fs::create_dir_all(src.join("bin")).expect("make a src tree");
    for file in ["lib.rs", "engine/mod.rs", "engine/mm.rs", "bin/tool.rs"] {
        std::fs::write(src.join(file), "").expect("write a source");
    }
    let mut modules: Vec<String> = crate_sources(&src).into_iter().map(|(m, _)| m).collect();
    modules.sort();
    assert_eq!(modules, ["crate", "engine", "engine::mm"]);
    let _ = std::fs::remove_dir_all(&dir);
}

// Issue 40, item 5: a newcomer finds each RTL module's tests in one table, in the rtl-tests
// crate's documentation. Six modules have a test file of their own name; the rest are tested
// through the tops that hold them, which nothing but the table says.

/// The stems of the Verilog files directly in `dir` (`hdl/rtl/async_fifo.v` gives
/// `async_fifo`), sorted.
fn verilog_modules(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "v"))
                .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// The rows of the module table in `doc` (a crate's `//!` documentation): each row's module
/// (its first cell, in backticks) and the backticked names in its second cell.
fn rtl_table_rows(doc: &str) -> Vec<(String, Vec<String>)> {
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    doc.lines()
        .filter_map(|l| l.trim_start().strip_prefix("//!"))
        .filter_map(|l| l.trim().strip_prefix('|'))
        .filter_map(|row| {
            let mut cells = row.split('|');
            let module = ticked(cells.next()?).into_iter().next()?;
            Some((module, ticked(cells.next()?)))
        })
        .collect()
}

/// What is wrong with the table in `doc`: a module of `rtl` without a row, a test file named
/// that is not in `tests` (file name and text), or a name that is neither a module of `rtl` or
/// `sim`, nor a test file, nor a function of one.
fn rtl_table_problems(
    doc: &str,
    rtl: &[String],
    sim: &[String],
    tests: &[(String, String)],
) -> Vec<String> {
    let rows = rtl_table_rows(doc);
    let mut problems: Vec<String> = rtl
        .iter()
        .filter(|m| !rows.iter().any(|(r, _)| r == *m))
        .map(|m| format!("hdl/rtl/{m}.v has no row"))
        .collect();
    for (module, names) in &rows {
        for name in names {
            let known = if name.ends_with(".rs") {
                tests.iter().any(|(file, _)| file == name)
            } else {
                rtl.contains(name)
                    || sim.contains(name)
                    || tests.iter().any(|(_, text)| {
                        text.lines()
                            .any(|l| l.trim_start().starts_with(&format!("fn {name}(")))
                    })
            };
            if !known {
                problems.push(format!(
                    "the row of `{module}` names `{name}`, which is no test file, test or module"
                ));
            }
        }
    }
    problems
}

#[test]
fn every_rtl_module_has_a_row_in_the_rtl_tests_table() {
    let rtl = verilog_modules(&root().join("hdl/rtl"));
    let sim = verilog_modules(&root().join("hdl/sim"));
    assert!(rtl.len() >= 17, "the RTL's modules were found: {rtl:?}");
    let mut files = Vec::new();
    files_with_ext(&root().join("crates/rtl-tests/tests"), "rs", &mut files);
    let tests: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
            (name.unwrap_or_default(), read(f))
        })
        .collect();
    let doc = read(&root().join("crates/rtl-tests/src/lib.rs"));
    let problems = rtl_table_problems(&doc, &rtl, &sim, &tests);
    assert!(
        problems.is_empty(),
        "the table of crates/rtl-tests/src/lib.rs (\"Where each module of hdl/rtl is tested\") must give every module of hdl/rtl a row with the test files and tests that exercise it, and name only tests that exist: {problems:?}"
    );
}

#[test]
fn a_module_missing_from_the_rtl_tests_table_is_caught() {
    let rtl = vec!["fifo".to_string(), "top".to_string()];
    let sim = vec!["fifo_tb".to_string()];
    let tests = vec![(
        "fifo.rs".to_string(),
        "#[test]\nfn keeps_order() {}\n".to_string(),
    )];
    let good = "//! | module | tests |\n//! | --- | --- |\n//! | `fifo` | `fifo.rs` (`fifo_tb`: `keeps_order`) |\n//! | `top` | through `fifo` |\n";
    assert!(rtl_table_problems(good, &rtl, &sim, &tests).is_empty());
    let missing = "//! | `fifo` | `fifo.rs` (`keeps_order`) |\n";
    assert_eq!(
        rtl_table_problems(missing, &rtl, &sim, &tests),
        vec!["hdl/rtl/top.v has no row".to_string()]
    );
    let stale = format!("{good}//! | `top` | `top.rs`, `loses_nothing` |\n");
    assert_eq!(rtl_table_problems(&stale, &rtl, &sim, &tests).len(), 2);
}

// A source file belongs to one crate. A `#[path = "..."]` that reaches into another crate's
// folder compiles that file into both, where neither manifest says so, and a change to it
// rebuilds and retests a crate that does not own it; shared code goes in a crate (or a module
// of one) that the others depend on instead.

/// The targets of the `#[path = "..."]` attributes in `text` (also inside `cfg_attr`), with
/// their lines (from 1), comments left out.
fn path_attributes(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if !code.contains("#[path") && !code.contains("cfg_attr") {
            continue;
        }
        for (at, _) in code.match_indices("path") {
            let rest = code[at + "path".len()..].trim_start();
            let Some(rest) = rest.strip_prefix('=') else {
                continue;
            };
            let Some(rest) = rest.trim_start().strip_prefix('"') else {
                continue;
            };
            if let Some(end) = rest.find('"') {
                out.push((i + 1, rest[..end].to_string()));
            }
        }
    }
    out
}

/// `path` with its `.` and `..` components folded away, without touching the file system.
fn folded(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The `#[path]` attributes of `file` (with `text`, in the crate whose folder is `crate_dir`)
/// whose target lies outside that folder. A module's path is taken relative to the folder of
/// the file that declares it, as it is for a module outside inline `mod` blocks; inside one it
/// lies deeper, never higher, so an attribute this lets pass stays inside.
fn paths_out_of_crate(file: &Path, text: &str, crate_dir: &Path) -> Vec<String> {
    let dir = file.parent().unwrap_or(crate_dir);
    path_attributes(text)
        .into_iter()
        .filter(|(_, target)| !folded(&dir.join(target)).starts_with(folded(crate_dir)))
        .map(|(line, target)| format!("{}:{line}: #[path = \"{target}\"]", rel(file)))
        .collect()
}

#[test]
fn no_path_attribute_reaches_out_of_its_crate() {
    let crates: Vec<PathBuf> = crate_dirs().into_iter().map(|(dir, _, _)| dir).collect();
    let mut files = Vec::new();
    for dir in ["crates", "sim"] {
        files_with_ext(&root().join(dir), "rs", &mut files);
    }
    assert!(files.len() > 100, "the sources were found: {}", files.len());
    let mut bad = Vec::new();
    for file in &files {
        // The innermost crate folder that holds the file is its crate's.
        let Some(owner) = crates
            .iter()
            .filter(|d| file.starts_with(d))
            .max_by_key(|d| d.components().count())
        else {
            bad.push(format!("{} is in no crate", rel(file)));
            continue;
        };
        bad.extend(paths_out_of_crate(file, &read(file), owner));
    }
    assert!(
        bad.is_empty(),
        "a #[path] attribute compiles another crate's file into this one; put shared code in a crate that both depend on: {bad:?}"
    );
}

#[test]
fn a_path_attribute_out_of_its_crate_is_caught() {
    let krate = Path::new("/w/crates/tool");
    let main = krate.join("src/main.rs");
    let text = "#[cfg(test)]\n#[path = \"../../other/testing/check.rs\"]\nmod check;\n\
                #[cfg_attr(unix, path = \"../../other/unix.rs\")]\nmod os;\n\
                // #[path = \"../../other/old.rs\"] in a comment is fine\n\
                #[path = \"gen/table.rs\"]\nmod table;\n#[path = \"../tests/common/mod.rs\"]\nmod common;\n";
    let found = paths_out_of_crate(&main, text, krate);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].ends_with(":2: #[path = \"../../other/testing/check.rs\"]"));
    assert!(found[1].ends_with(":4: #[path = \"../../other/unix.rs\"]"));
}

/// The hierarchical references (`inst.signal`) in Verilog source, comments and strings left
/// out, with their line numbers.
fn hierarchical_references(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut in_block = false;
    for (n, line) in text.lines().enumerate() {
        let mut code = String::new();
        let mut rest = line;
        loop {
            if in_block {
                match rest.find("*/") {
                    Some(i) => {
                        in_block = false;
                        rest = &rest[i + 2..];
                    }
                    None => break,
                }
            } else {
                let block = rest.find("/*");
                let line_comment = rest.find("//");
                let string = rest.find('"');
                let first = [block, line_comment, string].into_iter().flatten().min();
                match first {
                    None => {
                        code.push_str(rest);
                        break;
                    }
                    Some(i) => {
                        code.push_str(&rest[..i]);
                        let tail = &rest[i..];
                        if let Some(after) = tail.strip_prefix("/*") {
                            in_block = true;
                            rest = after;
                        } else if tail.starts_with("//") {
                            break;
                        } else {
                            // A string: skip to its end.
                            match tail[1..].find('"') {
                                Some(j) => rest = &tail[j + 2..],
                                None => break,
                            }
                        }
                    }
                }
            }
        }
        let b = code.as_bytes();
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        for i in 1..b.len().saturating_sub(1) {
            if b[i] == b'.'
                && ident(b[i - 1])
                && (b[i + 1].is_ascii_alphabetic() || b[i + 1] == b'_')
            {
                // The identifier before the dot must not be a number (`1.5`).
                let start = (0..i)
                    .rev()
                    .take_while(|&k| ident(b[k]))
                    .last()
                    .unwrap_or(i);
                if b[start].is_ascii_alphabetic() || b[start] == b'_' {
                    let end = (i + 1..b.len())
                        .take_while(|&k| ident(b[k]))
                        .last()
                        .unwrap_or(i);
                    found.push((n + 1, code[start..=end].to_string()));
                }
            }
        }
    }
    found
}

/// A proof wrapper sees its module through the module's ports only. Yosys reads a
/// hierarchical reference into an instance (`dut.state_reg`) as a wire of that name of its
/// own, driven by nothing: an assertion over it would hold or fail whatever the module did.
#[test]
fn formal_wrappers_reach_their_module_through_its_ports_only() {
    let mut files = Vec::new();
    files_with_ext(&root().join("hdl/formal"), "v", &mut files);
    files_with_ext(&root().join("crates"), "v", &mut files);
    files.retain(|f| f.components().any(|c| c.as_os_str() == "formal"));
    assert!(
        files.len() > 10,
        "the wrappers and property files: {files:?}"
    );
    let bad: Vec<String> = files
        .iter()
        .flat_map(|f| {
            hierarchical_references(&read(f))
                .into_iter()
                .map(move |(n, r)| format!("{}:{n}: {r}", rel(f)))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "hierarchical references in formal sources, which Yosys takes for free wires: {bad:?}"
    );
}

/// The scan finds a reference into an instance and passes over port connections, numbers,
/// comments and strings.
#[test]
fn a_hierarchical_reference_is_found() {
    let text = "    .clk(clk), // dut.note\n    x = 1.5; $display(\"a.b\");\n    assert (dut.state_reg == 0);\n";
    assert_eq!(
        hierarchical_references(text),
        vec![(3, "dut.state_reg".to_string())]
    );
}
