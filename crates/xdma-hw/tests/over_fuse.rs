//! The driver backend against `xdma-fuse` serving the simulated card's RTL as the driver's
//! nodes: every driver behaviour that FUSE can show is tested here (the rest, in the crate's
//! fake-node tests and `hw_files.rs`, each saying why).
//!
//! `cargo xtask test` mounts the server and runs this file with `XDMA_BACKEND=hw` and
//! `XDMA_DEVICE=<mount>/xdma0`; without a mount every test says so and passes without running.
//! All tests share the one simulated card behind the mount, so they take turns and leave it as
//! they found it.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use card_regs as regs;
use xdma_core::{
    BackendKind, Card, CardAddr, ChannelKind, Config, Direction, DmaBuffer, ErrorKind,
};
use xdma_hw::{HwCard, HwConfig};

/// One card behind the mount: one test at a time.
static TURN: Mutex<()> = Mutex::new(());

struct Mount {
    cfg: Config,
    prefix: PathBuf,
    _turn: MutexGuard<'static, ()>,
}

impl Mount {
    fn node(&self, suffix: &str) -> PathBuf {
        let mut s = self.prefix.as_os_str().to_os_string();
        s.push(suffix);
        PathBuf::from(s)
    }

    fn open(&self) -> HwCard {
        HwCard::open(&self.cfg).expect("open the card behind the mount")
    }

    /// The server's c2h_timeout, as the driver's parameter file gives it.
    fn c2h_timeout(&self) -> Duration {
        let dir = self
            .prefix
            .parent()
            .unwrap_or(Path::new("."))
            .join("parameters");
        let s = std::fs::read_to_string(dir.join("c2h_timeout")).expect("the parameter file");
        Duration::from_secs(s.trim().parse().expect("a number"))
    }
}

/// The mount named by the environment, or None (with the reason printed) when there is none.
fn mount() -> Option<Mount> {
    let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let device = std::env::var_os(xdma_core::DEVICE_ENV);
    let backend = std::env::var(xdma_core::BACKEND_ENV).unwrap_or_default();
    let Some(device) = device.filter(|_| backend == "hw") else {
        eprintln!(
            "not run: XDMA_BACKEND=hw and XDMA_DEVICE=<mount>/xdma0 are not set; `cargo xtask test` runs this file over an xdma-fuse mount of the simulated card"
        );
        return None;
    };
    let mut cfg = Config {
        backend: BackendKind::Hw,
        device: PathBuf::from(&device),
        ..Config::default()
    };
    let hw = HwConfig {
        events: 1,
        // Deliberately not the server's answer: the alignment must come from ALIGN_GET.
        fallback_alignment: 64,
        ..HwConfig::default()
    };
    cfg.set_section(BackendKind::Hw, &hw).expect("hw section");
    Some(Mount {
        cfg,
        prefix: PathBuf::from(device),
        _turn: turn,
    })
}

fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503)).to_le_bytes()[2])
        .collect()
}

fn reg(r: u32) -> u64 {
    u64::from(r)
}

/// Puts the card's stream paths and interrupts back to rest, as the register map asks: the
/// sources stop first (the frame in flight finishes), then the mode changes while the streams
/// are idle, then the counters are cleared.
fn quiet(card: &HwCard) {
    let control = card.read_reg(reg(regs::CONTROL)).expect("control");
    let mode = control & regs::control::MODE_MASK as u32;
    card.write_reg(reg(regs::CONTROL), mode)
        .expect("stop the sources");
    // Each access lets simulated time run: far longer than one frame takes.
    for _ in 0..20 {
        card.read_reg(reg(regs::IRQ_STATUS)).expect("status");
    }
    card.write_reg(reg(regs::CONTROL), 0)
        .expect("stop the streams");
    card.write_reg(reg(regs::CLEAR), regs::clear::COUNTERS_MASK as u32)
        .expect("clear the counters");
    card.write_reg(reg(regs::IRQ_ENABLE), 0)
        .expect("mask interrupts");
    card.write_reg(reg(regs::IRQ_STATUS), 0xffff_ffff)
        .expect("clear interrupts");
}

/// Stops frame source 0 and then the capture path, leaving the interrupt latched.
fn quiet_sources(card: &HwCard) {
    card.write_reg(reg(regs::CONTROL), regs::control::MODE_CAPTURE as u32)
        .expect("stop source 0");
    for _ in 0..20 {
        card.read_reg(reg(regs::CAP_WPTR)).expect("write pointer");
    }
    card.write_reg(reg(regs::CONTROL), 0).expect("stop capture");
}

#[test]
fn memory_mapped_transfers_land_at_the_card_address() {
    let Some(m) = mount() else { return };
    let card = m.open();
    let data = DmaBuffer::from_slice(&pattern(10_000, 1)).expect("data");
    let addr = 0x12_3000 + 0x235;
    // Unaligned buffer and address alike, which the reference IP allows.
    card.write_mm(0, CardAddr(addr), &data[..]).expect("write");
    let mut back = DmaBuffer::new(10_000).expect("buffer");
    card.read_mm(0, CardAddr(addr), &mut back).expect("read");
    assert!(back[..] == data[..], "read back differs");
    // The file offset of the C2H node is the card address.
    let raw = File::open(m.node("_c2h_0")).expect("c2h node");
    let mut part = vec![0u8; 100];
    raw.read_exact_at(&mut part, addr + 500)
        .expect("pread at the address");
    assert_eq!(&part[..], &data[500..600]);
}

#[test]
fn discovery_alignment_bar_and_version_come_from_the_driver() {
    let Some(m) = mount() else { return };
    let card = m.open();
    let info = card.info();
    use ChannelKind::{MemoryMapped as Mm, Stream as St};
    let kinds = |v: &[xdma_core::ChannelInfo]| v.iter().map(|c| c.kind).collect::<Vec<_>>();
    assert_eq!(kinds(&info.h2c), vec![Mm, St]);
    assert_eq!(kinds(&info.c2h), vec![Mm, St, St]);
    assert_eq!(info.card_id, regs::id::RESET as u32);
    // ALIGN_GET answers (the simulated IP is unaligned, as the reference build), not the
    // configured fallback of 64.
    let mut a: libc::c_int = 0;
    let h2c = File::open(m.node("_h2c_0")).expect("h2c node");
    // SAFETY: ALIGN_GET writes one int through the pointer, which points to `a`.
    let r = unsafe { libc::ioctl(h2c.as_raw_fd(), xdma_hw::IOCTL_XDMA_ALIGN_GET as _, &mut a) };
    assert_eq!(r, 0);
    assert_eq!(info.alignment, a as u64);
    assert_ne!(info.alignment, 64);
    // The user BAR's size is the node's, with nothing about it in the configuration.
    let len = std::fs::metadata(m.node("_user")).expect("user node").len();
    assert_eq!(info.user_bar_size, len);
    assert!(card
        .read_reg(len)
        .is_err_and(|e| e.kind() == ErrorKind::OutOfRange));
    // The driver's version from XDMA_IOCINFO, reported.
    let v = card.driver().version.expect("XDMA_IOCINFO answered");
    assert!(v.major >= 2020, "{v}");
    assert!(card.driver().describe().contains(&v.to_string()));
}

#[test]
fn registers_take_one_word_at_a_4_aligned_offset() {
    let Some(m) = mount() else { return };
    let card = m.open();
    card.write_reg(reg(regs::SCRATCH), 0x1122_3344)
        .expect("write");
    let user = OpenOptions::new()
        .read(true)
        .write(true)
        .open(m.node("_user"))
        .expect("user node");
    let mut w = [0u8; 4];
    user.read_exact_at(&mut w, reg(regs::SCRATCH)).expect("raw");
    assert_eq!(
        w,
        [0x44, 0x33, 0x22, 0x11],
        "a little-endian word at the offset"
    );
    // The driver's errno for an offset that is not a multiple of 4.
    let e = user.read_at(&mut w, 2).expect_err("misaligned");
    assert_eq!(e.raw_os_error(), Some(libc::EPROTO));
    // An event node takes exactly a 4-byte read.
    let mut ev = File::open(m.node("_events_0")).expect("event node");
    let mut eight = [0u8; 8];
    let e = ev.read(&mut eight).expect_err("8 bytes");
    assert_eq!(e.raw_os_error(), Some(libc::EPROTO));
    assert_eq!(
        card.read_reg(0x102).expect_err("unaligned").kind(),
        ErrorKind::RegisterAccess
    );
}

#[test]
fn a_receive_shorter_than_c2h_timeout_is_refused_and_a_longer_one_times_out() {
    let Some(m) = mount() else { return };
    let card = m.open();
    quiet(&card);
    let t = m.c2h_timeout();
    assert!(t > Duration::ZERO, "the mount's c2h_timeout");
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let started = Instant::now();
    let e = card
        .recv_stream(1, &mut buf, Duration::from_millis(10))
        .expect_err("shorter than c2h_timeout");
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(
        e.to_string().contains("c2h_timeout"),
        "names the parameter: {e}"
    );
    assert!(
        started.elapsed() < t,
        "refused up front, not after the driver's wait"
    );
    // As long as c2h_timeout: one read, which the driver ends with ETIMEDOUT.
    let started = Instant::now();
    let e = card.recv_stream(1, &mut buf, t).expect_err("no data");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(started.elapsed() >= t, "waited the driver's timeout");
    assert!(
        started.elapsed() < t * 2 + Duration::from_secs(1),
        "no longer than asked"
    );
}

/// Sends `frame` on H2C stream 1 while a receive waits on C2H stream 1 (LOOP mode).
fn loop_once(
    card: &HwCard,
    frame: &[u8],
    buf: &mut [u8],
    timeout: Duration,
) -> xdma_core::Transfer {
    std::thread::scope(|s| {
        let rx = s.spawn(|| card.recv_stream(1, buf, timeout));
        std::thread::sleep(Duration::from_millis(50));
        let sent = card.send_stream(1, frame).expect("send");
        assert!(sent.end_of_packet && sent.bytes == frame.len());
        rx.join().expect("receiver").expect("the packet comes back")
    })
}

#[test]
fn stream_frames_loop_back_one_packet_per_write() {
    let Some(m) = mount() else { return };
    let card = m.open();
    quiet(&card);
    card.write_reg(reg(regs::CONTROL), regs::control::MODE_LOOP as u32)
        .expect("LOOP mode");
    let t = m.c2h_timeout();
    let frame = DmaBuffer::from_slice(&pattern(1000, 7)).expect("frame");
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let got = loop_once(&card, &frame, &mut buf, t);
    assert_eq!((got.bytes, got.end_of_packet), (1000, true));
    assert!(buf[..1000] == frame[..]);
    // A wait with no end (Duration::MAX) neither panics nor overflows.
    let got = loop_once(&card, &frame[..300], &mut buf, Duration::MAX);
    assert_eq!((got.bytes, got.end_of_packet), (300, true));
    // A frame longer than one descriptor could be cut in two by the driver: refused.
    let long = DmaBuffer::from_slice(&pattern(8192, 3)).expect("long frame");
    let e = card.send_stream(1, &long).expect_err("two pages");
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.to_string().contains("two packets"), "{e}");
    quiet(&card);
}

#[test]
fn a_second_stream_reader_is_busy() {
    let Some(m) = mount() else { return };
    let other = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_TRUNC)
        .open(m.node("_c2h_2"))
        .expect("another reader");
    let card = m.open();
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let e = card
        .recv_stream(2, &mut buf, m.c2h_timeout())
        .expect_err("the node is held");
    assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
    assert!(e.to_string().contains("one opener"), "{e}");
    drop(other);
}

#[test]
fn an_offline_device_is_reported_as_such() {
    let Some(m) = mount() else { return };
    let card = m.open();
    let control = File::open(m.node("_control")).expect("control node");
    // SAFETY: XDMA_IOCOFFLINE takes no argument.
    let off = unsafe { libc::ioctl(control.as_raw_fd(), xdma_hw::XDMA_IOCOFFLINE as _) };
    assert_eq!(off, 0);
    let data = DmaBuffer::from_slice(&[1u8; 4096]).expect("data");
    let r = card.write_mm(0, CardAddr(0x1000), &data);
    // SAFETY: as above, back online whatever happened.
    let on = unsafe { libc::ioctl(control.as_raw_fd(), xdma_hw::XDMA_IOCONLINE as _) };
    assert_eq!(on, 0);
    let e = r.expect_err("offline");
    assert_eq!(e.kind(), ErrorKind::Busy, "{e}");
    assert!(e.to_string().contains("offline"), "says why: {e}");
    card.write_mm(0, CardAddr(0x1000), &data)
        .expect("online again");
}

/// Runs the capture path until the card has raised its fill interrupt, without waiting for the
/// interrupt itself.
fn raise_fill_interrupt(card: &HwCard) {
    quiet(card);
    card.write_reg(reg(regs::CAP_BASE), 0x20_0000)
        .expect("base");
    card.write_reg(reg(regs::CAP_SIZE), 64 << 10).expect("size");
    card.write_reg(reg(regs::CAP_RPTR), 0)
        .expect("read pointer");
    card.write_reg(reg(regs::SRC0_FRAME_LEN), 1024)
        .expect("length");
    card.write_reg(reg(regs::CAP_IRQ_LEVEL), 2048)
        .expect("level");
    card.write_reg(
        reg(regs::IRQ_ENABLE),
        regs::irq_enable::CAP_FILL_MASK as u32,
    )
    .expect("enable");
    card.write_reg(
        reg(regs::CONTROL),
        (regs::control::MODE_CAPTURE | regs::control::CH0_EN_MASK) as u32,
    )
    .expect("CAPTURE mode");
    // Each register access lets simulated time run; the interrupt is raised once the ring
    // holds the level.
    for _ in 0..2000 {
        let status = card.read_reg(reg(regs::IRQ_STATUS)).expect("status");
        if status & regs::irq_status::CAP_FILL_MASK as u32 != 0 {
            quiet_sources(card);
            return;
        }
    }
    panic!("the capture ring never reached its level");
}

#[test]
fn interrupts_latched_before_open_are_drained() {
    let Some(m) = mount() else { return };
    {
        let first = m.open();
        raise_fill_interrupt(&first);
        // Nobody waits: the interrupt stays latched in the driver.
    }
    let card = m.open();
    assert_eq!(
        card.driver().stale_events,
        vec![0],
        "the old interrupt was drained"
    );
    let e = card
        .wait_event(0, Duration::from_millis(300))
        .expect_err("no new interrupt");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    quiet(&card);
}

#[test]
fn an_interrupt_ends_a_wait_and_several_collapse_into_one() {
    let Some(m) = mount() else { return };
    let card = m.open();
    raise_fill_interrupt(&card);
    assert_eq!(
        card.wait_event(0, Duration::from_secs(5))
            .expect("the fill interrupt"),
        1
    );
    let e = card
        .wait_event(0, Duration::from_millis(200))
        .expect_err("consumed");
    assert_eq!(e.kind(), ErrorKind::Timeout);
    // A wait that never ends (Duration::MAX) returns with the next interrupt.
    quiet(&card);
    card.write_reg(reg(regs::CAP_BASE), 0x30_0000)
        .expect("empty the ring");
    std::thread::scope(|s| {
        let w = s.spawn(|| card.wait_event(0, Duration::MAX));
        std::thread::sleep(Duration::from_millis(100));
        raise_fill_interrupt(&card);
        assert_eq!(w.join().expect("waiter").expect("interrupt"), 1);
    });
    quiet(&card);
}

#[test]
fn an_engine_left_in_fixed_address_mode_is_put_back() {
    let Some(m) = mount() else { return };
    {
        // An earlier program sets fixed-address mode and exits.
        let h2c = File::options()
            .write(true)
            .open(m.node("_h2c_0"))
            .expect("h2c node");
        let mut fixed: libc::c_int = 1;
        // SAFETY: ADDRMODE_SET reads one int through the pointer.
        let r = unsafe {
            libc::ioctl(
                h2c.as_raw_fd(),
                xdma_hw::IOCTL_XDMA_ADDRMODE_SET as _,
                &mut fixed,
            )
        };
        assert_eq!(r, 0);
    }
    let card = m.open();
    assert_eq!(card.driver().addrmode_reset, vec![(Direction::H2C, 0)]);
    let data = DmaBuffer::from_slice(&pattern(4096, 9)).expect("data");
    card.write_mm(0, CardAddr(0x4_0000), &data).expect("write");
    let mut back = DmaBuffer::new(4096).expect("buffer");
    card.read_mm(0, CardAddr(0x4_0000), &mut back)
        .expect("read");
    assert!(back[..] == data[..], "incrementing addresses again");
}

#[test]
fn mapping_the_user_bar_over_the_mount_is_refused_with_why() {
    let Some(m) = mount() else { return };
    let mut cfg = m.cfg.clone();
    let mut hw: HwConfig = cfg.section(BackendKind::Hw).expect("hw section");
    hw.mmap_user = true;
    cfg.set_section(BackendKind::Hw, &hw).expect("hw section");
    let started = Instant::now();
    let e = HwCard::open(&cfg).expect_err("mmap_user over FUSE");
    assert_eq!(e.kind(), ErrorKind::Config, "{e}");
    assert!(e.to_string().contains("FUSE"), "{e}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "refused before any page fault"
    );
}

/// The card's memory as the mount serves it: the memory-mapped nodes' size.
fn card_memory(m: &Mount) -> u64 {
    std::fs::metadata(m.node("_h2c_0")).expect("h2c node").len()
}

#[test]
fn an_access_past_the_card_memory_names_the_address_and_the_setting() {
    let Some(m) = mount() else { return };
    let mem = card_memory(&m);
    assert!(mem > 0, "the mount serves the card's memory size");
    // [hw] memory_size set to the card's: refused before the driver, as the simulated
    // backend refuses it, naming the address, the size and the setting.
    let mut cfg = m.cfg.clone();
    let mut hw: HwConfig = cfg.section(BackendKind::Hw).expect("hw section");
    hw.memory_size = mem;
    cfg.set_section(BackendKind::Hw, &hw).expect("hw section");
    let card = HwCard::open(&cfg).expect("open");
    let data = DmaBuffer::from_slice(&[0x5a; 16]).expect("data");
    let e = card
        .write_mm(0, CardAddr(mem - 8), &data)
        .expect_err("past the card's memory");
    assert_eq!(e.kind(), ErrorKind::OutOfRange, "{e}");
    let msg = e.to_string();
    for part in [
        format!("{:#x}", mem - 8),
        format!("{mem:#x}"),
        "[hw] memory_size".to_string(),
    ] {
        assert!(msg.contains(&part), "names {part}: {msg}");
    }
    let mut back = DmaBuffer::new(16).expect("buffer");
    let e = card
        .read_mm(0, CardAddr(mem), &mut back)
        .expect_err("past the card's memory");
    assert_eq!(e.kind(), ErrorKind::OutOfRange, "{e}");

    // A setting larger than the card lets the read through to the driver, which ends it with
    // its timeout: the error names the address and the setting that let it through.
    hw.memory_size = mem * 2;
    cfg.set_section(BackendKind::Hw, &hw).expect("hw section");
    let card = HwCard::open(&cfg).expect("open");
    let e = card
        .read_mm(0, CardAddr(mem + 0x40), &mut back)
        .expect_err("the card refuses it");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    let msg = e.to_string();
    for part in [
        format!("card address {:#x}", mem + 0x40),
        "[hw] memory_size".to_string(),
        "past the card's memory".to_string(),
    ] {
        assert!(msg.contains(&part), "names {part}: {msg}");
    }
}

#[test]
fn a_receive_given_up_frees_its_channel_within_one_driver_read() {
    use xdma_core::{AsyncCard, Error};
    let Some(m) = mount() else { return };
    let card = m.open();
    quiet(&card);
    let t = m.c2h_timeout();
    assert!(t > Duration::ZERO, "the mount's c2h_timeout");
    // A receive of 30 driver reads, given up with its runtime while its first read waits.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let c = card.clone();
    let _pending = rt.spawn(async move {
        let buf = DmaBuffer::new(4096).expect("buffer");
        c.recv_stream_async(1, buf, t * 30).await
    });
    std::thread::sleep(Duration::from_millis(300));
    drop(rt);
    // The next receive on the channel waits for the read in flight, then makes its own.
    let started = Instant::now();
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let e = card.recv_stream(1, &mut buf, t).expect_err("no data");
    let took = started.elapsed();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(
        took < t * 3 + Duration::from_secs(1),
        "the next receive took {took:?} behind the one given up (c2h_timeout {t:?}): {e}"
    );
    let Error::Timeout { what, after } = &e else {
        panic!("a timeout: {e}");
    };
    assert!(
        what.contains("gave it up"),
        "says what it waited behind: {e}"
    );
    assert!(*after > t, "the time from the call: {e}");
}
