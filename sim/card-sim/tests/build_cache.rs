//! A top is built on first use and found in the cache after that: Verilator runs only when a
//! source it read changed, the compiler only when the generated code changed, an undone edit
//! finds the earlier library, builds of one top at once leave one build, and a bad source
//! gives Verilator's own message. Each test describes a small top of its own in a temporary
//! folder with a cache of its own, with what sim-runtime provides taken from a card top's
//! recipe.

use std::path::Path;

use card_sim::{Model, Top, TopDef};
use sim_build::{build_library, Build, BuildError, LibraryBuild, Recipe};

const COUNTER: &str = "`timescale 1ns/1ps
module counter (
    input  wire       clk,
    input  wire       rst,
    output reg  [7:0] count
);
    always @(posedge clk) begin
        if (rst) count <= 8'd0;
        else count <= count + 8'd1;
    end
endmodule
";

/// The recipe of `counter.v` in `dir`, cached in `dir/cache`.
fn recipe(dir: &Path) -> Recipe {
    let card = Recipe::from_json(Top::FatalProbe.def().recipe()).expect("a card top's recipe");
    let mut r = Build::new()
        .base_dir(dir)
        .out_dir(dir.join("out"))
        .cache_dir(dir.join("cache"))
        .runtime_of(&card)
        .top(sim_build::TopSpec::new("counter").file("counter.v"))
        .recipes()
        .expect("describes the top");
    r.remove(0)
}

/// A temporary folder holding `counter.v` with `text`.
fn counter_in(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("counter.v"), text).expect("write");
    dir
}

/// The top of `r` as a `TopDef`, as generated code would define it.
fn def_of(r: &Recipe) -> TopDef {
    let json: &'static str = Box::leak(r.to_json().expect("json").into_boxed_str());
    TopDef::from_recipe("counter", "counter", json)
}

fn build(r: &Recipe) -> LibraryBuild {
    build_library(r, &[]).expect("builds")
}

#[test]
fn verilator_and_the_compiler_run_only_for_what_changed() {
    let dir = counter_in(COUNTER);
    let src = dir.path().join("counter.v");
    let r = recipe(dir.path());

    let first = build(&r);
    assert!(
        first.verilated && first.compiled,
        "a new top is built: {first:?}"
    );
    let again = build(&r);
    assert_eq!(
        again,
        LibraryBuild {
            path: first.path.clone(),
            verilated: false,
            compiled: false
        },
        "nothing changed: the manifest names the library"
    );

    // A comment changes the source but not the generated code (at the end, since the
    // generated code quotes the source's line numbers).
    std::fs::write(&src, format!("{COUNTER}// A comment.\n")).expect("write");
    let comment = build(&r);
    assert!(comment.verilated, "the source changed: {comment:?}");
    assert!(!comment.compiled, "the generated code did not: {comment:?}");
    assert_eq!(comment.path, first.path);

    // A change of behaviour is a new library.
    std::fs::write(&src, COUNTER.replace("8'd1", "8'd2")).expect("write");
    let edited = build(&r);
    assert!(edited.verilated && edited.compiled, "{edited:?}");
    assert_ne!(edited.path, first.path);

    // Undoing the edit finds the first library without running Verilator.
    std::fs::write(&src, COUNTER).expect("write");
    let undone = build(&r);
    assert_eq!(
        undone,
        LibraryBuild {
            path: first.path,
            verilated: false,
            compiled: false
        }
    );
}

#[test]
fn the_library_is_a_model_that_runs() {
    let dir = counter_in(&COUNTER.replace("8'd1", "8'd3"));
    let mut m = Model::new(def_of(&recipe(dir.path()))).expect("builds and loads");
    let clk = m.add_clock("clk", 100_000_000).expect("clock");
    let rst = m.input("rst").expect("rst");
    let count = m.port("count").expect("count");
    m.set_bool(rst, true);
    m.ticks(clk, 2).expect("ticks");
    m.set_bool(rst, false);
    m.ticks(clk, 5).expect("ticks");
    // Counting by the edited step shows this model is the library of this source.
    assert_eq!(m.get(count), 15);
    // A card top loads beside it, each with its own runtime.
    let mut probe = Model::new(Top::DualClockProbe).expect("a card top beside it");
    probe.eval().expect("evaluates");
}

#[test]
fn builds_of_one_top_at_once_leave_one_build() {
    let dir = counter_in(COUNTER);
    let r = recipe(dir.path());
    let results: Vec<LibraryBuild> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3).map(|_| s.spawn(|| build(&r))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a builder thread"))
            .collect()
    });
    assert_eq!(
        results.iter().filter(|b| b.compiled).count(),
        1,
        "one compiles, the others wait and find it: {results:?}"
    );
    assert!(results.iter().all(|b| b.path == results[0].path));
}

#[test]
fn a_bad_source_gives_verilators_own_message_at_first_use() {
    let dir = counter_in(&COUNTER.replace("count + 8'd1", "count + missing_signal"));
    let r = recipe(dir.path());
    let err = build_library(&r, &[]).expect_err("the source does not elaborate");
    let BuildError::Verilator { diagnostics, .. } = &err else {
        panic!("expected Verilator's error, got {err}");
    };
    assert!(diagnostics.contains("missing_signal"), "{diagnostics}");
    // Through a model, the same text reaches the test as its error.
    let e = Model::new(def_of(&r)).expect_err("the model cannot be built");
    assert!(e.to_string().contains("missing_signal"), "{e}");
}
