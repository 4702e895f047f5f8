//! The card's own LOOP rate: a figure of the RTL alone, with nothing outside the card
//! limiting it, for whoever reports what the simulated card can do (the simulated backend,
//! `xdma-sim`, and the RTL tests' example).

use axi_bfm::{BfmError, Result};
use card_regs::{control, CONTROL};
use card_sim::Top;

use crate::CardHarness;

/// The card's own LOOP rate: frames of one length fed back to back at one beat per cycle with
/// C2H always ready, so that nothing outside the card limits it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopRate {
    /// Frame length in bytes.
    pub frame_len: usize,
    /// Frames measured.
    pub frames: u32,
    /// `axi_aclk` cycles from the first frame's first C2H beat to the last frame's last beat.
    pub cycles: u64,
    /// Bytes per cycle as a fraction of the 16 the 128-bit stream carries.
    pub fraction: f64,
}

/// Measures [`LoopRate`] on `card_core` in LOOP mode, checking every frame comes back
/// unchanged.
pub fn loop_rate(frame_len: usize, frames: u32) -> Result<LoopRate> {
    let bytes = |n: u32| -> Vec<u8> {
        (0..frame_len)
            .map(|i| {
                (i as u32)
                    .wrapping_mul(31)
                    .wrapping_add(n.wrapping_mul(0x9e37)) as u8
            })
            .collect()
    };
    let mut card = CardHarness::new(Top::CardCore, false)?;
    card.write(CONTROL, control::MODE_LOOP as u32)?;
    card.set_c2h_ready(0, true);
    let (mut queued, mut checked) = (0u32, 0u32);
    let (mut first, mut last) = (None, 0);
    let limit = (frame_len as u64 / 16 + 2) * u64::from(frames) + 1000;
    for _ in 0..limit {
        // Keep frames queued ahead so that H2C always has a beat to offer.
        while queued < frames && card.h2c[0].sent() + 2 > u64::from(queued) {
            card.send_h2c(&bytes(queued))?;
            queued += 1;
        }
        card.cycle()?;
        for f in card.take_c2h(0) {
            if f.bytes != bytes(checked) {
                return Err(BfmError::BadRequest {
                    bus: card.c2h_ports()[0].clone(),
                    problem: format!("LOOP frame {checked} came back changed"),
                });
            }
            first.get_or_insert(f.first_cycle);
            last = f.last_cycle;
            checked += 1;
        }
        if checked == frames {
            break;
        }
    }
    let first = first.unwrap_or(last);
    let cycles = last - first + 1;
    Ok(LoopRate {
        frame_len,
        frames: checked,
        cycles,
        fraction: (frame_len as u64 * u64::from(checked)) as f64 / (cycles * 16) as f64,
    })
}
