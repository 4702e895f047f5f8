//! The worked example of docs/own-rtl.md: two pieces of third-party IP (an AXI4 RAM slave
//! with upper-case ports and a define, an AXI-Stream FIFO listed in a `.f` file) built by this
//! crate's own `build.rs` through sim-build, and tested in `tests/` with axi-bfm's bus
//! models, monitors, random pauses and the protocol fuzzer.
//!
//! `sim_runtime::include_tops!()` below defines one [`sim_runtime::TopDef`] per top the build script
//! built: [`VENDOR_AXI4_RAM`], [`VENDOR_AXI4_RAM_BROKEN`] (the same RAM with a deliberate bug),
//! the same RAM at 64 bytes ([`VENDOR_AXI4_RAM_64`], and [`VENDOR_AXI4_RAM_64_ID1`] with a 1-bit
//! ID port) and [`VENDOR_AXIS_FIFO`] (and [`VENDOR_AXIS_FIFO_XRAND`], built with `--x-initial unique`),
//! an AXI4-Lite register bank [`VENDOR_AXIL_REGS`] and a stream source [`VENDOR_FRAME_GEN`]
//! (and [`VENDOR_FRAME_GEN_TSTRB`], behind a TSTRB-only port), each beside builds with a seeded
//! bug (`*_BROKEN_*`) that the fuzzers must find, and an AXI4 test master in the style of
//! Vivado's template, [`VENDOR_AXI4_MASTER`], with four seeded bugs
//! (`VENDOR_AXI4_MASTER_BROKEN_*`) that a polite slave hides. `ALL_TOPS` also holds one
//! `fr_<proof>` top per replay file of the crate's formal proofs (`formal/replays`), which
//! `tests/own_formal_replay.rs` drives (docs/own-rtl.md, §11).

sim_runtime::include_tops!();

/// Bytes the RAM decodes: 2^`VENDOR_RAM_ADDR_BITS` (12) words of 4 bytes.
pub const RAM_BYTES: u64 = 4 << 12;

/// Bytes the small RAMs decode ([`VENDOR_AXI4_RAM_64`], [`VENDOR_AXI4_RAM_64_ID1`]):
/// 2^`VENDOR_RAM_ADDR_BITS` (4) words of 4 bytes. Addresses above alias into it.
pub const SMALL_RAM_BYTES: u64 = 4 << 4;

/// Bytes the register bank decodes: sixteen 32-bit registers.
pub const REGS_BYTES: u64 = 64;

/// Byte `k` of frame `f` of the frame generator: its data sheet's pattern.
pub fn frame_byte(f: usize, k: usize) -> u8 {
    (f.wrapping_mul(31).wrapping_add(k) % 256) as u8
}
