//! Checks of `fpga/` that need no Vivado, run as tests: the file list, the Tcl flow run
//! through tclsh with Vivado's commands stubbed, and the names the constraints use.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::{root, synth};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Runs `script` with tclsh: every command Tcl does not know (Vivado's) is a no-op, so the flow's
/// own logic (arguments, file list, branches per variant) runs for real.
fn dry_run(args: &str) -> std::process::Output {
    let out_dir = std::env::temp_dir().join(format!("card-fpga-dry-{}", std::process::id()));
    let script = format!(
        "proc unknown {{args}} {{ return \"\" }}\nset argv [list {args}]\nset argc [llength $argv]\nsource fpga/build.tcl\nputs DRY-RUN-DONE\n"
    );
    let out = Command::new("tclsh")
        .current_dir(root())
        .env("CARD_FPGA_OUT", &out_dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write as _;
            if let Some(stdin) = c.stdin.as_mut() {
                stdin.write_all(script.as_bytes())?;
            }
            c.wait_with_output()
        })
        .unwrap_or_else(|e| panic!("cannot run tclsh (install the tcl package): {e}"));
    std::fs::remove_dir_all(&out_dir).ok();
    out
}

#[test]
fn the_file_list_holds_every_rtl_file_and_nothing_else() {
    let root = root();
    let listed: BTreeSet<String> = synth::file_list(&root)
        .expect("fpga/card_core.f")
        .into_iter()
        .collect();
    let mut rtl = BTreeSet::new();
    for e in std::fs::read_dir(root.join("hdl/rtl"))
        .expect("hdl/rtl")
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".v") {
            rtl.insert(format!("hdl/rtl/{name}"));
        }
    }
    assert_eq!(
        listed, rtl,
        "fpga/card_core.f must list exactly the files of hdl/rtl"
    );
}

#[test]
fn the_vivado_flow_runs_through_tclsh_for_both_variants() {
    for v in ["mm", "stream"] {
        let out = dry_run(v);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("DRY-RUN-DONE"),
            "build.tcl {v}: {}{}",
            text,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A variant the card has no build for is refused with a message and a failing exit.
    let out = dry_run("combined");
    assert!(
        !out.status.success(),
        "build.tcl accepts only mm and stream"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown variant"));
}

#[test]
fn the_constraints_parse_and_name_what_exists() {
    let root = root();
    // Every constraint file is complete Tcl (balanced braces and brackets).
    for f in ["fpga/kc705.xdc", "fpga/card_core.xdc"] {
        let out = Command::new("tclsh")
            .current_dir(&root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write as _;
                if let Some(stdin) = c.stdin.as_mut() {
                    let s = format!(
                        "set f [open {f}]; set s [read $f]; close $f; puts [info complete $s]\n"
                    );
                    stdin.write_all(s.as_bytes())?;
                }
                c.wait_with_output()
            })
            .unwrap_or_else(|e| panic!("cannot run tclsh (install the tcl package): {e}"));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "1",
            "{f} is complete Tcl"
        );
    }
    // The board ports the constraints name are ports the flow creates.
    let tcl = read(&root.join("fpga/build.tcl"));
    let created: BTreeSet<String> = tcl
        .lines()
        .filter_map(|l| l.trim().strip_prefix("create_bd_port "))
        .filter_map(|rest| rest.split_whitespace().last().map(str::to_string))
        .collect();
    let board = read(&root.join("fpga/kc705.xdc"));
    let mut named = BTreeSet::new();
    for part in board.split("get_ports").skip(1) {
        let name = part
            .trim_start()
            .trim_start_matches("-quiet")
            .trim_start()
            .split(|c: char| c == ']' || c.is_whitespace())
            .next()
            .unwrap_or("")
            .to_string();
        named.insert(name);
    }
    assert!(!named.is_empty());
    for n in &named {
        assert!(
            created.contains(n),
            "kc705.xdc names port {n}, which build.tcl does not create: {created:?}"
        );
    }
    // The cells card_core.xdc names are registers of async_fifo, in instances that exist.
    let fifo = read(&root.join("hdl/rtl/async_fifo.v"));
    let cdc = read(&root.join("hdl/rtl/axi_cdc_wr.v")) + &read(&root.join("hdl/rtl/axi_cdc_rd.v"));
    let xdc = read(&root.join("fpga/card_core.xdc"));
    for part in xdc.split("NAME =~ *_fifo_inst/").skip(1) {
        let reg = part.split("_reg").next().unwrap_or("");
        assert!(
            fifo.contains(&format!(" {reg} "))
                || fifo.contains(&format!(" {reg}["))
                || fifo.contains(&format!("reg {reg} ")),
            "card_core.xdc names {reg}, which async_fifo.v does not declare"
        );
    }
    for inst in [
        "aw_fifo_inst",
        "w_fifo_inst",
        "b_fifo_inst",
        "ar_fifo_inst",
        "r_fifo_inst",
    ] {
        assert!(cdc.contains(inst), "the constraints expect {inst}");
    }
    // The interfaces and pins the block design connects are card_core's.
    let core = read(&root.join("hdl/rtl/card_core.v"));
    for part in tcl.split("card_core/").skip(1) {
        let name = part.split(']').next().unwrap_or("");
        let is_port = core.contains(&format!(" {name},")) || core.contains(&format!(" {name}\n"));
        let is_bus = core.contains(&format!(" {name}_"));
        assert!(
            is_port || is_bus,
            "build.tcl connects card_core/{name}, which card_core lacks"
        );
    }
}
