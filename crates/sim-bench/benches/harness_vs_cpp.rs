//! The Rust harness against the plain C++ Verilator bench on `sim_top`, side by side in one
//! run: LOOP (1,000 back-to-back 4 KiB frames through H2C0 to C2H0) and memory (1 MiB written
//! through `s_axi` and read back), each by every runner, with the ratios to the C++ baseline
//! printed at the end. The target is 1.10x with monitors on.
//!
//! The simulated card of the `xdma` API runs as a third harness (`xdma_api_sim_card`): it moves
//! the same bytes but spends more simulated cycles on them (the host's and the link's time), so
//! the table also gives time per simulated cycle.
//!
//! To add a runner (another harness on the same traffic, such as the simulated card of the
//! `xdma` API): write a function per workload that does the same work, checks its data and
//! returns the axi_aclk cycles taken (as `sim_bench::rust_loop` does), and add one `Runner`
//! entry to `runners()` below. Its times and ratios then appear beside the others; nothing
//! else changes.

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use sim_bench::{
    cpp_loop, cpp_memory, rust_loop, rust_memory, LOOP_FRAMES, LOOP_LEN, MEM_BASE, MEM_BYTES,
};

/// One way of running both workloads; each function returns the cycles taken or why not.
struct Runner {
    name: &'static str,
    loop_run: fn(u64, u64) -> Result<u64, String>,
    mem_run: fn(u64, u64) -> Result<u64, String>,
}

fn runners() -> Vec<Runner> {
    vec![
        Runner {
            name: "cpp_baseline",
            loop_run: |f, l| cpp_loop(f, l),
            mem_run: |b, n| cpp_memory(b, n),
        },
        Runner {
            name: "rust_monitors_on",
            loop_run: |f, l| rust_loop(f, l, true).map_err(|e| e.to_string()),
            mem_run: |b, n| rust_memory(b, n, true).map_err(|e| e.to_string()),
        },
        Runner {
            name: "rust_monitors_off",
            loop_run: |f, l| rust_loop(f, l, false).map_err(|e| e.to_string()),
            mem_run: |b, n| rust_memory(b, n, false).map_err(|e| e.to_string()),
        },
        Runner {
            name: "xdma_api_sim_card",
            loop_run: sim_bench::api::loop_run,
            mem_run: sim_bench::api::memory_run,
        },
    ]
}

#[derive(Clone, Copy)]
enum Work {
    Loop,
    Memory,
}

fn run(r: &Runner, w: Work, scale: u64) -> u64 {
    let out = match w {
        Work::Loop => (r.loop_run)(LOOP_FRAMES / scale, LOOP_LEN),
        Work::Memory => (r.mem_run)(MEM_BASE, MEM_BYTES / scale),
    };
    match out {
        Ok(c) => c,
        Err(e) => panic!("runner {} failed: {e}", r.name),
    }
}

fn bench(c: &mut Criterion) {
    // `cargo test --all-targets` runs benchmarks once without `--bench`: a small run proves
    // that every runner works without spending minutes.
    let measuring = std::env::args().any(|a| a == "--bench");
    let scale = if measuring { 1 } else { 50 };
    let rs = runners();
    for (wname, w) in [
        ("loop_1000x4KiB", Work::Loop),
        ("mem_1MiB_write_read", Work::Memory),
    ] {
        let mut g = c.benchmark_group(wname);
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(100));
        g.measurement_time(Duration::from_secs(if measuring { 20 } else { 1 }));
        for r in &rs {
            g.bench_function(r.name, |b| b.iter(|| run(r, w, scale)));
        }
        g.finish();
    }
    if !measuring {
        return;
    }
    // The ratios, from one interleaved series: each round runs every runner once, so a slow
    // moment of the machine hits all of them alike. Two estimates: the best time of each
    // runner over the rounds, and the median over the rounds of each round's own ratio (runs
    // seconds apart share the machine's state, so a shared or throttled machine moves the
    // median less than the best). `SIM_BENCH_ROUNDS` sets the rounds (default 5).
    let rounds = std::env::var("SIM_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(5)
        .max(1);
    for (wname, w) in [("LOOP", Work::Loop), ("memory", Work::Memory)] {
        let mut best = vec![f64::INFINITY; rs.len()];
        let mut cycles = vec![0u64; rs.len()];
        let mut per_round: Vec<Vec<f64>> = vec![Vec::new(); rs.len()];
        for _ in 0..rounds {
            let mut times = vec![0.0; rs.len()];
            for (i, r) in rs.iter().enumerate() {
                let t = Instant::now();
                cycles[i] = run(r, w, 1);
                times[i] = t.elapsed().as_secs_f64();
                best[i] = best[i].min(times[i]);
            }
            for (i, t) in times.iter().enumerate() {
                per_round[i].push(t / times[0]);
            }
        }
        let median = |i: usize| {
            let mut v = per_round[i].clone();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        eprintln!("\n{wname}: {rounds} interleaved rounds");
        // Time per simulated cycle: the host API's card runs more cycles than the bare
        // harnesses for the same bytes (the host's and the link's time), so per cycle is the
        // fair comparison; for the others the two ratios agree.
        let per_cycle = |i: usize| best[i] / cycles[i].max(1) as f64;
        for (i, r) in rs.iter().enumerate() {
            eprintln!(
                "  {:<20} best {:>9.1} ms  {:>8} cycles  {:>6.3}x the C++ baseline (median of rounds {:>6.3}x)  {:>7.1} ns/cycle  {:>6.3}x per cycle",
                r.name,
                best[i] * 1e3,
                cycles[i],
                best[i] / best[0],
                median(i),
                per_cycle(i) * 1e9,
                per_cycle(i) / per_cycle(0)
            );
        }
        if let (Some(api), Some(bare)) = (
            rs.iter().position(|r| r.name == "xdma_api_sim_card"),
            rs.iter().position(|r| r.name == "rust_monitors_on"),
        ) {
            eprintln!(
                "  the host API's simulated card per cycle: {:.3}x the bare harness with monitors on",
                per_cycle(api) / per_cycle(bare)
            );
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
