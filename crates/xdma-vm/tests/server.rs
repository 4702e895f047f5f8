//! The device server driven over its socket as QEMU drives it, with guest RAM a memfd the test
//! shares: the BAR write that clears a running engine's Run bit is answered only once the
//! engine is idle, as a board's engine is idle before its CPU's next access.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::memfd::{memfd_create, MFdFlags};
use xdma_regmap::{self as map, control, desc, engine_regs as ereg, sgdma, status, Descriptor};
use xdma_vm::proxy::{self, Message, SysmemRegion};
use xdma_vm::server::{self, ServerConfig};
use xdma_vm::Variant;

/// Guest RAM: 8 MiB at 256 MiB.
const RAM: u64 = 0x1000_0000;
const RAM_BYTES: u64 = 8 << 20;
const DESCS: u64 = RAM;
const DATA: u64 = RAM + 0x10_0000;
/// Where the test puts the user BAR and the DMA BAR.
const USER_BASE: u64 = 0xE000_0000;
const DMA_BASE: u64 = 0xF000_0000;
/// What the host pages hold before the engine writes them.
const UNTOUCHED: u8 = 0xEE;

struct Qemu {
    sock: UnixStream,
    ram: File,
}

impl Qemu {
    /// Sends a message that wants a reply and returns the reply's value.
    fn call(&self, m: &Message) -> u64 {
        proxy::send(&self.sock, m).expect("send");
        match proxy::recv(&self.sock).expect("the device answers") {
            Message::Ret(v) => v,
            other => panic!("not a reply: {other:?}"),
        }
    }

    fn dma_w(&self, off: u64, val: u32) {
        self.call(&Message::BarWrite {
            addr: DMA_BASE + off,
            val: u64::from(val),
            size: 4,
            memory: true,
        });
    }

    fn dma_r(&self, off: u64) -> u32 {
        self.call(&Message::BarRead {
            addr: DMA_BASE + off,
            size: 4,
            memory: true,
        }) as u32
    }

    fn ram(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        self.ram
            .read_exact_at(&mut b, addr - RAM)
            .expect("guest RAM");
        b
    }
}

/// The device serving a fresh mm card on a socket pair, its BARs assigned, its guest RAM a
/// memfd; `done` gets its outcome once the test closes the socket.
fn device(slice: u64) -> (Qemu, mpsc::Receiver<server::Outcome>) {
    let (qemu, dev) = UnixStream::pair().expect("socket pair");
    let (tx, done) = mpsc::channel();
    let cfg = ServerConfig {
        variant: Variant::Mm,
        monitors: false,
        user_irqs: 1,
        alignment: 1,
        slice,
        // No QEMU behind it: the test enables no interrupt, so nothing is sent there.
        qtest: std::env::temp_dir().join("xdma-vm-test-no-qtest.sock"),
        qtest_timeout: Duration::from_millis(200),
    };
    server::spawn(dev, cfg, tx).expect("the device starts");
    let ram = File::from(memfd_create("guest-ram", MFdFlags::MFD_CLOEXEC).expect("memfd"));
    ram.set_len(RAM_BYTES).expect("RAM size");
    let fd = ram.try_clone().expect("dup").into();
    let q = Qemu { sock: qemu, ram };
    proxy::send(
        &q.sock,
        &Message::SyncSysmem(vec![SysmemRegion {
            gpa: RAM,
            size: RAM_BYTES,
            offset: 0,
            fd,
        }]),
    )
    .expect("send");
    for (bar, base) in [(0u32, USER_BASE), (1, DMA_BASE)] {
        q.call(&Message::ConfigWrite {
            addr: 0x10 + 4 * bar,
            val: base as u32,
            len: 4,
        });
    }
    // Memory space and bus mastering on.
    q.call(&Message::ConfigWrite {
        addr: 0x04,
        val: 0x6,
        len: 2,
    });
    (q, done)
}

/// A C2H chain of `n` descriptors of a page each into pages of their own, started as the
/// driver starts an engine, with no interrupt enabled.
fn start_c2h_chain(q: &Qemu, n: u64) {
    q.ram
        .write_all_at(&vec![UNTOUCHED; (n * 4096) as usize], DATA - RAM)
        .expect("guest RAM");
    for i in 0..n {
        let left = (n - 1 - i) as u32;
        let mut c = map::DESC_MAGIC | (left.min(63) << desc::ADJ_SHIFT);
        if left == 0 {
            c |= desc::STOP | desc::COMPLETED;
        }
        let d = Descriptor {
            control: c,
            len: 4096,
            src: i * 4096,
            dst: DATA + i * 4096,
            next: DESCS + 32 * (i + 1),
        };
        q.ram
            .write_all_at(&d.to_bytes(), DESCS - RAM + 32 * i)
            .expect("guest RAM");
    }
    let s = map::sgdma_base(true, 0);
    q.dma_w(s + sgdma::FIRST_DESC_LO, DESCS as u32);
    q.dma_w(s + sgdma::FIRST_DESC_HI, (DESCS >> 32) as u32);
    q.dma_w(s + sgdma::FIRST_DESC_ADJACENT, 0);
    q.dma_w(map::engine_base(true, 0) + ereg::CONTROL, control::RUN);
}

/// The write that clears Run comes back with the engine idle: the status read right after it
/// shows BUSY clear and idle_stopped set, no page after the engine's current descriptor was
/// written, and none is written later. The report counts the stop and its wait.
#[test]
fn the_write_that_stops_an_engine_is_answered_once_the_engine_is_idle() {
    // A short slice, so that between two messages the card runs far less than a stop takes.
    let (q, done) = device(16);
    let n = 128;
    start_c2h_chain(&q, n);
    let e = map::engine_base(true, 0);
    let t0 = Instant::now();
    while q.dma_r(e + ereg::COMPLETED) < 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "two pages not moved in 60 s"
        );
    }
    // Run cleared (idle_stopped's logging on, its interrupt masked in IE_MASK), and the status
    // read sent behind it before its answer is awaited: the device handles the read right
    // after the write, with no slice of the card's clock between them, so the status is what
    // the guest's next access after the stop would see however fast it came.
    proxy::send(
        &q.sock,
        &Message::BarWrite {
            addr: DMA_BASE + e + ereg::CONTROL,
            val: u64::from(control::IE_IDLE_STOPPED),
            size: 4,
            memory: true,
        },
    )
    .expect("send");
    proxy::send(
        &q.sock,
        &Message::BarRead {
            addr: DMA_BASE + e + ereg::STATUS,
            size: 4,
            memory: true,
        },
    )
    .expect("send");
    let mut answers = [0u64; 2];
    for a in &mut answers {
        *a = match proxy::recv(&q.sock).expect("the device answers") {
            Message::Ret(v) => v,
            other => panic!("not a reply: {other:?}"),
        };
    }
    let st = answers[1] as u32;
    assert_eq!(st & status::BUSY, 0, "status {st:#x} right after the stop");
    assert_ne!(st & status::IDLE_STOPPED, 0, "status {st:#x}");
    let after = q.dma_r(e + ereg::COMPLETED);
    assert!(after < n as u32, "stopped before the chain's end: {after}");
    let pages = q.ram(DATA, (n * 4096) as usize);
    for (i, page) in pages.chunks(4096).enumerate().skip(after as usize) {
        assert!(
            page.iter().all(|&b| b == UNTOUCHED),
            "page {i} written though only {after} descriptors completed"
        );
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        q.ram(DATA, pages.len()) == pages,
        "guest RAM changed after the engine was idle"
    );
    drop(q);
    let (result, report) = done
        .recv_timeout(Duration::from_secs(30))
        .expect("the device ends once its socket closes");
    result.expect("the device ran without error");
    assert_eq!(report.stops, 1, "{report}");
    assert!(report.stop_cycles > 0, "{report}");
    assert!(
        report.stop_wall_max > Duration::ZERO && report.stop_wall_max <= report.stop_wall,
        "{report}"
    );
    assert!(
        report.to_string().contains("1 engine stops waited"),
        "{report}"
    );
}
