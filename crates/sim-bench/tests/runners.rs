//! The benchmark's runners do the work they claim: each checks its data, and the C++ and Rust
//! runners take about the same number of cycles for the same workload, so that timing them
//! compares like with like.

use sim_bench::{cpp_loop, cpp_memory, rust_loop, rust_memory};

#[test]
fn both_loop_runners_move_the_same_frames_in_about_the_same_cycles() {
    let cpp = cpp_loop(20, 4096).expect("the C++ LOOP run checks out");
    let rust = rust_loop(20, 4096, true).expect("the Rust LOOP run checks out");
    // 20 frames of 256 beats at one beat per cycle, plus the register write and the pipeline.
    assert!(
        (20 * 256..20 * 256 + 200).contains(&cpp),
        "C++ took {cpp} cycles"
    );
    assert!(
        rust.abs_diff(cpp) < 50,
        "Rust took {rust} cycles, C++ {cpp}"
    );
}

#[test]
fn both_memory_runners_write_and_read_back_in_about_the_same_cycles() {
    let cpp = cpp_memory(0, 64 * 1024).expect("the C++ memory run checks out");
    let rust = rust_memory(0, 64 * 1024, true).expect("the Rust memory run checks out");
    assert!(cpp >= 2 * 4096, "C++ took {cpp} cycles");
    let diff = rust.abs_diff(cpp) as f64 / cpp as f64;
    assert!(diff < 0.10, "Rust took {rust} cycles, C++ {cpp}");
}
