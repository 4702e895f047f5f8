//! Tidy checks that run with `cargo test -p xtask`: the repository is kept consistent with its
//! sources of truth.

use crate::codegen;

/// The register files that `cargo xtask codegen` writes must match `hdl/regs.toml`, so a change
/// to the table without regenerating (or a hand edit of a generated file) fails here.
#[test]
fn generated_register_files_are_fresh() {
    let root = crate::root();
    if let Err(e) = codegen::codegen(&root, true) {
        panic!("{e}");
    }
}

/// The check itself must be able to fail: a rendered file that differs from the one on disk is
/// reported as stale.
#[test]
fn a_stale_file_is_detected() {
    let root = crate::root();
    let outputs = codegen::render(&root).expect("the table renders");
    let dir = tempfile_dir();
    for out in &outputs {
        let rel = out.path.strip_prefix(&root).expect("inside the root");
        let dest = dir.join(rel);
        std::fs::create_dir_all(dest.parent().expect("has a parent")).expect("mkdir");
        std::fs::write(&dest, &out.text).expect("write");
    }
    let table = dir.join(codegen::TABLE);
    std::fs::create_dir_all(table.parent().expect("has a parent")).expect("mkdir");
    let src = std::fs::read_to_string(root.join(codegen::TABLE)).expect("read table");
    std::fs::write(&table, &src).expect("write table");
    codegen::codegen(&dir, true).expect("a fresh copy passes");
    // Change one reset value in the copy of the table: every generated file is now stale.
    let changed = src.replacen("reset = 0x44415131", "reset = 0x44415132", 1);
    assert_ne!(changed, src, "the table holds the identifier's reset value");
    std::fs::write(&table, changed).expect("write table");
    let err = codegen::codegen(&dir, true).expect_err("stale files are detected");
    assert!(
        err.contains("card_regs.vh") && err.contains("generated.rs"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scratch folder under the target directory, unique to this process.
fn tempfile_dir() -> std::path::PathBuf {
    let dir = crate::root()
        .join("target")
        .join(format!("xtask-tidy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}
