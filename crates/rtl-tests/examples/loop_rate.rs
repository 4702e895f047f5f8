//! The card's own LOOP rate for a frame length (default 4132 bytes): `cargo run -p rtl-tests
//! --example loop_rate -- [BYTES] [FRAMES]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let len = args.next().and_then(|a| a.parse().ok()).unwrap_or(4132);
    let frames = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    match rtl_tests::loop_rate(len, frames) {
        Ok(r) => println!(
            "LOOP {} B frames: {} frames in {} axi_aclk cycles, {:.4} of 16 B per cycle ({:.1} MB/s at 250 MHz)",
            r.frame_len,
            r.frames,
            r.cycles,
            r.fraction,
            r.fraction * 16.0 * 250.0
        ),
        Err(e) => {
            eprintln!("loop_rate: {e}");
            std::process::exit(1);
        }
    }
}
