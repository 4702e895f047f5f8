//! Builds the vendor IP under third_party/ as tops of this crate, and one top per replay file
//! of its formal proofs (formal/replays, written by `cargo xtask formal --crate
//! own-rtl-example` when a proof fails) with the tests that replay them; card-sim is not
//! involved.

use std::path::{Path, PathBuf};

use sim_build::{cargo_error_lines, Build, TopSpec};

fn main() {
    let replays = match replay_tops() {
        Ok(tops) => tops,
        Err(e) => {
            for line in cargo_error_lines(&e) {
                println!("{line}");
            }
            return;
        }
    };
    let ram_of = |addr_bits: &str| {
        TopSpec::new("vendor_axi4_ram")
            .file("third_party/vendor_ip/VendorAxiRam.v")
            // The IP needs its memory size as a define; without it Verilator stops and says so.
            .define("VENDOR_RAM_ADDR_BITS", addr_bits)
            .param("C_S_AXI_DATA_WIDTH", "32")
    };
    let ram = || ram_of("12");
    let regs = || TopSpec::new("vendor_axil_regs").file("third_party/vendor_ip/VendorAxilRegs.v");
    let gen = || TopSpec::new("vendor_frame_gen").file("third_party/vendor_ip/VendorFrameGen.v");
    let master =
        || TopSpec::new("vendor_axi4_master").file("third_party/vendor_ip/vendor_axi4_master.v");
    let result = Build::new()
        .top(ram())
        // The same RAM with its deliberate bug, as a top of its own.
        .top(ram().name("vendor_axi4_ram_broken").param("BROKEN", "1"))
        // The same RAM at 64 bytes (16 words), the size of a small peripheral's window: a
        // burst the fuzzer lets run past it would alias inside the RAM. Once with 4-bit IDs,
        // once with the 1-bit ID port of a slave that keeps only two IDs apart.
        .top(ram_of("4").name("vendor_axi4_ram_64"))
        .top(
            ram_of("4")
                .name("vendor_axi4_ram_64_id1")
                .param("C_S_AXI_ID_WIDTH", "1"),
        )
        .top(TopSpec::new("vendor_axis_fifo").file_list("third_party/vendor_ip/fifo.f"))
        // An AXI4-Lite register bank and a stream source, each with seeded bugs that only a
        // master with several accesses outstanding, garbage while idle, or a sink that holds
        // TREADY low at TLAST exposes.
        .top(regs())
        .top(
            regs()
                .name("vendor_axil_regs_broken_read")
                .param("BUG", "1"),
        )
        .top(
            regs()
                .name("vendor_axil_regs_broken_wdata")
                .param("BUG", "2"),
        )
        .top(gen())
        .top(gen().name("vendor_frame_gen_broken").param("BUG", "1"))
        // The generator behind a TSTRB-only port, as Vivado's AXI-Stream master template has.
        .top(
            TopSpec::new("vendor_frame_gen_tstrb")
                .file("third_party/vendor_ip/VendorFrameGenStrb.v")
                .file("third_party/vendor_ip/VendorFrameGen.v"),
        )
        // A write-then-read-back AXI4 test master in the style of Vivado's template, and the
        // same master with each of four seeded bugs that a slave answering OKAY, in order and
        // one burst at a time hides (see the file's header).
        .top(master())
        .top(
            master()
                .name("vendor_axi4_master_broken_order")
                .param("BUG", "1"),
        )
        .top(
            master()
                .name("vendor_axi4_master_broken_slverr")
                .param("BUG", "2"),
        )
        .top(
            master()
                .name("vendor_axi4_master_broken_interleave")
                .param("BUG", "3"),
        )
        .top(
            master()
                .name("vendor_axi4_master_broken_wdata")
                .param("BUG", "4"),
        )
        // A variant with Verilator's random initial values, seeded at run time.
        .top(
            TopSpec::new("vendor_axis_fifo")
                .name("vendor_axis_fifo_xrand")
                .file_list("third_party/vendor_ip/fifo.f")
                .flag("--x-initial")
                .flag("unique"),
        )
        // The formal proofs' counterexamples, each on its proof's wrapper with `FORMAL` on.
        .tops(replays)
        // Third-party code: its warnings are the vendor's business, not this build's.
        .flag("-Wno-lint")
        .flag("-Wno-style")
        .compile();
    if let Err(e) = result {
        e.emit();
    }
}

/// The tops of the replay files in formal/replays, their shells written to `OUT_DIR`, and the
/// tests of `tests/own_formal_replay.rs` written beside them.
fn replay_tops() -> Result<Vec<TopSpec>, String> {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
    // The workspace: this crate lives in crates/own-rtl-example; the replays name the proofs'
    // files from there, as they name the card's.
    let root = manifest
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("{} is not two folders deep", manifest.display()))?;
    let out = PathBuf::from(env("OUT_DIR")?);
    formal_replay::build::top_specs(&manifest.join("formal/replays"), &root, &out)
}

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|e| format!("{name}: {e} (cargo sets it for a build script)"))
}
