//! The same test bodies over every backend: the simulated card, and the Linux driver backend
//! pointed at a folder of ordinary files laid out like the driver's nodes.

// The emulated driver folder is the driver backend's own test fixture.
#[path = "../../xdma-hw/tests/common/mod.rs"]
mod common;

use std::time::Duration;

use common::{config, Emu, CARD_ID, CARD_VERSION, EMU_MEMORY, REG_SCRATCH};
use rstest::rstest;
use xdma::{AsyncCard, BackendKind, Card, CardAddr, ChannelKind, DmaBuffer, ErrorKind, Xdma};

/// A card on one backend, with whatever keeps its emulated device alive.
struct Bench {
    card: Xdma,
    _emu: Option<Emu>,
}

fn open(kind: BackendKind) -> Bench {
    let emu = (kind == BackendKind::Hw).then(Emu::new);
    let card = Xdma::open(&config(kind, emu.as_ref())).expect("open the card");
    Bench { card, _emu: emu }
}

fn kind_of<T: std::fmt::Debug>(r: xdma::Result<T>) -> ErrorKind {
    r.expect_err("this call must fail").kind()
}

const SHORT: Duration = Duration::from_micros(20);

#[rstest]
#[case::sim(BackendKind::Sim)]
#[case::hw(BackendKind::Hw)]
fn discovery_finds_the_channels_and_identifiers(#[case] kind: BackendKind) {
    let b = open(kind);
    let info = b.card.info();
    let kinds = |v: &[xdma::ChannelInfo]| v.iter().map(|c| c.kind).collect::<Vec<_>>();
    use ChannelKind::{MemoryMapped as Mm, Stream as St};
    assert_eq!(kinds(&info.h2c), vec![Mm, St]);
    assert_eq!(kinds(&info.c2h), vec![Mm, St, St]);
    assert_eq!(info.card_id, CARD_ID);
    assert_eq!(info.card_version, CARD_VERSION);
    // The emulated board's memory is what its configuration says; the simulated card's is
    // what its RTL has: sim_top's DDR3 model of the reference board's 2 GB.
    let memory = match kind {
        BackendKind::Hw => EMU_MEMORY,
        BackendKind::Sim => 2 << 30,
    };
    assert_eq!(info.memory_size, memory);
    assert_eq!(info.user_bar_size, 64 << 10);
    assert_eq!(info.alignment, 64);
    for c in info.h2c.iter().chain(&info.c2h) {
        assert_eq!(c.id_register >> 20, 0x1fc, "{c:?}");
        assert_eq!((c.id_register >> 15) & 1 == 1, c.kind == St, "{c:?}");
        assert_eq!(((c.id_register >> 8) & 0xf) as usize, c.index, "{c:?}");
    }
    assert_eq!(info.find(xdma::Direction::C2H, St), Some(1));
}

#[rstest]
#[case::sim(BackendKind::Sim)]
#[case::hw(BackendKind::Hw)]
fn registers_read_and_write(#[case] kind: BackendKind) {
    let b = open(kind);
    assert_eq!(b.card.read_reg(0x000).expect("id"), CARD_ID);
    b.card
        .write_reg(REG_SCRATCH, 0xdead_beef)
        .expect("write scratch");
    assert_eq!(b.card.read_reg(REG_SCRATCH).expect("scratch"), 0xdead_beef);
    b.card
        .write_reg(REG_SCRATCH, 0x0123_4567)
        .expect("write scratch");
    assert_eq!(b.card.read_reg(REG_SCRATCH).expect("scratch"), 0x0123_4567);
    // The backend's clock moves with each access.
    let t0 = b.card.now_ps().expect("time");
    b.card.read_reg(0x004).expect("version");
    assert!(b.card.now_ps().expect("time") > t0);
}

#[rstest]
#[case::sim(BackendKind::Sim)]
#[case::hw(BackendKind::Hw)]
fn every_bad_input_gets_its_typed_error(#[case] kind: BackendKind) {
    let b = open(kind);
    let c = &b.card;
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let data = DmaBuffer::new(4096).expect("buffer");

    // Zero length.
    assert_eq!(
        kind_of(c.write_mm(0, CardAddr(0), &data[..0])),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        kind_of(c.read_mm(0, CardAddr(0), &mut buf[..0])),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        kind_of(c.send_stream(1, &data[..0])),
        ErrorKind::InvalidInput
    );
    assert_eq!(
        kind_of(c.recv_stream(1, &mut buf[..0], SHORT)),
        ErrorKind::InvalidInput
    );
    // Past the end of card memory, and an address whose end overflows.
    assert_eq!(
        kind_of(c.write_mm(0, CardAddr(c.info().memory_size - 100), &data)),
        ErrorKind::OutOfRange
    );
    assert_eq!(
        kind_of(c.read_mm(0, CardAddr(c.info().memory_size), &mut buf)),
        ErrorKind::OutOfRange
    );
    assert_eq!(
        kind_of(c.read_mm(0, CardAddr(u64::MAX - 10), &mut buf)),
        ErrorKind::OutOfRange
    );
    // Misaligned buffer against the card address (engine alignment 64 in these tests).
    assert_eq!(
        kind_of(c.write_mm(0, CardAddr(0x10), &data)),
        ErrorKind::Misaligned
    );
    assert_eq!(
        kind_of(c.read_mm(0, CardAddr(0), &mut buf[8..])),
        ErrorKind::Misaligned
    );
    assert_eq!(kind_of(c.send_stream(1, &data[4..])), ErrorKind::Misaligned);
    // Stream calls on memory-mapped channels and the reverse.
    assert_eq!(
        kind_of(c.send_stream(0, &data)),
        ErrorKind::WrongChannelKind
    );
    assert_eq!(
        kind_of(c.recv_stream(0, &mut buf, SHORT)),
        ErrorKind::WrongChannelKind
    );
    assert_eq!(
        kind_of(c.write_mm(1, CardAddr(0), &data)),
        ErrorKind::WrongChannelKind
    );
    assert_eq!(
        kind_of(c.read_mm(2, CardAddr(0), &mut buf)),
        ErrorKind::WrongChannelKind
    );
    // Channels and events that do not exist.
    assert_eq!(
        kind_of(c.write_mm(2, CardAddr(0), &data)),
        ErrorKind::NoSuchChannel
    );
    assert_eq!(
        kind_of(c.recv_stream(9, &mut buf, SHORT)),
        ErrorKind::NoSuchChannel
    );
    assert_eq!(kind_of(c.wait_event(1, SHORT)), ErrorKind::NoSuchChannel);
    // Register offsets that are not 4-aligned or lie outside the BAR.
    assert_eq!(kind_of(c.read_reg(0x002)), ErrorKind::RegisterAccess);
    assert_eq!(kind_of(c.write_reg(0x00a, 1)), ErrorKind::RegisterAccess);
    assert_eq!(kind_of(c.read_reg(64 << 10)), ErrorKind::OutOfRange);
    // An event wait with no interrupt times out.
    let e = c
        .wait_event(0, SHORT)
        .expect_err("no interrupt source fires");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    // A C2H stream read with no data times out where the stream path exists.
    assert_eq!(
        kind_of(c.recv_stream(1, &mut buf, SHORT)),
        ErrorKind::Timeout
    );
    // Every error message says what was wrong.
    let e = c
        .write_mm(0, CardAddr(0x10), &data)
        .expect_err("misaligned");
    assert!(e.to_string().contains("alignment is 64"), "{e}");
    // After all that the card still works.
    assert_eq!(c.read_reg(0).expect("id"), CARD_ID);
}

#[rstest]
#[case::sim(BackendKind::Sim)]
#[case::hw(BackendKind::Hw)]
fn one_mib_written_and_read_back(#[case] kind: BackendKind) {
    let b = open(kind);
    let mut data = DmaBuffer::new(1 << 20).expect("buffer");
    for (i, x) in data.iter_mut().enumerate() {
        *x = (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[1];
    }
    let addr = CardAddr(0x40_0000);
    let w = b.card.write_mm(0, addr, &data).expect("write");
    assert_eq!(w.bytes, 1 << 20);
    assert!(w.end_ps >= w.start_ps);
    let mut back = DmaBuffer::new(1 << 20).expect("buffer");
    let r = b.card.read_mm(0, addr, &mut back).expect("read");
    assert_eq!(r.bytes, 1 << 20);
    assert!(
        r.start_ps >= w.end_ps,
        "transfers are ordered in the backend's clock"
    );
    assert!(back[..] == data[..], "read back differs");
}

#[rstest]
#[case::sim(BackendKind::Sim)]
#[case::hw(BackendKind::Hw)]
fn async_calls_mean_the_same(#[case] kind: BackendKind) {
    let b = open(kind);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let c = &b.card;
        assert_eq!(c.read_reg_async(0).await.expect("id"), CARD_ID);
        c.write_reg_async(REG_SCRATCH, 0x5a5a_a5a5)
            .await
            .expect("write");
        assert_eq!(
            c.read_reg_async(REG_SCRATCH).await.expect("read"),
            0x5a5a_a5a5
        );
        assert_eq!(c.read_reg(REG_SCRATCH).expect("blocking read"), 0x5a5a_a5a5);
        assert_eq!(
            c.read_reg_async(3).await.expect_err("misaligned").kind(),
            ErrorKind::RegisterAccess
        );
        assert_eq!(
            c.wait_event_async(0, SHORT)
                .await
                .expect_err("timeout")
                .kind(),
            ErrorKind::Timeout
        );
        // Data calls hand the buffer back whatever the outcome.
        let buf = DmaBuffer::new(256).expect("buffer");
        let (r, buf) = c
            .read_mm_async(0, CardAddr(c.info().memory_size), buf)
            .await;
        assert_eq!(r.expect_err("past the end").kind(), ErrorKind::OutOfRange);
        assert_eq!(buf.len(), 256);
        let data = DmaBuffer::from_slice(&[7u8; 256]).expect("data");
        let (w, _) = c.write_mm_async(0, CardAddr(0x1000), data).await;
        let (r, buf) = c.read_mm_async(0, CardAddr(0x1000), buf).await;
        assert_eq!(w.expect("write").bytes, 256);
        assert_eq!(r.expect("read").bytes, 256);
        assert!(buf.iter().all(|&x| x == 7));
        let (r, _) = c.recv_stream_async(0, buf, SHORT).await;
        assert_eq!(
            r.expect_err("memory-mapped").kind(),
            ErrorKind::WrongChannelKind
        );
    });
}

#[rstest]
#[case::sim(BackendKind::Sim)]
#[case::hw(BackendKind::Hw)]
fn threads_share_a_card(#[case] kind: BackendKind) {
    let b = open(kind);
    let c = &b.card;
    std::thread::scope(|s| {
        // Register traffic on one thread while another waits for an interrupt and a third moves
        // memory-mapped data (where the backend has the path): none blocks the others for good.
        let regs = s.spawn(|| {
            for i in 0..20u32 {
                c.write_reg(REG_SCRATCH, i).expect("write");
                let v = c.read_reg(0).expect("read");
                assert_eq!(v, CARD_ID);
            }
        });
        let events = s.spawn(|| {
            let e = c
                .wait_event(0, Duration::from_micros(50))
                .expect_err("no interrupt");
            assert_eq!(e.kind(), ErrorKind::Timeout);
        });
        let data = s.spawn(|| {
            let d = DmaBuffer::from_slice(&[0x33; 8192]).expect("data");
            let mut back = DmaBuffer::new(8192).expect("buffer");
            for k in 0..10u64 {
                let addr = CardAddr(0x10_0000 + k * 0x2000);
                c.write_mm(0, addr, &d).expect("write");
                c.read_mm(0, addr, &mut back).expect("read");
                assert!(back[..] == d[..]);
            }
        });
        regs.join().expect("register thread");
        events.join().expect("event thread");
        data.join().expect("data thread");
    });
}

/// A device that is not there: a simulated card this build does not have (or an RTL top that
/// is not a card), or a driver node prefix with no nodes behind it.
#[rstest]
#[case::sim(BackendKind::Sim)]
#[case::hw(BackendKind::Hw)]
fn a_missing_device_is_no_device(#[case] kind: BackendKind) {
    let missing: Vec<(xdma::Config, String)> = match kind {
        BackendKind::Sim => ["no_such_card", "axil_passthrough"]
            .into_iter()
            .map(|top| {
                let mut cfg = config(kind, None);
                cfg.sim.insert("top".into(), top.into());
                (cfg, top.to_string())
            })
            .collect(),
        BackendKind::Hw => {
            let dir = tempfile::tempdir().expect("folder");
            let mut cfg = config(kind, None);
            cfg.device = dir.path().join("xdma7");
            vec![(cfg, "xdma7".to_string())]
        }
    };
    for (cfg, name) in missing {
        let e = Xdma::open(&cfg).expect_err("no such device");
        assert_eq!(e.kind(), ErrorKind::NoDevice, "{e}");
        assert!(e.to_string().contains(&name), "names the device: {e}");
    }
}

#[test]
fn the_backend_is_chosen_at_run_time() {
    let emu = Emu::new();
    let prefix = emu.prefix().to_string_lossy().into_owned();
    for (name, want) in [("sim", "sim"), ("hw", "hw")] {
        let mut cfg = xdma::Config::from_vars(|k| match k {
            xdma::BACKEND_ENV => Some(name.to_string()),
            xdma::DEVICE_ENV => Some(prefix.clone()),
            _ => None,
        })
        .expect("config");
        common::with_hw(&mut cfg, |hw| hw.events = 1);
        let card = Xdma::open(&cfg).expect("open");
        assert_eq!(card.info().backend, want);
        assert_eq!(card.read_reg(0).expect("id"), CARD_ID);
    }
}
