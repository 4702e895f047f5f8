//! Compiles the plain C++ baseline against the verilated sim_top that card-sim built and links
//! (its headers come from card-sim's build through `DEP_CARD_SIM_*`), so both benches run the
//! very same model code.

use std::path::PathBuf;

fn main() {
    let dep = |k: &str| std::env::var(format!("DEP_CARD_SIM_{k}")).map(PathBuf::from);
    let (Ok(vl), Ok(root)) = (dep("VL"), dep("VERILATOR_ROOT")) else {
        println!("cargo::error=card-sim's build did not publish its verilated tops (DEP_CARD_SIM_VL): build card-sim first");
        return;
    };
    println!("cargo::rerun-if-changed=cpp/baseline.cpp");
    let inc = root.join("include");
    let mut b = cc::Build::new();
    b.cpp(true)
        .std("c++20")
        .include(&inc)
        .include(inc.join("vltstd"))
        .include(vl.join("sim_top"))
        .define("VERILATOR", "1")
        .define("VM_COVERAGE", "0")
        .define("VM_SC", "0")
        .define("VM_TIMING", "0")
        .define("VM_TRACE", "1")
        .define("VM_TRACE_FST", "1")
        .define("VM_TRACE_VCD", "0")
        .define("VM_TRACE_SAIF", "0")
        .flag_if_supported("-faligned-new")
        .warnings(false)
        .opt_level(3)
        .file("cpp/baseline.cpp");
    if let Err(e) = b.try_compile("sim_bench_baseline") {
        for line in e.to_string().lines() {
            println!("cargo::error={line}");
        }
    }
}
