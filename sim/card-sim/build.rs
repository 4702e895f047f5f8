//! Verilates every top named in `tops.txt` through the sim-build API (the same one any other
//! crate uses for its own RTL), with the DDR3 model's storage (`cpp/ddr3_mem.cpp`) beside
//! them, and writes the `Top` enum.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sim_build::{Build, BuildError, Top};

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

    // Cargo scans a directory given here recursively, so any change under hdl/ re-verilates
    // (sim-build also watches every file Verilator read).
    println!("cargo::rerun-if-changed={}", root.join("hdl").display());
    println!("cargo::rerun-if-changed=tops.txt");
    println!("cargo::rerun-if-changed=cpp");
    let list = manifest.join("tops.txt");
    let text = std::fs::read_to_string(&list).map_err(|e| BuildError::Io {
        path: list.clone(),
        message: e.to_string(),
    })?;
    // A randomized top (`--x-initial unique`) reads hdl/rtl without its declaration
    // initialisers, from a copy in OUT_DIR, so that a register the design never resets starts
    // at a random value there, as it may on the device after a reset that is not a
    // configuration.
    let stripped = out.join("rtl_x");
    let mut stripped_made = false;
    let tops = sim_build::parse_tops(&text, "sim/card-sim/tops.txt")?
        .into_iter()
        .map(|t| {
            let file = top_file(&root, t.module_name())?;
            if !randomized(&t) {
                return Ok(t.file(file).lib_dir("hdl/rtl").lib_dir("hdl/sim"));
            }
            if !stripped_made {
                strip_initialisers(&root, &stripped)?;
                stripped_made = true;
            }
            let file = match file.strip_prefix("hdl/rtl") {
                Ok(name) => stripped.join(name),
                Err(_) => file,
            };
            Ok(t.file(file).lib_dir(&stripped).lib_dir("hdl/sim"))
        })
        .collect::<Result<Vec<Top>, BuildError>>()?;
    let names: Vec<String> = tops.iter().map(|t| t.top_name().to_string()).collect();

    let built = Build::new()
        .base_dir(&root)
        // The DDR3 model's storage behind its DPI-C imports, a named memory of kind "ddr3".
        .cpp(cpp_dir.join("ddr3_mem.cpp"))
        // The RTL folders are each top's (see above); a randomized top must not find the
        // original RTL first.
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
        // A top with a randomized twin carries it, so that any model of it honours CARD_SIM_X.
        let twin = format!("{}_x", b.name);
        let with_twin = if names.contains(&twin) {
            format!(".with_randomized(&own::{})", twin.to_ascii_uppercase())
        } else {
            String::new()
        };
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
    // The generated code of the card's tops and the Verilator that made it, for benches that
    // drive one from plain C++ (`DEP_CARD_SIM_VL`, `DEP_CARD_SIM_VERILATOR_ROOT`).
    println!("cargo::metadata=vl={}", out.join("vl").display());
    println!(
        "cargo::metadata=verilator_root={}",
        env("DEP_SIM_RUNTIME_VERILATOR_ROOT")
    );
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

/// Whether a top is built with random initial values, and so from RTL without initialisers.
fn randomized(t: &Top) -> bool {
    t.flags()
        .windows(2)
        .any(|w| w[0] == "--x-initial" && w[1] == "unique")
}

/// Copies `hdl/rtl` into `dir` with the initialisers of `reg` declarations removed
/// (`reg [3:0] a = 4'd0, b;` becomes `reg [3:0] a, b;`), for the randomized tops: on the FPGA
/// an initialiser is the value at configuration only, so a register that must start from a
/// known value after a reset needs a reset, and without the initialiser the randomized build
/// shows the ones that lack it.
fn strip_initialisers(root: &Path, dir: &Path) -> Result<(), BuildError> {
    let io = |path: &Path, e: std::io::Error| BuildError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let src = root.join("hdl/rtl");
    let entries = std::fs::read_dir(&src).map_err(|e| io(&src, e))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "v") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
        let out: String = text.lines().map(|l| strip_line(l) + "\n").collect();
        let name = dir.join(entry.file_name());
        sim_build::write_if_changed(&name, &out)?;
    }
    Ok(())
}

/// One line of RTL with any `= value` of a `reg` declaration dropped (brace-aware, so a
/// concatenation's commas do not end the value).
fn strip_line(line: &str) -> String {
    let (code, comment) = match line.find("//") {
        Some(i) => line.split_at(i),
        None => (line, ""),
    };
    let t = code.trim_start();
    let is_reg = t.starts_with("reg ") || (t.starts_with("(*") && t.contains(" reg "));
    if !is_reg || !t.trim_end().ends_with(';') {
        return line.to_string();
    }
    let mut out = String::new();
    let mut depth = 0i32;
    let mut skipping = false;
    for c in code.chars() {
        match c {
            '{' | '(' => depth += 1,
            '}' | ')' => depth -= 1,
            _ => {}
        }
        if skipping {
            if depth == 0 && (c == ',' || c == ';') {
                skipping = false;
                out.push(c);
            }
            continue;
        }
        if c == '=' && depth == 0 {
            skipping = true;
            while out.ends_with(' ') {
                out.pop();
            }
            continue;
        }
        out.push(c);
    }
    out + comment
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
