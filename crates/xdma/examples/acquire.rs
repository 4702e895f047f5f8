//! The card's main job, on whichever card the environment names (the simulated card unless
//! `XDMA_BACKEND=hw`): acquire frames from the frame source over a C2H stream and check every
//! one, then move a block through the card's DDR and back, printing what each step took in the
//! card's clock.

use std::time::Duration;

use xdma::{Card, CardAddr, Config, DmaBuffer, Transfer, Xdma};

/// Frames to acquire and their length in bytes.
const FRAMES: usize = 16;
const FRAME_LEN: usize = 4096;
/// The block moved through DDR.
const BLOCK: usize = 1 << 20;

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
    #[cfg(target_os = "linux")]
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

    // A block through the card's DDR and back.
    let data = DmaBuffer::from_slice(
        &(0..BLOCK as u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9).to_le_bytes()[3])
            .collect::<Vec<u8>>(),
    )?;
    let mut back = DmaBuffer::new(BLOCK)?;
    let w = card.write_mm(0, CardAddr(0x100_0000), &data)?;
    let r = card.read_mm(0, CardAddr(0x100_0000), &mut back)?;
    if back[..] != data[..] {
        return Err("the block read back from DDR differs".into());
    }
    println!(
        "{} KiB through DDR: write {:?} ({:.0} MB/s), read {:?} ({:.0} MB/s), data intact",
        BLOCK >> 10,
        w.duration(),
        w.mb_per_s(),
        r.duration(),
        r.mb_per_s()
    );
    #[cfg(feature = "sim")]
    if let Xdma::Sim(sim) = &card {
        let l = sim.card_latency()?;
        println!(
            "card-side s_axi latency measured on the RTL: read {:.0} ns (min), write {:.0} ns (min)",
            l.read_min_ns, l.write_min_ns
        );
    }
    println!("card clock: {:.3} ms", card.now_ps()? as f64 / 1e9);
    Ok(())
}
