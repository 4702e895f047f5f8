//! `SIM_WAVES` turns waveforms on for every model, named after the test that built it; the
//! deprecated `CARD_WAVES` and `CARD_WAVES_DIR` still do while the new names are unset.
//!
//! This file holds a single test so that it is the only thread of its process that touches the
//! environment.

use std::path::PathBuf;

use card_sim::{Model, Result, Top, WAVES_DIR_ENV, WAVES_ENV};

/// Runs `f` on a thread named `name`, as the test harness names a test's thread.
fn on_thread<T: Send + 'static>(name: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("model thread panicked")
}

fn model_waves() -> Result<Option<PathBuf>> {
    let mut m = Model::new(Top::DualClockProbe)?;
    let clk = m.add_clock("axi_aclk", 250_000_000)?;
    m.ticks(clk, 10)?;
    Ok(m.waves_path().map(PathBuf::from))
}

#[test]
fn waves_follow_the_environment_variable() {
    let dir = std::env::temp_dir().join(format!("card-sim-waves-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::env::set_var(WAVES_DIR_ENV, &dir);

    std::env::set_var(WAVES_ENV, "1");
    let on = on_thread("tests::waves_on", model_waves).expect("model ran");
    std::env::set_var(WAVES_ENV, "0");
    let off = on_thread("tests::waves_off", model_waves).expect("model ran");
    std::env::remove_var(WAVES_ENV);
    let unset = on_thread("tests::waves_unset", model_waves).expect("model ran");

    // Two models alive at once on one thread, as two cards of one test: a file each.
    std::env::set_var(WAVES_ENV, "1");
    let two = on_thread("tests::two_cards", || -> Result<Vec<PathBuf>> {
        let mut a = Model::new(Top::DualClockProbe)?;
        let mut b = Model::new(Top::DualClockProbe)?;
        let ca = a.add_clock("axi_aclk", 250_000_000)?;
        let cb = b.add_clock("axi_aclk", 250_000_000)?;
        a.ticks(ca, 10)?;
        b.ticks(cb, 20)?;
        Ok([a.waves_path(), b.waves_path()]
            .into_iter()
            .flatten()
            .map(PathBuf::from)
            .collect())
    })
    .expect("models ran");
    std::env::remove_var(WAVES_ENV);

    // The deprecated names, alone: they still turn waves on and move the folder.
    let old_dir = dir.join("old");
    std::env::remove_var(WAVES_DIR_ENV);
    std::env::set_var("CARD_WAVES_DIR", &old_dir);
    std::env::set_var("CARD_WAVES", "1");
    let old = on_thread("tests::waves_old_names", model_waves).expect("model ran");
    // Beside the new name, the new name wins: SIM_WAVES=0 keeps waves off.
    std::env::set_var("SIM_WAVES", "0");
    let overridden = on_thread("tests::waves_overridden", model_waves).expect("model ran");
    for k in ["CARD_WAVES", "CARD_WAVES_DIR", "SIM_WAVES"] {
        std::env::remove_var(k);
    }

    let on = on.expect("waves on with SIM_WAVES=1");
    assert_eq!(on, dir.join("tests__waves_on.fst"), "named after the test");
    assert!(std::fs::metadata(&on).expect("written").len() > 100);
    assert_eq!(off, None);
    assert_eq!(unset, None);
    assert_eq!(
        two,
        vec![
            dir.join("tests__two_cards.fst"),
            dir.join("tests__two_cards-2-dual_clock_probe.fst")
        ],
        "the second model's file is told apart by its number and top"
    );
    for f in &two {
        assert!(std::fs::metadata(f).expect("written").len() > 100, "{f:?}");
    }
    assert_eq!(
        old,
        Some(old_dir.join("tests__waves_old_names.fst")),
        "CARD_WAVES and CARD_WAVES_DIR still work while SIM_WAVES and SIM_WAVES_DIR are unset"
    );
    assert_eq!(overridden, None, "SIM_WAVES=0 wins over CARD_WAVES=1");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .flatten()
        .filter(|f| f.path().is_file())
        .collect();
    assert_eq!(files.len(), 3, "only the models with waves on wrote files");
    std::fs::remove_dir_all(&dir).ok();
}
