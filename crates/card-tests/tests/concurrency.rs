//! Concurrency: H2C and C2H at once from two threads; both C2H stream channels at once; several
//! tokio tasks on one card; several threads on one channel. Each thread and task has its own
//! clone of the card, as the API asks (on the simulated card a clone is one host thread with
//! its own clock).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use card_regs::control;
use card_tests::fixture::ok;
use card_tests::mm::{self, first_difference};
use card_tests::model::CardModel;
use card_tests::{pattern, regs, stream, Fixture, Mode};
use xdma::{AsyncCard, Card, CardAddr, DmaBuffer};

#[test]
fn h2c_and_c2h_from_two_threads() {
    let Some((b, h2c, c2h)) = Fixture::open_mm() else {
        return;
    };
    // The reader's range is written first; then one thread writes elsewhere while another
    // reads it back over and over.
    let mut fixed = vec![0u8; 64 << 10];
    pattern(77, &mut fixed);
    ok("write", mm::write(&b.card, h2c, 0xc0_0000, &fixed));
    let (wc, rc) = (b.card.clone(), b.card.clone());
    std::thread::scope(|s| {
        let w = s.spawn(move || {
            for i in 0..16u32 {
                let mut d = vec![0u8; 32 << 10];
                pattern(i, &mut d);
                let addr = 0xd0_0000 + u64::from(i) * (32 << 10);
                ok("write", mm::write(&wc, h2c, addr, &d));
            }
        });
        let fixed = &fixed;
        let r = s.spawn(move || {
            for _ in 0..8 {
                let back = ok("read", mm::read(&rc, c2h, 0xc0_0000, fixed.len()));
                if let Some(d) = first_difference(&back, fixed) {
                    panic!("read during writes elsewhere: {d}");
                }
            }
        });
        w.join().expect("writer");
        r.join().expect("reader");
    });
    for i in 0..16u32 {
        let mut d = vec![0u8; 32 << 10];
        pattern(i, &mut d);
        let addr = 0xd0_0000 + u64::from(i) * (32 << 10);
        let back = ok("read", mm::read(&b.card, c2h, addr, d.len()));
        if let Some(e) = first_difference(&back, &d) {
            panic!("block {i}: {e}");
        }
    }
}

#[test]
fn both_c2h_streams_at_once() {
    let b = Fixture::open();
    if let Some(why) = b.caps.lacks_mode(Mode::Gen) {
        return b.skip(&why);
    }
    let (c0, c1) = match (b.caps.source_channel(0), b.caps.source_channel(1)) {
        (Ok(a), Ok(c)) => (a, c),
        (Err(why), _) | (_, Err(why)) => return b.skip(&why),
    };
    let model = CardModel::new(b.caps.memory_size);
    let lens = [512usize, 2000];
    ok(
        "len",
        regs::write(&b.card, card_regs::SRC0_FRAME_LEN, lens[0] as u32),
    );
    ok(
        "len",
        regs::write(&b.card, card_regs::SRC1_FRAME_LEN, lens[1] as u32),
    );
    let mut m0 = model.clone();
    m0.write_reg(regs::by_name("SRC0_FRAME_LEN"), lens[0] as u32);
    let mut m1 = model;
    m1.write_reg(regs::by_name("SRC1_FRAME_LEN"), lens[1] as u32);
    ok(
        "CONTROL",
        regs::write(
            &b.card,
            card_regs::CONTROL,
            Mode::Gen.value() | (control::CH0_EN_MASK | control::CH1_EN_MASK) as u32,
        ),
    );
    let n = 12;
    let waits = &b.waits;
    std::thread::scope(|s| {
        for (src, ch, mut m) in [(0usize, c0, m0), (1, c1, m1)] {
            let card = b.card.clone();
            s.spawn(move || {
                let mut prev = None;
                for _ in 0..n {
                    let f = ok("frame", stream::recv_frame(&card, ch, lens[src], waits));
                    if let Err(e) = m.check_periodic(src, &f, &mut prev) {
                        panic!("{e}");
                    }
                }
            });
        }
    });
    ok(
        "CONTROL",
        regs::write(&b.card, card_regs::CONTROL, Mode::Gen.value()),
    );
    for (src, ch) in [(0usize, c0), (1, c1)] {
        let more = stream::drain(&b.card, ch, lens[src], waits, |f| {
            frame::parse(&f).map(|_| ()).map_err(|e| e.to_string())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let sent = ok("SENT", regs::read_named(&b.card, &format!("SRC{src}_SENT")));
        assert_eq!(sent, n + more, "source {src}: sent against received");
    }
}

#[test]
fn dropping_a_runtime_with_a_receive_in_flight_returns_at_once() {
    // A program whose main ends with a receive pending must not hang at exit: dropping the
    // runtime returns at once, and the receive given up ends in the backend on its own.
    let b = Fixture::open();
    if let Some(why) = b.caps.lacks_mode(Mode::Off) {
        return b.skip(&why);
    }
    let Some(&rx) = b.caps.c2h_stream.first() else {
        return b.skip(&format!(
            "the card has no C2H stream channel (C2H streams {:?})",
            b.caps.c2h_stream
        ));
    };
    // Nothing on the stream.
    ok(
        "CONTROL",
        regs::write(&b.card, card_regs::CONTROL, Mode::Off.value()),
    );
    let min = b.card.info().min_stream_timeout;
    if min == Duration::MAX {
        return b.skip("the driver's c2h_timeout is 0: a receive given up would never end");
    }
    // Two of the driver's c2h_timeout waits on the driver backend, so that a drop that
    // waited for the receive would take over a second there.
    let wait = min.saturating_mul(2).max(Duration::from_millis(100));
    let rt = ok(
        "runtime",
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| xdma::Error::Backend(e.to_string())),
    );
    let card = b.card.clone();
    let _pending = rt.spawn(async move {
        let buf = DmaBuffer::new(4096).expect("buffer");
        card.recv_stream_async(rx, buf, wait).await
    });
    // Let the receive reach the backend (the driver's read on a board).
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    drop(rt);
    let took = started.elapsed();
    // The receive given up still ends at its timeout in the driver: wait it out, so that it
    // takes nothing meant for the next test.
    std::thread::sleep(wait + Duration::from_secs(1));
    assert!(
        took < Duration::from_secs(1),
        "dropping the runtime took {took:?} with a {wait:?} receive in flight"
    );
}

#[test]
fn several_tokio_tasks_on_one_card() {
    let Some((b, h2c, c2h)) = Fixture::open_mm() else {
        return;
    };
    let moved = std::sync::Arc::new(AtomicU64::new(0));
    b.block_on(async {
        let mut tasks = Vec::new();
        for t in 0..6u32 {
            let card = b.card.clone();
            let moved = moved.clone();
            tasks.push(tokio::spawn(async move {
                let addr = 0x100_0000 + u64::from(t) * (1 << 20);
                for k in 0..4u32 {
                    let mut d = DmaBuffer::new(16 << 10).expect("buffer");
                    pattern(t * 100 + k, &mut d);
                    let want = d.to_vec();
                    let (w, _) = card.write_mm_async(h2c, CardAddr(addr), d).await;
                    ok("write", w);
                    // A register access between transfers, as a task that polls would.
                    let id = ok("ID", card.read_reg_async(0).await);
                    assert_eq!(id, card.info().card_id);
                    let buf = DmaBuffer::new(16 << 10).expect("buffer");
                    let (r, back) = card.read_mm_async(c2h, CardAddr(addr), buf).await;
                    ok("read", r);
                    if let Some(e) = first_difference(&back, &want) {
                        panic!("task {t}, round {k}: {e}");
                    }
                    moved.fetch_add(2 * want.len() as u64, Ordering::Relaxed);
                }
            }));
        }
        for t in tasks {
            t.await.expect("a task panicked");
        }
    });
    assert_eq!(moved.load(Ordering::Relaxed), 6 * 4 * 2 * (16 << 10));
}

#[test]
fn several_threads_on_one_channel() {
    let Some((b, h2c, c2h)) = Fixture::open_mm() else {
        return;
    };
    // Four threads write their own blocks through the one H2C channel (the calls take turns
    // in call order) and read them back through the one C2H channel.
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let card = b.card.clone();
            s.spawn(move || {
                for k in 0..6u32 {
                    let addr = 0x200_0000 + u64::from(t) * 0x10_0000 + u64::from(k) * 0x4000;
                    let mut d = vec![0u8; 0x3000 + 17 * k as usize];
                    pattern(t * 1000 + k, &mut d);
                    ok("write", mm::write(&card, h2c, addr, &d));
                    let back = ok("read", mm::read(&card, c2h, addr, d.len()));
                    if let Some(e) = first_difference(&back, &d) {
                        panic!("thread {t}, block {k}: {e}");
                    }
                }
            });
        }
    });
    // Register traffic from several threads at once keeps every thread's own value apart
    // from the shared scratch word's last one.
    std::thread::scope(|s| {
        for t in 0..3u32 {
            let card = b.card.clone();
            s.spawn(move || {
                for i in 0..20 {
                    ok(
                        "SCRATCH",
                        card.write_reg(u64::from(card_regs::SCRATCH), t << 16 | i),
                    );
                    assert_eq!(ok("ID", card.read_reg(0)), card.info().card_id);
                }
            });
        }
    });
    let last = ok("SCRATCH", b.card.read_reg(u64::from(card_regs::SCRATCH)));
    assert_eq!(last & 0xffff, 19, "some thread's last write: {last:#x}");
}
