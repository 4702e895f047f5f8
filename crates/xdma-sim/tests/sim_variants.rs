//! The card's XDMA variants on the simulated card (`sim.variant`): each builds the RTL top of
//! its configuration with the channels such an IP has, the card's own capability register
//! agrees with that layout, and what the variant has works while what it lacks is refused.

use std::time::Duration;

use card_regs as regs;
use xdma_core::{Card, CardAddr, ChannelKind, Direction, DmaBuffer, ErrorKind};
use xdma_sim::{SimCard, SimConfig, Variant};

fn open(v: Variant) -> SimCard {
    SimCard::open_with(&SimConfig {
        variant: Some(v),
        ..SimConfig::default()
    })
    .unwrap_or_else(|e| panic!("open the {} variant: {e}", v.name()))
}

fn field(value: u32, lsb: u32, bits: u32) -> u32 {
    (value >> lsb) & ((1 << bits) - 1)
}

fn count(card: &SimCard, dir: Direction, kind: ChannelKind) -> u32 {
    card.info()
        .channels(dir)
        .iter()
        .filter(|c| c.kind == kind)
        .count() as u32
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(29) ^ seed)
        .collect()
}

#[test]
fn each_variant_reports_in_caps_the_channels_the_host_sees() {
    use regs::caps;
    for v in Variant::ALL {
        let card = open(v);
        let c = card.read_reg(u64::from(regs::CAPS)).expect("CAPS");
        let n = v.name();
        let mm = count(&card, Direction::H2C, ChannelKind::MemoryMapped)
            + count(&card, Direction::C2H, ChannelKind::MemoryMapped);
        assert_eq!(
            field(c, caps::MM_LSB, caps::MM_BITS),
            u32::from(mm > 0),
            "{n}: {c:#x}"
        );
        let h2c_st = count(&card, Direction::H2C, ChannelKind::Stream);
        let c2h_st = count(&card, Direction::C2H, ChannelKind::Stream);
        assert_eq!(
            field(c, caps::STREAM_LSB, caps::STREAM_BITS),
            u32::from(h2c_st + c2h_st > 0),
            "{n}: {c:#x}"
        );
        assert_eq!(
            field(c, caps::H2C_STREAMS_LSB, caps::H2C_STREAMS_BITS),
            h2c_st,
            "{n}"
        );
        assert_eq!(
            field(c, caps::C2H_STREAMS_LSB, caps::C2H_STREAMS_BITS),
            c2h_st,
            "{n}"
        );
        assert_eq!(
            field(c, caps::SIM_ONLY_LSB, caps::SIM_ONLY_BITS),
            u32::from(v == Variant::Combined),
            "{n}: only the combined layout is simulation-only"
        );
        // The DDR the memory-mapped channels reach is the card's memory, and only theirs.
        let ddr_bits = field(c, caps::DDR_ADDR_BITS_LSB, caps::DDR_ADDR_BITS_BITS);
        if mm > 0 {
            assert_eq!(card.info().memory_size, 1u64 << ddr_bits, "{n}");
        } else {
            assert_eq!(ddr_bits, 0, "{n}: no DDR path");
        }
    }
}

#[test]
fn the_mm_variant_moves_blocks_through_ddr_and_has_no_stream() {
    let card = open(Variant::Mm);
    let data = DmaBuffer::from_slice(&pattern(64 * 1024, 3)).expect("buffer");
    card.write_mm(0, CardAddr(0x10_0000), &data).expect("write");
    let mut back = DmaBuffer::new(data.len()).expect("buffer");
    card.read_mm(0, CardAddr(0x10_0000), &mut back)
        .expect("read");
    assert!(back[..] == data[..]);
    let e = card
        .send_stream(0, &data)
        .expect_err("no stream channel in the mm variant");
    assert_eq!(e.kind(), ErrorKind::WrongChannelKind, "{e}");
    // A mode the build lacks is refused by the card: the write does not take.
    card.write_reg(u64::from(regs::CONTROL), regs::control::MODE_LOOP as u32)
        .ok();
    let mode = card.read_reg(u64::from(regs::CONTROL)).expect("CONTROL") & 0xff;
    assert_ne!(
        mode,
        regs::control::MODE_LOOP as u32,
        "LOOP is not in the mm build"
    );
}

#[test]
fn the_stream_variant_loops_packets_on_its_first_channels_and_has_no_memory() {
    let card = open(Variant::Stream);
    assert_eq!(
        card.info().find(Direction::H2C, ChannelKind::Stream),
        Some(0)
    );
    assert_eq!(
        card.info().find(Direction::C2H, ChannelKind::Stream),
        Some(0)
    );
    card.write_reg(u64::from(regs::CONTROL), regs::control::MODE_LOOP as u32)
        .expect("LOOP mode");
    let frame = DmaBuffer::from_slice(&pattern(1000, 7)).expect("frame");
    let receiver = card.clone();
    let got = std::thread::scope(|s| {
        let rx = s.spawn(move || {
            let mut buf = DmaBuffer::new(4096).expect("buffer");
            let t = receiver.recv_stream(0, &mut buf, Duration::from_micros(300));
            t.map(|t| buf[..t.bytes].to_vec())
        });
        card.send_stream(0, &frame).expect("send");
        rx.join().expect("receiver").expect("the packet comes back")
    });
    assert!(got[..] == frame[..]);
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let e = card
        .read_mm(0, CardAddr(0), &mut buf)
        .expect_err("no memory-mapped channel in the stream variant");
    assert_eq!(e.kind(), ErrorKind::WrongChannelKind, "{e}");
}
