//! Describes every top named in `tops.txt` through the sim-build API (the same one any other
//! crate uses for its own RTL), with the DDR3 model's storage (`cpp/ddr3_mem.cpp`) beside
//! them, and writes the `Top` enum. Each top is verilated and compiled the first time a test
//! makes a model of it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sim_build::{Build, BuildError, TopSpec};

fn main() {
    if let Err(e) = run() {
        e.emit();
    }
}

fn run() -> Result<(), BuildError> {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    // The workspace: this crate lives in sim/card-sim.
    let root = manifest
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest.clone());
    let out = PathBuf::from(env("OUT_DIR"));
    let cpp_dir = manifest.join("cpp");

    // The RTL is not watched: a top is built from it the first time a test makes a model of
    // it (sim-build's recipes), so editing it rebuilds no crate.
    println!("cargo::rerun-if-changed=tops.txt");
    println!("cargo::rerun-if-changed=cpp");
    let list = manifest.join("tops.txt");
    let text = std::fs::read_to_string(&list).map_err(|e| BuildError::Io {
        path: list.clone(),
        message: e.to_string(),
    })?;
    // A randomized top (`--x-initial unique`) reads hdl/rtl without its declaration
    // initialisers, so that a register the design never resets starts at a random value
    // there, as it may on the device after a reset that is not a configuration.
    // A netlist top reads, before the module's own file, what `cargo xtask synth` wrote for
    // it (`netlist_files`).
    let tops = sim_build::parse_tops(&text, "sim/card-sim/tops.txt")?
        .into_iter()
        .map(|t| {
            let file = top_file(&root, t.module_name())?;
            let t = netlist_files(t.top_name())
                .into_iter()
                .fold(t, |t, f| t.file(f));
            let t = t.file(file).lib_dir("hdl/rtl").lib_dir("hdl/sim");
            Ok(if t.is_randomized() {
                t.strip_initialisers("hdl/rtl")
            } else {
                t
            })
        })
        .collect::<Result<Vec<TopSpec>, BuildError>>()?;
    let names: Vec<String> = tops.iter().map(|t| t.top_name().to_string()).collect();

    let built = Build::new()
        .base_dir(&root)
        // The DDR3 model's storage behind its DPI-C imports, a named memory of kind "ddr3".
        .cpp(cpp_dir.join("ddr3_mem.cpp"))
        // The RTL folders are each top's (see above).
        .include("hdl/include")
        .flag("hdl/lint.vlt")
        // The card's RTL is linted at -Wall by `cargo xtask lint`.
        .warnings(false)
        .tops(tops)
        .compile()?;

    let mut rs = String::from(
        "/// The verilated tops of card-sim, one per line of `sim/card-sim/tops.txt`.\n\
         #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n\
         #[non_exhaustive]\npub enum Top {\n",
    );
    for b in &built.tops {
        let _ = writeln!(
            rs,
            "    /// The RTL module `{}` as top `{}`.\n    {},",
            b.module,
            b.name,
            camel(&b.name)
        );
    }
    rs.push_str(
        "}\n\nimpl Top {\n    /// Every top of this build.\n    pub const ALL: &'static [Top] = &[",
    );
    for b in &built.tops {
        let _ = write!(rs, "Top::{}, ", camel(&b.name));
    }
    rs.push_str("];\n\n    /// The top's name.\n    pub fn name(self) -> &'static str {\n        self.def().name()\n    }\n\n");
    rs.push_str("    /// The top as a [`TopDef`].\n    pub fn def(self) -> TopDef {\n        match self {\n");
    for b in &built.tops {
        // A top with a randomized twin carries it, so that any model of it honours SIM_X.
        let twin = format!("{}_x", b.name);
        let mut with_twin = if names.contains(&twin) {
            format!(".with_randomized(&own::{})", twin.to_ascii_uppercase())
        } else {
            String::new()
        };
        // And its netlist twin, so that any model of it honours SIM_NETLIST.
        let nl = format!("{}_nl", b.name);
        if names.contains(&nl) {
            let _ = write!(
                with_twin,
                ".with_netlist(&own::{})",
                nl.to_ascii_uppercase()
            );
        }
        let _ = writeln!(
            rs,
            "            Top::{} => own::{}{with_twin},",
            camel(&b.name),
            b.constant
        );
    }
    rs.push_str("        }\n    }\n\n");
    rs.push_str(
        "    /// The randomized build of this top (`<name>_x` in `sim/card-sim/tops.txt`), if there is one.\n    pub fn randomized(self) -> Option<Top> {\n        match self {\n",
    );
    for n in &names {
        let twin = format!("{n}_x");
        if names.contains(&twin) {
            let _ = writeln!(
                rs,
                "            Top::{} => Some(Top::{}),",
                camel(n),
                camel(&twin)
            );
        }
    }
    rs.push_str("            _ => None,\n        }\n    }\n}\n");
    sim_build::write_if_changed(&out.join("tops.rs"), &rs)?;
    Ok(())
}

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_default()
}

/// The card's own convention: a top's module lives in `hdl/rtl/<module>.v` or
/// `hdl/sim/<module>.v` (other crates name their files freely).
fn top_file(root: &Path, module: &str) -> Result<PathBuf, BuildError> {
    ["hdl/rtl", "hdl/sim"]
        .iter()
        .flat_map(|dir| ["v", "sv"].map(|ext| Path::new(dir).join(format!("{module}.{ext}"))))
        .find(|p| root.join(p).is_file())
        .ok_or_else(|| BuildError::BadTop {
            top: module.to_string(),
            problem: format!("sim/card-sim/tops.txt names module `{module}`, but there is no hdl/rtl/{module}.v or hdl/sim/{module}.v"),
        })
}

fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// What a netlist top reads before its module's own file, or nothing for another top: what
/// `cargo xtask synth` wrote (a card variant's wrapper that is card_core there, so that the
/// RTL's card_core is never read, and its netlist; or the seeded FIFOs' netlists), then the
/// project's model of the block RAM, which Yosys's models declare without contents, first
/// (Verilator keeps the first of two modules of one name: the line's -Wno-MODDUP), and Yosys's
/// models of the 7-series primitives.
fn netlist_files(name: &str) -> Vec<String> {
    let mut files = if let Some(v) = name
        .strip_prefix("sim_top_")
        .and_then(|n| n.strip_suffix("_nl"))
    {
        vec![
            format!("target/synth/card_core_netlist_{v}.v"),
            format!("target/synth/card_core_{v}.v"),
        ]
    } else if name == "fifo_mismatch_tb_netlist" {
        (0..5)
            .map(|k| format!("target/synth/seeded/frame_source_fifo_m{k}.v"))
            .collect()
    } else {
        return Vec::new();
    };
    files.push("hdl/sim/netlist/RAMB36E1.v".into());
    files.push("target/synth/cells_sim.v".into());
    files
}
