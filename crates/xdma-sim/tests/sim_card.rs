//! What only the simulated card can show: throughput against the reference board's table,
//! the stream paths and interrupts of the RTL, stalls, and concurrency in simulated time.

use std::time::Duration;

use card_regs as regs;
use proptest::prelude::*;
use xdma_core::{Card, CardAddr, DmaBuffer, ErrorKind, Transfer};
use xdma_sim::{SimCard, SimConfig};

/// The card's identifier register, from the register table.
const CARD_ID: u32 = regs::id::RESET as u32;

/// A simulated card with one user interrupt line and an engine alignment of 64 bytes (so that
/// alignment rules show), changed by `f`.
fn open_with(f: impl FnOnce(&mut SimConfig)) -> SimCard {
    let mut cfg = SimConfig {
        events: 1,
        ..SimConfig::default()
    };
    cfg.ip.alignment = 64;
    f(&mut cfg);
    SimCard::open_with(&cfg).expect("open the simulated card")
}

fn open() -> SimCard {
    open_with(|_| {})
}

fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503)).to_le_bytes()[2])
        .collect()
}

/// One packet through LOOP mode: a receive posted on a thread of its own (with its own handle,
/// as every host thread of the card gets), the send on this one.
fn loop_once(card: &SimCard, frame: &[u8], buf: &mut [u8]) -> (Transfer, Transfer) {
    let receiver = card.clone();
    std::thread::scope(|s| {
        let rx = s.spawn(move || receiver.recv_stream(1, buf, Duration::from_micros(300)));
        let sent = card.send_stream(1, frame).expect("send");
        (
            sent,
            rx.join().expect("receiver").expect("the packet comes back"),
        )
    })
}

#[test]
fn loop_mode_returns_each_packet_and_a_small_buffer_splits_it() {
    let card = open();
    card.write_reg(u64::from(regs::CONTROL), regs::control::MODE_LOOP as u32)
        .expect("LOOP mode");
    let frame = DmaBuffer::from_slice(&pattern(1000, 11)).expect("frame");
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let (sent, got) = loop_once(&card, &frame, &mut buf);
    assert!(sent.end_of_packet && sent.bytes == 1000);
    assert_eq!(got.bytes, 1000);
    assert!(got.end_of_packet);
    assert!(buf[..1000] == frame[..]);

    // A buffer smaller than the packet takes its start; the next receive takes the rest.
    let mut small = DmaBuffer::new(256).expect("buffer");
    let (_, a) = loop_once(&card, &frame, &mut small);
    assert_eq!((a.bytes, a.end_of_packet), (256, false));
    assert!(small[..] == frame[..256]);
    let b = card
        .recv_stream(1, &mut buf, Duration::from_micros(100))
        .expect("the rest");
    assert_eq!((b.bytes, b.end_of_packet), (744, true));
    assert!(buf[..744] == frame[256..]);
    // Nothing more is on its way.
    let e = card
        .recv_stream(1, &mut buf, Duration::from_micros(30))
        .expect_err("no third packet");
    assert_eq!(e.kind(), ErrorKind::Timeout);
}

#[test]
fn a_send_the_card_does_not_take_times_out() {
    // In LOOP mode with no receive posted the card holds H2C back; the send gives up after
    // the configured stall limit.
    let card = open_with(|c| c.stream_stall_limit_us = 20);
    card.write_reg(u64::from(regs::CONTROL), regs::control::MODE_LOOP as u32)
        .expect("LOOP mode");
    let frame = DmaBuffer::from_slice(&pattern(8192, 2)).expect("frame");
    let e = card.send_stream(1, &frame).expect_err("nobody receives");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.to_string().contains("s_axis_h2c0"), "names the bus: {e}");
    // Registers still work after the failed send.
    assert_eq!(card.read_reg(0).expect("id"), CARD_ID);
}

#[test]
fn a_receive_times_out_from_its_engines_start_as_the_driver_waits() {
    // The driver waits for a transfer from its engine's start: a receive of 1 us cannot
    // take a generated frame of 8 KiB (its descriptor fetch alone is a read round trip over
    // the link) and times out, while the driver's own work before the start does not count
    // against it: 30 us is then enough.
    let card = open();
    card.write_reg(u64::from(regs::SRC0_FRAME_LEN), 8192)
        .expect("frame length");
    card.write_reg(
        u64::from(regs::CONTROL),
        (regs::control::MODE_GEN | regs::control::CH0_EN_MASK) as u32,
    )
    .expect("GEN mode");
    let mut buf = DmaBuffer::new(8192).expect("buffer");
    let e = card
        .recv_stream(1, &mut buf, Duration::from_micros(1))
        .expect_err("too short to succeed");
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(e.to_string().contains("engine's start"), "{e}");
    // The driver's part before the start (submission 5 us, start 9 us) is longer than the
    // timeout: it does not count.
    let t = card
        .recv_stream(1, &mut buf, Duration::from_micros(30))
        .expect("a frame");
    assert_eq!(t.bytes, 8192);
    assert!(
        t.end_ps - t.start_ps > 30_000_000,
        "the call took longer than its timeout"
    );
}

#[test]
fn generated_frames_arrive_valid_on_both_c2h_streams() {
    let card = open();
    let r = |reg: u32| u64::from(reg);
    card.write_reg(r(regs::SRC0_FRAME_LEN), 512)
        .expect("length 0");
    card.write_reg(r(regs::SRC1_FRAME_LEN), 256)
        .expect("length 1");
    card.write_reg(
        r(regs::CONTROL),
        (regs::control::MODE_GEN | regs::control::CH0_EN_MASK | regs::control::CH1_EN_MASK) as u32,
    )
    .expect("GEN mode");
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    for (channel, len) in [(1, 512), (2, 256)] {
        let mut seq = Vec::new();
        for _ in 0..3 {
            let t = card
                .recv_stream(channel, &mut buf, Duration::from_micros(200))
                .expect("a generated frame");
            assert_eq!(t.bytes, len);
            assert!(t.end_of_packet);
            let p = frame::parse(&buf[..t.bytes]).expect("a valid frame");
            assert_eq!(usize::from(p.header.channel), channel - 1);
            seq.push(p.header.sequence);
        }
        assert!(seq.windows(2).all(|w| w[1] > w[0]), "{seq:?}");
    }
}

#[test]
fn the_capture_ring_raises_the_interrupt_and_its_frames_read_back_over_dma() {
    let card = open();
    let r = |reg: u32| u64::from(reg);
    let base = 0x20_0000u32;
    card.write_reg(r(regs::CAP_BASE), base).expect("base");
    card.write_reg(r(regs::CAP_SIZE), 64 << 10).expect("size");
    card.write_reg(r(regs::SRC0_FRAME_LEN), 1024)
        .expect("length");
    card.write_reg(r(regs::CAP_IRQ_LEVEL), 2048).expect("level");
    card.write_reg(r(regs::IRQ_ENABLE), regs::irq_enable::CAP_FILL_MASK as u32)
        .expect("enable");
    // No interrupt before capture runs.
    let e = card
        .wait_event(0, Duration::from_micros(20))
        .expect_err("nothing yet");
    assert_eq!(e.kind(), ErrorKind::Timeout);
    card.write_reg(
        r(regs::CONTROL),
        (regs::control::MODE_CAPTURE | regs::control::CH0_EN_MASK) as u32,
    )
    .expect("CAPTURE mode");
    let n = card
        .wait_event(0, Duration::from_micros(200))
        .expect("the fill interrupt");
    assert!(n >= 1);
    let status = card.read_reg(r(regs::IRQ_STATUS)).expect("status");
    assert_ne!(status & regs::irq_status::CAP_FILL_MASK as u32, 0);
    card.write_reg(r(regs::CONTROL), 0).expect("stop");
    let wptr = card.read_reg(r(regs::CAP_WPTR)).expect("write pointer");
    assert!(wptr >= 2048, "{wptr}");
    let mut ring = DmaBuffer::new(2048).expect("buffer");
    card.read_mm(0, CardAddr(u64::from(base)), &mut ring)
        .expect("read the ring");
    for k in 0..2 {
        let p = frame::parse(&ring[k * 1024..(k + 1) * 1024]).expect("a valid captured frame");
        assert_eq!(p.header.sequence, k as u32);
    }
}

#[test]
fn channels_run_concurrently_in_simulated_time() {
    let card = open();
    let data = DmaBuffer::from_slice(&pattern(256 << 10, 5)).expect("data");
    card.write_mm(0, CardAddr(0x80_0000), &data).expect("fill");
    let (writer, reader) = (card.clone(), card.clone());
    let (w, r) = std::thread::scope(|s| {
        let w = s.spawn(|| writer.write_mm(0, CardAddr(0), &data).expect("write"));
        let r = s.spawn(|| {
            let mut back = DmaBuffer::new(256 << 10).expect("buffer");
            let t = reader
                .read_mm(0, CardAddr(0x80_0000), &mut back)
                .expect("read");
            assert!(back[..] == data[..]);
            t
        });
        (w.join().expect("writer"), r.join().expect("reader"))
    });
    // Both directions were moving data at the same time on the card's clock.
    assert!(
        w.start_ps < r.end_ps && r.start_ps < w.end_ps,
        "write {:?} and read {:?} do not overlap",
        (w.start_ps, w.end_ps),
        (r.start_ps, r.end_ps)
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any address and length, with the IP's unaligned mode: partial beats through strobes,
    /// bursts cut at 4 KiB, and nothing written outside the range.
    #[test]
    fn unaligned_transfers_round_trip(addr in 0u64..20_000, len in 1usize..6000, seed in any::<u32>()) {
        let card = open_with(|c| c.ip.alignment = 1);
        let around = DmaBuffer::from_slice(&pattern(len + 64, seed ^ 1)).expect("data");
        let lo = addr.saturating_sub(32);
        card.write_mm(0, CardAddr(lo), &around).expect("background");
        let data = pattern(len, seed);
        card.write_mm(0, CardAddr(addr), &data).expect("write");
        let mut back = vec![0u8; len + 64];
        card.read_mm(0, CardAddr(lo), &mut back).expect("read");
        let at = (addr - lo) as usize;
        prop_assert!(back[at..at + len] == data[..]);
        prop_assert!(back[..at] == around[..at]);
        prop_assert!(back[at + len..] == around[at + len..len + 64]);
    }
}

#[test]
fn the_read_window_bounds_c2h_throughput() {
    // The engine's window of outstanding reads over the read round trip (engine plus the
    // RTL's own latency) sets the C2H rate: a narrow window must be slower in proportion. The
    // round trip is the acknowledge window's (the independent inbound path): with the ordered
    // server an ID lives only until its write is handed to the PCIe block, and the server's
    // drain, not the window, bounds a read from 4 IDs up.
    let rate = |window: u32| {
        let card = open_with(|c| {
            c.ip.c2h_request_ids = window;
            c.timing.root.inbound = xdma_sim::config::timing::Inbound::Independent;
        });
        let mut buf = DmaBuffer::new(256 << 10).expect("buffer");
        let t = card.read_mm(0, CardAddr(0), &mut buf).expect("read");
        let data_ps = t.end_ps - t.start_ps;
        (256u64 << 10) as f64 / data_ps as f64 * 1e6
    };
    let (narrow, wide) = (rate(2), rate(8));
    println!("C2H 256 KiB: window 2 {narrow:.0} MB/s, window 8 {wide:.0} MB/s");
    assert!(
        wide > 2.0 * narrow,
        "window 8 {wide:.0} MB/s vs window 2 {narrow:.0} MB/s"
    );
}

#[test]
fn the_driver_nodes_requests_reach_the_card_as_the_driver_sends_them() {
    let card = open();
    let size = card.info().memory_size;
    let mut b = DmaBuffer::new(4096).expect("buffer");
    // The API refuses a request past the card's memory before anything runs.
    let e = card
        .read_mm(0, CardAddr(size), &mut b)
        .expect_err("past the memory");
    assert_eq!(e.kind(), ErrorKind::OutOfRange);
    // A node's request goes to the card, which refuses it (ERROR.DMA_ADDR): the read's engine
    // stops on its first descriptor, which the driver leaves to its timeout; the write
    // completes, since the driver enables no write errors.
    let e = card
        .node_read_mm(0, CardAddr(size), &mut b)
        .expect_err("past the memory");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    let page = DmaBuffer::from_slice(&pattern(4096, 1)).expect("buffer");
    card.node_write_mm(0, CardAddr(size), &page)
        .expect("the driver reports success");
    let err = u64::from(card.read_reg(u64::from(regs::ERROR)).expect("ERROR"));
    assert_ne!(err & regs::error::DMA_ADDR_MASK, 0);
    // The driver's own alignment rule (the engine asks for 64 bytes here): the buffer and the
    // card address must be alike modulo 64, else EINVAL.
    let e = card
        .node_read_mm(0, CardAddr(8), &mut b)
        .expect_err("misaligned");
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    // And an ordinary request through a node works as through the API.
    let data = DmaBuffer::from_slice(&pattern(8192, 2)).expect("buffer");
    card.node_write_mm(0, CardAddr(0x1_0000), &data)
        .expect("write");
    let mut back = DmaBuffer::new(data.len()).expect("buffer");
    card.node_read_mm(0, CardAddr(0x1_0000), &mut back)
        .expect("read");
    assert!(back[..] == data[..]);
}

/// A stream node's read waits as the driver's does, and its two ends other than data abort the
/// engine and leave the channel usable: the front end's `stop` (the file released) ends it with
/// nothing, the wall-clock timeout (the driver's `c2h_timeout`) with a timeout; a packet looped
/// back afterwards arrives whole.
#[test]
fn a_node_stream_read_ends_on_stop_or_timeout_and_the_channel_goes_on() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;
    let card = open();
    card.write_reg(u64::from(regs::CONTROL), regs::control::MODE_LOOP as u32)
        .expect("LOOP mode");
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let got = std::thread::scope(|s| {
        let reader = card.clone();
        let stop = &stop;
        let buf = &mut buf;
        let r = s.spawn(move || {
            reader.node_read_stream(1, buf, true, Some(Duration::from_secs(30)), &|| {
                stop.load(Ordering::SeqCst)
            })
        });
        std::thread::sleep(Duration::from_millis(100));
        stop.store(true, Ordering::SeqCst);
        r.join().expect("reader")
    });
    assert!(matches!(got, Ok(None)), "a stopped read: {got:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let started = Instant::now();
    let e = card
        .node_read_stream(1, &mut buf, true, Some(Duration::from_millis(300)), &|| {
            false
        })
        .expect_err("no data within the timeout");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    let frame = DmaBuffer::from_slice(&pattern(1000, 5)).expect("frame");
    let (_, got) = loop_once(&card, &frame, &mut buf);
    assert_eq!(got.bytes, 1000);
    assert_eq!(&buf[..1000], &frame[..]);
}

#[test]
fn a_long_transfer_reports_its_progress_to_a_callback_as_it_goes() {
    use std::sync::{Arc, Mutex};
    use xdma_core::{Progress, ProgressReport};
    let card = open();
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let s = seen.clone();
    card.set_progress(ProgressReport::callback(move |p| {
        s.lock().expect("reports").push(p.clone());
    }))
    .expect("set the progress report");
    // Three of the driver's engine runs (8 MiB each at most): two reports on the way, one at
    // the end.
    let len = (16 << 20) + 4096;
    let data = DmaBuffer::from_slice(&pattern(len, 5)).expect("data");
    card.write_mm(0, CardAddr(0x10_0000), &data).expect("write");
    let reports = std::mem::take(&mut *seen.lock().expect("reports"));
    let along: Vec<u64> = reports
        .iter()
        .filter(|p| !p.finished)
        .map(|p| p.done)
        .collect();
    assert!(
        along.len() >= 2 && along.windows(2).all(|w| w[0] < w[1]),
        "reports on the way, growing: {reports:?}"
    );
    assert!(along.iter().all(|&d| d > 0 && d < len as u64), "{along:?}");
    let last = reports.last().expect("a last report");
    assert!(last.finished && last.done == len as u64 && last.total == len as u64);
    assert_eq!(
        (last.op, last.channel, last.addr),
        ("memory-mapped H2C write", 0, CardAddr(0x10_0000))
    );
    // A read reports too; Off stops the reports.
    let mut back = DmaBuffer::new(len).expect("buffer");
    card.read_mm(0, CardAddr(0x10_0000), &mut back)
        .expect("read");
    assert!(back[..] == data[..]);
    let reads = std::mem::take(&mut *seen.lock().expect("reports"));
    assert!(
        reads
            .last()
            .is_some_and(|p| p.finished && p.op == "memory-mapped C2H read"),
        "{reads:?}"
    );
    card.set_progress(ProgressReport::Off).expect("off");
    card.write_mm(0, CardAddr(0), &data[..4096]).expect("write");
    assert!(seen.lock().expect("reports").is_empty());
}

#[test]
fn a_transfer_past_the_card_memory_names_where_the_size_comes_from() {
    let card = open();
    let mem = card.info().memory_size;
    let e = card
        .write_mm(0, CardAddr(mem - 64), &DmaBuffer::new(128).expect("buffer"))
        .expect_err("past the end");
    assert_eq!(e.kind(), ErrorKind::OutOfRange);
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("{:#x}", mem - 64)) && msg.contains("RTL"),
        "{msg}"
    );
}
