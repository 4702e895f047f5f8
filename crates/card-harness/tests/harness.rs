//! The harness itself: what it finds on the card's top, and turning the protocol monitors off.

use card_harness::{CardHarness, HarnessConfig};
use card_sim::Top;

#[test]
fn the_card_top_is_found_as_the_board_has_it() {
    let card = CardHarness::new(Top::SimTop, true).expect("sim_top");
    assert_eq!(card.h2c_ports(), ["s_axis_h2c0"]);
    assert_eq!(card.c2h_ports(), ["m_axis_c2h0", "m_axis_c2h1"]);
    // sim_top's DDR3 model holds the reference board's 2 GB; the user BAR is what s_axil's
    // 16 address bits reach.
    assert_eq!(card.memory_size(), Some(2 << 30));
    assert_eq!(card.bar_size(), 64 << 10);
    assert_eq!(card.irq_lines(), 1);
    assert!(card.ddr_clk.is_some());
    // card_core has no DDR behind it.
    let core = CardHarness::new(Top::CardCore, false).expect("card_core");
    assert_eq!(core.memory_size(), None);
}

#[test]
fn monitors_can_be_turned_off() {
    let on = CardHarness::with_config(HarnessConfig::new(Top::CardCore)).expect("on");
    assert!(on.dma.monitor().is_some() && on.regs.monitor().is_some());
    assert!(on.c2h.iter().all(|s| s.monitor().is_some()));
    let off = CardHarness::with_config(HarnessConfig {
        monitors: false,
        ..HarnessConfig::new(Top::CardCore)
    })
    .expect("off");
    assert!(off.dma.monitor().is_none() && off.regs.monitor().is_none());
    assert!(off.h2c.iter().all(|s| s.monitor().is_none()));
    assert!(off.c2h.iter().all(|s| s.monitor().is_none()));
}

#[test]
fn the_loop_rate_is_the_cards_own() {
    // A few frames are enough: the rate is the RTL's, with no pauses on either stream, so
    // every frame after the first streams back to back at close to one beat per cycle.
    let r = card_harness::loop_rate(4132, 8).expect("LOOP on card_core");
    assert_eq!((r.frame_len, r.frames), (4132, 8));
    let beats = (4132u64).div_ceil(16) * 8;
    assert!(r.cycles >= beats, "{r:?}: fewer cycles than beats");
    assert!(
        r.fraction > 0.9 && r.fraction <= 4132.0 / 4144.0 + 1e-12,
        "{r:?}"
    );
}
