//! The speed benchmark's workloads on `sim_top`, each with one runner per harness: the plain
//! C++ Verilator bench (`cpp/baseline.cpp`, the baseline) and the Rust harness (`Env` with the
//! axi-bfm bus models, monitors on or off). Every runner checks its data, so a fast but wrong
//! runner fails instead of winning; each returns the axi_aclk cycles it took, and the two must
//! agree closely for the comparison to be fair.
//!
//! `benches/harness_vs_cpp.rs` times them side by side in one run and prints the ratios.

use axi_bfm::{
    AxiMaster, AxilMaster, AxisFrame, AxisSink, AxisSource, BfmError, Env, ResetPolarity,
};
use card_regs::{self as regs, control};
use card_sim::{Model, Top};

/// The frames of the LOOP workload.
pub const LOOP_FRAMES: u64 = 1000;
/// Bytes per LOOP frame.
pub const LOOP_LEN: u64 = 4096;
/// Bytes of the memory workload.
pub const MEM_BYTES: u64 = 1 << 20;
/// Where on `s_axi` the memory workload writes.
pub const MEM_BASE: u64 = 0;

/// The byte pattern both runners send and check: byte `i` of frame `frame`.
pub fn pattern(frame: u64, i: u64) -> u8 {
    (i.wrapping_mul(7) + frame.wrapping_mul(13) + (i >> 8)) as u8
}

fn frame(n: u64, len: u64) -> Vec<u8> {
    (0..len).map(|i| pattern(n, i)).collect()
}

/// Whether `data` is frame `n` of `len` bytes, checked byte by byte against the pattern as the
/// C++ baseline checks it (rather than building the expected frame again).
fn is_frame(data: &[u8], n: u64, len: u64) -> bool {
    data.len() as u64 == len && data.iter().zip(0..).all(|(&b, i)| b == pattern(n, i))
}

/// The CONTROL value that puts the card in LOOP mode.
pub fn loop_control() -> u32 {
    (control::MODE_LOOP << control::MODE_LSB) as u32
}

/// The plain C++ bench, compiled into sim_top's library beside the very same model code.
const BASELINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/cpp/baseline.cpp");

type LoopFn = unsafe extern "C" fn(u64, u64, u32, u32) -> u64;
type MemoryFn = unsafe extern "C" fn(u64, u64) -> u64;

/// A function of the baseline, from sim_top's library built with cpp/baseline.cpp.
fn baseline(name: &str) -> Result<*const std::ffi::c_void, String> {
    card_sim::Library::of(Top::SimTop.def().with_companion(BASELINE))
        .and_then(|lib| lib.symbol(name))
        .map_err(|e| e.to_string())
}

/// The C++ baseline of LOOP: cycles taken, or why it could not run or failed its own data
/// check.
pub fn cpp_loop(frames: u64, len: u64) -> Result<u64, String> {
    let sym = baseline("sim_export_bench_loop")?;
    // SAFETY: cpp/baseline.cpp defines sim_export_bench_loop with exactly this signature.
    let f = unsafe { std::mem::transmute::<*const std::ffi::c_void, LoopFn>(sym) };
    // SAFETY: a plain C function of cpp/baseline.cpp; it takes integers, owns everything it
    // builds and returns an integer.
    let c = unsafe { f(frames, len, regs::CONTROL, loop_control()) };
    (c != 0)
        .then_some(c)
        .ok_or_else(|| "the C++ LOOP run failed its data check".to_string())
}

/// The C++ baseline of the memory workload.
pub fn cpp_memory(base: u64, bytes: u64) -> Result<u64, String> {
    let sym = baseline("sim_export_bench_memory")?;
    // SAFETY: cpp/baseline.cpp defines sim_export_bench_memory with exactly this signature.
    let f = unsafe { std::mem::transmute::<*const std::ffi::c_void, MemoryFn>(sym) };
    // SAFETY: as in `cpp_loop`.
    let c = unsafe { f(base, bytes) };
    (c != 0)
        .then_some(c)
        .ok_or_else(|| "the C++ memory run failed its data check".to_string())
}

/// A build of sim_top (the combined card, a variant, or a netlist twin) in an `Env`, as the
/// card's harness sets it up: both clocks, both resets, reset for 8 cycles and 4 idle ones.
fn card_on(top: Top, monitors: bool) -> axi_bfm::Result<(Env, card_sim::ClockId)> {
    let mut env = Env::new(Model::builder(top).name("sim-bench").build()?);
    env.set_monitors(monitors);
    let clk = env.add_clock("axi_aclk", 250_000_000)?;
    env.add_clock("ddr_clk", 200_000_000)?;
    env.add_reset(clk, "axi_aresetn", ResetPolarity::ActiveLow)?;
    env.add_reset(clk, "ddr_rst", ResetPolarity::ActiveHigh)?;
    Ok((env, clk))
}

/// LOOP through the Rust harness: cycles taken from the CONTROL write on.
pub fn rust_loop(frames: u64, len: u64, monitors: bool) -> axi_bfm::Result<u64> {
    rust_loop_on(Top::SimTop, frames, len, monitors)
}

/// [`rust_loop`] on another build of sim_top with the loop (the stream variant, or its
/// netlist twin).
pub fn rust_loop_on(top: Top, frames: u64, len: u64, monitors: bool) -> axi_bfm::Result<u64> {
    let (mut env, clk) = card_on(top, monitors)?;
    let regs_m = AxilMaster::attach(&mut env, "s_axil", clk)?;
    let h2c = AxisSource::attach(&mut env, "s_axis_h2c0", clk)?;
    let c2h = AxisSink::attach(&mut env, "m_axis_c2h0", clk)?;
    let _c2h1 = AxisSink::attach(&mut env, "m_axis_c2h1", clk)?;
    env.reset(clk, 8)?;
    env.run(clk, 4)?;
    let start = env.cycles(clk);
    regs_m.write(
        &mut env,
        u64::from(regs::CONTROL),
        u64::from(loop_control()),
    )?;
    for n in 0..frames {
        h2c.start_send(AxisFrame::new(frame(n, len)))?;
    }
    let got = c2h.recv_n(&mut env, frames as usize)?;
    for (n, f) in got.iter().enumerate() {
        if !is_frame(&f.data, n as u64, len) {
            return Err(BfmError::Mismatch {
                bus: "m_axis_c2h0".into(),
                what: format!("frame {n}"),
                expected: format!("{len} bytes of pattern {n}"),
                actual: format!("{} other bytes", f.data.len()),
            });
        }
    }
    Ok(env.cycles(clk) - start)
}

/// The memory workload through the Rust harness.
pub fn rust_memory(base: u64, bytes: u64, monitors: bool) -> axi_bfm::Result<u64> {
    rust_memory_on(Top::SimTop, base, bytes, monitors)
}

/// [`rust_memory`] on another build of sim_top with the memory path (the mm variant, or its
/// netlist twin).
pub fn rust_memory_on(top: Top, base: u64, bytes: u64, monitors: bool) -> axi_bfm::Result<u64> {
    let (mut env, clk) = card_on(top, monitors)?;
    let dma = AxiMaster::attach(&mut env, "s_axi", clk)?;
    env.reset(clk, 8)?;
    env.run(clk, 4)?;
    let data = frame(0, bytes);
    let start = env.cycles(clk);
    dma.write(&mut env, base, &data)?;
    let back = dma.read(&mut env, base, bytes as usize)?;
    if back != data {
        let at = back
            .iter()
            .zip(&data)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        return Err(BfmError::Mismatch {
            bus: "s_axi".into(),
            what: format!("byte {at}"),
            expected: format!("{:#04x}", data[at]),
            actual: format!("{:#04x}", back.get(at).copied().unwrap_or(0)),
        });
    }
    Ok(env.cycles(clk) - start)
}

/// The simulated card of the host API (`xdma-sim`, default configuration, monitors on), as
/// the third harness on the same traffic: the host's calls, the modelled link and driver around
/// the same `sim_top`. Its simulated time includes what the host and link take, so it runs more
/// cycles than the bare harness for the same bytes; the bench compares time per cycle.
pub mod api {
    use std::collections::VecDeque;
    use std::future::Future;
    use std::pin::Pin;

    use xdma_core::{AsyncCard, BufResult, Card, CardAddr, DmaBuffer, Transfer};
    use xdma_sim::{SimCard, SimConfig};

    use super::{frame, loop_control};

    type Call<'a> = Pin<Box<dyn Future<Output = BufResult<Transfer>> + Send + 'a>>;

    /// The axi_aclk cycles of simulated time from `a`'s start to `b`'s end.
    fn cycles(a: &Transfer, b: &Transfer) -> u64 {
        b.end_ps.saturating_sub(a.start_ps) / 4000
    }

    fn open() -> Result<SimCard, String> {
        SimCard::open_with(&SimConfig::default()).map_err(|e| e.to_string())
    }

    /// LOOP: `frames` frames sent on the H2C stream and received from the C2H stream, two of
    /// each queued at a time, each received frame checked.
    pub fn loop_run(frames: u64, len: u64) -> Result<u64, String> {
        let card = open()?;
        card.write_reg(u64::from(card_regs::CONTROL), loop_control())
            .map_err(|e| e.to_string())?;
        let (tx, rx) = (card.clone(), card.clone());
        // The opening handle makes no more calls: dropped, the simulation need not wait for it.
        drop(card);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(|e| e.to_string())?;
        let send = async {
            let mut q: VecDeque<Call<'_>> = VecDeque::new();
            let mut first = None;
            for n in 0..frames {
                let b = DmaBuffer::from_slice(&frame(n, len)).map_err(|e| e.to_string())?;
                q.push_back(Box::pin(tx.send_stream_async(1, b)));
                if q.len() == 2 {
                    if let Some(f) = q.pop_front() {
                        let t = f.await.0.map_err(|e| e.to_string())?;
                        first.get_or_insert(t);
                    }
                }
            }
            while let Some(f) = q.pop_front() {
                f.await.0.map_err(|e| e.to_string())?;
            }
            first.ok_or_else(|| "no frame sent".to_string())
        };
        let recv = async {
            let mut q: VecDeque<Call<'_>> = VecDeque::new();
            let mut last = None;
            let mut posted = 0;
            for n in 0..frames {
                while posted < frames && q.len() < 2 {
                    let b = DmaBuffer::new(len as usize + 64).map_err(|e| e.to_string())?;
                    q.push_back(Box::pin(rx.recv_stream_async(
                        1,
                        b,
                        std::time::Duration::from_millis(10),
                    )));
                    posted += 1;
                }
                let Some(f) = q.pop_front() else { break };
                let (r, b) = f.await;
                let t = r.map_err(|e| e.to_string())?;
                if b[..t.bytes] != frame(n, len)[..] {
                    return Err(format!("LOOP frame {n} came back different"));
                }
                last = Some(t);
            }
            last.ok_or_else(|| "no frame received".to_string())
        };
        let (a, b) = rt.block_on(async { tokio::join!(send, recv) });
        Ok(cycles(&a?, &b?))
    }

    /// Memory: `bytes` written at `base` and read back, checked.
    pub fn memory_run(base: u64, bytes: u64) -> Result<u64, String> {
        let card = open()?;
        let data = DmaBuffer::from_slice(&frame(0, bytes)).map_err(|e| e.to_string())?;
        let w = card
            .write_mm(0, CardAddr(base), &data)
            .map_err(|e| e.to_string())?;
        let mut back = DmaBuffer::new(bytes as usize).map_err(|e| e.to_string())?;
        let r = card
            .read_mm(0, CardAddr(base), &mut back)
            .map_err(|e| e.to_string())?;
        if back[..] != data[..] {
            return Err("the memory read back differs".into());
        }
        Ok(cycles(&w, &r))
    }
}
