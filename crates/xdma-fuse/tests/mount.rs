//! The server as a program: mounted from its binary, used from the shell and from other
//! processes, and unmounted by its signals. Each test mounts a server of its own in a
//! temporary folder. Where FUSE cannot be mounted (no /dev/fuse, or neither root nor
//! fusermount3), each test says why and passes without running.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use card_regs as regs;
use xdma_regmap::{id_channel, Target, ID_ENGINE_MASK, ID_STREAM};

/// Why FUSE cannot be mounted here, or None.
fn unavailable() -> Option<String> {
    if let Err(e) = OpenOptions::new().read(true).write(true).open("/dev/fuse") {
        return Some(format!("/dev/fuse cannot be opened ({e}): the fuse kernel module is not loaded or this container has no FUSE device"));
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let helper = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("fusermount3").is_file()))
        .unwrap_or(false);
    (!root && !helper).then(|| {
        "not root and no fusermount3 on PATH: install the Debian package fuse3, or run as root"
            .to_string()
    })
}

/// A running server with its mount.
struct Server {
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Server {
    /// Mounts a server with `config` (TOML), or None when FUSE is not available here.
    fn start(config: &str) -> Option<Server> {
        if let Some(why) = unavailable() {
            eprintln!("not run: {why}");
            return None;
        }
        let dir = tempfile::tempdir().expect("mount folder");
        let cfg = dir.path().with_extension("toml");
        std::fs::write(&cfg, config).expect("config file");
        let child = Command::new(env!("CARGO_BIN_EXE_xdma-fuse"))
            .arg("mount")
            .arg(dir.path())
            .arg("--config")
            .arg(&cfg)
            .stdin(Stdio::null())
            .spawn()
            .expect("start xdma-fuse");
        let mut s = Server {
            dir,
            child: Some(child),
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while !s.node("_control").exists() {
            if let Some(c) = s.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    panic!("xdma-fuse exited before mounting: {status}");
                }
            }
            assert!(
                Instant::now() < deadline,
                "xdma-fuse did not mount within 120 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(s)
    }

    fn node(&self, suffix: &str) -> PathBuf {
        self.dir.path().join(format!("xdma0{suffix}"))
    }

    fn mounted(&self) -> bool {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let dir = self.dir.path().to_string_lossy().into_owned();
        mounts
            .lines()
            .any(|l| l.split(' ').nth(1) == Some(dir.as_str()))
    }

    /// Sends `sig` to the server and waits for it to exit; returns its exit status.
    fn stop(&mut self, sig: libc::c_int) -> std::process::ExitStatus {
        let mut c = self.child.take().expect("a running server");
        // SAFETY: kill with the server's own process id, which has not been reaped yet.
        unsafe { libc::kill(c.id() as libc::pid_t, sig) };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(Some(status)) = c.try_wait() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = c.kill();
                let _ = c.wait();
                panic!("xdma-fuse did not exit within 20 s of signal {sig}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.stop(libc::SIGTERM);
        }
        if self.mounted() {
            // A server that died without unmounting leaves the mount behind: detach it.
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

const CONFIG: &str = "[server]\nc2h_timeout = 2\n[sim]\nevents = 1\n";

fn pattern(len: usize) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

fn write_reg(s: &Server, offset: u32, value: u32) {
    let f = OpenOptions::new()
        .write(true)
        .open(s.node("_user"))
        .expect("user node");
    f.write_all_at(&value.to_le_bytes(), u64::from(offset))
        .expect("register write");
}

#[test]
fn dd_moves_one_mib_to_an_offset_and_back() {
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    let work = tempfile::tempdir().expect("work folder");
    let src = work.path().join("in.bin");
    let back = work.path().join("back.bin");
    std::fs::write(&src, pattern(1 << 20)).expect("input");
    // 1 MiB at card address 3 MiB, through the H2C node, then back through the C2H node.
    let status = Command::new("dd")
        .arg(format!("if={}", src.display()))
        .arg(format!("of={}", s.node("_h2c_0").display()))
        .args(["bs=1M", "seek=3", "count=1", "status=none"])
        .status()
        .expect("dd");
    assert!(status.success(), "dd to the card: {status}");
    let status = Command::new("dd")
        .arg(format!("if={}", s.node("_c2h_0").display()))
        .arg(format!("of={}", back.display()))
        .args(["bs=1M", "skip=3", "count=1", "status=none"])
        .status()
        .expect("dd");
    assert!(status.success(), "dd from the card: {status}");
    let a = std::fs::read(&src).expect("in");
    let b = std::fs::read(&back).expect("back");
    assert_eq!(b.len(), 1 << 20);
    assert!(a == b, "the bytes came back changed");
    // The card address is the file offset: the same bytes, read with pread elsewhere.
    let c2h = File::open(s.node("_c2h_0")).expect("c2h node");
    let mut w = vec![0u8; 64];
    c2h.read_exact_at(&mut w, (3 << 20) + 4096).expect("pread");
    assert_eq!(&w[..], &a[4096..4160]);
}

#[test]
fn one_process_blocks_on_a_stream_read_while_another_writes() {
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    write_reg(&s, regs::CONTROL, regs::control::MODE_LOOP as u32);
    let work = tempfile::tempdir().expect("work folder");
    let out = work.path().join("frame.bin");
    // A reader in another process (dd, no O_TRUNC: the read fills its whole buffer).
    let mut reader = Command::new("dd")
        .arg(format!("if={}", s.node("_c2h_1").display()))
        .arg(format!("of={}", out.display()))
        .args(["bs=4096", "count=1", "status=none"])
        .spawn()
        .expect("dd reader");
    std::thread::sleep(Duration::from_millis(200));
    let frame = pattern(4096);
    let mut h2c = OpenOptions::new()
        .write(true)
        .open(s.node("_h2c_1"))
        .expect("h2c stream");
    let n = h2c.write(&frame).expect("one packet per write");
    assert_eq!(n, 4096);
    let status = reader.wait().expect("reader");
    assert!(status.success(), "{status}");
    assert_eq!(std::fs::read(&out).expect("frame"), frame);
    // With O_TRUNC a read ends at end-of-packet, however large the buffer.
    let mut c2h = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_TRUNC)
        .open(s.node("_c2h_1"))
        .expect("c2h stream");
    std::thread::scope(|sc| {
        let r = sc.spawn(|| {
            let mut buf = vec![0u8; 64 << 10];
            let n = c2h.read(&mut buf).expect("read to end-of-packet");
            buf.truncate(n);
            buf
        });
        std::thread::sleep(Duration::from_millis(200));
        h2c.write_all(&frame[..700]).expect("short packet");
        assert_eq!(r.join().expect("reader"), frame[..700].to_vec());
    });
    // A second opener of the stream node is refused, as the driver refuses it.
    let e = File::open(s.node("_c2h_1")).expect_err("one opener at a time");
    assert_eq!(e.raw_os_error(), Some(libc::EBUSY));
}

/// Without O_TRUNC a stream read is one transfer that ends when every descriptor is filled,
/// and the engine closes a descriptor at each packet's end and starts the next packet in the
/// next descriptor (PG195, "C2H Stream" and its writeback: one result per descriptor with its
/// length and EOP). So an 8 KiB read, two pages and two descriptors, ends after two 700-byte
/// packets with 1400 bytes: the first packet, then what the second descriptor's page held
/// before the second packet's place, not the second packet right behind the first.
#[test]
fn a_stream_read_without_o_trunc_ends_when_its_descriptors_are_filled() {
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    write_reg(&s, regs::CONTROL, regs::control::MODE_LOOP as u32);
    let (p1, p2) = (pattern(700), pattern(1400)[700..].to_vec());
    let mut c2h = File::open(s.node("_c2h_1")).expect("c2h stream");
    let mut h2c = OpenOptions::new()
        .write(true)
        .open(s.node("_h2c_1"))
        .expect("h2c stream");
    std::thread::scope(|sc| {
        let r = sc.spawn(|| {
            let mut buf = vec![0xa5u8; 8192];
            let n = c2h.read(&mut buf).expect("a read that two packets fill");
            buf.truncate(n);
            buf
        });
        std::thread::sleep(Duration::from_millis(200));
        h2c.write_all(&p1).expect("first packet");
        h2c.write_all(&p2).expect("second packet");
        let got = r.join().expect("reader");
        assert_eq!(got.len(), 1400, "the two descriptors' lengths");
        assert_eq!(
            &got[..700],
            &p1[..],
            "the first packet opens the first descriptor"
        );
        assert_ne!(
            &got[700..],
            &p2[..],
            "the second packet starts a descriptor of its own"
        );
    });
}

#[test]
fn a_stream_node_opens_again_right_after_its_opener_closed_it() {
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    // The kernel sends RELEASE after close has returned; the driver releases the engine inside
    // close. An open straight after a close (or after the opener's process exited) must find
    // the engine free, as it does with the driver.
    for i in 0..200 {
        let f = File::open(s.node("_c2h_1")).unwrap_or_else(|e| panic!("open {i}: {e}"));
        drop(f);
    }
    for i in 0..5 {
        let status = Command::new("dd")
            .arg(format!("if={}", s.node("_c2h_1").display()))
            .args(["of=/dev/null", "count=0", "status=none"])
            .status()
            .expect("dd");
        assert!(status.success(), "dd {i}: {status}");
        let f = File::open(s.node("_c2h_1")).unwrap_or_else(|e| panic!("open after dd {i}: {e}"));
        drop(f);
    }
    // An opener that has not closed its file still holds the engine, and a second opener is
    // refused at once, not after the wait for a release on its way.
    let _held = File::open(s.node("_c2h_1")).expect("first opener");
    let started = Instant::now();
    let e = File::open(s.node("_c2h_1")).expect_err("one opener at a time");
    assert_eq!(e.raw_os_error(), Some(libc::EBUSY));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_stream_read_without_data_fails_with_etimedout_after_c2h_timeout() {
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    let mut c2h = File::open(s.node("_c2h_2")).expect("c2h stream");
    let started = Instant::now();
    let mut buf = vec![0u8; 4096];
    let e = c2h.read(&mut buf).expect_err("no data");
    assert_eq!(e.raw_os_error(), Some(libc::ETIMEDOUT));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(2) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    // O_NONBLOCK changes nothing, as with the driver.
    let mut nb = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(s.node("_c2h_1"))
        .expect("c2h stream");
    let started = Instant::now();
    assert!(nb.read(&mut buf).is_err());
    assert!(started.elapsed() >= Duration::from_secs(2));
}

#[test]
fn the_driver_ioctls_and_engine_registers_answer() {
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    let h2c = File::open(s.node("_h2c_0")).expect("h2c node");
    let mut a: libc::c_int = 0;
    // SAFETY: ALIGN_GET writes one int through the pointer.
    let r = unsafe {
        libc::ioctl(
            h2c.as_raw_fd(),
            xdma_regmap::driver::IOCTL_XDMA_ALIGN_GET as _,
            &mut a,
        )
    };
    assert_eq!(r, 0);
    assert_eq!(a, 1, "the reference IP is unaligned");
    let control = File::open(s.node("_control")).expect("control node");
    let mut info = xdma_regmap::driver::IocInfo {
        magic: xdma_regmap::driver::XDMA_XCL_MAGIC,
        ..xdma_regmap::driver::IocInfo::default()
    };
    // SAFETY: XDMA_IOCINFO reads and writes one struct xdma_ioc_info, which IocInfo lays out.
    let r = unsafe {
        libc::ioctl(
            control.as_raw_fd(),
            xdma_regmap::driver::XDMA_IOCINFO as _,
            &mut info,
        )
    };
    assert_eq!(r, 0);
    assert_eq!(info.driver_version, 2_025_200);
    assert_eq!(info.vendor, 0x10ee);
    // A request without the magic number is refused as the driver refuses it.
    let mut bad = xdma_regmap::driver::IocInfo::default();
    // SAFETY: as above.
    let r = unsafe {
        libc::ioctl(
            control.as_raw_fd(),
            xdma_regmap::driver::XDMA_IOCINFO as _,
            &mut bad,
        )
    };
    assert_eq!(r, -1);
    assert_eq!(
        std::io::Error::last_os_error().raw_os_error(),
        Some(libc::ENOTTY)
    );
    // The engines' identifiers where the driver probes them: H2C 0 memory-mapped, H2C 1 a
    // stream, nothing at H2C 2; C2H 0..2.
    let word = |off: u64| {
        let mut b = [0u8; 4];
        control.read_exact_at(&mut b, off).expect("control word");
        u32::from_le_bytes(b)
    };
    let target = |off: u64| word(off) & ID_ENGINE_MASK;
    assert_eq!(target(0x0000), Target::H2c.id_base());
    assert_eq!(word(0x0100) & ID_STREAM, ID_STREAM, "H2C 1 is a stream");
    assert_eq!(id_channel(word(0x0100)), 1, "channel number");
    assert_eq!(word(0x0200), 0);
    assert_eq!(target(0x1200), Target::C2h.id_base());
    assert_eq!(target(0x2000), Target::Irq.id_base());
    assert_eq!(target(0x3000), Target::Config.id_base());
    // Alignments: 1-byte address alignment, granularity 1, 64 address bits.
    assert_eq!(word(0x004c), 0x0001_0140);
}

#[test]
fn a_mapped_register_page_reads_and_writes_the_card() {
    // The way the vendor's reg_rw works: mmap of the node, one access, unmap, close.
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    let user = OpenOptions::new()
        .read(true)
        .write(true)
        .open(s.node("_user"))
        .expect("user");
    // SAFETY: a fresh shared mapping of one page of the node, checked for MAP_FAILED and
    // unmapped below; accesses stay inside it.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            user.as_raw_fd(),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED, "{}", std::io::Error::last_os_error());
        let w = p.cast::<u32>();
        assert_eq!(
            w.read_volatile(),
            regs::id::RESET as u32,
            "ID through the mapping"
        );
        w.add(regs::SCRATCH as usize / 4)
            .write_volatile(0x5eed_1234);
        libc::munmap(p, 4096);
    }
    drop(user);
    let user = File::open(s.node("_user")).expect("user");
    let mut b = [0u8; 4];
    user.read_exact_at(&mut b, u64::from(regs::SCRATCH))
        .expect("read back");
    assert_eq!(
        u32::from_le_bytes(b),
        0x5eed_1234,
        "only the changed word was written"
    );
}

#[test]
fn a_request_the_card_cannot_serve_is_answered() {
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    // LOOP mode with nobody reading: the card holds the stream back until the simulated
    // card's stall limit, and the write is answered with the driver's timeout.
    write_reg(&s, regs::CONTROL, regs::control::MODE_LOOP as u32);
    let mut h2c = OpenOptions::new()
        .write(true)
        .open(s.node("_h2c_1"))
        .expect("h2c stream");
    let e = h2c.write(&pattern(4096)).expect_err("nobody takes it");
    assert_eq!(e.raw_os_error(), Some(libc::ETIMEDOUT));
    // Past the end of card memory, as the unmodified driver answers it (seen in the guest of
    // `cargo xtask vm`): the engine stops on the first descriptor with a read error, the
    // driver's service routine finds no descriptor completed and fails nothing, and the read
    // ends at c2h_timeout (2 s here) with ETIMEDOUT.
    let c2h = File::open(s.node("_c2h_0")).expect("c2h node");
    let mut b = [0u8; 16];
    let started = std::time::Instant::now();
    let e = c2h.read_at(&mut b, 4 << 30).expect_err("past the memory");
    assert_eq!(e.raw_os_error(), Some(libc::ETIMEDOUT));
    assert!(started.elapsed() >= std::time::Duration::from_secs(2));
    // A write there completes: the driver enables no write errors in the engine. The card saw
    // both requests and refused them, as its ERROR register says (DMA_ADDR).
    let h2c = OpenOptions::new()
        .write(true)
        .open(s.node("_h2c_0"))
        .expect("h2c node");
    assert_eq!(
        h2c.write_at(&b, 4 << 30)
            .expect("the driver reports success"),
        16
    );
    assert_ne!(
        card_error(&s) & regs::error::DMA_ADDR_MASK,
        0,
        "the card refused a burst past its memory"
    );
    // Writes to a C2H node and reads from an H2C node are refused, as the driver refuses them.
    let e = OpenOptions::new()
        .write(true)
        .open(s.node("_c2h_0"))
        .and_then(|f| f.write_at(&b, 0))
        .expect_err("write to C2H");
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    // The server still serves.
    let user = File::open(s.node("_user")).expect("user");
    let mut w = [0u8; 4];
    user.read_exact_at(&mut w, 0).expect("id");
    assert_eq!(u32::from_le_bytes(w), regs::id::RESET as u32);
}

/// The card's ERROR register, read through the user BAR's node.
fn card_error(s: &Server) -> u64 {
    let user = File::open(s.node("_user")).expect("user");
    let mut w = [0u8; 4];
    user.read_exact_at(&mut w, u64::from(regs::ERROR))
        .expect("ERROR");
    u64::from(u32::from_le_bytes(w))
}

/// ADDRMODE_SET on an open node, as a program calls it.
fn set_addrmode(f: &File, fixed: bool) {
    let mut v: libc::c_int = fixed.into();
    // SAFETY: ADDRMODE_SET reads one int through the pointer, which lives across the call.
    let r = unsafe {
        libc::ioctl(
            f.as_raw_fd(),
            xdma_regmap::driver::IOCTL_XDMA_ADDRMODE_SET as _,
            &mut v,
        )
    };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
}

#[test]
fn fixed_address_mode_is_the_ips_and_this_card_refuses_its_bursts() {
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    let h2c = OpenOptions::new()
        .write(true)
        .open(s.node("_h2c_0"))
        .expect("h2c node");
    let c2h = File::open(s.node("_c2h_0")).expect("c2h node");
    let data = pattern(4096);
    assert_eq!(h2c.write_at(&data, 0x1_0000).expect("write"), data.len());
    set_addrmode(&h2c, true);
    set_addrmode(&c2h, true);
    // The driver's rules for the mode (check_transfer_align): the card address aligned to the
    // engine's alignment, which the IP gives as one 16-byte beat in this mode.
    let mut b = vec![0u8; 4096];
    let e = c2h
        .read_at(&mut b, 0x1_0008)
        .expect_err("card address off a beat");
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    // The IP sends FIXED bursts, which the card's AXI port answers with SLVERR: the read's
    // engine stops on its first descriptor, which the driver leaves to c2h_timeout (2 s), and
    // the write completes as any write error does with the driver's enables.
    let started = Instant::now();
    let e = c2h
        .read_at(&mut b, 0x1_0000)
        .expect_err("FIXED bursts refused");
    assert_eq!(e.raw_os_error(), Some(libc::ETIMEDOUT));
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(
        h2c.write_at(&[0xA5; 4096], 0x1_0000)
            .expect("the driver reports success"),
        4096
    );
    assert_ne!(
        card_error(&s) & regs::error::DMA_BURST_MASK,
        0,
        "the card saw FIXED bursts"
    );
    // Back to incrementing addresses: the memory still holds the first write.
    set_addrmode(&h2c, false);
    set_addrmode(&c2h, false);
    c2h.read_exact_at(&mut b, 0x1_0000).expect("read");
    assert!(b == data);
}

#[test]
fn sigint_and_sigterm_unmount() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        let Some(mut s) = Server::start(CONFIG) else {
            return;
        };
        assert!(s.mounted());
        // A file held open does not keep the mount.
        let held = File::open(s.node("_user")).expect("user");
        let status = s.stop(sig);
        assert!(status.success(), "signal {sig}: {status}");
        assert!(!s.mounted(), "signal {sig} left the mount behind");
        drop(held);
    }
}

#[test]
fn a_bad_configuration_mounts_nothing() {
    if let Some(why) = unavailable() {
        eprintln!("not run: {why}");
        return;
    }
    let dir = tempfile::tempdir().expect("folder");
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "[server]\nc2h_timeout = \"soon\"\n").expect("config");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).expect("mount folder");
    let out = Command::new(env!("CARGO_BIN_EXE_xdma-fuse"))
        .arg("mount")
        .arg(&mnt)
        .arg("--config")
        .arg(&cfg)
        .output()
        .expect("run xdma-fuse");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("c2h_timeout"), "names the field: {err}");
    assert!(
        std::fs::read_dir(&mnt).expect("folder").next().is_none(),
        "nothing mounted"
    );
    let _ = Path::new(&mnt);
}

#[test]
fn a_server_killed_under_the_driver_backend_is_a_device_that_went_away() {
    let Some(mut s) = Server::start(CONFIG) else {
        return;
    };
    let mut cfg = xdma_core::Config {
        backend: xdma_core::BackendKind::Hw,
        device: s.node(""),
        ..xdma_core::Config::default()
    };
    let hw = xdma_hw::HwConfig {
        events: 1,
        ..xdma_hw::HwConfig::default()
    };
    cfg.set_section(xdma_core::BackendKind::Hw, &hw)
        .expect("hw section");
    let card = xdma_hw::HwCard::open(&cfg).expect("open over the mount");
    use xdma_core::Card;
    assert_eq!(card.read_reg(0).expect("ID"), card_regs::id::RESET as u32);
    // A stream receive waits in the server (nothing is sent: the card's streams are off) when
    // the server is killed: the kernel aborts the request in flight with ECONNABORTED.
    let in_flight = std::thread::scope(|sc| {
        let rx = sc.spawn(|| {
            let mut buf = xdma_core::DmaBuffer::new(4096).expect("buffer");
            card.recv_stream(1, &mut buf, Duration::from_secs(20))
        });
        std::thread::sleep(Duration::from_millis(500));
        // Killed, the server cannot unmount: the kernel answers later calls with ENOTCONN, as
        // it does for a board unplugged under the driver.
        s.stop(libc::SIGKILL);
        rx.join().expect("receiver")
    });
    let e = in_flight.expect_err("the server died under the receive");
    assert_eq!(e.kind(), xdma_core::ErrorKind::NoDevice, "{e}");
    assert!(e.to_string().contains("went away"), "{e}");
    let e = card.read_reg(0).expect_err("the server is gone");
    assert_eq!(e.kind(), xdma_core::ErrorKind::NoDevice, "{e}");
    assert!(e.to_string().contains("went away"), "{e}");
}

/// The `_control` node is the IP's DMA BAR: the completed-descriptor count an H2C write leaves
/// is the one the driver model's chain made the IP complete, cut by host page. The server
/// copies the caller's data into a buffer that starts on a page (FUSE does not pass the
/// caller's address on), so 0x1100 bytes are a page and 0x100 bytes: two descriptors.
#[test]
fn the_control_node_reads_the_engines_own_completed_count() {
    let Some(s) = Server::start(CONFIG) else {
        return;
    };
    let control = File::open(s.node("_control")).expect("control node");
    let h2c = OpenOptions::new()
        .write(true)
        .open(s.node("_h2c_0"))
        .expect("h2c node");
    let completed = |ch_base: u64| {
        let mut w = [0u8; 4];
        control
            .read_exact_at(&mut w, ch_base + xdma_regmap::engine_regs::COMPLETED)
            .expect("completed count");
        u32::from_le_bytes(w)
    };
    let base = xdma_regmap::engine_base(false, 0);
    for (len, pages) in [(0x1100usize, 2u32), (0x1000, 1), (3 * 0x1000 + 1, 4)] {
        assert_eq!(h2c.write_at(&vec![0x5a; len], 0x2000).expect("write"), len);
        // The IP resets the count when the driver starts the engine's run.
        assert_eq!(completed(base), pages, "{len:#x} bytes");
    }
    // The engine's identifier and the run it ended with, read from the IP: stopped, not busy.
    let mut w = [0u8; 4];
    control
        .read_exact_at(&mut w, base + xdma_regmap::engine_regs::STATUS)
        .expect("status");
    assert_eq!(
        u32::from_le_bytes(w) & xdma_regmap::status::BUSY,
        0,
        "the engine is idle between calls"
    );
}
