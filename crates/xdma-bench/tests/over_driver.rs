//! Every subcommand of `xdma-bench` on the driver backend, run by `cargo xtask test` against the
//! simulated card served as the driver's nodes (XDMA_BACKEND=hw, XDMA_DEVICE=<mount>/xdma0),
//! or against a board. The runs are short: their times are host time through the file system,
//! so only that each scenario completes, checks its data and reports is asserted. The scenarios
//! run one after another on one card, as they would on a board, so each must leave the card
//! fit for the next.

use std::process::Command;

use serde_json::Value;

/// The device prefix when the environment names the driver backend; otherwise the test says
/// why it does not run.
fn device() -> Option<String> {
    match (std::env::var("XDMA_BACKEND"), std::env::var("XDMA_DEVICE")) {
        (Ok(b), Ok(d)) if b == "hw" => Some(d),
        _ => {
            println!(
                "SKIPPED: XDMA_BACKEND=hw and XDMA_DEVICE are not both set (cargo xtask test sets them over an xdma-fuse mount)"
            );
            None
        }
    }
}

fn run(device: &str, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_xdma-bench"))
        .args(args)
        .args(["--backend", "hw", "--device", device, "--json"])
        .output()
        .expect("run xdma-bench");
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(v["backend"], "hw", "{args:?}: {v}");
    v
}

fn positive(v: &Value) -> bool {
    v.as_f64().is_some_and(|x| x > 0.0)
}

#[test]
fn every_subcommand_runs_on_the_driver_nodes() {
    let Some(dev) = device() else {
        return;
    };
    let d = dev.as_str();
    for mode in ["back-to-back", "serial"] {
        let v = run(
            d,
            &["sweep", "--sizes", "4K,64K", "--runs", "1", "--mode", mode],
        );
        let rows = v["rows"].as_array().expect("rows");
        assert_eq!(rows.len(), 4, "{mode}: two sizes, two directions: {v}");
        assert!(rows.iter().all(|r| positive(&r["mb_s"])), "{mode}: {v}");
    }
    let v = run(d, &["concurrent", "--seconds", "0.3"]);
    assert!(positive(&v["h2c_mb_s"]) && positive(&v["c2h_mb_s"]), "{v}");
    for (channels, mode) in [("1", "one-at-a-time"), ("2", "queued"), ("1", "queued")] {
        let v = run(
            d,
            &[
                "stream",
                "--frames",
                "8",
                "--channels",
                channels,
                "--mode",
                mode,
            ],
        );
        let ch = v["channels"].as_array().expect("channels");
        assert_eq!(ch.len().to_string(), channels, "{v}");
        assert!(ch.iter().all(|c| c["frames"] == 8), "{mode}: {v}");
        let v = run(d, &["rtt", "--minutes", "0.002", "--segment-min", "0.001"]);
        let segs = v["segments"].as_array().expect("segments");
        assert_eq!(segs.len(), 2, "{v}");
        assert!(segs.iter().all(|s| s["frames"].as_u64() > Some(1)), "{v}");
    }
}
