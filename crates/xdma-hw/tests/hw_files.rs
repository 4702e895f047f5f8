//! The driver backend on ordinary files in a temporary folder laid out like `/dev/xdma0_*`,
//! for what a FUSE mount of the simulated card cannot show: every other behaviour of the
//! backend is tested over the mount (`over_fuse.rs`), against the RTL behind the driver's
//! semantics. Each test says why it needs plain files.

mod common;

use std::os::unix::fs::FileExt;

use common::{config, emu_engine, with_hw, Emu, CARD_ID, EMU_XDMA_VERSION};
use xdma_core::{BackendKind, Card, CardAddr, ChannelKind, Config, DmaBuffer, ErrorKind};
use xdma_hw::HwCard;
use xdma_regmap::{engine_base, Target};

fn hw_config(emu: &Emu) -> Config {
    config(BackendKind::Hw, Some(emu))
}

#[test]
fn the_user_bar_can_be_mapped() {
    // Plain files, because a FUSE mount maps its files through the page cache, which the
    // server keeps only roughly in step with the registers; a plain file's mapping is exact.
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
fn a_short_user_node_is_never_mapped_past_its_end() {
    // Plain files, because the size of a FUSE node is whatever the server says; the point is a
    // node shorter than the configuration once assumed, which used to end in SIGBUS.
    let emu = Emu::new();
    let user = std::fs::OpenOptions::new()
        .write(true)
        .open(emu.node("_user"))
        .expect("user");
    user.set_len(4096).expect("shorten the user node");
    let mut cfg = hw_config(&emu);
    with_hw(&mut cfg, |hw| hw.mmap_user = true);
    let card = HwCard::open(&cfg).expect("open with mmap");
    assert_eq!(
        card.info().user_bar_size,
        4096,
        "the size comes from the node"
    );
    assert_eq!(card.read_reg(0xffc).expect("last word"), 0);
    let e = card.read_reg(0xfffc).expect_err("past the node");
    assert_eq!(e.kind(), ErrorKind::OutOfRange, "{e}");
    // Without the mapping the same offset is refused before the driver sees it.
    let card = HwCard::open(&hw_config(&emu)).expect("open");
    assert_eq!(
        card.write_reg(0x1000, 1).expect_err("past the node").kind(),
        ErrorKind::OutOfRange
    );
}

#[test]
fn discovery_reads_the_identifier_registers() {
    // Plain files, because the simulated card's identifiers are always well formed; here the
    // words are made to break the driver's probe rule. One H2C and two C2H engines; the second
    // C2H is a stream. The driver stops probing at the first engine whose identifier or
    // channel number is not the expected one, so the words at 0x1200 (channel 3 in slot 2) and
    // 0x1300 are never used.
    let emu = Emu::with_control(&[
        emu_engine(Target::H2c, 0, false),
        emu_engine(Target::C2h, 0, false),
        emu_engine(Target::C2h, 1, true),
        (
            engine_base(true, 2),
            Target::C2h.identifier_version(3, false, EMU_XDMA_VERSION),
        ),
        (
            engine_base(true, 3),
            Target::C2h.identifier_version(3, false, 0),
        ),
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
    assert_eq!(
        info.c2h[1].id_register,
        emu_engine(Target::C2h, 1, true).1,
        "the identifier word as the engine holds it"
    );
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
fn a_missing_device_says_what_to_check() {
    // No mount at all: a folder without the nodes is what a machine without the driver has.
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
    // Plain files, because the FUSE server runs as root and answers every open.
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

#[test]
fn a_user_node_that_is_not_a_cards_bar_is_refused_at_open() {
    // /dev/zero maps at any length and reads ID 0: no card's.
    let emu = Emu::new();
    std::fs::remove_file(emu.node("_user")).expect("remove");
    std::os::unix::fs::symlink("/dev/zero", emu.node("_user")).expect("symlink");
    let e = HwCard::open(&hw_config(&emu)).expect_err("/dev/zero is no card");
    assert_eq!(e.kind(), ErrorKind::NoDevice);
    assert!(e.to_string().contains("no card's identifier"), "{e}");

    // Six bytes: too few for the ID and VERSION registers, which open reads itself.
    let emu = Emu::new();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(emu.node("_user"))
        .expect("open");
    f.set_len(6).expect("truncate");
    let e = HwCard::open(&hw_config(&emu)).expect_err("too small");
    assert_eq!(e.kind(), ErrorKind::NoDevice);
    assert!(
        e.to_string()
            .contains("too few for the card's ID and VERSION registers"),
        "{e}"
    );
}

#[test]
fn another_designs_id_is_refused_unless_asked_for() {
    use std::os::unix::fs::FileExt;
    let emu = Emu::new();
    let user = std::fs::OpenOptions::new()
        .write(true)
        .open(emu.node("_user"))
        .expect("open");
    user.write_all_at(&0x1234_5678u32.to_le_bytes(), 0)
        .expect("id");
    let mut cfg = hw_config(&emu);
    let e = HwCard::open(&cfg).expect_err("another design");
    assert_eq!(e.kind(), ErrorKind::NoDevice);
    assert!(
        e.to_string().contains("0x12345678") && e.to_string().contains("card_id"),
        "{e}"
    );
    with_hw(&mut cfg, |hw| hw.card_id = 0x1234_5678);
    assert_eq!(
        HwCard::open(&cfg).expect("asked for").info().card_id,
        0x1234_5678
    );
    with_hw(&mut cfg, |hw| hw.card_id = 0);
    assert!(HwCard::open(&cfg).is_ok(), "0 accepts any design");
}

#[test]
fn a_control_node_that_is_not_the_drivers_says_so() {
    for what in ["directory", "/dev/null", "/dev/zero", "zeros", "fifo"] {
        let emu = Emu::new();
        let control = emu.node("_control");
        std::fs::remove_file(&control).expect("remove");
        // Kept open so that opening the FIFO read-write finds it as the backend left it.
        let mut _fifo = None;
        match what {
            "directory" => std::fs::create_dir(&control).expect("mkdir"),
            "zeros" => std::fs::File::create(&control)
                .and_then(|f| f.set_len(0x1_0000))
                .expect("a file of zeros"),
            "fifo" => _fifo = Some(common::fifo(&control)),
            dev => std::os::unix::fs::symlink(dev, &control).expect("symlink"),
        }
        let e = HwCard::open(&hw_config(&emu)).expect_err(what);
        assert_eq!(e.kind(), ErrorKind::NoDevice, "{what}: {e}");
        let msg = e.to_string();
        assert!(msg.contains("not the driver's"), "{what}: {msg}");
        assert!(
            msg.contains("XDMA_DEVICE"),
            "{what}: says what to do: {msg}"
        );
        assert!(!msg.contains("engine stopped early"), "{what}: {msg}");
        assert!(!msg.contains("Illegal seek"), "{what}: {msg}");
    }
}

#[test]
fn a_missing_event_node_names_the_setting_that_asked_for_it() {
    let emu = Emu::new();
    let mut cfg = hw_config(&emu);
    // The folder has the nodes the emulated driver made; ask for one more.
    let have = (0..64)
        .take_while(|k| emu.node(&format!("_events_{k}")).exists())
        .count();
    with_hw(&mut cfg, |hw| hw.events = have + 1);
    let e = HwCard::open(&cfg).expect_err("one event node too many");
    assert_eq!(e.kind(), ErrorKind::NoDevice);
    let msg = e.to_string();
    assert!(
        msg.contains("[hw] events") && !msg.contains("is the XDMA driver loaded"),
        "{msg}"
    );
}
