//! The harness itself: what it finds on the card's top, turning the protocol monitors off,
//! and the deliberate faults it turns on.

use card_harness::{CardHarness, CardTop, Fault, HarnessConfig};
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
    assert!(card.ddr_clk().is_some());
    // card_core has no DDR behind it.
    let core = CardHarness::new(Top::CardCore, false).expect("card_core");
    assert_eq!(core.memory_size(), None);
}

#[test]
fn monitors_can_be_turned_off() {
    let on = CardHarness::with_config(HarnessConfig::new(Top::CardCore)).expect("on");
    assert!(on.dma().monitor().is_some() && on.regs().monitor().is_some());
    assert!((0..on.c2h_ports().len())
        .filter_map(|k| on.c2h(k))
        .all(|s| s.monitor().is_some()));
    let off = CardHarness::with_config(HarnessConfig {
        monitors: false,
        ..HarnessConfig::new(Top::CardCore)
    })
    .expect("off");
    assert!(off.dma().monitor().is_none() && off.regs().monitor().is_none());
    assert!((0..off.h2c_ports().len())
        .filter_map(|k| off.h2c(k))
        .all(|s| s.monitor().is_none()));
    assert!((0..off.c2h_ports().len())
        .filter_map(|k| off.c2h(k))
        .all(|s| s.monitor().is_none()));
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

/// A card selected by a fault's name: sim_top with that fault's input held high and every
/// other fault's low, from before reset on; the model is named after the fault.
#[test]
fn a_fault_selection_drives_its_input_and_no_other() {
    for &fault in Fault::ALL {
        let card = CardTop::from_name(fault.name()).expect("a fault selection");
        let h = CardHarness::with_config(HarnessConfig::for_card(card)).expect("sim_top");
        assert_eq!(h.fault(), Some(fault));
        let model = h.env().model();
        assert!(
            model.name().ends_with(&format!(".{}", fault.name())),
            "{}",
            model.name()
        );
        for &other in Fault::ALL {
            let port = model
                .port(other.input())
                .expect("sim_top has every fault input");
            assert_eq!(
                model.get(port),
                u64::from(other == fault),
                "{} with {fault} selected",
                other.input()
            );
        }
    }
}

/// The good card drives every fault input low itself (a randomized build may start an input
/// at any value), and a fault asked of a top without its input is refused rather than run as
/// the good card.
#[test]
fn the_good_card_holds_the_faults_off_and_a_top_without_them_refuses_one() {
    let h = CardHarness::new(Top::SimTop, false).expect("sim_top");
    assert_eq!(h.fault(), None);
    for &fault in Fault::ALL {
        let port = h
            .env()
            .model()
            .port(fault.input())
            .expect("the fault input");
        assert_eq!(h.env().model().get(port), 0, "{}", fault.input());
    }
    let e = CardHarness::with_config(HarnessConfig {
        fault: Some(Fault::RD_DROP_BEAT),
        ..HarnessConfig::new(Top::CardCore)
    })
    .expect_err("card_core has no fault inputs");
    assert!(e.to_string().contains(Fault::RD_DROP_BEAT.input()), "{e}");
}

/// The read fault as the RTL does it, through the harness's selection: a two-beat read that
/// starts in the last 16-byte slot of a 64-byte line returns its first beat twice with the
/// fault on, and the bytes written with it off.
#[test]
fn the_read_fault_repeats_a_beat_only_when_selected() {
    let data: Vec<u8> = (0..128u32).map(|i| (i * 7 + 3) as u8).collect();
    let read_back = |fault: Option<Fault>| -> Vec<u8> {
        let mut h = CardHarness::with_config(HarnessConfig {
            fault,
            ..HarnessConfig::new(Top::SimTop)
        })
        .expect("sim_top");
        h.dma()
            .clone()
            .write(h.env_mut(), 0x100, &data)
            .expect("write two lines");
        h.dma()
            .clone()
            .read(h.env_mut(), 0x130, 32)
            .expect("read two beats")
    };
    let good = read_back(None);
    assert_eq!(
        good,
        data[0x30..0x50],
        "the good card reads what was written"
    );
    let broken = read_back(Some(Fault::RD_DROP_BEAT));
    assert_eq!(broken[..16], data[0x30..0x40], "the first beat is right");
    assert_eq!(
        broken[16..],
        data[0x30..0x40],
        "the second beat is the first again"
    );
}
