//! The `xdma-bench` binary on the simulated card: every subcommand's JSON (one document on
//! stdout, with the metadata), the files `--out` writes, `compare` against the reference and
//! against a reference with a planted error, and bad input refused with a message.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xdma-bench"))
        .args(args)
        .env("XDMA_BACKEND", "sim")
        .env_remove("XDMA_CONFIG")
        .output()
        .expect("run xdma-bench")
}

/// Runs with `--json`; stdout must be exactly one JSON document.
fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let out = bench(&a);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let v: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not one JSON document ({e}):\n{text}"));
    for key in [
        "backend",
        "config",
        "kernel",
        "timing",
        "wall_s",
        "simulated_s",
    ] {
        assert!(v.get(key).is_some(), "{args:?}: no `{key}` in {v}");
    }
    assert_eq!(v["backend"], "sim");
    assert_eq!(v["config"]["backend"], "sim");
    assert!(v["simulated_s"].as_f64().expect("simulated time") > 0.0);
    assert!(v["wall_s"].as_f64().expect("wall time") > 0.0);
    v
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The reference's figure for a row, read from the CSV here, independently of the tool.
fn reference_mb_s(csv: &str, bytes: u64, dir: &str) -> f64 {
    for l in csv.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        if f[0].parse::<u64>().ok() == Some(bytes) {
            let col = if dir == "h2c" { 1 } else { 2 };
            return f[col].parse().expect("number");
        }
    }
    panic!("no reference row of {bytes} bytes");
}

/// `compare` against the reference: one row per size and direction, the reference's figures
/// as the CSV has them, each error the arithmetic of measured and reference, the largest
/// named; then the same sweep against a reference with one figure doubled, which `compare`
/// must show as an error near 50 %.
#[test]
fn compare_reports_every_row_and_catches_a_planted_error() {
    let csv = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/k7-xdma-ddr3-block-sweep.csv"),
    )
    .expect("reference");
    let dir = tmp("compare");
    let d = dir.to_string_lossy().into_owned();
    let v = json(&["sweep", "--sizes", "4K,1M", "--runs", "1", "--out", &d]);
    let rows = v["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4);
    for r in rows {
        let (bytes, mb_s, us) = (num(&r["bytes"]), num(&r["mb_s"]), num(&r["us"]));
        assert!((bytes / us - mb_s).abs() < 1e-6 * mb_s, "{r}");
    }
    for f in ["sweep.csv", "sweep.json", "sweep.svg"] {
        assert!(dir.join(f).is_file(), "{f} written");
    }
    let saved = dir.join("sweep.json").to_string_lossy().into_owned();
    let c = json(&["compare", "--from", &saved, "--sizes", "4096,1048576"]);
    let rows = c["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4);
    let mut worst: f64 = 0.0;
    for r in rows {
        let (bytes, dir) = (num(&r["bytes"]) as u64, r["dir"].as_str().expect("dir"));
        let want = reference_mb_s(&csv, bytes, dir);
        assert_eq!(num(&r["reference_mb_s"]), want);
        let got = num(&r["measured_mb_s"]);
        let err = (got - want) / want * 100.0;
        assert!((num(&r["error_pct"]) - err).abs() < 1e-9, "{r}");
        // The timing model's target: within 10 % at these rows.
        assert!(err.abs() <= 10.0, "{r}");
        worst = worst.max(err.abs());
    }
    assert!((num(&c["max_abs_error_pct"]) - worst).abs() < 1e-9);

    // A broken reference: the 4 KiB write figure doubled.
    let broken = csv.replacen("4096,204.8,", "4096,409.6,", 1);
    assert_ne!(broken, csv);
    let bad = dir.join("broken.csv");
    std::fs::write(&bad, broken).expect("write");
    let b = bad.to_string_lossy().into_owned();
    let c = json(&[
        "compare",
        "--from",
        &saved,
        "--sizes",
        "4096,1048576",
        "--reference",
        &b,
    ]);
    let e = num(&c["max_abs_error_pct"]);
    assert!((45.0..55.0).contains(&e), "the planted error shows: {e}");

    // The fit of the saved sweep goes through its two ends exactly.
    let f = json(&["fit", "--from", &saved, "--out", &d]);
    for row in f["rows"].as_array().expect("rows") {
        assert!(num(&row["error_pct"]).abs() < 1e-6, "two sizes: {row}");
    }
    let t0 = num(&f["h2c"]["t0_us"]);
    assert!((5.0..40.0).contains(&t0), "{t0}");
    assert!(dir.join("fit.svg").is_file() && dir.join("fit.csv").is_file());
    // Without --json the same command prints a table, and the output files are named on
    // stderr, not stdout.
    let out = bench(&["compare", "--from", &saved, "--sizes", "4K,1M", "--out", &d]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("largest error") && text.contains("| H2C | 4096 |"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("compare.svg"));
    let svg = std::fs::read_to_string(dir.join("compare.svg")).expect("svg");
    assert!(svg.contains("reference board H2C") && svg.contains("sim card C2H"));
}

#[test]
fn the_scenarios_run_in_simulated_time() {
    let c = json(&["concurrent", "--block", "64K", "--seconds", "0.0002"]);
    let (h, r, t) = (
        num(&c["h2c_mb_s"]),
        num(&c["c2h_mb_s"]),
        num(&c["total_mb_s"]),
    );
    assert!(h > 100.0 && r > 100.0 && (h + r - t).abs() < 1e-6, "{c}");
    let s = json(&[
        "stream",
        "--frame",
        "4096",
        "--channels",
        "2",
        "--frames",
        "8",
    ]);
    let chans = s["channels"].as_array().expect("channels");
    assert_eq!(chans.len(), 2);
    for ch in chans {
        assert_eq!(num(&ch["frames"]), 8.0);
        let (mb, us) = (num(&ch["mb_s"]), num(&ch["us_per_frame"]));
        assert!((4096.0 / us - mb).abs() < 1e-6 * mb, "{ch}");
    }
    let dir = tmp("rtt");
    let d = dir.to_string_lossy().into_owned();
    let r = json(&[
        "rtt",
        "--minutes",
        "0.00001",
        "--segment-min",
        "0.000005",
        "--frame",
        "256",
        "--out",
        &d,
    ]);
    let segs = r["segments"].as_array().expect("segments");
    assert_eq!(segs.len(), 2);
    for g in segs {
        let (period, p50, over) = (
            num(&g["period_us"]),
            num(&g["rtt_p50_us"]),
            num(&g["overhead_us"]),
        );
        assert!(p50 > 0.0 && p50 <= period && over >= 0.0, "{g}");
        assert!(num(&g["rtt_p99_us"]) >= p50);
    }
    assert!(r["cpu_tiers"]
        .as_str()
        .expect("text")
        .starts_with("do not apply"));
    // Simulated time is deterministic: both segments run at one period, so the loop is stable.
    assert_eq!(r["stable"], true);
    assert!(dir.join("rtt.csv").is_file() && dir.join("rtt.svg").is_file());
}

#[test]
fn bad_input_is_refused_with_a_message() {
    for (args, says) in [
        (&["sweep", "--sizes", "0"][..], "give 1 to 4G bytes"),
        (&["sweep", "--sizes", "4K,1.5M"], "not a byte count"),
        (
            &["sweep", "--sizes", "4K", "--runs", "0"],
            "'0' for '--runs",
        ),
        // 0 frames once printed 0.0 MB/s and exited 0.
        (&["stream", "--frames", "0"], "'0' for '--frames"),
        (&["stream", "--frames", "-3"], "negative"),
        (&["concurrent", "--seconds", "1e300"], "out of range"),
        (&["concurrent", "--seconds", "nan"], "not a finite number"),
        (&["rtt", "--affinity", "4096"], "out of range"),
        (&["concurrent", "--seconds", "0"], "above 0"),
        (&["stream", "--frame", "10"], "64 to 64K bytes"),
        (&["stream", "--channels", "3"], "3"),
        (
            &["rtt", "--minutes", "0.00001", "--segment-min", "0.001"],
            "no longer than the run",
        ),
        (&["compare", "--sizes", "12345"], "none of --sizes"),
        (
            &["fit", "--from", "/nonexistent/sweep.json"],
            "reading a saved sweep",
        ),
        (
            &["sweep", "--backend", "hw", "--device", "/nonexistent/xdma0"],
            "xdma0",
        ),
        (
            &["predict", "--set", "ip.c2h_request_idz=16"],
            "c2h_request_ids",
        ),
        (
            &["predict", "--set", "ip.c2h_request_ids=64"],
            "ip.c2h_request_ids",
        ),
        (&["predict", "--sweep", "ip.pcie_tags"], "KEY=V1,V2"),
        (&["predict", "--sizes", "4K"], "--set KEY=VALUE"),
        (
            &[
                "predict",
                "--set",
                "events=2",
                "--only",
                "concurrent",
                "--sizes",
                "4K",
            ],
            "--only leaves out",
        ),
    ] {
        let out = bench(args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
    }
}

/// `predict --set`: the default column and the setting's, one row per direction of the one
/// size, each change the arithmetic of the two figures; more C2H request IDs leave both rows as
/// they were: a read alone drains at the ordered inbound server's rate, which the IDs do not
/// move (docs/timing-model.md, "The read ceiling"), and a write holds no C2H ID. The files
/// --out writes.
#[test]
fn predict_set_prints_the_default_and_the_setting_side_by_side() {
    let dir = tmp("whatif");
    let d = dir.to_string_lossy().into_owned();
    let v = json(&[
        "predict",
        "--set",
        "ip.c2h_request_ids=16",
        "--only",
        "sweep",
        "--sizes",
        "64K",
        "--out",
        &d,
    ]);
    let cols = v["columns"].as_array().expect("columns");
    assert_eq!(cols.len(), 2, "{v}");
    assert_eq!(cols[0]["name"], "default");
    assert_eq!(cols[0]["settings"].as_array().map(Vec::len), Some(0));
    assert_eq!(cols[1]["name"], "ip.c2h_request_ids=16");
    assert_eq!(cols[1]["settings"][0]["key"], "ip.c2h_request_ids");
    assert_eq!(cols[1]["settings"][0]["value"], "16");
    let rows = v["rows"].as_array().expect("rows");
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["scenario"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["H2C 64 KiB", "C2H 64 KiB"]);
    for r in rows {
        let cells = r["cells"].as_array().expect("cells");
        assert_eq!(cells.len(), 2, "{r}");
        let (d, s) = (num(&cells[0]["mb_s"]), num(&cells[1]["mb_s"]));
        assert!(d > 0.0 && s > 0.0, "{r}");
        assert_eq!(num(&cells[0]["change_pct"]), 0.0);
        let want = (s - d) / d * 100.0;
        assert!((num(&cells[1]["change_pct"]) - want).abs() < 1e-9, "{r}");
        assert!(want.abs() <= 1.0, "more C2H IDs moved a row: {r}");
    }
    let csv = std::fs::read_to_string(dir.join("whatif.csv")).expect("csv");
    assert!(
        csv.starts_with("scenario,column,value,mb_s,change_pct\n"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 2 * 2, "{csv}");
    let svg = std::fs::read_to_string(dir.join("whatif.svg")).expect("svg");
    assert!(
        svg.starts_with("<svg") && svg.contains("C2H 64 KiB"),
        "no bar of C2H"
    );
}

/// A configuration file that does not read is named once, after one "invalid xdma
/// configuration" (the tool once added a second).
#[test]
fn a_bad_configuration_file_is_named_once() {
    let dir = tmp("bad-config");
    std::fs::create_dir_all(&dir).expect("folder");
    let cfg = dir.join("bad.toml");
    std::fs::write(&cfg, "backend = [").expect("write");
    let out = bench(&["sweep", "--config", &cfg.to_string_lossy()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("invalid xdma configuration").count(),
        1,
        "{err}"
    );
    assert_eq!(err.matches("bad.toml").count(), 1, "{err}");
    assert!(err.contains("TOML"), "{err}");
}

/// Ctrl-C or SIGTERM ends a long command at once, with a status that is not success.
#[test]
fn a_signal_stops_a_long_command_at_once() {
    use std::time::{Duration, Instant};
    for (args, sig) in [
        (&["stream", "--frames", "10000000"][..], libc::SIGINT),
        (&["sweep", "--runs", "1000"], libc::SIGTERM),
        (&["rtt", "--minutes", "60"], libc::SIGINT),
    ] {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_xdma-bench"));
        cmd.args(args)
            .env("XDMA_BACKEND", "sim")
            .env_remove("XDMA_CONFIG")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: between fork and exec the closure only calls signal(2), which is
        // async-signal-safe. A shell that starts the tests in the background ignores SIGINT,
        // and an ignored signal stays ignored across exec: the tool is run as from a
        // terminal, with both signals at their default.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGTERM, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().expect("xdma-bench");
        // Past opening the simulated card, into the run.
        std::thread::sleep(Duration::from_secs(8));
        assert!(
            child.try_wait().expect("wait").is_none(),
            "{args:?} ended before the signal"
        );
        // SAFETY: kill(2) on a child this test started and has not reaped.
        unsafe { libc::kill(child.id() as libc::pid_t, sig) };
        let sent = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if sent.elapsed() > Duration::from_secs(5) {
                let _ = child.kill();
                panic!("{args:?} still runs 5 s after signal {sig}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(!status.success(), "{args:?}: {status:?}");
    }
}
