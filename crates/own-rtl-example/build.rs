//! Builds the vendor IP under third_party/ as tops of this crate; card-sim is not involved.

use sim_build::{Build, Top};

fn main() {
    let ram = || {
        Top::new("vendor_axi4_ram")
            .file("third_party/vendor_ip/VendorAxiRam.v")
            // The IP needs its memory size as a define; without it Verilator stops and says so.
            .define("VENDOR_RAM_ADDR_BITS", "12")
            .param("C_S_AXI_DATA_WIDTH", "32")
    };
    let result = Build::new()
        .top(ram())
        // The same RAM with its deliberate bug, as a top of its own.
        .top(ram().name("vendor_axi4_ram_broken").param("BROKEN", "1"))
        .top(Top::new("vendor_axis_fifo").file_list("third_party/vendor_ip/fifo.f"))
        // A variant with Verilator's random initial values, seeded at run time.
        .top(
            Top::new("vendor_axis_fifo")
                .name("vendor_axis_fifo_xrand")
                .file_list("third_party/vendor_ip/fifo.f")
                .flag("--x-initial")
                .flag("unique"),
        )
        // Third-party code: its warnings are the vendor's business, not this build's.
        .flag("-Wno-lint")
        .flag("-Wno-style")
        .compile();
    if let Err(e) = result {
        e.emit();
    }
}
