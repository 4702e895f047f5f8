//! Helpers shared by the integration tests: a configuration for each backend, and a folder of
//! ordinary files and FIFOs laid out like the XDMA driver's nodes.

#![allow(dead_code)]

use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use xdma_core::{BackendKind, Config};
use xdma_hw::HwConfig;
use xdma_regmap::{engine_base, Target};

/// The card identifier that card_core's ID register holds: ASCII "DAQ1".
pub const CARD_ID: u32 = card_regs::id::RESET as u32;
/// card_core's version register.
pub const CARD_VERSION: u32 = card_regs::version::RESET as u32;
/// card_core's scratch register.
pub const REG_SCRATCH: u64 = 0x008;
/// Card memory of the emulated board, kept small so the backing file stays small.
pub const EMU_MEMORY: u64 = 16 << 20;
/// The identifier registers' version byte of the emulated engines.
pub const EMU_XDMA_VERSION: u32 = 0x06;

/// The identifier word of an emulated engine where the driver probes it: (offset, value).
pub fn emu_engine(target: Target, channel: usize, stream: bool) -> (u64, u32) {
    (
        engine_base(target == Target::C2h, channel),
        target.identifier_version(channel, stream, EMU_XDMA_VERSION),
    )
}

/// An emulated driver: a temporary folder whose files stand in for `/dev/xdma0_*`.
///
/// - `xdma0_control`: identifier words at 0x0k00 (H2C) and 0x1k00 (C2H) for the same channel
///   layout as the simulated card: H2C 0 memory-mapped, 1 stream; C2H 0 memory-mapped, 1 and 2
///   streams; and the IRQ (0x2000) and config (0x3000) blocks' identifiers;
/// - `xdma0_user`: a 64 KiB file holding card_core's ID and VERSION words;
/// - `xdma0_h2c_0` and `xdma0_c2h_0`: one sparse file (hard-linked), the card memory, since a
///   memory-mapped pread/pwrite at the card address is exactly file I/O at that offset;
/// - `xdma0_h2c_1`: an ordinary file that collects stream frames;
/// - `xdma0_c2h_1`, `xdma0_c2h_2`, `xdma0_events_0`: FIFOs, which block like the driver's
///   streaming and event nodes until data comes; the emulator keeps a read-write handle on each
///   so that the backend's open does not wait for a writer.
#[derive(Debug)]
pub struct Emu {
    pub dir: tempfile::TempDir,
    pub c2h_stream: Vec<File>,
    pub events: Vec<File>,
}

impl Emu {
    pub fn new() -> Emu {
        Emu::with_control(&[
            emu_engine(Target::H2c, 0, false),
            emu_engine(Target::H2c, 1, true),
            emu_engine(Target::C2h, 0, false),
            emu_engine(Target::C2h, 1, true),
            emu_engine(Target::C2h, 2, true),
        ])
    }

    /// An emulated driver whose `_control` holds `words` (offset, value) besides the IRQ and
    /// config blocks' identifiers, by which the driver knows the IP's DMA BAR.
    pub fn with_control(words: &[(u64, u32)]) -> Emu {
        let dir = tempfile::tempdir().expect("temporary folder");
        let p = |s: &str| dir.path().join(format!("xdma0{s}"));
        let control = File::create(p("_control")).expect("control");
        control.set_len(0x4000).expect("control size");
        let blocks = [
            (
                xdma_regmap::irq::BASE,
                Target::Irq.identifier_version(0, false, EMU_XDMA_VERSION),
            ),
            (
                xdma_regmap::config::BASE,
                Target::Config.identifier_version(0, false, EMU_XDMA_VERSION),
            ),
        ];
        for &(off, v) in blocks.iter().chain(words) {
            control
                .write_all_at(&v.to_le_bytes(), off)
                .expect("control word");
        }
        let user = File::create(p("_user")).expect("user");
        user.set_len(64 << 10).expect("user size");
        user.write_all_at(&CARD_ID.to_le_bytes(), 0).expect("id");
        user.write_all_at(&CARD_VERSION.to_le_bytes(), 4)
            .expect("version");
        let mem = File::create(p("_h2c_0")).expect("memory");
        mem.set_len(EMU_MEMORY).expect("memory size");
        std::fs::hard_link(p("_h2c_0"), p("_c2h_0")).expect("c2h_0 link");
        File::create(p("_h2c_1")).expect("stream h2c");
        let c2h_stream = ["_c2h_1", "_c2h_2"].iter().map(|s| fifo(&p(s))).collect();
        let events = vec![fifo(&p("_events_0"))];
        Emu {
            dir,
            c2h_stream,
            events,
        }
    }

    /// The node prefix, as XDMA_DEVICE would name it.
    pub fn prefix(&self) -> PathBuf {
        self.dir.path().join("xdma0")
    }

    /// A node's path.
    pub fn node(&self, suffix: &str) -> PathBuf {
        self.dir.path().join(format!("xdma0{suffix}"))
    }
}

/// Makes a FIFO at `path` and returns a read-write handle that keeps it open.
pub fn fifo(path: &Path) -> File {
    let c = CString::new(path.as_os_str().as_bytes()).expect("path");
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    let r = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(
        r,
        0,
        "mkfifo {}: {}",
        path.display(),
        std::io::Error::last_os_error()
    );
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .expect("fifo handle")
}

/// The configuration the tests use for each backend: the same channel layout, one event, and
/// an engine alignment of 64 bytes so that alignment errors can be provoked (the reference IP
/// is built unaligned, alignment 1). The emulated board has a small card memory; the simulated
/// card's memory is what its RTL has.
pub fn config(kind: BackendKind, emu: Option<&Emu>) -> Config {
    let mut cfg = Config::from_toml("[sim]\nevents = 1\n[sim.ip]\nalignment = 64\n")
        .expect("the sim section");
    cfg.backend = kind;
    with_hw(&mut cfg, |hw| {
        hw.events = 1;
        hw.fallback_alignment = 64;
        hw.memory_size = EMU_MEMORY;
    });
    if let Some(e) = emu {
        cfg.device = e.prefix();
    }
    cfg
}

/// Changes the `[hw]` section of `cfg`.
pub fn with_hw(cfg: &mut Config, f: impl FnOnce(&mut HwConfig)) {
    let mut hw: HwConfig = cfg.section(BackendKind::Hw).expect("the hw section");
    f(&mut hw);
    cfg.set_section(BackendKind::Hw, &hw)
        .expect("the hw section");
}
