//! The simulated card as a program lives with it: simulated time that does not depend on the
//! host's scheduling, calls that are cancelled when their caller gives up, a card that can be
//! dropped whatever it is doing, configuration that is checked, and end-of-packet as the API
//! defines it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use card_regs as regs;
use xdma_core::{AsyncCard, Card, CardAddr, DmaBuffer, ErrorKind};
use xdma_sim::{SimCard, SimConfig};

fn open_with(f: impl FnOnce(&mut SimConfig)) -> SimCard {
    let mut cfg = SimConfig::default();
    f(&mut cfg);
    SimCard::open_with(&cfg).expect("open the simulated card")
}

fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503)).to_le_bytes()[2])
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime")
}

/// A small deterministic generator for the host-side delays of the jittered run.
struct Jitter(u64);

impl Jitter {
    fn pause(&mut self) {
        if self.0 == 0 {
            return;
        }
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        std::thread::sleep(Duration::from_micros((self.0 >> 33) % 4000));
    }
}

/// One multi-threaded program: a writer thread and a reader thread on the memory-mapped
/// channels, an async task queueing writes on the same H2C channel as the writer and reading
/// a register, and a thread receiving generated frames on a C2H stream. Returns every call's
/// (actor, simulated start, simulated end). With `jitter`, every actor sleeps a random few
/// milliseconds of wall time between its calls.
/// Every call of a program: (actor, simulated start, simulated end).
type Log = Vec<(String, u64, u64)>;

/// A change to the default settings.
type Tweak = fn(&mut SimConfig);

fn program(jitter: bool) -> Log {
    let card = SimCard::open_with(&SimConfig::default()).expect("open");
    let reg = |r: u32| u64::from(r);
    card.write_reg(reg(regs::SRC0_FRAME_LEN), 1024)
        .expect("frame length");
    card.write_reg(
        reg(regs::CONTROL),
        (regs::control::MODE_GEN | regs::control::CH0_EN_MASK) as u32,
    )
    .expect("GEN mode");
    let log: Arc<Mutex<Log>> = Arc::new(Mutex::new(Vec::new()));
    let seed = |k: u64| if jitter { 0x9e37 + k } else { 0 };
    let record = |log: &Arc<Mutex<Log>>, who: &str, s: u64, e: u64| {
        log.lock().expect("log").push((who.to_string(), s, e));
    };
    std::thread::scope(|s| {
        let (c, l) = (card.clone(), log.clone());
        s.spawn(move || {
            let mut j = Jitter(seed(1));
            for k in 0..6usize {
                j.pause();
                let data =
                    DmaBuffer::from_slice(&pattern(((k + 1) * 16) << 10, k as u32)).expect("data");
                let t = c.write_mm(0, CardAddr(0x10_0000), &data).expect("write");
                record(&l, "writer", t.start_ps, t.end_ps);
            }
        });
        let (c, l) = (card.clone(), log.clone());
        s.spawn(move || {
            let mut j = Jitter(seed(2));
            let mut buf = DmaBuffer::new(32 << 10).expect("buffer");
            for _ in 0..6 {
                j.pause();
                let t = c.read_mm(0, CardAddr(0x20_0000), &mut buf).expect("read");
                record(&l, "reader", t.start_ps, t.end_ps);
            }
        });
        let (c, l) = (card.clone(), log.clone());
        s.spawn(move || {
            let mut j = Jitter(seed(3));
            runtime().block_on(async {
                for k in 0..4u32 {
                    j.pause();
                    let a = DmaBuffer::from_slice(&pattern(8 << 10, k)).expect("data");
                    let b = DmaBuffer::from_slice(&pattern(8 << 10, k + 100)).expect("data");
                    // Two writes queued together on the writer's channel.
                    let fa = c.write_mm_async(0, CardAddr(0x30_0000), a);
                    let fb = c.write_mm_async(0, CardAddr(0x30_2000), b);
                    let ((ra, _), (rb, _)) = tokio::join!(fa, fb);
                    for t in [ra.expect("async write"), rb.expect("async write")] {
                        record(&l, "async", t.start_ps, t.end_ps);
                    }
                    let before = c.now_ps().expect("clock");
                    let id = c.read_reg_async(0).await.expect("register");
                    assert_eq!(id, regs::id::RESET as u32);
                    record(&l, "async-reg", before, c.now_ps().expect("clock"));
                }
            });
        });
        let (c, l) = (card.clone(), log.clone());
        s.spawn(move || {
            let mut j = Jitter(seed(4));
            let mut buf = DmaBuffer::new(1024).expect("buffer");
            for _ in 0..5 {
                j.pause();
                let t = c
                    .recv_stream(1, &mut buf, Duration::from_millis(1))
                    .expect("a generated frame");
                record(&l, "stream", t.start_ps, t.end_ps);
            }
        });
    });
    let before = card.now_ps().expect("clock");
    card.read_reg(0).expect("register after the threads");
    record(&log, "main", before, card.now_ps().expect("clock"));
    let mut v = log.lock().expect("log").clone();
    // Each actor's calls in its own order; actors one after the other.
    v.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    v
}

#[test]
fn simulated_time_does_not_depend_on_host_scheduling() {
    let calm = program(false);
    let jittered = program(true);
    assert_eq!(calm.len(), 6 + 6 + 8 + 4 + 5 + 1);
    for (a, b) in calm.iter().zip(&jittered) {
        assert_eq!(
            a, b,
            "the same call started or ended at another simulated time"
        );
    }
    assert_eq!(calm, jittered);
    // The actors did run at once: the writer's and the reader's transfers overlap.
    let span = |who: &str| {
        let v: Vec<_> = calm.iter().filter(|x| x.0 == who).collect();
        (v[0].1, v[v.len() - 1].2)
    };
    let (w, r) = (span("writer"), span("reader"));
    assert!(
        w.0 < r.1 && r.0 < w.1,
        "writer {w:?} and reader {r:?} overlap"
    );
}

#[test]
fn a_wait_past_the_wall_clock_bound_is_cancelled_and_says_so() {
    let card = open_with(|c| c.reply_timeout_s = 1);
    let t0 = Instant::now();
    let e = card
        .wait_event(0, Duration::from_secs(100))
        .expect_err("no interrupt comes");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    let text = e.to_string();
    assert!(
        text.contains("wall-clock") && text.contains("cancelled"),
        "the message says what happened: {text}"
    );
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    // The card goes on: the wait was aborted, so the next wait on that event is served at
    // once and times out in simulated time, and registers answer.
    let e = card
        .wait_event(0, Duration::from_micros(20))
        .expect_err("still no interrupt");
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(e.to_string().contains("simulated time"), "{e}");
    assert_eq!(card.read_reg(0).expect("id"), regs::id::RESET as u32);
    let t1 = Instant::now();
    drop(card);
    assert!(t1.elapsed() < Duration::from_secs(10), "{:?}", t1.elapsed());
}

#[test]
fn a_dropped_async_receive_leaves_the_stream_idle() {
    let card = open_with(|_| {});
    card.write_reg(u64::from(regs::CONTROL), regs::control::MODE_LOOP as u32)
        .expect("LOOP mode");
    let rt = runtime();
    rt.block_on(async {
        let buf = DmaBuffer::new(4096).expect("buffer");
        let pending = card.recv_stream_async(1, buf, Duration::from_secs(10));
        // The caller gives up after a little wall-clock time; the future is dropped.
        let gave_up = tokio::time::timeout(Duration::from_millis(50), pending).await;
        assert!(gave_up.is_err(), "nothing was sent, so nothing came");
    });
    // A packet now goes through LOOP and back as usual.
    let frame = pattern(1500, 7);
    let receiver = card.clone();
    let got = std::thread::scope(|s| {
        let rx = s.spawn(move || {
            let mut buf = DmaBuffer::new(4096).expect("buffer");
            let t = receiver
                .recv_stream(1, &mut buf, Duration::from_micros(500))
                .expect("the packet comes back");
            buf[..t.bytes].to_vec()
        });
        card.send_stream(1, &frame).expect("send");
        rx.join().expect("receiver")
    });
    assert_eq!(got, frame);
    let t = Instant::now();
    drop(card);
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn an_aborted_write_leaves_s_axi_idle_and_legal() {
    let card = open_with(|_| {});
    let rt = runtime();
    rt.block_on(async {
        let big = DmaBuffer::from_slice(&pattern(8 << 20, 1)).expect("data");
        let pending = card.write_mm_async(0, CardAddr(0), big);
        let gave_up = tokio::time::timeout(Duration::from_millis(200), pending).await;
        assert!(gave_up.is_err(), "8 MiB take longer than that to simulate");
    });
    // The aborted transfer's bursts drained; the next calls see a quiet, legal bus (its
    // monitor would fail them otherwise) and move the right data.
    let data = pattern(64 << 10, 2);
    card.write_mm(0, CardAddr(0x100_0000), &data)
        .expect("write after the abort");
    let mut back = vec![0u8; data.len()];
    card.read_mm(0, CardAddr(0x100_0000), &mut back)
        .expect("read after the abort");
    assert_eq!(back, data);
}

#[test]
fn dropping_the_card_while_a_transfer_drains_returns_promptly() {
    let card = open_with(|_| {});
    let rt = runtime();
    rt.block_on(async {
        let big = DmaBuffer::from_slice(&pattern(8 << 20, 3)).expect("data");
        let mut pending = Box::pin(card.read_mm_async(0, CardAddr(0), big));
        let _ = tokio::time::timeout(Duration::from_millis(100), &mut pending).await;
        // Leave the future to be dropped with the card still busy with it.
        drop(pending);
    });
    let t = Instant::now();
    drop(card);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "drop took {:?}",
        t.elapsed()
    );
}

#[test]
fn values_out_of_range_are_refused_naming_the_field() {
    let cases: &[(&str, Tweak)] = &[
        ("timing.link.flight_ns", |c| c.timing.link.flight_ns = 1e20),
        ("reply_timeout_s", |c| c.reply_timeout_s = 0),
        ("timing.host.submit_ns", |c| {
            c.timing.host.submit_ns = f64::NAN
        }),
        ("timing.root.read_latency_ns", |c| {
            c.timing.root.read_latency_ns = -1.0
        }),
        ("ip.c2h_request_ids", |c| c.ip.c2h_request_ids = 0),
        ("ip.pcie_tags", |c| c.ip.pcie_tags = 100_000),
        ("events", |c| c.events = 17),
        ("stream_stall_limit_us", |c| c.stream_stall_limit_us = 0),
        ("host_grace_ms", |c| c.host_grace_ms = 10_000_000),
    ];
    for (field, f) in cases {
        let mut cfg = SimConfig::default();
        f(&mut cfg);
        let e = SimCard::open_with(&cfg).expect_err("out of range");
        assert_eq!(e.kind(), ErrorKind::Config, "{field}: {e}");
        assert!(e.to_string().contains(field), "{field}: {e}");
    }
    // Through the configuration file as well; the memory size is the RTL's, not a setting.
    for text in [
        "[sim.timing.link]\nflight_ns = 1e20\n",
        "[sim]\nreply_timeout_s = 0\n",
        "[sim]\nmemory_size = 8589934592\n",
    ] {
        let cfg = xdma_core::Config::from_toml(text).expect("toml");
        let e = SimCard::open(&cfg).expect_err("refused");
        assert_eq!(e.kind(), ErrorKind::Config, "{text}: {e}");
    }
    // More events than the card has interrupt lines is refused when the card is built.
    let e = SimCard::open_with(&SimConfig {
        events: 2,
        ..SimConfig::default()
    })
    .expect_err("sim_top has one line");
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
}

#[test]
fn the_extremes_of_every_range_run_without_a_panic() {
    // Each field at the top of its range, one card each, doing a register access and a small
    // transfer each way: whatever the values, the answer is a result, never a dead thread.
    let cases: &[Tweak] = &[
        |c| {
            c.timing.link.flight_ns = 10_000.0;
            c.timing.root.read_latency_ns = 100_000.0;
            c.timing.root.ack_latency_ns = 100_000.0;
            c.timing.root.write_tlp_ns = 10_000.0;
            c.timing.root.read_tlp_ns = 10_000.0;
            c.timing.root.write_ns_per_byte = 100.0;
            c.timing.root.read_ns_per_byte = 100.0;
            c.timing.root.posted_header_credits = 4096;
        },
        |c| {
            c.timing.link.generation = 1;
            c.timing.link.lanes = 1;
            c.timing.link.max_payload = 128;
            c.timing.link.max_read_request = 128;
            c.timing.link.read_completion_boundary = 64;
            c.timing.link.tlps_per_dllp = 1.0;
            c.timing.link.skp_interval_symbols = 370.0;
            c.ip.h2c_request_ids = 2;
            c.ip.c2h_request_ids = 2;
            c.ip.pcie_tags = 1;
            c.ip.descriptor_block = 1;
            c.ip.max_burst_beats = 1;
            // The fewest credits: one header, one 128-byte max payload.
            c.timing.root.posted_header_credits = 1;
            c.timing.root.posted_data_credits = 8;
        },
        |c| {
            c.timing.link.generation = 5;
            c.timing.link.lanes = 32;
            c.timing.link.max_payload = 4096;
            c.timing.link.max_read_request = 4096;
            c.timing.link.read_completion_boundary = 4096;
            c.ip.h2c_request_ids = 64;
            c.ip.c2h_request_ids = 32;
            c.ip.pcie_tags = 256;
            c.ip.max_burst_beats = 256;
            c.ip.alignment = 128;
            // A 4096-byte max payload needs 256 data credits at least.
            c.timing.root.posted_data_credits = 65_536;
        },
        |c| {
            c.timing.host.register_ns = 10_000_000.0;
            c.timing.host.turnaround_ns = 10_000_000.0;
            c.timing.link.flight_ns = 0.0;
            c.timing.root.read_latency_ns = 0.0;
            c.timing.root.ack_latency_ns = 0.0;
            c.timing.root.write_ns_per_byte = 0.0;
            c.timing.root.read_ns_per_byte = 0.0;
            c.timing.root.posted_header_credits = 0;
            c.timing.root.posted_data_credits = 0;
            c.reply_timeout_s = 86_400;
            c.stream_stall_limit_us = 10_000_000;
        },
        |c| c.timing.root.inbound = xdma_sim::config::timing::Inbound::Independent,
    ];
    for (i, f) in cases.iter().enumerate() {
        let card = open_with(f);
        let data = DmaBuffer::from_slice(&pattern(8192, i as u32)).expect("data");
        let mut back = DmaBuffer::new(8192).expect("buffer");
        card.write_mm(0, CardAddr(0), &data).expect("write");
        card.read_mm(0, CardAddr(0), &mut back).expect("read");
        assert!(back[..] == data[..], "case {i}");
        assert_eq!(card.read_reg(0).expect("id"), regs::id::RESET as u32);
        // Timeouts at the end of the range saturate rather than overflow.
        let e = card
            .recv_stream(1, &mut back, Duration::from_micros(5))
            .expect_err("no frame");
        assert_eq!(e.kind(), ErrorKind::Timeout, "case {i}");
    }
    let card = open_with(|_| {});
    let mut buf = DmaBuffer::new(64).expect("buffer");
    let rt = runtime();
    rt.block_on(async {
        let f = card.recv_stream_async(1, buf, Duration::MAX);
        let r = tokio::time::timeout(Duration::from_millis(20), f).await;
        assert!(r.is_err(), "a receive with no end waits");
    });
    buf = DmaBuffer::new(64).expect("buffer");
    let e = card
        .recv_stream(1, &mut buf, Duration::from_micros(1))
        .expect_err("still nothing");
    assert_eq!(e.kind(), ErrorKind::Timeout);
}

#[test]
fn a_receive_that_exactly_fills_its_buffer_reports_no_end_of_packet() {
    // As `Transfer::end_of_packet` documents and the driver behaves: a receive that fills its
    // buffer cannot tell whether the packet ended there.
    let card = open_with(|_| {});
    card.write_reg(u64::from(regs::CONTROL), regs::control::MODE_LOOP as u32)
        .expect("LOOP mode");
    let frame = pattern(1024, 9);
    let receiver = card.clone();
    let (exact, shorter) = std::thread::scope(|s| {
        let rx = s.spawn(move || {
            let mut exact = DmaBuffer::new(1024).expect("buffer");
            let a = receiver
                .recv_stream(1, &mut exact, Duration::from_micros(500))
                .expect("packet");
            let mut larger = DmaBuffer::new(4096).expect("buffer");
            let b = receiver
                .recv_stream(1, &mut larger, Duration::from_micros(500))
                .expect("packet");
            (a, b)
        });
        card.send_stream(1, &frame).expect("send");
        card.send_stream(1, &frame[..1000]).expect("send");
        rx.join().expect("receiver")
    });
    assert_eq!((exact.bytes, exact.end_of_packet), (1024, false));
    assert_eq!((shorter.bytes, shorter.end_of_packet), (1000, true));
}

#[test]
fn random_pauses_on_every_bus_keep_the_data_and_cost_time() {
    let run = |pauses: Option<xdma_sim::RandomPauses>| {
        let card = open_with(|c| c.bus_pauses = pauses);
        let data = pattern(40_000, 5);
        let w = card.write_mm(0, CardAddr(0x1003), &data).expect("write");
        let mut back = vec![0u8; data.len()];
        let r = card.read_mm(0, CardAddr(0x1003), &mut back).expect("read");
        assert_eq!(back, data);
        card.write_reg(u64::from(regs::CONTROL), regs::control::MODE_LOOP as u32)
            .expect("LOOP mode");
        let frame = pattern(3000, 6);
        let receiver = card.clone();
        let got = std::thread::scope(|s| {
            let rx = s.spawn(move || {
                let mut buf = DmaBuffer::new(4096).expect("buffer");
                let t = receiver
                    .recv_stream(1, &mut buf, Duration::from_millis(1))
                    .expect("the packet comes back");
                buf[..t.bytes].to_vec()
            });
            card.send_stream(1, &frame).expect("send");
            rx.join().expect("receiver")
        });
        assert_eq!(got, frame);
        (w.end_ps - w.start_ps) + (r.end_ps - r.start_ps)
    };
    let calm = run(None);
    let paused = run(Some(xdma_sim::RandomPauses {
        seed: 11,
        percent: 40,
    }));
    assert!(
        paused > calm,
        "pauses slow the transfers: {paused} ps vs {calm} ps"
    );
}
