//! The card's main job, on whichever card the environment names (the simulated card unless
//! `XDMA_BACKEND=hw`): acquire frames from the frame source over a C2H stream and check every
//! one, printing what it took in the card's clock. Moving blocks through the card's DDR is
//! measured by `xdma-bench sweep`, which `cargo xtask demo` runs next.

use std::time::Duration;

use xdma::{Card, Config, DmaBuffer, Transfer, Xdma};

/// Frames to acquire and their length in bytes.
const FRAMES: usize = 8;
const FRAME_LEN: usize = 4096;

fn main() {
    if let Err(e) = run() {
        eprintln!("acquisition failed: {e}");
        std::process::exit(1);
    }
}

fn mb_s(bytes: usize, first: &Transfer, last: &Transfer) -> f64 {
    bytes as f64 / (last.end_ps.saturating_sub(first.start_ps).max(1)) as f64 * 1e6
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let card = Xdma::open(&Config::from_env()?)?;
    let info = card.info();
    println!(
        "{} card: id {:#010x} version {:#x}, {} H2C and {} C2H channels, {} MiB of card memory",
        info.backend,
        info.card_id,
        info.card_version,
        info.h2c.len(),
        info.c2h.len(),
        info.memory_size >> 20
    );
    // On a board, say which driver release is behind the nodes: it decides how timeouts show.
    #[cfg(all(feature = "hw", target_os = "linux"))]
    if let Xdma::Hw(hw) = &card {
        println!(
            "{}, c2h_timeout {} s",
            hw.driver().describe(),
            hw.driver().params.c2h_timeout_s
        );
    }
    let stream = info
        .find(xdma::Direction::C2H, xdma::ChannelKind::Stream)
        .ok_or("the card has no C2H stream channel")?;

    // Frame source 0 feeds the first C2H stream in GEN mode.
    let reg = |r: u32| u64::from(r);
    card.write_reg(reg(card_regs::SRC0_FRAME_LEN), FRAME_LEN as u32)?;
    card.write_reg(
        reg(card_regs::CONTROL),
        (card_regs::control::MODE_GEN | card_regs::control::CH0_EN_MASK) as u32,
    )?;
    let mut buf = DmaBuffer::new(FRAME_LEN)?;
    let mut times = Vec::with_capacity(FRAMES);
    let mut last_seq = None;
    for _ in 0..FRAMES {
        // The driver's stream read waits up to its c2h_timeout (10 s by default) whatever the
        // caller asks, and the driver backend refuses a shorter timeout; the frames come long
        // before it on either backend.
        let t = card.recv_stream(stream, &mut buf, Duration::from_secs(10))?;
        let f = frame::parse(&buf[..t.bytes])?;
        if let Some(prev) = last_seq {
            if f.header.sequence != prev + 1 {
                return Err(format!("frame {} follows {prev}", f.header.sequence).into());
            }
        }
        last_seq = Some(f.header.sequence);
        times.push(t);
    }
    card.write_reg(reg(card_regs::CONTROL), 0)?;
    let (first, last) = (&times[0], &times[FRAMES - 1]);
    println!(
        "acquired {FRAMES} frames of {FRAME_LEN} B on C2H channel {stream}, every one valid (sequence {}..={}): {:.1} MB/s",
        last_seq.map_or(0, |s| s + 1 - FRAMES as u32),
        last_seq.unwrap_or(0),
        mb_s(FRAMES * FRAME_LEN, first, last)
    );

    if info.backend == "sim" {
        println!("card clock: {:.3} ms", card.now_ps()? as f64 / 1e9);
    } else {
        println!("the rate is in host time around the driver's calls");
    }
    // Times taken inside a virtual machine measure its emulator, not the card.
    #[cfg(all(feature = "hw", target_os = "linux"))]
    if let Some(vm) = xdma::hw::virtual_machine() {
        println!("this host is a virtual machine ({vm}): the rate says nothing about the card");
    }
    Ok(())
}
