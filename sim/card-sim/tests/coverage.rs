//! Coverage builds: a top built with Verilator's coverage counts what the simulation reached
//! and writes it in Verilator's data format, and a model of it writes its counts by itself when
//! it is dropped; a top built without coverage writes nothing.

use std::path::Path;

use card_sim::{coverage_dir, Model, Result, Top};

/// Runs the FIFO bench out of reset and through a few words, so that some of its lines run and
/// some of its bits toggle.
fn exercise(m: &mut Model) -> Result<()> {
    let s_clk = m.add_clock("s_clk", 100_000_000)?;
    let m_clk = m.add_clock("m_clk", 75_000_000)?;
    let (s_rst, m_rst) = (m.input("s_rst")?, m.input("m_rst")?);
    let (tdata, tvalid) = (m.input("s_axis_tdata")?, m.input("s_axis_tvalid")?);
    let tready = m.input("m_axis_tready")?;
    m.set_bool(s_rst, true);
    m.set_bool(m_rst, true);
    m.ticks(s_clk, 8)?;
    m.set_bool(s_rst, false);
    m.set_bool(m_rst, false);
    m.ticks(s_clk, 8)?;
    m.set_bool(tready, true);
    for word in 1..=8u64 {
        m.set(tdata, word * 0x0101_0101);
        m.set_bool(tvalid, true);
        m.tick(s_clk)?;
    }
    m.set_bool(tvalid, false);
    m.ticks(m_clk, 32)?;
    Ok(())
}

/// The points of Verilator's coverage data of one kind (`v_line`, `v_toggle`) for the FIFO's
/// module, and how many were counted at least once.
fn points(text: &str, page: &str) -> (usize, usize) {
    let mut all = 0;
    let mut hit = 0;
    for line in text.lines().filter(|l| l.starts_with("C '")) {
        if !line.contains(&format!("\u{2}{page}/async_fifo")) {
            continue;
        }
        all += 1;
        let count: u64 = line
            .rsplit(' ')
            .next()
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        hit += usize::from(count > 0);
    }
    (all, hit)
}

#[test]
fn a_coverage_top_counts_what_the_simulation_reached() -> Result<()> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("fifo.dat");
    let mut m = Model::new(Top::AsyncFifoTbCov)?;
    assert!(m.counts_coverage());
    let idle = dir.path().join("idle.dat");
    assert!(m.write_coverage(&idle)?);
    exercise(&mut m)?;
    assert!(m.write_coverage(&path)?);
    let before = std::fs::read_to_string(&idle).expect("the idle counts");
    let after = std::fs::read_to_string(&path).expect("the counts");
    assert!(
        after.starts_with("# SystemC::Coverage"),
        "Verilator's format: {}",
        &after[..after.len().min(80)]
    );
    let (lines, lines_hit) = points(&after, "v_line");
    let (toggles, toggles_hit) = points(&after, "v_toggle");
    assert!(lines > 0 && toggles > 0, "lines {lines}, toggles {toggles}");
    // Running the FIFO reaches lines and toggles that a model never clocked did not.
    assert!(
        lines_hit > points(&before, "v_line").1,
        "lines hit {lines_hit} of {lines}"
    );
    assert!(
        toggles_hit > points(&before, "v_toggle").1,
        "toggles hit {toggles_hit} of {toggles}"
    );
    assert!(toggles_hit < toggles, "a short run cannot toggle every bit");
    Ok(())
}

#[test]
fn a_plain_top_writes_no_coverage() -> Result<()> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("plain.dat");
    let mut m = Model::new(Top::AsyncFifoTb)?;
    assert!(!m.counts_coverage());
    assert!(!m.write_coverage(&path)?);
    assert!(!path.exists());
    // An unusable path is a typed error, not a crash in the runtime.
    assert!(m.write_coverage(Path::new("")).is_err());
    Ok(())
}

#[test]
fn a_dropped_coverage_model_writes_its_counts_named_after_its_test() -> Result<()> {
    let name = "coverage_drop_probe";
    let mut m = Model::builder(Top::AsyncFifoTbCov).name(name).build()?;
    exercise(&mut m)?;
    drop(m);
    let prefix = format!("{name}-{}-", std::process::id());
    let written: Vec<_> = std::fs::read_dir(coverage_dir())
        .expect("the coverage folder exists after a coverage model is dropped")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let text = std::fs::read_to_string(&written[0]).expect("readable");
    assert!(points(&text, "v_line").1 > 0);
    assert!(written[0]
        .to_string_lossy()
        .ends_with("-async_fifo_tb_cov.dat"));
    std::fs::remove_file(&written[0]).expect("clean up");
    Ok(())
}
