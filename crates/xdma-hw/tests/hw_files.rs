//! The Linux driver backend's file handling, on ordinary files and FIFOs in a temporary folder
//! laid out like `/dev/xdma0_*`, where their semantics match the driver's: pread/pwrite at the
//! card address, one word per register call, blocking event and stream reads.

mod common;

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use common::{config, with_hw, Emu, CARD_ID, EMU_MEMORY, EMU_XDMA_VERSION, REG_SCRATCH};
use xdma_core::{BackendKind, Card, CardAddr, ChannelKind, Config, DmaBuffer, ErrorKind};
use xdma_hw::HwCard;

fn hw_config(emu: &Emu) -> Config {
    config(BackendKind::Hw, Some(emu))
}

fn unaligned(emu: &Emu) -> Config {
    let mut c = hw_config(emu);
    with_hw(&mut c, |hw| hw.fallback_alignment = 1);
    c
}

#[test]
fn memory_mapped_transfers_are_pread_pwrite_at_the_card_address() {
    let emu = Emu::new();
    let card = HwCard::open(&unaligned(&emu)).expect("open");
    let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
    card.write_mm(0, CardAddr(0x1235), &data).expect("write");
    // The bytes sit in the backing file at the card address: the file offset is the address.
    let mem = File::open(emu.node("_h2c_0")).expect("memory");
    let mut raw = vec![0u8; data.len()];
    mem.read_exact_at(&mut raw, 0x1235).expect("raw read");
    assert_eq!(raw, data);
    // A read through the C2H node at another offset sees the same memory, and the file
    // position plays no part (pread leaves it where it is).
    let mut back = vec![0u8; 100];
    card.read_mm(0, CardAddr(0x1235 + 500), &mut back)
        .expect("read");
    assert_eq!(&back[..], &data[500..600]);
    card.read_mm(0, CardAddr(0x1235 + 500), &mut back)
        .expect("read again");
    assert_eq!(&back[..], &data[500..600]);
    // The last byte of card memory is reachable.
    card.write_mm(0, CardAddr(EMU_MEMORY - 1), &[0xee])
        .expect("last byte");
    let mut one = [0u8];
    card.read_mm(0, CardAddr(EMU_MEMORY - 1), &mut one)
        .expect("last byte back");
    assert_eq!(one, [0xee]);
}

#[test]
fn the_per_call_limit_is_below_2_gib() {
    // The driver moves at most 0x7ffff000 bytes per call; the backend splits below that.
    assert_eq!(xdma_hw::RW_MAX, 0x7fff_f000);
    assert_eq!(xdma_hw::IOCTL_XDMA_ALIGN_GET, 0x8004_7106);
}

#[test]
fn a_short_backing_file_is_a_failed_transfer() {
    let emu = Emu::new();
    // Card memory larger than the backing file: reads past the file's end return 0 bytes, as a
    // driver whose engine stopped would; the backend reports it instead of looping.
    let mut cfg = unaligned(&emu);
    with_hw(&mut cfg, |hw| hw.memory_size = EMU_MEMORY * 2);
    let card = HwCard::open(&cfg).expect("open");
    let mut buf = vec![0u8; 4096];
    let e = card
        .read_mm(0, CardAddr(EMU_MEMORY + 4096), &mut buf)
        .expect_err("past the file");
    assert_eq!(e.kind(), ErrorKind::TransferFailed);
    assert!(e.to_string().contains("xdma0_c2h_0"), "{e}");
}

#[test]
fn registers_are_one_le_word_per_call() {
    let emu = Emu::new();
    let card = HwCard::open(&hw_config(&emu)).expect("open");
    card.write_reg(REG_SCRATCH, 0x1122_3344).expect("write");
    let user = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(emu.node("_user"))
        .expect("user");
    let mut w = [0u8; 4];
    user.read_exact_at(&mut w, REG_SCRATCH).expect("raw");
    assert_eq!(
        w,
        [0x44, 0x33, 0x22, 0x11],
        "little-endian word at the offset"
    );
    // A word put there from outside reads back through the backend.
    user.write_all_at(&0xcafe_f00du32.to_le_bytes(), 0x100)
        .expect("raw write");
    assert_eq!(card.read_reg(0x100).expect("read"), 0xcafe_f00d);
    assert_eq!(
        card.read_reg(0x102).expect_err("unaligned").kind(),
        ErrorKind::RegisterAccess
    );
}

#[test]
fn the_user_bar_can_be_mapped() {
    let emu = Emu::new();
    let mut cfg = hw_config(&emu);
    with_hw(&mut cfg, |hw| hw.mmap_user = true);
    let card = HwCard::open(&cfg).expect("open with mmap");
    assert_eq!(card.info().card_id, CARD_ID);
    card.write_reg(0xfffc, 0xa5a5_5a5a).expect("last word");
    let user = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(emu.node("_user"))
        .expect("user");
    let mut w = [0u8; 4];
    user.read_exact_at(&mut w, 0xfffc).expect("raw");
    assert_eq!(
        u32::from_le_bytes(w),
        0xa5a5_5a5a,
        "the mapping writes through to the node"
    );
    user.write_all_at(&7u32.to_le_bytes(), 0x20)
        .expect("raw write");
    assert_eq!(card.read_reg(0x20).expect("read"), 7);
    assert_eq!(
        card.read_reg(0x1_0000).expect_err("past the BAR").kind(),
        ErrorKind::OutOfRange
    );
}

#[test]
fn discovery_reads_the_identifier_registers() {
    // One H2C and two C2H engines; the second C2H is a stream. The driver stops probing at the
    // first engine that does not answer, so the word at 0x1300 is never looked at.
    let emu = Emu::with_control(&[
        (0x0000, 0x1fc0_0000 | EMU_XDMA_VERSION),
        (0x1000, 0x1fc1_0000 | EMU_XDMA_VERSION),
        (0x1100, 0x1fc1_8100 | EMU_XDMA_VERSION),
        (0x1300, 0x1fc1_0300),
    ]);
    let card = HwCard::open(&hw_config(&emu)).expect("open");
    let info = card.info();
    assert_eq!(info.backend, "hw");
    assert_eq!(info.h2c.len(), 1);
    assert_eq!(
        info.c2h.iter().map(|c| c.kind).collect::<Vec<_>>(),
        vec![ChannelKind::MemoryMapped, ChannelKind::Stream]
    );
    assert_eq!(info.xdma_version, Some(EMU_XDMA_VERSION as u8));
    assert_eq!(info.c2h[1].id_register, 0x1fc1_8100 | EMU_XDMA_VERSION);
    // An ordinary file does not answer ALIGN_GET, so the configured alignment applies.
    assert_eq!(info.alignment, 64);

    // A card with no engines at all has no channels: every transfer names the missing channel.
    let none = Emu::with_control(&[]);
    let card = HwCard::open(&hw_config(&none)).expect("open");
    assert!(card.info().h2c.is_empty() && card.info().c2h.is_empty());
    let e = card.write_mm(0, CardAddr(0), &[1]).expect_err("no channel");
    assert_eq!(e.kind(), ErrorKind::NoSuchChannel);
    assert!(e.to_string().contains("0 H2C channel"), "{e}");
}

#[test]
fn events_return_once_per_interrupt_and_time_out() {
    let emu = Emu::new();
    let card = HwCard::open(&hw_config(&emu)).expect("open");
    let started = Instant::now();
    let e = card
        .wait_event(0, Duration::from_millis(30))
        .expect_err("no interrupt");
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(e.to_string().contains("xdma0_events_0"), "{e}");
    assert!(
        started.elapsed() >= Duration::from_millis(30),
        "the wait lasted its timeout"
    );
    // An interrupt that arrives during the wait ends it with the driver's 4-byte word.
    let mut irq = emu.events[0].try_clone().expect("event writer");
    std::thread::scope(|s| {
        s.spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            irq.write_all(&1u32.to_le_bytes()).expect("raise");
        });
        assert_eq!(
            card.wait_event(0, Duration::from_secs(5))
                .expect("interrupt"),
            1
        );
    });
    // One word, one return: the next wait times out again.
    let e = card
        .wait_event(0, Duration::from_millis(10))
        .expect_err("consumed");
    assert_eq!(e.kind(), ErrorKind::Timeout);
}

#[test]
fn streams_send_frames_and_receive_up_to_end_of_packet() {
    let emu = Emu::new();
    let card = HwCard::open(&hw_config(&emu)).expect("open");
    let frame = DmaBuffer::from_slice(&[0xab; 300]).expect("frame");
    let t = card.send_stream(1, &frame).expect("send");
    assert!(t.end_of_packet && t.bytes == 300);
    card.send_stream(1, &frame[..64]).expect("second frame");
    assert_eq!(
        std::fs::read(emu.node("_h2c_1")).expect("frames").len(),
        364
    );

    // A packet shorter than the buffer ends the read at its end-of-packet.
    let mut src = emu.c2h_stream[0].try_clone().expect("stream writer");
    src.write_all(&[0x11; 100]).expect("packet");
    let mut buf = DmaBuffer::new(4096).expect("buffer");
    let t = card
        .recv_stream(1, &mut buf, Duration::from_secs(5))
        .expect("receive");
    assert_eq!(t.bytes, 100);
    assert!(t.end_of_packet);
    assert!(buf[..100].iter().all(|&x| x == 0x11));
    // A full buffer does not claim an end-of-packet.
    src.write_all(&[0x22; 4096]).expect("long packet");
    let t = card
        .recv_stream(1, &mut buf, Duration::from_secs(5))
        .expect("receive");
    assert_eq!(t.bytes, 4096);
    assert!(!t.end_of_packet);
    // Nothing more: the read times out rather than hang.
    let e = card
        .recv_stream(1, &mut buf, Duration::from_millis(10))
        .expect_err("no data");
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(e.to_string().contains("xdma0_c2h_1"), "{e}");
}

#[test]
fn a_missing_device_says_what_to_check() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut cfg = Config {
        backend: BackendKind::Hw,
        ..Config::default()
    };
    cfg.device = dir.path().join("xdma7");
    let e = HwCard::open(&cfg).expect_err("no nodes");
    assert_eq!(e.kind(), ErrorKind::NoDevice);
    let msg = e.to_string();
    assert!(
        msg.contains("xdma7_control") && msg.contains("driver"),
        "{msg}"
    );

    // A channel that discovery reports but whose node is gone fails on first use, not at open.
    let emu = Emu::new();
    std::fs::remove_file(emu.node("_c2h_0")).expect("remove");
    let card = HwCard::open(&hw_config(&emu)).expect("open");
    let mut buf = DmaBuffer::new(64).expect("buffer");
    let e = card
        .read_mm(0, CardAddr(0), &mut buf)
        .expect_err("node missing");
    assert_eq!(e.kind(), ErrorKind::NoDevice);
    assert!(e.to_string().contains("xdma0_c2h_0"), "{e}");
}

#[test]
fn a_node_this_user_may_not_open_is_a_permission_error() {
    let emu = Emu::new();
    // A node that refuses read-write opens even to root: /proc/sys/kernel/ostype is mode 0444,
    // and proc checks the mode bits for every user.
    std::fs::remove_file(emu.node("_control")).expect("remove");
    std::os::unix::fs::symlink("/proc/sys/kernel/ostype", emu.node("_control")).expect("link");
    let e = HwCard::open(&hw_config(&emu)).expect_err("no permission");
    assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
    assert!(e.to_string().contains("xdma0_control"), "{e}");
    assert!(e.to_string().contains("udev"), "says what to do: {e}");
}
