//! The model handle: parallel models, RTL errors, clock domains, wide ports, waveforms.

use std::path::PathBuf;

use card_sim::{edge_time_ps, Model, Result, SimError, Top};
use rstest::rstest;

const AXI_HZ: u64 = 250_000_000;
const DDR_HZ: u64 = 200_000_000;

#[test]
fn four_models_run_at_once_on_four_threads() {
    // Each thread drives its own model with its own data; a shared context or shared storage
    // would mix the values up.
    let handles: Vec<_> = (0..4u64)
        .map(|i| {
            std::thread::Builder::new()
                .name(format!("parallel-{i}"))
                .spawn(move || -> Result<(u64, Vec<u32>)> {
                    let mut m = Model::new(Top::DualClockProbe)?;
                    let clk = m.add_clock("axi_aclk", AXI_HZ + i * 1_000_000)?;
                    let wide_in = m.input("wide_in")?;
                    let wide_out = m.port("wide_out")?;
                    let count = m.port("axi_count")?;
                    let mut last = vec![0u32; 16];
                    for cycle in 0..2_000 + 100 * i {
                        let words: Vec<u32> = (0..16)
                            .map(|w| (i as u32) << 28 | (cycle as u32) << 8 | w)
                            .collect();
                        m.set_words(wide_in, &words);
                        m.eval()?;
                        m.tick(clk)?;
                        m.get_words(wide_out, &mut last);
                        assert_eq!(last, words, "model {i} cycle {cycle}");
                    }
                    Ok((m.get(count), last))
                })
                .expect("spawn")
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let (count, last) = h.join().expect("no panic").expect("model ran");
        assert_eq!(
            count,
            2_000 + 100 * i as u64,
            "model {i} counted its own edges"
        );
        assert_eq!(last[0] >> 28, i as u32, "model {i} kept its own data");
    }
}

#[rstest]
#[case::fatal(0, "fatal after")]
#[case::error(1, "error after")]
#[case::stop(2, "$stop")]
#[case::assertion(3, "assertion assert_ok failed")]
fn rtl_errors_come_back_as_rust_errors(#[case] kind: u64, #[case] text: &str) -> Result<()> {
    let mut m = Model::builder(Top::FatalProbe)
        .name("fatal-probe")
        .build()?;
    let clk = m.add_clock("clk", AXI_HZ)?;
    let trigger = m.input("trigger")?;
    m.set(m.input("kind")?, kind);
    m.ticks(clk, 5)?;
    m.set_bool(trigger, true);
    m.eval()?;
    let err = m
        .wait_until(clk, 20, "the probe's error", |_| false)
        .expect_err("the probe must stop the model");
    match &err {
        SimError::Rtl {
            model,
            time_ps,
            message,
        } => {
            assert_eq!(model, "fatal-probe");
            assert!(message.contains(text), "message {message:?} lacks {text:?}");
            // Armed at the 6th edge, fires DELAY = 3 cycles later, at the 9th or 10th edge
            // depending on where the countdown's last step lands.
            let edge = time_ps / 4_000 + 1;
            assert!((9..=10).contains(&edge), "error at {time_ps} ps");
        }
        other => panic!("expected an RTL error, got {other}"),
    }
    // The model is unusable afterwards, and says so instead of crashing.
    let again = m.tick(clk).expect_err("poisoned");
    assert!(matches!(again, SimError::Poisoned { .. }), "{again}");
    // The process is still alive and a new model works.
    let mut fresh = Model::new(Top::FatalProbe)?;
    let clk = fresh.add_clock("clk", AXI_HZ)?;
    fresh.ticks(clk, 20)?;
    Ok(())
}

#[test]
fn finish_is_reported_not_fatal() -> Result<()> {
    let mut m = Model::new(Top::FatalProbe)?;
    let clk = m.add_clock("clk", AXI_HZ)?;
    m.set(m.input("kind")?, 4);
    m.set_bool(m.input("trigger")?, true);
    m.eval()?;
    let n = m.wait_until(clk, 20, "$finish", Model::finished)?;
    assert!(n >= 3);
    Ok(())
}

#[test]
fn rtl_text_is_captured_per_model_and_quoted_in_errors() -> Result<()> {
    // $finish prints its line; it lands in this model's output, not in another model's and
    // not on the process's stdout.
    let mut done = Model::builder(Top::FatalProbe).echo(false).build()?;
    let mut quiet = Model::builder(Top::FatalProbe).echo(false).build()?;
    let clk = done.add_clock("clk", AXI_HZ)?;
    let qclk = quiet.add_clock("clk", AXI_HZ)?;
    done.set(done.input("kind")?, 4);
    done.set_bool(done.input("trigger")?, true);
    done.eval()?;
    done.wait_until(clk, 20, "$finish", Model::finished)?;
    quiet.ticks(qclk, 20)?;
    let text = done.take_output();
    assert!(text.contains("Verilog $finish"), "{text:?}");
    assert!(done.take_output().is_empty(), "taken once");
    assert!(
        quiet.take_output().is_empty(),
        "the other model printed nothing"
    );

    // An $error's message is in the returned error, whole, and in the output.
    let mut m = Model::builder(Top::FatalProbe).echo(false).build()?;
    let clk = m.add_clock("clk", AXI_HZ)?;
    m.set(m.input("kind")?, 1);
    m.set_bool(m.input("trigger")?, true);
    m.eval()?;
    let err = m
        .wait_until(clk, 20, "the probe's error", |_| false)
        .expect_err("stops");
    let msg = err.to_string();
    assert!(msg.contains("fatal_probe: error after"), "{msg}");
    assert!(m.take_output().contains("fatal_probe: error after"));
    Ok(())
}

#[test]
fn two_clock_domains_edge_in_time_order() -> Result<()> {
    let mut m = Model::new(Top::DualClockProbe)?;
    let axi = m.add_clock("axi_aclk", AXI_HZ)?;
    let ddr = m.add_clock("ddr_clk", DDR_HZ)?;
    let axi_count = m.port("axi_count")?;
    let ddr_count = m.port("ddr_count")?;
    let (mut axi_edges, mut ddr_edges) = (0u64, 0u64);
    let mut last = 0;
    let mut coincident = 0;
    for _ in 0..2_000 {
        let (t, peeked) = m.next_edges().expect("two clocks");
        let edges = m.step()?;
        assert_eq!(edges, peeked, "step applies what next_edges announced");
        assert_eq!(m.time_ps(), t);
        assert!(t > last, "time moves forward: {t} after {last}");
        last = t;
        for (clk, n, hz) in [(axi, &mut axi_edges, AXI_HZ), (ddr, &mut ddr_edges, DDR_HZ)] {
            if edges.rising(clk) || edges.falling(clk) {
                *n += 1;
                assert_eq!(
                    t,
                    edge_time_ps(*n, hz),
                    "edge {n} of {hz} Hz at its exact time"
                );
                assert_eq!(edges.rising(clk), *n % 2 == 1, "odd edges rise");
            }
        }
        if (edges.rising(axi) || edges.falling(axi)) && (edges.rising(ddr) || edges.falling(ddr)) {
            coincident += 1;
        }
        // The RTL saw exactly the rising edges the scheduler produced, in each domain.
        assert_eq!(m.get(axi_count), m.cycles(axi));
        assert_eq!(m.get(ddr_count), m.cycles(ddr));
    }
    assert!(axi_edges + ddr_edges >= 2_000);
    // 4 ns and 5 ns periods share an edge every 10 ns: those instants are one step each.
    assert!(coincident > 0);
    assert_eq!(axi_edges * 4 / 5, ddr_edges, "250 MHz : 200 MHz");
    Ok(())
}

#[test]
fn any_frequency_pair_is_placed_exactly() -> Result<()> {
    let mut m = Model::new(Top::DualClockProbe)?;
    let a = m.add_clock("axi_aclk", 333_333_333)?;
    let b = m.add_clock("ddr_clk", 156_250_000)?;
    m.ticks(a, 1_000)?;
    // The 1000th rising edge is edge 1999 of that clock.
    assert_eq!(m.time_ps(), edge_time_ps(1_999, 333_333_333));
    assert_eq!(m.get(m.port("ddr_count")?), m.cycles(b));
    Ok(())
}

#[test]
fn bad_clocks_are_rejected() -> Result<()> {
    let mut m = Model::new(Top::DualClockProbe)?;
    assert!(matches!(
        m.add_clock("axi_aclk", 0),
        Err(SimError::BadClock { .. })
    ));
    assert!(matches!(
        m.add_clock("wide_in", 1_000),
        Err(SimError::PortUse { .. })
    ));
    assert!(matches!(
        m.add_clock("axi_count", 1_000),
        Err(SimError::PortUse { .. })
    ));
    Ok(())
}

#[test]
fn wide_ports_round_trip_bytes() -> Result<()> {
    let mut m = Model::new(Top::DualClockProbe)?;
    let clk = m.add_clock("axi_aclk", AXI_HZ)?;
    let (wide_in, wide_out) = (m.input("wide_in")?, m.port("wide_out")?);
    assert_eq!(wide_in.width(), 512);
    let bytes: Vec<u8> = (0..64).map(|i| (i * 7 + 3) as u8).collect();
    m.set_bytes(wide_in, &bytes);
    m.eval()?;
    m.tick(clk)?;
    let mut back = [0u8; 64];
    m.get_bytes(wide_out, &mut back);
    assert_eq!(back.to_vec(), bytes);
    assert_eq!(
        m.get(wide_out),
        u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
    );
    Ok(())
}

fn temp_waves(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("card-sim-{}-{name}.fst", std::process::id()))
}

#[test]
fn waves_are_written_when_asked() -> Result<()> {
    let path = temp_waves("asked");
    std::fs::remove_file(&path).ok();
    {
        let mut m = Model::builder(Top::DualClockProbe).waves(&path).build()?;
        let clk = m.add_clock("axi_aclk", AXI_HZ)?;
        m.add_clock("ddr_clk", DDR_HZ)?;
        m.ticks(clk, 100)?;
        assert_eq!(m.waves_path(), Some(path.as_path()));
    }
    let bytes = std::fs::read(&path).expect("an FST file was written");
    std::fs::remove_file(&path).ok();
    // FST files start with a header block of type 0 and carry the signal names.
    assert_eq!(bytes.first(), Some(&0u8), "FST header block");
    assert!(bytes.len() > 200, "{} bytes", bytes.len());
    Ok(())
}
