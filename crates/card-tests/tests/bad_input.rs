//! Every bad input of the host crate, each with its `ErrorKind`, on whichever card the
//! environment names. The channels and limits come from what discovery found (the card's
//! [`card_tests::Capabilities`]), never from the backend's name, so the same bodies hold for
//! the simulated card, the driver backend over an xdma-fuse mount and a board.

use std::time::Duration;

use card_tests::fixture::ok;
use card_tests::Fixture;
use xdma::{AsyncCard, Card, CardAddr, Config, DmaBuffer, ErrorKind, Xdma};

/// A wait that nothing ends.
const SHORT: Duration = Duration::from_micros(20);

fn kind_of<T: std::fmt::Debug>(what: &str, r: xdma::Result<T>) -> ErrorKind {
    match r {
        Ok(v) => panic!("{what} must fail, but returned {v:?}"),
        Err(e) => {
            // Every error says what was wrong.
            assert!(e.to_string().len() > 10, "{what}: a terse error: {e}");
            e.kind()
        }
    }
}

#[test]
fn memory_mapped_bad_inputs() {
    let b = Fixture::open();
    let (h2c, c2h) = match b.caps.mm() {
        Ok(p) => p,
        Err(why) => return b.skip(&why),
    };
    let c = &b.card;
    let size = c.info().memory_size;
    let mut buf = ok("buffer", DmaBuffer::new(4096));
    let data = ok("buffer", DmaBuffer::new(4096));

    // Zero length.
    let k = kind_of("an empty write", c.write_mm(h2c, CardAddr(0), &data[..0]));
    assert_eq!(k, ErrorKind::InvalidInput);
    let k = kind_of("an empty read", c.read_mm(c2h, CardAddr(0), &mut buf[..0]));
    assert_eq!(k, ErrorKind::InvalidInput);
    // Past the end of card memory, and an address whose end overflows.
    let k = kind_of(
        "a write past the end",
        c.write_mm(h2c, CardAddr(size - 100), &data),
    );
    assert_eq!(k, ErrorKind::OutOfRange);
    let k = kind_of(
        "a read at the end",
        c.read_mm(c2h, CardAddr(size), &mut buf),
    );
    assert_eq!(k, ErrorKind::OutOfRange);
    let k = kind_of(
        "a read whose end overflows",
        c.read_mm(c2h, CardAddr(u64::MAX - 10), &mut buf),
    );
    assert_eq!(k, ErrorKind::OutOfRange);
    // A buffer misaligned against the card address, where the engine has an alignment rule
    // (the suite's simulated card: 64 bytes; the reference IP behind the driver has none).
    let align = c.info().alignment;
    if align > 1 {
        let k = kind_of("a misaligned write", c.write_mm(h2c, CardAddr(0x10), &data));
        assert_eq!(k, ErrorKind::Misaligned);
        let k = kind_of(
            "a misaligned read",
            c.read_mm(c2h, CardAddr(0), &mut buf[8..]),
        );
        assert_eq!(k, ErrorKind::Misaligned);
        let e = c
            .write_mm(h2c, CardAddr(0x10), &data)
            .expect_err("misaligned");
        assert!(
            e.to_string().contains(&format!("alignment is {align}")),
            "says the rule: {e}"
        );
    } else {
        eprintln!("the engine takes any alignment: no misaligned memory-mapped transfer exists");
    }
    // Channels that do not exist.
    let h2c_count = c.info().h2c.len();
    let c2h_count = c.info().c2h.len();
    let k = kind_of(
        "a write on a missing channel",
        c.write_mm(h2c_count, CardAddr(0), &data),
    );
    assert_eq!(k, ErrorKind::NoSuchChannel);
    let k = kind_of(
        "a read on a missing channel",
        c.read_mm(c2h_count + 5, CardAddr(0), &mut buf),
    );
    assert_eq!(k, ErrorKind::NoSuchChannel);
    // Stream channels are not memory-mapped ones.
    if let Some(&s) = b.caps.h2c_stream.first() {
        let k = kind_of(
            "a write on a stream channel",
            c.write_mm(s, CardAddr(0), &data),
        );
        assert_eq!(k, ErrorKind::WrongChannelKind);
    }
    if let Some(&s) = b.caps.c2h_stream.first() {
        let k = kind_of(
            "a read on a stream channel",
            c.read_mm(s, CardAddr(0), &mut buf),
        );
        assert_eq!(k, ErrorKind::WrongChannelKind);
    }
    // After all that the card still moves data.
    let d = ok("data", DmaBuffer::from_slice(&[0x5a; 4096]));
    ok("write", c.write_mm(h2c, CardAddr(0x1000), &d));
    ok("read", c.read_mm(c2h, CardAddr(0x1000), &mut buf));
    assert!(buf[..] == d[..]);
}

#[test]
fn stream_bad_inputs() {
    let b = Fixture::open();
    let (Some(&tx), Some(&rx)) = (b.caps.h2c_stream.first(), b.caps.c2h_stream.first()) else {
        return b.skip(&format!(
            "the card has no H2C and C2H stream channels (H2C {:?}, C2H {:?})",
            b.caps.h2c_stream, b.caps.c2h_stream
        ));
    };
    let c = &b.card;
    let mut buf = ok("buffer", DmaBuffer::new(4096));
    let data = ok("buffer", DmaBuffer::new(4096));
    let k = kind_of("an empty send", c.send_stream(tx, &data[..0]));
    assert_eq!(k, ErrorKind::InvalidInput);
    let k = kind_of("an empty receive", c.recv_stream(rx, &mut buf[..0], SHORT));
    assert_eq!(k, ErrorKind::InvalidInput);
    if c.info().alignment > 1 {
        let k = kind_of("a misaligned send", c.send_stream(tx, &data[4..]));
        assert_eq!(k, ErrorKind::Misaligned);
    }
    if let Some(&mm) = b.caps.h2c_mm.first() {
        let k = kind_of(
            "a send on a memory-mapped channel",
            c.send_stream(mm, &data),
        );
        assert_eq!(k, ErrorKind::WrongChannelKind);
    }
    if let Some(&mm) = b.caps.c2h_mm.first() {
        let k = kind_of(
            "a receive on a memory-mapped channel",
            c.recv_stream(mm, &mut buf, SHORT),
        );
        assert_eq!(k, ErrorKind::WrongChannelKind);
    }
    let k = kind_of(
        "a receive on a missing channel",
        c.recv_stream(c.info().c2h.len() + 6, &mut buf, SHORT),
    );
    assert_eq!(k, ErrorKind::NoSuchChannel);
    // A receive with no data: a timeout, or, where the backend cannot bound a stream read
    // that tightly (the driver blocks for its c2h_timeout), a refusal up front that names the
    // timeout in the way. Either way the call returns.
    let e = c.recv_stream(rx, &mut buf, SHORT).expect_err("no data");
    match e.kind() {
        ErrorKind::Timeout => {}
        ErrorKind::Unsupported => assert!(e.to_string().contains("timeout"), "{e}"),
        other => panic!("a receive with no data gave {other:?}: {e}"),
    }
}

#[test]
fn register_and_event_bad_inputs() {
    let b = Fixture::open();
    let c = &b.card;
    let bar = c.info().user_bar_size;
    // Offsets that are not 4-aligned or lie outside the BAR.
    assert_eq!(
        kind_of("a read at 2", c.read_reg(0x002)),
        ErrorKind::RegisterAccess
    );
    assert_eq!(
        kind_of("a write at 0xa", c.write_reg(0x00a, 1)),
        ErrorKind::RegisterAccess
    );
    assert_eq!(
        kind_of("a read past the BAR", c.read_reg(bar)),
        ErrorKind::OutOfRange
    );
    assert_eq!(
        kind_of("a write past the BAR", c.write_reg(bar + 4, 1)),
        ErrorKind::OutOfRange
    );
    // Events that do not exist, and a wait that nothing ends.
    let events = c.info().events;
    assert_eq!(
        kind_of("a wait on a missing event", c.wait_event(events, SHORT)),
        ErrorKind::NoSuchChannel
    );
    if events > 0 {
        assert_eq!(
            kind_of("a wait with no interrupt", c.wait_event(0, SHORT)),
            ErrorKind::Timeout
        );
    }
    // The card still answers.
    assert_eq!(
        ok("ID", c.read_reg(u64::from(card_regs::ID))),
        c.info().card_id
    );
}

#[test]
fn async_calls_give_the_same_errors_and_the_buffer_back() {
    let b = Fixture::open();
    let c = b.card.clone();
    let caps = b.caps.clone();
    b.block_on(async move {
        assert_eq!(
            c.read_reg_async(3).await.expect_err("misaligned").kind(),
            ErrorKind::RegisterAccess
        );
        if c.info().events > 0 {
            let e = c
                .wait_event_async(0, SHORT)
                .await
                .expect_err("no interrupt");
            assert_eq!(e.kind(), ErrorKind::Timeout);
        }
        let buf = ok("buffer", DmaBuffer::new(256));
        let (r, buf) = match caps.mm() {
            Ok((_, c2h)) => {
                c.read_mm_async(c2h, CardAddr(c.info().memory_size), buf)
                    .await
            }
            Err(_) => {
                let (r, _) = c.read_mm_async(c.info().c2h.len(), CardAddr(0), buf).await;
                assert_eq!(r.expect_err("no channel").kind(), ErrorKind::NoSuchChannel);
                return;
            }
        };
        assert_eq!(r.expect_err("past the end").kind(), ErrorKind::OutOfRange);
        // Data calls hand the buffer back whatever the outcome.
        assert_eq!(buf.len(), 256);
        let (r, buf) = c.write_mm_async(c.info().h2c.len(), CardAddr(0), buf).await;
        assert_eq!(r.expect_err("no channel").kind(), ErrorKind::NoSuchChannel);
        assert_eq!(buf.len(), 256);
        if let Some(&mm) = caps.c2h_mm.first() {
            let (r, buf) = c.recv_stream_async(mm, buf, SHORT).await;
            assert_eq!(
                r.expect_err("memory-mapped").kind(),
                ErrorKind::WrongChannelKind
            );
            assert_eq!(buf.len(), 256);
        }
    });
}

/// A device that is not there: whichever backend the environment names, the configuration
/// points it at nothing (a simulated card this build does not have, a driver node prefix in an
/// empty folder), and opening says which device is missing.
#[test]
fn a_missing_device_is_no_device() {
    let dir = tempfile::tempdir().expect("folder");
    let mut cfg: Config = card_tests::fixture::config();
    cfg.device = dir.path().join("xdma7");
    // A variant names its own top; the missing one replaces it.
    card_tests::ops::edit_sim(&mut cfg, |s| {
        s.variant = None;
        s.top = "no_such_card".into();
    });
    let e = Xdma::open(&cfg).expect_err("no such device");
    assert_eq!(e.kind(), ErrorKind::NoDevice, "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("xdma7") || msg.contains("no_such_card"),
        "names the device: {e}"
    );
}
