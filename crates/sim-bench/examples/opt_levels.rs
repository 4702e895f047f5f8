//! The C++ optimisation of the tops' per-cycle code, chosen by measurement: for each level
//! (`SIM_OPT_LEVEL` 3, 2, s; more as arguments), the compile time (wall and CPU seconds of
//! verilating, compiling and linking) and the speed of sim_top (the plain C++ LOOP workload of
//! cpp/baseline.cpp compiled into the same library, so the Rust side costs nothing) and of
//! card_core (idle after reset under both clocks, through `Model`), side by side in one run.
//! Each level builds into a cache of its own under `target/opt-levels/`, so nothing is shared
//! between levels but the Verilator runtime, which is built first and not counted.
//!
//! `cargo run --release -p sim-bench --example opt_levels [-- LEVEL ...]`

use std::path::{Path, PathBuf};
use std::time::Instant;

use card_sim::{Library, Model, Top, TopDef};
use sim_build::{build_library, Recipe};

const BASELINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/cpp/baseline.cpp");
const CARD_CORE_CYCLES: u64 = 200_000;
const LOOP_FRAMES: u64 = 300;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("opt_levels: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut levels: Vec<String> = std::env::args().skip(1).collect();
    if levels.is_empty() {
        levels = ["3", "2", "s"].map(String::from).to_vec();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/opt-levels");
    let mut rows = Vec::new();
    for level in &levels {
        // The builds below read the level from the environment, on this thread only.
        std::env::set_var(sim_build::OPT_LEVEL_ENV, level);
        let cache = root.join(format!("O{level}"));
        std::fs::remove_dir_all(&cache).ok();
        // The runtime is the same at every level; build it with a small top, uncounted.
        build(Top::FatalProbe, &cache)?;
        let (sim_top, sim_top_cpu) = timed(|| build(Top::SimTop, &cache))?;
        let (card_core, card_core_cpu) = timed(|| build(Top::CardCore, &cache))?;
        let loop_rate = sim_top_speed(&cache)?;
        let core_rate = card_core_speed(&cache)?;
        eprintln!(
            "-O{level}: sim_top {sim_top:.1} s ({sim_top_cpu:.1} CPU-s), {:.0} kcycles/s; card_core {card_core:.1} s ({card_core_cpu:.1} CPU-s), {:.0} kcycles/s",
            loop_rate / 1e3,
            core_rate / 1e3
        );
        rows.push((
            level.clone(),
            sim_top,
            sim_top_cpu,
            loop_rate,
            card_core,
            card_core_cpu,
            core_rate,
        ));
    }
    println!("| level | sim_top build (s) | sim_top build (CPU-s) | sim_top LOOP (kcycles/s) | card_core build (s) | card_core build (CPU-s) | card_core idle (kcycles/s) |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (l, a, b, c, d, e, f) in rows {
        println!(
            "| -O{l} | {a:.1} | {b:.1} | {:.0} | {d:.1} | {e:.1} | {:.0} |",
            c / 1e3,
            f / 1e3
        );
    }
    Ok(())
}

fn recipe(top: Top, cache: &Path) -> Result<Recipe, String> {
    Recipe::from_json(top.def().recipe())
        .map(|r| r.with_cache(cache))
        .map_err(|e| e.to_string())
}

fn build(top: Top, cache: &Path) -> Result<PathBuf, String> {
    build_library(&recipe(top, cache)?, &[])
        .map(|b| b.path)
        .map_err(|e| e.to_string())
}

/// A TopDef of `top` cached in `cache`, for a model or a library of this level.
fn def(top: Top, cache: &Path) -> Result<TopDef, String> {
    let json = recipe(top, cache)?.to_json().map_err(|e| e.to_string())?;
    let json: &'static str = Box::leak(json.into_boxed_str());
    Ok(TopDef::from_recipe(top.name(), top.def().module(), json))
}

/// Plain C++ LOOP cycles per wall-clock second on sim_top.
fn sim_top_speed(cache: &Path) -> Result<f64, String> {
    let lib = Library::of(def(Top::SimTop, cache)?.with_companion(BASELINE))
        .map_err(|e| e.to_string())?;
    let sym = lib
        .symbol("sim_export_bench_loop")
        .map_err(|e| e.to_string())?;
    type LoopFn = unsafe extern "C" fn(u64, u64, u32, u32) -> u64;
    // SAFETY: cpp/baseline.cpp defines sim_export_bench_loop with exactly this signature.
    let f = unsafe { std::mem::transmute::<*const std::ffi::c_void, LoopFn>(sym) };
    let start = Instant::now();
    // SAFETY: a plain C function of cpp/baseline.cpp that takes and returns integers.
    let cycles = unsafe {
        f(
            LOOP_FRAMES,
            4096,
            card_regs::CONTROL,
            sim_bench::loop_control(),
        )
    };
    if cycles == 0 {
        return Err("the C++ LOOP run failed its data check".into());
    }
    Ok(cycles as f64 / start.elapsed().as_secs_f64())
}

/// card_core's cycles per wall-clock second, idle after reset.
fn card_core_speed(cache: &Path) -> Result<f64, String> {
    let e = |e: card_sim::SimError| e.to_string();
    let mut m = Model::new(def(Top::CardCore, cache)?).map_err(e)?;
    let clk = m.add_clock("axi_aclk", 250_000_000).map_err(e)?;
    let rstn = m.input("axi_aresetn").map_err(e)?;
    m.set_bool(rstn, false);
    m.ticks(clk, 8).map_err(e)?;
    m.set_bool(rstn, true);
    let start = Instant::now();
    m.ticks(clk, CARD_CORE_CYCLES).map_err(e)?;
    Ok(CARD_CORE_CYCLES as f64 / start.elapsed().as_secs_f64())
}

/// Wall and CPU seconds of `f`, CPU counting the compilers it started (children, from
/// `/proc/self/stat` in ticks of 1/100 s).
fn timed<T>(f: impl FnOnce() -> Result<T, String>) -> Result<(f64, f64), String> {
    let cpu = || {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r).to_string();
        let fields: Vec<f64> = rest
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0.0))
            .collect();
        // utime, stime, cutime, cstime: fields 14 to 17, 11 to 14 after the state.
        fields.get(11..15).map_or(0.0, |v| v.iter().sum::<f64>()) / 100.0
    };
    let (c0, t0) = (cpu(), Instant::now());
    f()?;
    Ok((t0.elapsed().as_secs_f64(), cpu() - c0))
}
