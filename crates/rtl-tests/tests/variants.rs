//! The XDMA variants as they are built (card_core's VARIANT): each says what it has in CAPS,
//! serves its modes and refuses the others, and keeps the ports it lacks quiet.
//!
//! The expected CAPS values are put together here from the register map's field positions and
//! the variants' definitions (which channels and modes each XDMA configuration has), not read
//! from the RTL.

use axi_bfm::Result;
use card_regs::{self as regs, caps, control, error};
use card_sim::Top;
use rtl_tests::CardHarness;

/// CAPS as the variant's definition says it: memory-mapped channels to a 2 GiB DDR and the
/// modes each side serves.
fn expected_caps(mm: bool, stream: bool) -> u32 {
    let bit = |m: u64| 1u64 << m;
    let mut modes = bit(control::MODE_OFF);
    if stream {
        modes |= bit(control::MODE_LOOP)
            | bit(control::MODE_GEN)
            | bit(control::MODE_ECHO)
            | bit(control::MODE_CHECK);
    }
    if mm {
        modes |= bit(control::MODE_CAPTURE);
    }
    let mut v = modes << caps::MODES_LSB;
    if mm {
        v |= caps::MM_MASK | (31 << caps::DDR_ADDR_BITS_LSB);
    }
    if stream {
        v |= caps::STREAM_MASK | (1 << caps::H2C_STREAMS_LSB) | (2 << caps::C2H_STREAMS_LSB);
    }
    if mm && stream {
        v |= caps::SIM_ONLY_MASK;
    }
    v as u32
}

fn mode(m: u64) -> u32 {
    (m << control::MODE_LSB) as u32
}

#[test]
fn each_variant_says_what_it_has() -> Result<()> {
    for (top, mm, stream) in [
        (Top::CardCore, true, true),
        (Top::CardCoreMm, true, false),
        (Top::CardCoreStream, false, true),
    ] {
        let mut card = CardHarness::new(top, false)?;
        assert_eq!(card.read(regs::CAPS)?, expected_caps(mm, stream), "{top:?}");
        // The combined layout's CAPS is the table's reset value.
        if mm && stream {
            assert_eq!(u64::from(card.read(regs::CAPS)?), caps::RESET);
        }
    }
    Ok(())
}

/// Every mode a variant lacks is refused: the write gets SLVERR, CONTROL keeps its value and
/// ERROR.MODE is set; the modes it has are taken.
#[test]
fn a_variant_refuses_the_modes_it_lacks() -> Result<()> {
    let all = [
        control::MODE_OFF,
        control::MODE_LOOP,
        control::MODE_GEN,
        control::MODE_ECHO,
        control::MODE_CHECK,
        control::MODE_CAPTURE,
        6,
        7,
    ];
    for (top, mm, stream) in [
        (Top::CardCoreMm, true, false),
        (Top::CardCoreStream, false, true),
        (Top::CardCore, true, true),
    ] {
        let mut card = CardHarness::new(top, false)?;
        let modes = u64::from(expected_caps(mm, stream)) >> caps::MODES_LSB & 0xff;
        for m in all {
            card.write(regs::CONTROL, mode(control::MODE_OFF))?;
            card.write(regs::ERROR, error::MASK as u32)?;
            let res = card.write(regs::CONTROL, mode(m));
            let has = modes >> m & 1 == 1;
            let control_now = card.read(regs::CONTROL)?;
            let err = card.read(regs::ERROR)?;
            if has {
                assert!(res.is_ok(), "{top:?} takes mode {m}");
                assert_eq!(control_now, mode(m));
                assert_eq!(u64::from(err) & error::MODE_MASK, 0);
            } else {
                assert!(
                    res.is_err(),
                    "{top:?} refuses mode {m} with an error response"
                );
                assert_eq!(control_now, mode(control::MODE_OFF), "{top:?} kept CONTROL");
                assert_eq!(u64::from(err) & error::MODE_MASK, error::MODE_MASK);
            }
        }
    }
    Ok(())
}

/// The ports a variant lacks stay quiet: the mm variant takes no H2C beat and offers no C2H
/// one, the stream variant never answers on s_axi nor drives its DDR port.
#[test]
fn the_ports_a_variant_lacks_are_tied_off() -> Result<()> {
    let mut card = CardHarness::new(Top::CardCoreMm, false)?;
    card.ticks(20)?;
    let m = card.env().model();
    for p in [
        "s_axis_h2c0_tready",
        "m_axis_c2h0_tvalid",
        "m_axis_c2h1_tvalid",
    ] {
        assert!(!m.get_bool(m.port(p)?), "mm: {p} is low");
    }
    let mut card = CardHarness::new(Top::CardCoreStream, true)?;
    card.ticks(20)?;
    let m = card.env().model();
    for p in [
        "s_axi_awready",
        "s_axi_wready",
        "s_axi_arready",
        "s_axi_bvalid",
        "s_axi_rvalid",
        "m_axi_ddr_awvalid",
        "m_axi_ddr_wvalid",
        "m_axi_ddr_arvalid",
    ] {
        assert!(!m.get_bool(m.port(p)?), "stream: {p} is low");
    }
    Ok(())
}

/// The stream variant loops H2C0 to C2H0 as the combined layout does; the mm variant captures
/// frames into its DDR ring.
#[test]
fn each_variant_runs_its_own_paths() -> Result<()> {
    let mut card = CardHarness::new(Top::SimTopStream, true)?;
    card.write(regs::CONTROL, mode(control::MODE_LOOP))?;
    let f = frame::build(
        &frame::Header {
            channel: 0,
            pattern: frame::Pattern::Counter,
            sequence: 9,
            timestamp: 1,
            seed: 0,
        },
        200,
    )
    .expect("a legal length");
    card.send_h2c(&f)?;
    card.run_until(2_000, "the looped frame", |c| Ok(c.c2h_frames(0) >= 1))?;
    assert_eq!(card.take_c2h(0)[0].bytes, f);

    let mut card = CardHarness::new(Top::SimTopMm, true)?;
    card.write(regs::SRC0_FRAME_LEN, 256)?;
    card.write(regs::CAP_BASE, 0x0020_0000)?;
    card.write(regs::CAP_SIZE, 0x2000)?;
    card.write(
        regs::CONTROL,
        mode(control::MODE_CAPTURE) | control::CH0_EN_MASK as u32,
    )?;
    card.run_until(20_000, "captured frames", |c| {
        Ok(c.read64(regs::CAP_FRAMES_LO)? >= 3)
    })?;
    let mut bytes = vec![0u8; 256];
    card.ddr_read(0x0020_0000, &mut bytes)?;
    let p = frame::parse(&bytes).expect("the first captured frame is valid");
    assert_eq!(p.header.sequence, 0);
    Ok(())
}
