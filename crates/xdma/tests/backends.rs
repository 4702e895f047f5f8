//! The same test bodies over every backend: the simulated card, and the Linux driver backend
//! on the simulated card served as the driver's nodes by `xdma-fuse` (`cargo xtask test` mounts
//! it and runs this file's hw cases with `XDMA_BACKEND=hw XDMA_DEVICE=<mount>/xdma0`; without
//! a mount the hw cases say so and pass without running). The hw cases share the one card
//! behind the mount, so they take turns.
//!
//! What differs here is what each backend is expected to find out at discovery and how it is
//! chosen; the bad inputs of the host crate, which must give the same `ErrorKind` on every
//! backend, are the card-tests suite's (crates/card-tests/tests/bad_input.rs), which runs on
//! whichever card the environment names.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rstest::rstest;
use xdma::{
    AsyncCard, BackendKind, Card, CardAddr, ChannelKind, Config, DmaBuffer, ErrorKind, Xdma,
};

/// card_core's identifier register: ASCII "DAQ1".
const CARD_ID: u32 = card_regs::id::RESET as u32;
/// card_core's version register.
const CARD_VERSION: u32 = card_regs::version::RESET as u32;
/// card_core's scratch register.
const REG_SCRATCH: u64 = card_regs::SCRATCH as u64;

/// One card behind the mount: one hw case at a time.
static TURN: Mutex<()> = Mutex::new(());

/// A card on one backend, holding its turn on the shared mount.
struct Tb {
    card: Xdma,
    _turn: Option<MutexGuard<'static, ()>>,
}

/// The configuration each backend's cases use: one event; the simulated card with an engine
/// alignment of 64 bytes so that alignment errors can be provoked; the driver backend with
/// whatever alignment the driver answers (the reference IP: 1). None for hw without a mount.
fn config(kind: BackendKind) -> Option<Config> {
    let mut cfg =
        Config::from_toml("[sim]\nevents = 1\n[sim.ip]\nalignment = 64\n[hw]\nevents = 1\n")
            .expect("the test configuration");
    cfg.backend = kind;
    if kind == BackendKind::Hw {
        let backend = std::env::var(xdma::BACKEND_ENV).unwrap_or_default();
        let device = std::env::var_os(xdma::DEVICE_ENV).filter(|_| backend == "hw");
        let Some(device) = device else {
            eprintln!(
                "not run: XDMA_BACKEND=hw and XDMA_DEVICE=<mount>/xdma0 are not set; `cargo xtask test` runs the hw cases over an xdma-fuse mount of the simulated card"
            );
            return None;
        };
        cfg.device = PathBuf::from(device);
    }
    Some(cfg)
}

fn open(kind: BackendKind) -> Option<Tb> {
    let turn = (kind == BackendKind::Hw).then(|| TURN.lock().unwrap_or_else(|p| p.into_inner()));
    let cfg = config(kind)?;
    let card = Xdma::open(&cfg).expect("open the card");
    Some(Tb { card, _turn: turn })
}

const SHORT: Duration = Duration::from_micros(20);

#[rstest]
#[case::sim(BackendKind::Sim)]
#[case::hw(BackendKind::Hw)]
fn discovery_finds_the_channels_and_identifiers(#[case] kind: BackendKind) {
    let Some(b) = open(kind) else { return };
    let info = b.card.info();
    let kinds = |v: &[xdma::ChannelInfo]| v.iter().map(|c| c.kind).collect::<Vec<_>>();
    use ChannelKind::{MemoryMapped as Mm, Stream as St};
    assert_eq!(kinds(&info.h2c), vec![Mm, St]);
    assert_eq!(kinds(&info.c2h), vec![Mm, St, St]);
    assert_eq!(info.card_id, CARD_ID);
    assert_eq!(info.card_version, CARD_VERSION);
    // The simulated card's memory is what its RTL has (sim_top's DDR3 model of the reference
    // board's 2 GB); the driver cannot tell, and the backend's default is the reference board.
    assert_eq!(info.memory_size, 2 << 30);
    assert_eq!(info.user_bar_size, 64 << 10);
    // The simulated card's engine as configured; the driver's answer to ALIGN_GET, which for
    // the reference IP (unaligned) is 1.
    let alignment = match kind {
        BackendKind::Sim => 64,
        BackendKind::Hw => 1,
    };
    assert_eq!(info.alignment, alignment);
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
    let Some(b) = open(kind) else { return };
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
fn one_mib_written_and_read_back(#[case] kind: BackendKind) {
    let Some(b) = open(kind) else { return };
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
    let Some(b) = open(kind) else { return };
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
    let Some(b) = open(kind) else { return };
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

#[rstest]
#[case::sim(BackendKind::Sim)]
#[case::hw(BackendKind::Hw)]
fn the_backend_is_chosen_at_run_time(#[case] kind: BackendKind) {
    let Some(base) = config(kind) else { return };
    let _turn = (kind == BackendKind::Hw).then(|| TURN.lock().unwrap_or_else(|p| p.into_inner()));
    let prefix = base.device.to_string_lossy().into_owned();
    let mut cfg = xdma::Config::from_vars(|k| match k {
        xdma::BACKEND_ENV => Some(kind.name().to_string()),
        xdma::DEVICE_ENV => Some(prefix.clone()),
        _ => None,
    })
    .expect("config");
    cfg.hw = base.hw;
    let card = Xdma::open(&cfg).expect("open");
    assert_eq!(card.info().backend, kind.name());
    assert_eq!(card.read_reg(0).expect("id"), CARD_ID);
}
