//! Simulated cycles per second of a 1 MiB AXI4 write and read back through the registered
//! AXI4 pass-through, with the protocol monitors on and off, so the monitors' cost is known.

use std::time::{Duration, Instant};

use axi_bfm::{AxiMaster, AxiSlave, Env, ResetPolarity};
use card_sim::{Model, Top};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const MIB: usize = 1 << 20;

/// Builds the bench, writes then reads 1 MiB, checks the data, returns the cycles taken.
fn transfer(monitors: bool) -> u64 {
    let mut env = Env::new(Model::new(Top::AxiPassthrough).expect("model"));
    let clk = env.add_clock("clk", 250_000_000).expect("clock");
    env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)
        .expect("reset");
    env.set_monitors(monitors);
    let m = AxiMaster::attach(&mut env, "s_axi", clk).expect("master");
    let _s = AxiSlave::attach(&mut env, "m_axi", clk).expect("slave");
    env.reset(clk, 4).expect("reset");
    let data: Vec<u8> = (0..MIB).map(|i| (i * 7 + (i >> 12)) as u8).collect();
    let start = env.cycles(clk);
    m.write(&mut env, 0x1000_0000, &data).expect("write");
    let back = m.read(&mut env, 0x1000_0000, MIB).expect("read");
    assert!(back == data, "data read back differs from data written");
    env.cycles(clk) - start
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("axi4_1MiB_write_read");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(100));
    g.measurement_time(Duration::from_secs(2));
    // `cargo test --all-targets` runs each benchmark once without `--bench`; the extra
    // calibration run is only worth its time when measuring.
    let measuring = std::env::args().any(|a| a == "--bench");
    for (name, monitors) in [("monitors_on", true), ("monitors_off", false)] {
        if !measuring {
            g.bench_function(name, |b| b.iter(|| transfer(monitors)));
            continue;
        }
        // The cycle count is measured by one run, not assumed, and sets the throughput unit:
        // criterion's elements per second are then simulated cycles per second.
        let t = Instant::now();
        let cycles = transfer(monitors);
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "{name}: {cycles} cycles for 1 MiB written and read; first run {:.0} cycles/s",
            cycles as f64 / secs
        );
        g.throughput(Throughput::Elements(cycles));
        g.bench_function(name, |b| b.iter(|| transfer(monitors)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
