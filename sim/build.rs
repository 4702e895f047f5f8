//! Verilates every top named in `tops.txt`, compiles the generated C++ with `cc`, and binds it
//! to Rust through `cxx`.
//!
//! The names of Verilator's generated files change between releases, so none is written here:
//! `--make json` lists them, and the only file opened by name is the documented top header
//! `V<top>.h`, whose `VL_IN*`/`VL_OUT*` lines give the port table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use verilator_find::Verilator;

/// The generated sources of one verilated top, as `--make json` lists them.
struct Verilated {
    top: String,
    mdir: PathBuf,
    global: Vec<PathBuf>,
    fast: Vec<PathBuf>,
    slow: Vec<PathBuf>,
    ldflags: Vec<String>,
    ports: Vec<Port>,
}

struct Port {
    name: String,
    width: u32,
    output: bool,
}

fn main() {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let root = manifest
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest.clone());
    let out = PathBuf::from(env("OUT_DIR"));

    // Cargo scans a directory given here recursively, so any change under hdl/ re-verilates and
    // nothing else does.
    println!("cargo::rerun-if-changed={}", root.join("hdl").display());
    println!("cargo::rerun-if-changed=tops.txt");
    println!("cargo::rerun-if-changed=cpp");
    println!("cargo::rerun-if-changed=src/ffi.rs");
    println!("cargo::rerun-if-env-changed=VERILATOR_ROOT");
    println!("cargo::rerun-if-env-changed=VERILATOR_VERSION");

    let verilator = match verilator_find::find(&root) {
        Ok(v) => v,
        Err(e) => {
            println!("cargo::error={e}");
            return;
        }
    };
    // The local install appears after `cargo xtask setup`; watching its folder lets a build that
    // failed for want of it succeed once it is there.
    println!(
        "cargo::rerun-if-changed={}",
        verilator_find::local_install_dir(&root).display()
    );

    let tops = match read_tops(&manifest.join("tops.txt")) {
        Ok(t) => t,
        Err(e) => {
            println!("cargo::error={e}");
            return;
        }
    };
    let mut built = Vec::new();
    for top in &tops {
        match verilate(&verilator, &root, &out, top) {
            Ok(v) => built.push(v),
            Err(e) => {
                println!("cargo::error={e}");
                return;
            }
        }
    }
    if let Err(e) = compile(&verilator, &manifest, &out, &built) {
        println!("cargo::error={e}");
    }
}

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_default()
}

/// One line of `tops.txt`: a module built as it is (`name`), or a variant of a module with
/// parameters overridden (`name = module PARAM=value ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct TopSpec {
    /// The top's name: the model's `Top` variant and its generated class `V<name>`.
    name: String,
    /// The RTL module it builds.
    module: String,
    /// Parameter overrides, passed to Verilator as `-G<param>=<value>`.
    params: Vec<(String, String)>,
    /// Extra Verilator options (`--name` or `--name value`), after the defaults.
    flags: Vec<String>,
}

impl TopSpec {
    /// A top built with random initial values (`--x-initial unique`): its RTL is read with the
    /// declaration initialisers removed (see `strip_initialisers`).
    fn randomized(&self) -> bool {
        self.flags
            .windows(2)
            .any(|w| w[0] == "--x-initial" && w[1] == "unique")
    }
}

fn parse_top(line: &str) -> Result<TopSpec, String> {
    let Some((name, rest)) = line.split_once('=') else {
        return Ok(TopSpec {
            name: line.to_string(),
            module: line.to_string(),
            params: Vec::new(),
            flags: Vec::new(),
        });
    };
    let mut words = rest.split_whitespace().peekable();
    let module = words
        .next()
        .ok_or_else(|| format!("sim/tops.txt: `{line}` names no module after `=`"))?;
    let mut params = Vec::new();
    let mut flags = Vec::new();
    while let Some(w) = words.next() {
        if w.starts_with("--") {
            flags.push(w.to_string());
            if let Some(v) = words.next_if(|v| !v.starts_with("--") && !v.contains('=')) {
                flags.push(v.to_string());
            }
            continue;
        }
        let (k, v) = w.split_once('=').ok_or_else(|| {
            format!(
                "sim/tops.txt: `{w}` in `{line}` is neither a PARAM=value override nor a --flag"
            )
        })?;
        params.push((k.to_string(), v.to_string()));
    }
    Ok(TopSpec {
        name: name.trim().to_string(),
        module: module.to_string(),
        params,
        flags,
    })
}

/// Copies `hdl/rtl` into `dir` with the initialisers of `reg` declarations removed
/// (`reg [3:0] a = 4'd0, b;` becomes `reg [3:0] a, b;`), for the randomized tops: on the FPGA
/// an initialiser is the value at configuration only, so a register that must start from a
/// known value after a reset needs a reset, and without the initialiser the randomized build
/// shows the ones that lack it.
fn strip_initialisers(root: &Path, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let src = root.join("hdl/rtl");
    let entries =
        std::fs::read_dir(&src).map_err(|e| format!("cannot read {}: {e}", src.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "v") {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let out: String = text.lines().map(|l| strip_line(l) + "\n").collect();
        let name = dir.join(entry.file_name());
        write_if_changed(&name, &out)?;
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

fn read_tops(path: &Path) -> Result<Vec<TopSpec>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(parse_top)
        .collect()
}

fn top_file(root: &Path, top: &str) -> Result<PathBuf, String> {
    ["hdl/rtl", "hdl/sim"]
        .iter()
        .flat_map(|dir| ["v", "sv"].map(|ext| root.join(dir).join(format!("{top}.{ext}"))))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!("top `{top}` of sim/tops.txt has no file hdl/rtl/{top}.v or hdl/sim/{top}.v")
        })
}

fn verilate(v: &Verilator, root: &Path, out: &Path, spec: &TopSpec) -> Result<Verilated, String> {
    let top = spec.name.as_str();
    let file = top_file(root, &spec.module)?;
    let mdir = out.join("vl").join(top);
    std::fs::create_dir_all(&mdir).map_err(|e| format!("cannot create {}: {e}", mdir.display()))?;
    let prefix = format!("V{top}");
    // A randomized top reads the RTL without its initialisers.
    let (rtl_dir, file) = if spec.randomized() {
        let dir = out.join("rtl_no_init");
        strip_initialisers(root, &dir)?;
        let f = dir.join(format!("{}.v", spec.module));
        let f = if f.is_file() { f } else { file };
        (dir.display().to_string(), f)
    } else {
        ("hdl/rtl".to_string(), file)
    };
    let output = v
        .command()
        .current_dir(root)
        .args([
            "--cc",
            "--make",
            "json",
            "--trace-fst",
            "--no-timing",
            "--assert",
        ])
        // Warnings are the lint task's job (`cargo xtask lint`, -Wall); here they must not stop
        // a build that the user asked for while iterating.
        .args([
            "-Wno-fatal",
            "-O3",
            "--x-assign",
            "fast",
            "--x-initial",
            "fast",
        ])
        .args([
            format!("-I{rtl_dir}").as_str(),
            "-Ihdl/sim",
            "-Ihdl/include",
            "-y",
        ])
        .arg(&rtl_dir)
        .args(["-y", "hdl/sim"])
        .args(["--quiet", "hdl/lint.vlt"])
        .args(spec.params.iter().map(|(k, v)| format!("-G{k}={v}")))
        .args(&spec.flags)
        .args(["--top-module", &spec.module, "--prefix", &prefix, "-Mdir"])
        .arg(&mdir)
        .arg(&file)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", v.bin.display()))?;
    if !output.status.success() {
        return Err(format!(
            "verilator failed on {}:\n{}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let json_path = mdir.join(format!("{prefix}.json"));
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&json_path)
            .map_err(|e| format!("cannot read {}: {e}", json_path.display()))?,
    )
    .map_err(|e| format!("bad JSON in {}: {e}", json_path.display()))?;
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
    let header = mdir.join(format!("{prefix}.h"));
    let ports = parse_ports(
        &std::fs::read_to_string(&header)
            .map_err(|e| format!("cannot read {}: {e}", header.display()))?,
    );
    if ports.is_empty() {
        return Err(format!("no ports found in {}", header.display()));
    }
    Ok(Verilated {
        top: top.to_string(),
        mdir,
        global: list("global"),
        fast,
        slow,
        ldflags,
        ports,
    })
}

/// Reads `VL_IN8(&clk,0,0);`, `VL_OUTW(&data,127,0,4);` and the like from a top header.
fn parse_ports(header: &str) -> Vec<Port> {
    header
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let output = if line.starts_with("VL_OUT") {
                true
            } else if line.starts_with("VL_IN") {
                // VL_INOUT is listed as an output: Rust may read it, and it is never driven here.
                line.starts_with("VL_INOUT")
            } else {
                return None;
            };
            let args = line.split_once("(&")?.1.split_once(')')?.0;
            let mut parts = args.split(',');
            let name = parts.next()?.trim().to_string();
            let msb: u32 = parts.next()?.trim().parse().ok()?;
            let lsb: u32 = parts.next()?.trim().parse().ok()?;
            Some(Port {
                name,
                width: msb - lsb + 1,
                output,
            })
        })
        .collect()
}

/// Writes the per-top C++ glue and the Rust `Top` enum.
fn generate(out: &Path, built: &[Verilated]) -> Result<PathBuf, String> {
    let mut cpp = String::from(
        "// Generated by card-sim's build.rs from sim/tops.txt and the verilated headers.\n\
         #include \"model_impl.h\"\n",
    );
    for b in built {
        let _ = writeln!(cpp, "#include \"V{}.h\"", b.top);
    }
    cpp.push_str("\nnamespace card_sim {\nnamespace {\n");
    for b in built {
        let _ = writeln!(
            cpp,
            "void ports_{t}(V{t}& t, rust::Vec<PortDesc>& v) {{",
            t = b.top
        );
        for p in &b.ports {
            // Wide ports are VlWide arrays; their first word is where the storage starts.
            let addr = if p.width > 64 {
                format!("&t.{}.at(0)", p.name)
            } else {
                format!("&t.{}", p.name)
            };
            let _ = writeln!(
                cpp,
                "    push_port(v, \"{}\", {}, {}, {addr});",
                p.name, p.width, p.output
            );
        }
        cpp.push_str("}\n");
    }
    cpp.push_str("}  // namespace\n\n");
    cpp.push_str(
        "std::unique_ptr<SimModel> new_model(rust::Str top, rust::Str name, rust::Str waves, uint64_t seed) {\n",
    );
    for b in built {
        let _ = writeln!(
            cpp,
            "    if (top == rust::Str(\"{t}\")) return std::unique_ptr<SimModel>(new ModelImpl<V{t}>(ports_{t}, name, waves, seed));",
            t = b.top
        );
    }
    cpp.push_str(
        "    throw RtlError(\"no verilated top named \" + std::string(top) + \" in this build: add it to sim/tops.txt\");\n}\n\n",
    );
    cpp.push_str("rust::Vec<rust::String> top_names() {\n    rust::Vec<rust::String> v;\n");
    for b in built {
        let _ = writeln!(cpp, "    v.push_back(rust::String(\"{}\"));", b.top);
    }
    cpp.push_str("    return v;\n}\n\n}  // namespace card_sim\n");
    let cpp_path = out.join("models.cpp");
    write_if_changed(&cpp_path, &cpp)?;

    let mut rs = String::from(
        "/// The verilated tops of this build, one per line of `sim/tops.txt`.\n\
         #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]\n\
         #[non_exhaustive]\npub enum Top {\n",
    );
    for b in built {
        let _ = writeln!(
            rs,
            "    /// The RTL module `{}`.\n    {},",
            b.top,
            camel(&b.top)
        );
    }
    rs.push_str(
        "}\n\nimpl Top {\n    /// Every top of this build.\n    pub const ALL: &'static [Top] = &[",
    );
    for b in built {
        let _ = write!(rs, "Top::{}, ", camel(&b.top));
    }
    rs.push_str("];\n\n    /// The RTL module name.\n    pub fn name(self) -> &'static str {\n        match self {\n");
    for b in built {
        let _ = writeln!(rs, "            Top::{} => \"{}\",", camel(&b.top), b.top);
    }
    rs.push_str("        }\n    }\n\n");
    rs.push_str(
        "    /// The randomized build of this top (`<name>_x` in `sim/tops.txt`), if there is one.\n    pub fn randomized(self) -> Option<Top> {\n        match self {\n",
    );
    for b in built {
        let twin = format!("{}_x", b.top);
        if built.iter().any(|o| o.top == twin) {
            let _ = writeln!(
                rs,
                "            Top::{} => Some(Top::{}),",
                camel(&b.top),
                camel(&twin)
            );
        }
    }
    rs.push_str("            _ => None,\n        }\n    }\n}\n");
    write_if_changed(&out.join("tops.rs"), &rs)?;
    Ok(cpp_path)
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

/// Keeps a file's timestamp when its text is unchanged, so cc does not recompile it.
fn write_if_changed(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn base_build(v: &Verilator, built: &[Verilated]) -> cc::Build {
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++20")
        .include(v.include_dir())
        .include(v.include_dir().join("vltstd"))
        .define("VERILATOR", "1")
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TIMING", "0")
        .define("VM_TRACE", "1")
        .define("VM_TRACE_FST", "1")
        .define("VM_TRACE_VCD", "0")
        .define("VM_TRACE_SAIF", "0")
        .flag_if_supported("-faligned-new")
        .flag_if_supported("-fcf-protection=none")
        // Generated code trips many harmless warnings; the RTL is linted separately.
        .warnings(false)
        .extra_warnings(false);
    for m in built {
        b.include(&m.mdir);
    }
    for key in ["DEP_LZ4_INCLUDE", "DEP_Z_INCLUDE"] {
        for dir in env(key).split(',').filter(|d| !d.is_empty()) {
            b.include(dir);
        }
    }
    b
}

fn compile(v: &Verilator, manifest: &Path, out: &Path, built: &[Verilated]) -> Result<(), String> {
    let models_cpp = generate(out, built)?;
    let cpp_dir = manifest.join("cpp");
    let version = v.version.to_string();

    // The static libraries are linked in the order they are compiled here, and each may only
    // use symbols of the ones after it: bridge -> verilated tops -> Verilator runtime.
    let mut bridge = cxx_build::bridge("src/ffi.rs");
    bridge
        .std("c++20")
        .include(&cpp_dir)
        .file(&models_cpp)
        .include(v.include_dir())
        .include(v.include_dir().join("vltstd"));
    for m in built {
        bridge.include(&m.mdir);
    }
    for (k, val) in [
        ("VM_TRACE", "1"),
        ("VM_TRACE_FST", "1"),
        ("VM_SC", "0"),
        ("VM_COVERAGE", "0"),
        ("VM_TIMING", "0"),
    ] {
        bridge.define(k, val);
    }
    bridge.warnings(false).opt_level(2);
    let mut inputs = vec![manifest.join("src/ffi.rs"), models_cpp.clone()];
    inputs.extend(files_in(&cpp_dir));
    compile_cached(&bridge, "card_sim_bridge", &inputs, &[&version], out)?;

    // One library per top, so that an RTL change recompiles only the tops whose generated code
    // changed. Per-cycle code gets full optimisation (tests spend their time there); slow code
    // (constructors, initial blocks) runs once, and optimising it only costs build time.
    for m in built {
        let mut fast = base_build(v, built);
        fast.opt_level(2).files(&m.fast);
        compile_cached(
            &fast,
            &format!("card_sim_vl_{}_fast", m.top),
            &m.fast,
            &[&version],
            out,
        )?;
        let mut slow = base_build(v, built);
        slow.opt_level(0).files(&m.slow);
        compile_cached(
            &slow,
            &format!("card_sim_vl_{}_slow", m.top),
            &m.slow,
            &[&version],
            out,
        )?;
    }

    // The runtime is compiled once for all tops, with the hooks that turn $stop/$fatal into
    // exceptions and capture what the RTL prints.
    let mut runtime = base_build(v, built);
    runtime
        .opt_level(2)
        .include(&cpp_dir)
        .define("VL_USER_STOP", None)
        .define("VL_USER_FATAL", None)
        .define("VL_USER_FINISH", None)
        .define("VL_PRINTF", "card_sim_vl_printf")
        .flag("-include")
        .flag(cpp_dir.join("hooks.h").to_string_lossy().as_ref())
        .file(cpp_dir.join("hooks.cpp"));
    // The DDR3 model's storage sits here too: the tops call it through DPI and the bridge
    // through the backdoor, and the runtime is the library linked after both.
    runtime.file(cpp_dir.join("ddr3_mem.cpp"));
    let mut inputs = vec![
        cpp_dir.join("hooks.cpp"),
        cpp_dir.join("hooks.h"),
        cpp_dir.join("ddr3_mem.cpp"),
        cpp_dir.join("ddr3_mem.h"),
    ];
    // Runtime files are the same for every top, but a top without DPI does not list
    // verilated_dpi.cpp; the union of all lists has each file once.
    let mut global: Vec<PathBuf> = Vec::new();
    for m in built {
        for f in &m.global {
            if !global.iter().any(|g| g.file_name() == f.file_name()) {
                global.push(f.clone());
            }
        }
    }
    runtime.files(&global);
    inputs.extend(global.iter().cloned());
    compile_cached(&runtime, "card_sim_vl_runtime", &inputs, &[&version], out)?;

    // Verilator asks for -lz (and its makefile for -llz4) for the FST writer; both come from
    // the lz4-sys and libz-sys dependencies instead. Any other library it names is linked.
    let mut libs: Vec<&str> = built
        .iter()
        .flat_map(|m| m.ldflags.iter().filter_map(|f| f.strip_prefix("-l")))
        .filter(|l| !matches!(*l, "z" | "lz4"))
        .collect();
    libs.sort_unstable();
    libs.dedup();
    for lib in libs {
        println!("cargo::rustc-link-lib={lib}");
    }
    println!("cargo::rustc-link-lib=pthread");
    // Tells card-sim's Rust side which tops exist and where its build keeps waveforms.
    println!("cargo::rustc-env=CARD_SIM_OUT_DIR={}", out.display());
    Ok(())
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// Compiles `build` into `lib<name>.a` unless the same inputs built it last time.
///
/// cc recompiles every file whenever the build script runs; the Verilator runtime alone takes
/// about a minute, so an RTL edit would cost that each time. The stamp holds a hash of every
/// input's contents and of `extra` (the Verilator version); a match reuses the library.
fn compile_cached(
    build: &cc::Build,
    name: &str,
    inputs: &[PathBuf],
    extra: &[&str],
    out: &Path,
) -> Result<(), String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for input in inputs {
        input.hash(&mut h);
        std::fs::read(input)
            .map_err(|e| format!("cannot read {}: {e}", input.display()))?
            .hash(&mut h);
    }
    extra.hash(&mut h);
    env("PROFILE").hash(&mut h);
    env("TARGET").hash(&mut h);
    let stamp = format!("{:016x}", h.finish());
    let stamp_path = out.join(format!("{name}.stamp"));
    let lib = out.join(format!("lib{name}.a"));
    if lib.is_file() && std::fs::read_to_string(&stamp_path).ok().as_deref() == Some(&stamp) {
        println!("cargo::rustc-link-search=native={}", out.display());
        println!("cargo::rustc-link-lib=static={name}");
        return Ok(());
    }
    build
        .try_compile(name)
        .map_err(|e| format!("compiling {name} failed: {e}"))?;
    std::fs::write(&stamp_path, stamp)
        .map_err(|e| format!("cannot write {}: {e}", stamp_path.display()))
}
