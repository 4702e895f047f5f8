//! The real board through the Linux XDMA driver (Xilinx dma_ip_drivers), matching what the
//! driver does rather than what its readme suggests:
//!
//! - nodes `<prefix>_h2c_<k>`, `<prefix>_c2h_<k>`, `<prefix>_user`, `<prefix>_control`,
//!   `<prefix>_events_<k>`, where the prefix (default `/dev/xdma0`) may name any folder;
//! - memory-mapped channels: the file offset is the card address, and only pread/pwrite are
//!   used, because the driver's read/write do not move the file position; transfers are split
//!   below the per-call limit of 0x7ffff000 bytes;
//! - `_user` and `_control`: one 32-bit word per call at a 4-aligned offset (anything else is
//!   EPROTO); the user BAR may instead be mapped into memory;
//! - `_events_<k>`: a blocking 4-byte read returns once per interrupt (interrupts before one
//!   read collapse into one); the timeout is a poll before the read;
//! - streaming C2H nodes are opened with O_TRUNC, so a read ends at the first end-of-packet,
//!   and take one opener at a time (EBUSY);
//! - channels are found through the engines' identifier registers read over `_control`;
//! - the alignment comes from the ALIGN_GET ioctl when the driver answers it.
//!
//! The backend's settings are the `[hw]` section of the configuration ([`HwConfig`]).

#![cfg(target_os = "linux")]

mod sys;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use xdma_core::{
    check, AsyncCard, BackendKind, BufResult, Card, CardAddr, CardInfo, ChannelInfo, ChannelKind,
    Config, Direction, DmaBuffer, Error, Result, Transfer,
};

pub use sys::{IOCTL_XDMA_ALIGN_GET, RW_MAX};

/// Engines the driver probes per direction.
const MAX_CHANNELS: usize = 4;
/// Identifier register value, bits 31..16, of an H2C engine.
const H2C_ID: u32 = 0x1fc0;
/// Identifier register value, bits 31..16, of a C2H engine.
const C2H_ID: u32 = 0x1fc1;
/// Identifier bit that marks an AXI-Stream engine.
const ID_STREAM: u32 = 1 << 15;

/// The card's identifier register on the user BAR.
const REG_CARD_ID: u64 = 0x000;
/// The card's version register on the user BAR.
const REG_CARD_VERSION: u64 = 0x004;

/// Settings of the Linux driver backend: the `[hw]` section of the configuration.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HwConfig {
    /// Map the user BAR into memory (mmap of the `_user` node) for register access instead of
    /// one pread/pwrite per word. Default false: the system-call path works on every setup.
    pub mmap_user: bool,
    /// The engines' alignment in bytes when the driver cannot be asked (ALIGN_GET fails).
    /// Default 1, the IP's unaligned mode.
    pub fallback_alignment: u64,
    /// User interrupt event nodes the driver creates (`_events_0` to `_events_15`). Default 16.
    pub events: usize,
    /// Bytes of card memory behind the memory-mapped channels. Default 2 GiB: the reference
    /// board's DDR3.
    pub memory_size: u64,
    /// Bytes of the user BAR. Default 64 KiB: card_core's AXI-Lite port has 16 address bits.
    pub user_bar_size: u64,
}

impl Default for HwConfig {
    fn default() -> Self {
        HwConfig {
            mmap_user: false,
            fallback_alignment: 1,
            events: 16,
            memory_size: 2 << 30,
            user_bar_size: 64 << 10,
        }
    }
}

impl HwConfig {
    /// The `[hw]` section of `cfg`, checked.
    pub fn from_config(cfg: &Config) -> Result<HwConfig> {
        let hw: HwConfig = cfg.section(BackendKind::Hw)?;
        hw.validate()?;
        Ok(hw)
    }

    /// Checks the values that no type rules out.
    pub fn validate(&self) -> Result<()> {
        if self.memory_size == 0 {
            return Err(Error::Config(
                "[hw] memory_size = 0: the card needs memory".into(),
            ));
        }
        if self.user_bar_size < 4 || self.user_bar_size & 3 != 0 {
            return Err(Error::Config(format!(
                "[hw] user_bar_size = {}: at least one 32-bit word, a multiple of 4",
                self.user_bar_size
            )));
        }
        if !self.fallback_alignment.is_power_of_two() {
            return Err(Error::Config(format!(
                "[hw] fallback_alignment = {}: a power of two",
                self.fallback_alignment
            )));
        }
        Ok(())
    }
}

/// One device node, opened on first use and kept open; its mutex also serialises the calls on
/// its channel.
#[derive(Debug)]
struct Node {
    path: PathBuf,
    flags: libc::c_int,
    file: Mutex<Option<File>>,
}

impl Node {
    fn new(path: PathBuf, flags: libc::c_int) -> Node {
        Node {
            path,
            flags,
            file: Mutex::new(None),
        }
    }

    /// Locks the node and opens it if it is not open yet.
    fn lock(&self) -> Result<NodeGuard<'_>> {
        let mut g = self.file.lock().map_err(|_| {
            Error::Backend(format!(
                "{}: a thread panicked while using it",
                self.path.display()
            ))
        })?;
        if g.is_none() {
            *g = Some(sys::open(&self.path, self.flags)?);
        }
        Ok(NodeGuard {
            guard: g,
            path: &self.path,
        })
    }
}

struct NodeGuard<'a> {
    guard: MutexGuard<'a, Option<File>>,
    path: &'a Path,
}

impl NodeGuard<'_> {
    fn file(&self) -> Result<&File> {
        self.guard
            .as_ref()
            .ok_or_else(|| Error::Backend(format!("{} is not open", self.path.display())))
    }
}

#[derive(Debug)]
struct Inner {
    info: CardInfo,
    control: Node,
    user: Node,
    user_map: Option<sys::Mapping>,
    h2c: Vec<Node>,
    c2h: Vec<Node>,
    events: Vec<Node>,
    epoch: Instant,
}

/// A card on the Linux XDMA driver. Cloning gives another handle to the same card.
#[derive(Debug, Clone)]
pub struct HwCard {
    inner: Arc<Inner>,
}

/// The path of node `<prefix><suffix>`.
fn node_path(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

impl HwCard {
    /// Opens the card whose nodes start with `cfg.device`, and discovers its channels.
    pub fn open(cfg: &Config) -> Result<HwCard> {
        let hw = HwConfig::from_config(cfg)?;
        let prefix = cfg.device.as_path();
        let control = Node::new(node_path(prefix, "_control"), libc::O_RDWR);
        let user = Node::new(node_path(prefix, "_user"), libc::O_RDWR | libc::O_SYNC);

        // Discovery: the engines' identifier registers, as the driver probes them (it stops
        // at the first engine that does not answer).
        let mut h2c = Vec::new();
        let mut c2h = Vec::new();
        {
            let g = control.lock()?;
            let f = g.file()?;
            for (dir, base, want, list) in [
                (Direction::H2C, 0x0000u64, H2C_ID, &mut h2c),
                (Direction::C2H, 0x1000u64, C2H_ID, &mut c2h),
            ] {
                for k in 0..MAX_CHANNELS {
                    let id = read_word(f, &control.path, base + 0x100 * k as u64)?;
                    if id >> 16 != want {
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
        }
        let xdma_version = h2c
            .first()
            .or(c2h.first())
            .map(|c| (c.id_register & 0xff) as u8);

        let h2c_nodes: Vec<Node> = h2c
            .iter()
            .map(|c| {
                Node::new(
                    node_path(prefix, &format!("_h2c_{}", c.index)),
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
                Node::new(node_path(prefix, &format!("_c2h_{}", c.index)), flags)
            })
            .collect();
        let events = (0..hw.events)
            .map(|k| {
                Node::new(
                    node_path(prefix, &format!("_events_{k}")),
                    libc::O_RDONLY | libc::O_NONBLOCK,
                )
            })
            .collect();

        // Alignment: ask an engine node that any number of openers may hold (never a streaming
        // C2H node, which would lock out the real reader).
        let probe = h2c_nodes.first().or_else(|| {
            c2h.iter()
                .position(|c| c.kind == ChannelKind::MemoryMapped)
                .map(|i| &c2h_nodes[i])
        });
        let alignment = probe
            .and_then(|n| {
                n.lock()
                    .ok()
                    .and_then(|g| g.file().ok().and_then(sys::align_get))
            })
            .unwrap_or(hw.fallback_alignment);

        let user_map = if hw.mmap_user {
            let g = user.lock()?;
            let len = usize::try_from(hw.user_bar_size)
                .map_err(|_| Error::Config("user_bar_size does not fit this host".into()))?;
            Some(sys::Mapping::new(g.file()?, &user.path, len)?)
        } else {
            None
        };

        let mut inner = Inner {
            info: CardInfo {
                backend: "hw".into(),
                h2c,
                c2h,
                memory_size: hw.memory_size,
                user_bar_size: hw.user_bar_size,
                events: hw.events,
                card_id: 0,
                card_version: 0,
                xdma_version,
                alignment,
            },
            control,
            user,
            user_map,
            h2c: h2c_nodes,
            c2h: c2h_nodes,
            events,
            epoch: Instant::now(),
        };
        inner.info.card_id = inner.read_reg(REG_CARD_ID)?;
        inner.info.card_version = inner.read_reg(REG_CARD_VERSION)?;
        Ok(HwCard {
            inner: Arc::new(inner),
        })
    }

    /// The node paths of this card, for messages.
    pub fn control_node(&self) -> &Path {
        &self.inner.control.path
    }
}

/// One 32-bit word from a register node at `offset`.
fn read_word(f: &File, node: &Path, offset: u64) -> Result<u32> {
    let mut b = [0u8; 4];
    sys::pread_all(f, node, &mut b, offset)?;
    Ok(u32::from_le_bytes(b))
}

impl Inner {
    fn now_ps(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos().saturating_mul(1000)).unwrap_or(u64::MAX)
    }

    fn timed(&self, bytes: usize, eop: bool, f: impl FnOnce() -> Result<()>) -> Result<Transfer> {
        let start_ps = self.now_ps();
        f()?;
        Ok(Transfer {
            bytes,
            end_of_packet: eop,
            start_ps,
            end_ps: self.now_ps(),
        })
    }

    fn read_reg(&self, offset: u64) -> Result<u32> {
        check::reg(&self.info, offset)?;
        if let Some(m) = &self.user_map {
            return m.read(offset as usize).ok_or(Error::RegisterOutOfRange {
                offset,
                size: m.len() as u64,
            });
        }
        let g = self.user.lock()?;
        read_word(g.file()?, &self.user.path, offset)
    }

    fn write_reg(&self, offset: u64, value: u32) -> Result<()> {
        check::reg(&self.info, offset)?;
        if let Some(m) = &self.user_map {
            return if m.write(offset as usize, value) {
                Ok(())
            } else {
                Err(Error::RegisterOutOfRange {
                    offset,
                    size: m.len() as u64,
                })
            };
        }
        let g = self.user.lock()?;
        sys::pwrite_all(g.file()?, &self.user.path, &value.to_le_bytes(), offset)
    }
}

impl Card for HwCard {
    fn info(&self) -> &CardInfo {
        &self.inner.info
    }

    fn write_mm(&self, channel: usize, addr: CardAddr, data: &[u8]) -> Result<Transfer> {
        let i = &self.inner;
        let op = "memory-mapped H2C write";
        check::mm(
            &i.info,
            op,
            Direction::H2C,
            channel,
            addr,
            data.as_ptr() as usize,
            data.len(),
        )?;
        let node = &i.h2c[channel];
        let g = node.lock()?;
        i.timed(data.len(), false, || {
            sys::pwrite_all(g.file()?, &node.path, data, addr.raw())
        })
    }

    fn read_mm(&self, channel: usize, addr: CardAddr, buf: &mut [u8]) -> Result<Transfer> {
        let i = &self.inner;
        let op = "memory-mapped C2H read";
        check::mm(
            &i.info,
            op,
            Direction::C2H,
            channel,
            addr,
            buf.as_ptr() as usize,
            buf.len(),
        )?;
        let node = &i.c2h[channel];
        let g = node.lock()?;
        let len = buf.len();
        i.timed(len, false, || {
            sys::pread_all(g.file()?, &node.path, buf, addr.raw())
        })
    }

    fn send_stream(&self, channel: usize, frame: &[u8]) -> Result<Transfer> {
        let i = &self.inner;
        let op = "stream H2C send";
        check::stream(
            &i.info,
            op,
            Direction::H2C,
            channel,
            frame.as_ptr() as usize,
            frame.len(),
        )?;
        if frame.len() > RW_MAX {
            // Splitting would put an end-of-packet inside the frame.
            return Err(Error::Invalid {
                op,
                problem: format!(
                    "a {}-byte frame is larger than the driver moves in one call ({RW_MAX:#x} bytes); send smaller frames",
                    frame.len()
                ),
            });
        }
        let node = &i.h2c[channel];
        let g = node.lock()?;
        i.timed(frame.len(), true, || {
            let n = sys::write_once(g.file()?, &node.path, frame)?;
            if n != frame.len() {
                return Err(Error::ShortTransfer {
                    op: "write",
                    node: node.path.clone(),
                    done: n as u64,
                    len: frame.len() as u64,
                });
            }
            Ok(())
        })
    }

    fn recv_stream(&self, channel: usize, buf: &mut [u8], timeout: Duration) -> Result<Transfer> {
        let i = &self.inner;
        let op = "stream C2H receive";
        check::stream(
            &i.info,
            op,
            Direction::C2H,
            channel,
            buf.as_ptr() as usize,
            buf.len(),
        )?;
        let node = &i.c2h[channel];
        let g = node.lock()?;
        let f = g.file()?;
        let start_ps = i.now_ps();
        // The driver's streaming read blocks until end-of-packet, a full buffer or its own
        // c2h_timeout; a poll first bounds the wait by the caller's timeout where the node
        // reports readiness.
        if !sys::poll_readable(f, &node.path, timeout)? {
            return Err(Error::Timeout {
                what: format!("data on {}", node.path.display()),
                after: timeout,
            });
        }
        let n = sys::read_once(f, &node.path, buf)?;
        if n == 0 {
            return Err(Error::ShortTransfer {
                op: "read",
                node: node.path.clone(),
                done: 0,
                len: buf.len() as u64,
            });
        }
        Ok(Transfer {
            bytes: n,
            // With O_TRUNC a read that stops short of the buffer stopped at end-of-packet.
            end_of_packet: n < buf.len(),
            start_ps,
            end_ps: i.now_ps(),
        })
    }

    fn read_reg(&self, offset: u64) -> Result<u32> {
        self.inner.read_reg(offset)
    }

    fn write_reg(&self, offset: u64, value: u32) -> Result<()> {
        self.inner.write_reg(offset, value)
    }

    fn wait_event(&self, event: usize, timeout: Duration) -> Result<u32> {
        let i = &self.inner;
        check::event(&i.info, event)?;
        let node = &i.events[event];
        let g = node.lock()?;
        let f = g.file()?;
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if !sys::poll_readable(f, &node.path, left)? {
                return Err(Error::Timeout {
                    what: format!("user interrupt on {}", node.path.display()),
                    after: timeout,
                });
            }
            let mut b = [0u8; 4];
            match sys::read_once(f, &node.path, &mut b) {
                Ok(4) => return Ok(u32::from_le_bytes(b)),
                Ok(n) => {
                    return Err(Error::ShortTransfer {
                        op: "read",
                        node: node.path.clone(),
                        done: n as u64,
                        len: 4,
                    })
                }
                // Readiness without data (a spurious wake-up): wait again within the bound.
                Err(e) if matches!(&e, Error::Os { source, .. } if source.raw_os_error() == Some(libc::EAGAIN)) => {
                    continue
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn now_ps(&self) -> Result<u64> {
        Ok(self.inner.now_ps())
    }
}

/// Runs a blocking call on tokio's blocking pool with an owned buffer, handing it back.
async fn blocking_buf<F>(card: &HwCard, buf: DmaBuffer, f: F) -> BufResult<Transfer>
where
    F: FnOnce(&HwCard, &mut DmaBuffer) -> Result<Transfer> + Send + 'static,
{
    let c = card.clone();
    match tokio::task::spawn_blocking(move || {
        let mut buf = buf;
        let r = f(&c, &mut buf);
        (r, buf)
    })
    .await
    {
        Ok(done) => done,
        Err(e) => (
            Err(Error::Backend(format!(
                "the blocking transfer task failed: {e}"
            ))),
            DmaBuffer::empty(),
        ),
    }
}

async fn blocking<T, F>(card: &HwCard, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&HwCard) -> Result<T> + Send + 'static,
{
    let c = card.clone();
    tokio::task::spawn_blocking(move || f(&c))
        .await
        .map_err(|e| Error::Backend(format!("the blocking register task failed: {e}")))?
}

impl AsyncCard for HwCard {
    async fn write_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        data: DmaBuffer,
    ) -> BufResult<Transfer> {
        blocking_buf(self, data, move |c, b| c.write_mm(channel, addr, b)).await
    }

    async fn read_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: DmaBuffer,
    ) -> BufResult<Transfer> {
        blocking_buf(self, buf, move |c, b| c.read_mm(channel, addr, b)).await
    }

    async fn send_stream_async(&self, channel: usize, frame: DmaBuffer) -> BufResult<Transfer> {
        blocking_buf(self, frame, move |c, b| c.send_stream(channel, b)).await
    }

    async fn recv_stream_async(
        &self,
        channel: usize,
        buf: DmaBuffer,
        timeout: Duration,
    ) -> BufResult<Transfer> {
        blocking_buf(self, buf, move |c, b| c.recv_stream(channel, b, timeout)).await
    }

    async fn read_reg_async(&self, offset: u64) -> Result<u32> {
        blocking(self, move |c| c.read_reg(offset)).await
    }

    async fn write_reg_async(&self, offset: u64, value: u32) -> Result<()> {
        blocking(self, move |c| c.write_reg(offset, value)).await
    }

    async fn wait_event_async(&self, event: usize, timeout: Duration) -> Result<u32> {
        blocking(self, move |c| c.wait_event(event, timeout)).await
    }
}
