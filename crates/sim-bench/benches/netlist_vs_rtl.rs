//! The card on its post-synthesis netlist against the card on its RTL, side by side in one
//! run: the memory workload on the mm variant (`sim_top_mm` and `sim_top_mm_nl`) and LOOP on
//! the stream variant (`sim_top_stream` and `sim_top_stream_nl`), both through the Rust harness
//! with monitors on, with each build's simulated cycles per second and the ratio printed.
//!
//! The netlists are `cargo xtask synth`'s (`target/synth/`); without them the measuring run
//! says so and stops. `cargo test --all-targets` runs this once without `--bench`: it then
//! proves the RTL runners work on a small run and leaves the netlist builds (minutes of
//! compiling) to the measuring run.

use std::path::Path;
use std::time::{Duration, Instant};

use card_sim::Top;
use criterion::{criterion_group, criterion_main, Criterion};
use sim_bench::{rust_loop_on, rust_memory_on, LOOP_LEN, MEM_BASE};

/// Bytes of the memory workload: a sixteenth of the RTL bench's, as the netlist is slower.
const MEM_BYTES: u64 = 64 * 1024;
/// Frames of the LOOP workload, each `LOOP_LEN` bytes.
const LOOP_FRAMES: u64 = 16;

/// One workload on one build: its name, the top, and the run returning cycles.
struct Runner {
    name: &'static str,
    top: Top,
    run: fn(Top, u64) -> Result<u64, String>,
}

fn memory(top: Top, scale: u64) -> Result<u64, String> {
    rust_memory_on(top, MEM_BASE, MEM_BYTES / scale, true).map_err(|e| e.to_string())
}

fn looped(top: Top, scale: u64) -> Result<u64, String> {
    rust_loop_on(top, (LOOP_FRAMES / scale).max(1), LOOP_LEN, true).map_err(|e| e.to_string())
}

/// The workloads, each as (RTL, netlist).
fn pairs() -> [(Runner, Runner); 2] {
    [
        (
            Runner {
                name: "memory_mm_rtl",
                top: Top::SimTopMm,
                run: memory,
            },
            Runner {
                name: "memory_mm_netlist",
                top: Top::SimTopMmNl,
                run: memory,
            },
        ),
        (
            Runner {
                name: "loop_stream_rtl",
                top: Top::SimTopStream,
                run: looped,
            },
            Runner {
                name: "loop_stream_netlist",
                top: Top::SimTopStreamNl,
                run: looped,
            },
        ),
    ]
}

fn run(r: &Runner, scale: u64) -> u64 {
    (r.run)(r.top, scale).unwrap_or_else(|e| panic!("runner {} failed: {e}", r.name))
}

/// Whether `cargo xtask synth` wrote both variants' netlists.
fn netlists_written() -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    ["mm", "stream"].iter().all(|v| {
        root.join(format!("target/synth/card_core_{v}.v")).is_file()
            && root
                .join(format!("target/synth/card_core_netlist_{v}.v"))
                .is_file()
    })
}

fn bench(c: &mut Criterion) {
    let measuring = std::env::args().any(|a| a == "--bench");
    if !measuring {
        for (rtl, _) in pairs() {
            run(&rtl, 16);
        }
        eprintln!("netlist_vs_rtl: the RTL runners work; the netlists are measured with --bench");
        return;
    }
    if !netlists_written() {
        eprintln!("netlist_vs_rtl: no netlists under target/synth: run `cargo xtask synth` first");
        std::process::exit(2);
    }
    for (rtl, nl) in pairs() {
        let mut g = c.benchmark_group(rtl.name.trim_end_matches("_rtl"));
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(100));
        g.measurement_time(Duration::from_secs(20));
        for r in [&rtl, &nl] {
            g.bench_function(r.name, |b| b.iter(|| run(r, 1)));
        }
        g.finish();
    }
    // The ratio from one interleaved series, each round running both builds once, so that a
    // slow moment of the machine hits both alike; best of the rounds.
    eprintln!("\nnetlist against RTL, 3 interleaved rounds (best of each)");
    for (rtl, nl) in pairs() {
        let mut best = [f64::INFINITY; 2];
        let mut cycles = [0u64; 2];
        for _ in 0..3 {
            for (i, r) in [&rtl, &nl].into_iter().enumerate() {
                let t = Instant::now();
                cycles[i] = run(r, 1);
                best[i] = best[i].min(t.elapsed().as_secs_f64());
            }
        }
        let rate = |i: usize| cycles[i] as f64 / best[i];
        for (i, r) in [&rtl, &nl].into_iter().enumerate() {
            eprintln!(
                "  {:<22} {:>8} cycles {:>9.1} ms {:>10.0} cycles/s",
                r.name,
                cycles[i],
                best[i] * 1e3,
                rate(i)
            );
        }
        eprintln!(
            "  the netlist runs {:.1}x slower than the RTL{}",
            rate(0) / rate(1),
            if cycles[0] == cycles[1] {
                ", in as many cycles".to_string()
            } else {
                format!(" (cycles differ: RTL {}, netlist {})", cycles[0], cycles[1])
            }
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
