//! Verilator's own diagnostics reach the user whole, and the build watches only paths that
//! exist (a missing one would rerun the build script on every `cargo test`).

use std::path::{Path, PathBuf};

use sim_build::{cargo_error_lines, Build, BuildError, TopSpec};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/<name> sits two below the root")
        .to_path_buf()
}

fn verilator() -> sim_build::Verilator {
    verilator_find::find(&workspace()).expect("run `cargo xtask setup` first")
}

#[test]
fn a_missing_submodule_is_reported_with_verilators_own_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A third-party file whose name is not its module's, instantiating a module nobody has.
    std::fs::write(
        dir.path().join("VendorTop.v"),
        "module vendor_top(input wire clk, output wire q);\n  vendor_sub u_sub(.clk(clk), .q(q));\nendmodule\n",
    )
    .expect("write");
    let err = Build::new()
        .base_dir(dir.path())
        .out_dir(dir.path().join("out"))
        .verilator(verilator())
        .top(TopSpec::new("vendor_top").file("VendorTop.v"))
        .compile_verilate_only()
        .expect_err("the submodule is missing");
    let BuildError::Verilator { diagnostics, .. } = &err else {
        panic!("expected a Verilator error, got {err}");
    };
    assert!(diagnostics.contains("%Error"), "{diagnostics}");
    assert!(diagnostics.contains("vendor_sub"), "{diagnostics}");
    // Every line reaches Cargo as a directive of its own.
    let lines = cargo_error_lines(&err.to_string());
    assert!(lines.len() >= 3, "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("vendor_sub")), "{lines:?}");
}

#[test]
fn a_define_and_a_free_file_name_verilate() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("odd_name.sv"),
        "module needs_define(input wire clk, output wire [7:0] q);\n`ifndef VENDOR_WIDTH\n  initial $fatal(1, \"VENDOR_WIDTH undefined\");\n`endif\n  assign q = 8'd`VENDOR_WIDTH;\nendmodule\n",
    )
    .expect("write");
    let without = Build::new()
        .base_dir(dir.path())
        .out_dir(dir.path().join("out"))
        .verilator(verilator())
        .top(TopSpec::new("needs_define").file("odd_name.sv"))
        .compile_verilate_only();
    assert!(without.is_err(), "the macro is undefined without -D");
    let ports = Build::new()
        .base_dir(dir.path())
        .out_dir(dir.path().join("out2"))
        .verilator(verilator())
        .top(
            TopSpec::new("needs_define")
                .file("odd_name.sv")
                .define("VENDOR_WIDTH", "5"),
        )
        .compile_verilate_only()
        .expect("verilates with the define");
    assert_eq!(ports[0].len(), 2);
    assert_eq!(ports[0][1].name, "q");
    assert_eq!(ports[0][1].width, 8);
}

#[test]
fn assertions_are_in_the_model_only_when_asked_for() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("checked.sv"),
        "module checked(input wire clk, input wire a);\n  always @(posedge clk) assert (a == 1'b0) else $error(\"a went high\");\nendmodule\n",
    )
    .expect("write");
    // Whether the model would stop on the assertion: its message is in the generated C++.
    let model_asserts = |on: bool| {
        let out = dir.path().join(format!("out-{on}"));
        Build::new()
            .base_dir(dir.path())
            .out_dir(&out)
            .verilator(verilator())
            .top(TopSpec::new("checked").file("checked.sv").assert(on))
            .compile_verilate_only()
            .expect("verilates");
        std::fs::read_dir(out.join("vl/checked"))
            .expect("the model's folder")
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
            .any(|text| text.contains("a went high"))
    };
    assert!(model_asserts(true), "assert(true) keeps the assertion");
    assert!(!model_asserts(false), "assert(false) drops the assertion");
}

#[test]
fn only_existing_paths_are_watched() {
    let v = verilator();
    let paths = sim_build::verilator_watch_paths(&v);
    assert!(!paths.is_empty());
    assert!(paths.iter().all(|p| p.exists()), "{paths:?}");
}

#[test]
fn a_top_whose_generated_source_is_missing_names_it_and_what_makes_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("shell.v"),
        "module shell(input wire clk, output wire q);\n  made u(.clk(clk), .q(q));\nendmodule\n",
    )
    .expect("write");
    // A recipe carries what sim-runtime's build publishes to a build script; the check comes
    // before any of it is used, so any folder stands in.
    std::env::set_var("DEP_SIM_RUNTIME_CPP", dir.path());
    let recipes = Build::new()
        .base_dir(dir.path())
        .out_dir(dir.path().join("out"))
        .verilator(verilator())
        .top(
            TopSpec::new("shell")
                .file("target/synth/made.v")
                .file("shell.v"),
        )
        .recipes()
        .expect("described");
    let recipe = recipes[0].clone().with_cache(dir.path().join("cache"));
    let err = sim_build::build_library(&recipe, &[]).expect_err("a source is missing");
    let text = err.to_string();
    assert!(
        text.contains("target/synth/made.v does not exist"),
        "{text}"
    );
    assert!(text.contains("cargo xtask synth"), "{text}");
}
