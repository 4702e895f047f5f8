//! Runs one workload once, for a profiler: `cargo run --release -p sim-bench --example profile
//! -- loop|memory|cpp-loop|cpp-memory [monitors-off] [scale]`, under `perf record` say;
//! `scale` divides the workload (frames or bytes) for slow tools such as callgrind.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let monitors = !args.iter().any(|a| a == "monitors-off");
    let scale: u64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(1).max(1);
    let (frames, bytes) = (sim_bench::LOOP_FRAMES / scale, sim_bench::MEM_BYTES / scale);
    let t = std::time::Instant::now();
    let cycles = match args.first().map(String::as_str) {
        Some("memory") => sim_bench::rust_memory(0, bytes, monitors).map_err(|e| e.to_string()),
        Some("cpp-loop") => sim_bench::cpp_loop(frames, 4096),
        Some("cpp-memory") => sim_bench::cpp_memory(0, bytes),
        _ => sim_bench::rust_loop(frames, 4096, monitors).map_err(|e| e.to_string()),
    };
    match cycles {
        Ok(c) => println!("{c} cycles in {:.1} ms", t.elapsed().as_secs_f64() * 1e3),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
