//! The driver model against the register-level IP in front of the card's RTL. The expected
//! values come from the card's variant table, plain arithmetic on the buffers, the driver's
//! source (which errno a path returns) and what the unmodified driver did against the same IP
//! in a virtual machine (`xtask/guest/checks.sh`: a C2H read past the DDR times out, an H2C
//! write past it completes, a stream read with no data times out and leaves the card usable).

use std::time::Duration;

use rstest::rstest;
use xdma_driver::{Costs, DescLayout, Dir, Driver, Errno, HostRam, InterruptMode, Params};
use xdma_ip::{PcieConfig, Variant, XdmaIp};

/// Host memory above 4 GiB, so that every address needs its upper half.
const RAM_BASE: u64 = 0x1_0000_0000;
const RAM_BYTES: usize = 8 << 20;

fn driver(variant: Variant, params: Params) -> Driver {
    let cfg = variant.ip_config().expect("the variant's top is built");
    let ip = XdmaIp::new(cfg).expect("the IP builds");
    Driver::probe(ip, HostRam::new(RAM_BASE, RAM_BYTES), params).expect("probe")
}

fn params(mode: &str) -> Params {
    let mut p = Params::default();
    match mode {
        "msix" => {}
        "msi" => p.interrupt_mode = InterruptMode::Msi,
        "legacy" => p.interrupt_mode = InterruptMode::Legacy,
        "poll" => p.poll_mode = true,
        other => panic!("no mode {other}"),
    }
    // Short timeouts keep the failure paths' simulated waits small: 0.4 ms of axi_aclk.
    p.h2c_timeout = Duration::from_micros(400);
    p.c2h_timeout = Duration::from_micros(400);
    p
}

/// Test data: the frame format's PRBS-31 bytes from `seed`.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut v = vec![0; len];
    frame::fill_payload(frame::Pattern::Prbs, seed, 0, &mut v);
    v
}

#[test]
fn probe_finds_the_variants_engines() {
    for v in Variant::ALL {
        let d = driver(v, Params::default());
        let kinds = |k: Vec<xdma_ip::EngineKind>| -> Vec<bool> {
            k.into_iter()
                .map(|k| k == xdma_ip::EngineKind::Stream)
                .collect()
        };
        assert_eq!(d.channels(Dir::H2c), kinds(v.h2c()), "{v:?} H2C");
        assert_eq!(d.channels(Dir::C2h), kinds(v.c2h()), "{v:?} C2H");
    }
}

#[rstest]
fn memory_mapped_round_trips_in_every_mode(#[values("msix", "msi", "legacy", "poll")] mode: &str) {
    let mut d = driver(Variant::Mm, params(mode));
    // (card address, length, where the buffer starts in its page)
    for (i, &(addr, len, off)) in [
        (0u64, 1usize, 0usize),
        (0x1000, 4096, 0),
        (0x3000, 10_000, 0xF00),
        (0x1_0001, 65_536 + 3, 7),
    ]
    .iter()
    .enumerate()
    {
        let data = pattern(len, i as u32 + 1);
        let wrote = d.write(0, addr, &data, off).expect("write");
        assert_eq!(wrote, len, "{mode}: bytes written");
        let got = d.read(0, addr, len, (off + 5) % 4096, false).expect("read");
        assert_eq!(got.data.len(), len);
        assert!(
            got.data == data,
            "{mode}: {len} bytes at {addr:#x} came back changed"
        );
    }
}

#[test]
fn a_buffer_is_cut_into_one_descriptor_per_page() {
    let mut d = driver(Variant::Mm, Params::default());
    let before = d.ip().stats().descriptors;
    // 512 bytes starting 256 bytes before a page's end: two pieces.
    d.write(0, 0, &[0x5A; 512], 4096 - 256).expect("write");
    assert_eq!(d.ip().stats().descriptors - before, 2);
    // 3 pages and 1 byte, page aligned: four pieces.
    let before = d.ip().stats().descriptors;
    d.write(0, 0, &vec![1; 3 * 4096 + 1], 0).expect("write");
    assert_eq!(d.ip().stats().descriptors - before, 4);
}

#[test]
fn fixed_address_mode_keeps_the_card_address_and_checks_alignment_as_xdma_ko() {
    // xdma.ko (`transfer_build`): with `non_incr_addr` every descriptor gets the request's card
    // address; `check_transfer_align`: the buffer and card address aligned to the engine's
    // alignment and the length a multiple of its granularity, else EINVAL; the alignments
    // come from the engine's register, read again after ADDRMODE_SET (16-byte beats here).
    let mut d = driver(Variant::Mm, Params::default());
    d.addrmode_set(Dir::H2c, 0, true).expect("ADDRMODE_SET");
    assert!(d.addrmode_get(Dir::H2c, 0).expect("ADDRMODE_GET"));
    let einval = |r: xdma_driver::Result<usize>| match r {
        Err(e) => e.kind() == Some(Errno::Invalid),
        Ok(_) => false,
    };
    assert!(
        einval(d.write(0, 0x1008, &[1; 64], 8)),
        "card address off a beat"
    );
    assert!(einval(d.write(0, 0x1000, &[1; 64], 8)), "buffer off a beat");
    assert!(einval(d.write(0, 0x1000, &[1; 60], 0)), "length off a beat");
    // Three pages of data in three descriptors, all at card address 0x2000. This card's AXI
    // port answers the FIXED bursts with SLVERR, and the driver enables no write errors, so
    // the write completes and the card's memory keeps what it had.
    let before = d.ip().stats().descriptors;
    let data = pattern(3 * 4096, 5);
    assert_eq!(d.write(0, 0x2000, &data, 0).expect("write"), data.len());
    assert_eq!(d.ip().stats().descriptors - before, 3);
    let mut ddr = vec![0xEE; 64];
    d.ip()
        .card()
        .ddr_read(0x2000, &mut ddr)
        .expect("DDR backdoor");
    assert!(ddr.iter().all(|&b| b == 0), "nothing landed: {ddr:?}");
    let err = u64::from(d.user_read(u64::from(card_regs::ERROR)).expect("ERROR"));
    assert_ne!(err & card_regs::error::DMA_BURST_MASK, 0);
    // Back to incrementing: the same write lands, and a misaligned pair is refused only when
    // buffer and card address differ within the (1-byte) alignment, which never happens.
    d.addrmode_set(Dir::H2c, 0, false).expect("ADDRMODE_SET");
    assert_eq!(d.write(0, 0x2000, &data, 0).expect("write"), data.len());
    let mut ddr = vec![0; data.len()];
    d.ip()
        .card()
        .ddr_read(0x2000, &mut ddr)
        .expect("DDR backdoor");
    assert!(ddr == data);
    assert_eq!(d.write(0, 0x1008, &[1; 60], 3).expect("write"), 60);
}

#[test]
fn longer_than_the_ring_is_several_engine_runs() {
    // 2 048 descriptors a ring: with descriptors of at most 256 bytes, 600 KiB is 2 400 of them,
    // two engine runs of one request.
    let p = Params {
        desc_blen_max: 256,
        ..Params::default()
    };
    let mut d = driver(Variant::Mm, p);
    let data = pattern(600 << 10, 9);
    let before = d.ip().stats().descriptors;
    assert_eq!(d.write(0, 0, &data, 0).expect("write"), data.len());
    assert_eq!(d.ip().stats().descriptors - before, 2_400);
    let got = d.read(0, 0, data.len(), 0, false).expect("read");
    assert!(got.data == data);
}

#[test]
fn the_windows_layout_starts_every_transfer_at_its_buffers_start() {
    // Descriptors of at most 256 bytes make 512 KiB 2048 descriptors: the size of xdma.ko's
    // ring and, at 4 KiB pages, of an 8 MiB transfer, with a 2 000th of the data.
    let run = |desc_layout, max_read_request: Option<u32>| {
        let mut cfg = Variant::Mm.ip_config().expect("the variant's top is built");
        // A link whose read requests are smaller: the IP reports its size in the config
        // block, and the Windows rule sizes its fetches by it.
        cfg.pcie = max_read_request.map(|m| {
            let mut p = PcieConfig::default();
            p.link.max_read_request = m;
            p
        });
        let ip = XdmaIp::new(cfg).expect("the IP builds");
        let p = Params {
            desc_blen_max: 256,
            desc_layout,
            ..Params::default()
        };
        let mut d = Driver::probe(ip, HostRam::new(RAM_BASE, RAM_BYTES), p).expect("probe");
        // One descriptor first: xdma.ko's ring goes on from index 1.
        let small = pattern(256, 1);
        assert_eq!(d.write(0, 0, &small, 0).expect("write"), small.len());
        let big = pattern(512 << 10, 2);
        let (runs, fetches) = (d.ip().stats().messages, d.ip().stats().descriptor_fetches);
        assert_eq!(d.write(0, 0, &big, 0).expect("write"), big.len());
        let got = d.read(0, 0, big.len(), 0, false).expect("read");
        assert!(got.data == big, "the data read back is what was written");
        (
            d.ip().stats().messages - runs,
            d.ip().stats().descriptor_fetches - fetches,
        )
    };
    // The Windows driver: the write is one engine run, fetched one 512-byte read request (16
    // descriptors) at a time, 2048 / 16 = 128 fetches; so is the read.
    let (runs, fetches) = run(DescLayout::FromStart, None);
    assert_eq!(runs, 2, "one run for the write, one for the read");
    assert_eq!(fetches, 2 * 128);
    // 256-byte read requests hold 8 descriptors: 256 fetches a transfer.
    let (runs, fetches) = run(DescLayout::FromStart, Some(256));
    assert_eq!(runs, 2);
    assert_eq!(fetches, 2 * 256);
    // xdma.ko: the write's 2048 descriptors reach the H2C ring's end after 2047 and take a
    // second run for the last one; the read runs on the C2H engine, whose own ring is still
    // at index 0, and is one run.
    let (runs, _) = run(DescLayout::Ring, None);
    assert_eq!(runs, 3);
}

fn user_w(d: &mut Driver, reg: u32, value: u64) {
    d.user_write(u64::from(reg), value as u32)
        .expect("user BAR write");
}

/// Source 0 making frames of `len` bytes onto C2H stream 0, from sequence number 0.
fn gen(d: &mut Driver, len: u64) {
    use card_regs::control;
    user_w(d, card_regs::CONTROL, control::MODE_OFF);
    user_w(d, card_regs::SRC0_FRAME_LEN, len);
    user_w(d, card_regs::CLEAR, 1);
    user_w(
        d,
        card_regs::CONTROL,
        control::MODE_GEN | control::CH0_EN_MASK,
    );
}

#[rstest]
fn stream_reads_end_at_end_of_packet(#[values("msix", "msi", "legacy", "poll")] mode: &str) {
    let mut d = driver(Variant::Stream, params(mode));
    for len in [64usize, 1000, 4132] {
        gen(&mut d, len as u64);
        for seq in 0..3u32 {
            // As the vendor's dma_from_device reads: whole pages, page aligned.
            let got = d
                .read(0, 0, len.div_ceil(4096) * 4096, 0, true)
                .expect("receive");
            assert!(
                got.end_of_packet,
                "{mode}: the read ends at the frame's end"
            );
            assert_eq!(got.data.len(), len, "{mode}: one frame a read");
            let f = frame::parse(&got.data).expect("a valid frame");
            assert_eq!(f.header.sequence, seq);
        }
        // Stop the source and read away the frame it may have finished meanwhile.
        user_w(&mut d, card_regs::CONTROL, card_regs::control::MODE_GEN);
        while d.read(0, 0, 65_536 + 4096, 0, true).is_ok() {}
    }
}

#[test]
fn a_read_of_several_descriptors_counts_the_frames_that_filled_them() {
    // With end-of-packet reads every descriptor asks for its interrupt, but frames of 64
    // bytes come faster than the handler runs: by the time it reads the completed count the
    // engine has closed every descriptor of the chain, each at a frame's end, and the driver
    // returns the sum of their lengths (`engine_service_final_transfer` looks for
    // end-of-packet only in a chain that stopped short). Each frame sits at the start of its
    // descriptor's piece, so the count covers four frames while only the first is where
    // the count says: a caller of the real driver sees the same, which is why the vendor's
    // tool reads streams a page at a time.
    let mut d = driver(Variant::Stream, params("msix"));
    // The handler's part: 2 us from the interrupt to the service, in which frames of 64
    // bytes keep coming.
    d.set_costs(Costs {
        irq: 2_000_000,
        ..Costs::default()
    });
    gen(&mut d, 64);
    // Pieces of 3 996, 4 096, 4 096 and 100 bytes: the buffer starts 100 bytes into a page.
    let got = d.read(0, 0, 3 * 4096, 100, true).expect("receive");
    assert_eq!(got.data.len(), 4 * 64, "four descriptors, one frame each");
    assert_eq!(
        frame::parse(&got.data[..64])
            .expect("frame 0")
            .header
            .sequence,
        0
    );
    assert!(
        frame::parse(&got.data[64..128]).is_err(),
        "frame 1 is at 3 996, not 64"
    );
}

#[test]
fn stream_writes_reach_the_checker_as_whole_frames() {
    let mut d = driver(Variant::Stream, params("msix"));
    user_w(&mut d, card_regs::CONTROL, card_regs::control::MODE_CHECK);
    user_w(&mut d, card_regs::CLEAR, 1);
    for seq in 0..4u32 {
        let header = frame::Header {
            channel: 0,
            pattern: frame::Pattern::Counter,
            sequence: seq,
            timestamp: 0,
            seed: 0,
        };
        let f = frame::build(&header, 3000).expect("a frame");
        // Each frame from a buffer 0xF00 into a page: its end-of-packet on the last of
        // several descriptors.
        assert_eq!(d.write(0, 0, &f, 0xF00).expect("send"), f.len());
    }
    d.idle(2_000).expect("idle");
    let good = d
        .user_read(u64::from(card_regs::CHK_GOOD))
        .expect("CHK_GOOD");
    let bad = d.user_read(u64::from(card_regs::CHK_BAD)).expect("CHK_BAD");
    assert_eq!((good, bad), (4, 0));
}

#[rstest]
fn a_stream_read_with_no_data_times_out_and_the_card_still_works(
    #[values("msix", "legacy", "poll")] mode: &str,
) {
    let mut d = driver(Variant::Stream, params(mode));
    let start = d.cycles();
    let err = d
        .read(0, 0, 4096, 0, true)
        .expect_err("nothing on the stream");
    assert_eq!(err.kind(), Some(Errno::TimedOut), "{err}");
    // c2h_timeout of 0.4 ms at 250 MHz: 100 000 cycles, give or take one wait step.
    let waited = d.cycles() - start;
    assert!(
        (100_000..100_100).contains(&waited),
        "waited {waited} cycles"
    );
    gen(&mut d, 300);
    let got = d
        .read(0, 0, 4096, 0, true)
        .expect("receive after the timeout");
    assert_eq!(
        frame::parse(&got.data)
            .expect("a valid frame")
            .header
            .sequence,
        0
    );
}

#[rstest]
fn dma_past_the_ddr_fails_as_the_driver_fails_it(#[values("msix", "poll")] mode: &str) {
    let mut d = driver(Variant::Mm, params(mode));
    // The driver enables the engines' read errors only: the card's failed write goes
    // unnoticed, the failed read stops the engine with nothing completed, which the driver
    // leaves to the timeout.
    d.write(0, 0x8000_0000, &[7; 4096], 0)
        .expect("H2C past the DDR completes");
    let err = d
        .read(0, 0x8000_0000, 4096, 0, false)
        .expect_err("C2H past the DDR fails");
    assert_eq!(err.kind(), Some(Errno::TimedOut), "{err}");
    // The engine was stopped; the next round trip works.
    let p = pattern(65_536, 11);
    d.write(0, 0x4000, &p, 0).expect("write after the errors");
    assert!(d.read(0, 0x4000, p.len(), 0, false).expect("read").data == p);
}

#[rstest]
fn a_dead_wait_ends_at_once_when_asked(#[values(false, true)] end_dead_waits: bool) {
    // The read past the DDR stops its engine on the first descriptor: the driver's call waits
    // out c2h_timeout (400 us here), or with `end_dead_waits` ends as soon as the engine has
    // stopped, with the same errno.
    let p = Params {
        end_dead_waits,
        ..params("msix")
    };
    let timeout = p.c2h_timeout;
    let mut d = driver(Variant::Mm, p);
    let start = d.now();
    let err = d
        .read(0, 0x8000_0000, 4096, 0, false)
        .expect_err("C2H past the DDR fails");
    assert_eq!(err.kind(), Some(Errno::TimedOut), "{err}");
    let took = d.now() - start;
    let timeout_ps = timeout.as_nanos() as u64 * 1000;
    if end_dead_waits {
        // The engine's read of the card and its error take a few microseconds.
        assert!(took < timeout_ps / 10, "ended after {took} ps");
    } else {
        assert!(took >= timeout_ps, "ended after {took} ps");
    }
    // A healthy read is not cut short by it.
    let data = pattern(256 << 10, 3);
    d.write(0, 0x4000, &data, 0).expect("write");
    assert!(d.read(0, 0x4000, data.len(), 0, false).expect("read").data == data);
}

#[test]
fn bad_calls_get_the_drivers_errno() {
    let mut d = driver(Variant::Mm, Params::default());
    assert_eq!(
        d.write(3, 0, &[1], 0).expect_err("no channel 3").kind(),
        Some(Errno::Invalid)
    );
    assert_eq!(
        d.write(0, 0, &[], 0).expect_err("nothing to write").kind(),
        Some(Errno::Invalid)
    );
    assert_eq!(
        d.read(0, 0, RAM_BYTES, 0, false)
            .expect_err("larger than host memory")
            .kind(),
        Some(Errno::NoMemory)
    );
}

#[test]
fn the_user_bar_reads_the_cards_registers() {
    let mut d = driver(Variant::Combined, Params::default());
    assert_eq!(
        d.user_read(u64::from(card_regs::ID)).expect("ID"),
        card_regs::id::RESET as u32
    );
    d.user_write(u64::from(card_regs::SCRATCH), 0x1234_5678)
        .expect("SCRATCH");
    assert_eq!(
        d.user_read(u64::from(card_regs::SCRATCH)).expect("SCRATCH"),
        0x1234_5678
    );
}

#[test]
fn a_receive_posted_before_the_send_takes_the_looped_packet() {
    // LOOP mode passes H2C frames to C2H stream 0 with no buffer for a whole packet, so the
    // send completes only while a receive is posted, as the vendor's tools run it (the
    // reader started first).
    let mut d = driver(Variant::Stream, params("msix"));
    user_w(&mut d, card_regs::CONTROL, card_regs::control::MODE_LOOP);
    for (i, len) in [1usize, 100, 4100, 20_000].into_iter().enumerate() {
        let p = pattern(len, 30 + i as u32);
        let rx = d
            .start_read(0, 0, len.div_ceil(4096) * 4096, 0, true)
            .expect("receive");
        assert_eq!(d.write(0, 0, &p, 0).expect("send"), len);
        let got = d.wait(rx).expect("the looped packet");
        assert!(got.end_of_packet);
        assert!(got.data == p, "a {len}-byte packet came back changed");
    }
}

#[test]
fn both_sources_read_at_once_on_their_own_channels() {
    let mut d = driver(Variant::Stream, params("msix"));
    use card_regs::control;
    user_w(&mut d, card_regs::SRC0_FRAME_LEN, 4132);
    user_w(&mut d, card_regs::SRC0_FRAME_LEN + 0x40, 2000);
    user_w(&mut d, card_regs::CLEAR, 1);
    user_w(
        &mut d,
        card_regs::CONTROL,
        control::MODE_GEN | control::CH0_EN_MASK | control::CH1_EN_MASK,
    );
    for seq in 0..4u32 {
        let a = d.start_read(0, 0, 8192, 0, true).expect("C2H 0");
        let b = d.start_read(1, 0, 4096, 0, true).expect("C2H 1");
        // Wait for the second first: the first goes on meanwhile.
        let fb = d.wait(b).expect("C2H 1's frame");
        let fa = d.wait(a).expect("C2H 0's frame");
        assert_eq!((fa.data.len(), fb.data.len()), (4132, 2000));
        assert_eq!(frame::parse(&fa.data).expect("frame").header.sequence, seq);
        let pb = frame::parse(&fb.data).expect("frame").header;
        assert_eq!((pb.sequence, pb.channel), (seq, 1));
    }
}

#[test]
fn calls_on_one_engine_run_in_order() {
    let mut d = driver(Variant::Mm, params("msix"));
    let first = pattern(8192, 1);
    let second = pattern(8192, 2);
    let a = d.start_write(0, 0x1000, &first, 0).expect("first");
    let b = d.start_write(0, 0x1000, &second, 0).expect("second");
    // Waiting for the second runs the first before it, on the same engine.
    assert_eq!(d.wait(b).expect("second").written, 8192);
    assert_eq!(d.wait(a).expect("first").written, 8192);
    assert!(d.read(0, 0x1000, 8192, 0, false).expect("read").data == second);
}

#[test]
fn a_cancelled_receive_stops_its_engine_and_the_next_one_works() {
    let mut d = driver(Variant::Stream, params("msix"));
    let rx = d.start_read(0, 0, 4096, 0, true).expect("receive");
    d.idle(5_000).expect("idle");
    assert!(
        d.poll(rx).expect("poll").is_none(),
        "nothing to receive yet"
    );
    d.cancel(rx).expect("cancel");
    assert_eq!(
        d.poll(rx)
            .expect("poll")
            .expect("gone")
            .expect_err("gone")
            .kind(),
        Some(Errno::Invalid)
    );
    gen(&mut d, 500);
    let got = d
        .read(0, 0, 4096, 0, true)
        .expect("receive after the cancel");
    assert_eq!(got.data.len(), 500);
    assert_eq!(frame::parse(&got.data).expect("frame").header.sequence, 0);
}
