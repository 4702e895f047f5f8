//! Opening the card: its nodes checked, its channels discovered as the driver's probe does,
//! the driver asked, and what an earlier process left set put right.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::card::{HwCard, Inner};
use crate::config::HwConfig;
use crate::driver::{DriverInfo, DriverVersion, ModuleParams};
use crate::node::{node_path, Node};
use crate::regs::{
    bar_size, check_card_id, check_dma_bar, read_word, REG_CARD_ID, REG_CARD_VERSION,
};
use crate::sys::{
    self, os_error, IocInfo, Opener, OsOpener, IOCTL_XDMA_ADDRMODE_GET, IOCTL_XDMA_ADDRMODE_SET,
    IOCTL_XDMA_ALIGN_GET, XDMA_XCL_MAGIC,
};
use xdma_core::{
    CardInfo, ChannelInfo, ChannelKind, Config, Direction, Error, ErrorKind, ProgressReport, Result,
};
use xdma_regmap::driver as abi;
use xdma_regmap::{
    engine_base, engine_regs, id_channel, Target, ID_ENGINE_MASK, ID_STREAM, ID_VERSION_MASK,
    MAX_CHANNELS,
};

impl HwCard {
    /// Opens the card whose nodes start with `cfg.device`, and discovers its channels.
    pub fn open(cfg: &Config) -> Result<HwCard> {
        HwCard::open_with(cfg, Arc::new(OsOpener))
    }

    /// Opens the card through `opener` (the operating system's, or a test's fake nodes).
    pub(crate) fn open_with(cfg: &Config, opener: Arc<dyn Opener>) -> Result<HwCard> {
        let hw = HwConfig::from_config(cfg)?;
        let page = sys::page_size();
        let prefix = cfg.device.as_path();
        let control = Node::new(&opener, node_path(prefix, abi::CONTROL_NODE), libc::O_RDWR);
        let user = Node::new(
            &opener,
            node_path(prefix, abi::USER_NODE),
            libc::O_RDWR | libc::O_SYNC,
        );

        // Discovery: the engines' identifier registers, with the driver's own rule (it stops
        // at the first engine whose identifier or channel number is not the expected one).
        let mut h2c = Vec::new();
        let mut c2h = Vec::new();
        let mut version = None;
        let mut pci_id = None;
        {
            let g = control.lock()?;
            let io = g.io()?;
            check_dma_bar(io, &control.path)?;
            for (dir, target, list) in [
                (Direction::H2C, Target::H2c, &mut h2c),
                (Direction::C2H, Target::C2h, &mut c2h),
            ] {
                // The driver probes XDMA_CHANNEL_NUM_MAX engines per direction.
                for k in 0..MAX_CHANNELS {
                    let at = engine_base(dir == Direction::C2H, k) + engine_regs::IDENTIFIER;
                    let id = read_word(io, &control.path, at)?;
                    if id & ID_ENGINE_MASK != target.id_base() || id_channel(id) != k {
                        break;
                    }
                    list.push(ChannelInfo {
                        dir,
                        index: k,
                        kind: if id & ID_STREAM != 0 {
                            ChannelKind::Stream
                        } else {
                            ChannelKind::MemoryMapped
                        },
                        id_register: id,
                    });
                }
            }
            let mut req = IocInfo {
                magic: XDMA_XCL_MAGIC,
                ..IocInfo::default()
            };
            if io.ioctl_info(&mut req).is_ok() {
                version = DriverVersion::from_number(req.driver_version);
                pci_id = Some((req.vendor, req.device));
            }
        }
        let xdma_version = h2c
            .first()
            .or(c2h.first())
            .map(|c| (c.id_register & ID_VERSION_MASK) as u8);

        let param_dir = match &hw.module_parameters {
            Some(p) => p.clone(),
            None if sys::in_dev(prefix) => PathBuf::from("/sys/module/xdma/parameters"),
            None => prefix.parent().unwrap_or(Path::new(".")).join("parameters"),
        };
        let params = ModuleParams::read(&param_dir).map_err(Error::Config)?;

        // The user BAR: its size from the system, never from configuration.
        let (user_bar_size, user_map) = {
            let g = user.lock()?;
            let io = g.io()?;
            let size = bar_size(io, &user.path)?;
            if hw.mmap_user && io.on_fuse() {
                // A page fault on the mapping makes the kernel read the whole page from the
                // server, which reads every register of it from the simulated card one access
                // at a time: over 30 s in uninterruptible sleep per fault.
                return Err(Error::Config(format!(
                    "[hw] mmap_user = true, but {} is on a FUSE mount (xdma-fuse): each page fault of the mapping reads a whole page of registers from the simulated card, over 30 s in uninterruptible sleep; use mmap_user = false (one pread or pwrite per register) over the mount",
                    user.path.display()
                )));
            }
            let map = if hw.mmap_user {
                let len = usize::try_from(size)
                    .map_err(|_| Error::Config("the user BAR does not fit this host".into()))?;
                Some(io.map(len).map_err(|e| os_error("mmap", &user.path, e))?)
            } else {
                None
            };
            (size, map)
        };

        let h2c_nodes: Vec<Node> = h2c
            .iter()
            .map(|c| {
                Node::new(
                    &opener,
                    node_path(prefix, &abi::h2c_node(c.index)),
                    libc::O_WRONLY,
                )
            })
            .collect();
        let c2h_nodes: Vec<Node> = c2h
            .iter()
            .map(|c| {
                // A streaming C2H node opened with O_TRUNC ends each read at end-of-packet.
                let flags = match c.kind {
                    ChannelKind::Stream => libc::O_RDONLY | libc::O_TRUNC,
                    ChannelKind::MemoryMapped => libc::O_RDONLY,
                };
                Node::new(&opener, node_path(prefix, &abi::c2h_node(c.index)), flags)
            })
            .collect();

        // Alignment and address mode from every engine node that any number of processes may
        // hold (never a streaming C2H node, which would lock out the real reader).
        let mut alignment: Option<u64> = None;
        let mut addrmode_reset = Vec::new();
        let probes = h2c
            .iter()
            .zip(&h2c_nodes)
            .chain(c2h.iter().zip(&c2h_nodes))
            .filter(|(c, _)| !(c.dir == Direction::C2H && c.kind == ChannelKind::Stream));
        for (c, n) in probes {
            let Ok(g) = n.lock() else { continue };
            let Ok(io) = g.io() else { continue };
            let mut a: libc::c_int = 0;
            if io.ioctl_int(IOCTL_XDMA_ALIGN_GET, &mut a).is_ok() && a > 0 {
                alignment = Some(alignment.unwrap_or(1).max(a as u64));
            }
            if c.kind == ChannelKind::MemoryMapped {
                let mut mode: libc::c_int = 0;
                if io.ioctl_int(IOCTL_XDMA_ADDRMODE_GET, &mut mode).is_ok() && mode != 0 {
                    let mut incr: libc::c_int = 0;
                    io.ioctl_int(IOCTL_XDMA_ADDRMODE_SET, &mut incr)
                        .map_err(|e| os_error("ioctl ADDRMODE_SET", &n.path, e))?;
                    addrmode_reset.push((c.dir, c.index));
                }
            }
        }
        let alignment = alignment.unwrap_or(hw.fallback_alignment);

        // Event nodes: opened now, and interrupts latched before this open are drained, so
        // that the first wait does not return at once for an old one.
        let events: Vec<Node> = (0..hw.events)
            .map(|k| {
                Node::new(
                    &opener,
                    node_path(prefix, &abi::events_node(k)),
                    libc::O_RDONLY,
                )
            })
            .collect();
        let mut stale_events = Vec::new();
        for (k, n) in events.iter().enumerate() {
            // The control node opened, so the driver is there: a missing event node is a
            // setting asking for more than the driver made.
            let g = n.lock().map_err(|e| match e.kind() {
                ErrorKind::NoDevice => Error::NoDevice {
                    what: format!("the event node {}", n.path.display()),
                    hint: format!(
                        "the driver's other nodes are there but not this one: [hw] events = {} asks for _events_0 to _events_{}; set it to the number of event nodes the driver made",
                        hw.events,
                        hw.events.saturating_sub(1)
                    ),
                },
                _ => e,
            })?;
            let io = g.io()?;
            if io.poll_in(0).unwrap_or(false) {
                let mut b = [0u8; 4];
                match io.read(&mut b) {
                    Ok(_) => stale_events.push(k),
                    Err(e) => return Err(os_error("read", &n.path, e)),
                }
            }
        }

        let mut inner = Inner {
            info: CardInfo {
                backend: "hw".into(),
                h2c,
                c2h,
                memory_size: hw.memory_size,
                user_bar_size,
                events: hw.events,
                card_id: 0,
                card_version: 0,
                xdma_version,
                alignment,
                min_stream_timeout: params.c2h_timeout().unwrap_or(Duration::MAX),
            },
            driver: DriverInfo {
                version,
                pci_id,
                params,
                addrmode_reset,
                stale_events,
            },
            hw,
            page,
            control,
            user,
            user_map,
            h2c: h2c_nodes,
            c2h: c2h_nodes,
            events,
            epoch: Instant::now(),
            progress: Mutex::new(ProgressReport::default()),
        };
        if inner.info.user_bar_size < REG_CARD_VERSION + 4 {
            return Err(Error::NoDevice {
                what: format!("the card's user BAR behind {}", inner.user.path.display()),
                hint: format!(
                    "it has {} bytes, too few for the card's ID and VERSION registers (offsets 0x0 to 0x7): the node is not a card's user BAR; check that XDMA_DEVICE names the card's node prefix",
                    inner.info.user_bar_size
                ),
            });
        }
        inner.info.card_id = inner.read_reg(REG_CARD_ID)?;
        inner.info.card_version = inner.read_reg(REG_CARD_VERSION)?;
        check_card_id(inner.info.card_id, inner.hw.card_id, &inner.user.path)?;
        Ok(HwCard {
            inner: Arc::new(inner),
        })
    }
}
