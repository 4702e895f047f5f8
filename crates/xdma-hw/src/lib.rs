//! The real board through the Linux XDMA driver (Xilinx dma_ip_drivers, `XDMA/linux-kernel`),
//! following what the driver does in the releases in the field (2020.2 and 2025.2) rather than
//! what its readme suggests:
//!
//! - nodes `<prefix>_h2c_<k>`, `<prefix>_c2h_<k>`, `<prefix>_user`, `<prefix>_control`,
//!   `<prefix>_events_<k>`, where the prefix (default `/dev/xdma0`) may name any folder (a FUSE
//!   mount of the simulated card, `xdma-fuse`, serves the same nodes);
//! - open first checks that `_control` is the IP's DMA BAR with the driver's own test (the IRQ
//!   and config blocks' identifiers, `is_config_bar`), so that a file of zeros or `/dev/zero`
//!   is refused rather than taken for a card with no channels; a node without a file position
//!   (a FIFO: ESPIPE) is not the driver's either;
//! - discovery reads the engines' identifier registers over `_control` and stops, as the
//!   driver's probe does, at the first engine whose identifier or channel number is not the
//!   expected one; the driver's version comes from XDMA_IOCINFO ([`HwCard::driver`]);
//! - memory-mapped channels: the file offset is the card address and only pread/pwrite are
//!   used (the driver's read/write do not move the file position). Each call is cut into
//!   chunks of [`HwConfig::chunk_bytes`], because the driver pins a whole call's pages at once;
//!   a buffer the driver cannot pin (EFAULT: it pins pages writable in both directions, so
//!   read-only memory fails) is copied into an owned page-aligned buffer and the call retried;
//! - the driver does not know the card's memory: a write past it reports success without
//!   landing and a read there times out after `c2h_timeout`, so [`HwConfig::memory_size`] is
//!   the only guard, and a transfer past it is refused up front with an error that names the
//!   address, the size and the setting; a memory-mapped call's driver error names its card
//!   address, and a read that timed out says that a read past the card's memory ends so;
//! - a memory-mapped engine that an earlier process left in fixed-address mode (ADDRMODE is
//!   the engine's, not the file's) is put back into incrementing mode at open;
//! - H2C streams: the driver ends every internal transfer with end-of-packet and cuts a
//!   transfer at the end of its descriptor ring, whose position carries over from earlier
//!   calls, so only a frame that fits one descriptor leaves the card as one packet. Frames
//!   longer than [`HwConfig::h2c_stream_max_frame`] (one page) are refused; shorter ones that
//!   straddle a page boundary are copied into one page first;
//! - C2H streams are opened with O_TRUNC (a read ends at end-of-packet) and take one opener at
//!   a time (EBUSY). A read is at most one descriptor ([`HwConfig::c2h_stream_read`]), because
//!   under back-to-back traffic a longer read can hold the end of one packet and the start of
//!   the next. The DMA nodes have no poll and ignore O_NONBLOCK, so a read blocks until data or
//!   the driver's `c2h_timeout` (module parameter): a receive whose timeout is shorter than
//!   `c2h_timeout` is refused up front with an error that names it; a longer one is served by
//!   reads of `c2h_timeout` each;
//! - errno 512 (ERESTARTSYS, what drivers before 2025.2 return for a DMA timeout) and
//!   ETIMEDOUT are both [`ErrorKind::Timeout`]; EBUSY on a transfer means the device is offline
//!   or being reset; a count outside the buffer is a [`DriverError::Count`];
//! - DMA calls run with signals blocked in the calling thread, because a signal aborts the
//!   driver's transfer;
//! - an async call runs on a thread of its own; when its future is dropped (a task aborted, a
//!   runtime dropped), the call makes no further driver call (a receive no next read of
//!   `c2h_timeout`, a transfer no next chunk, an event wait no next poll of 50 ms), so the
//!   next call on its node waits at most for the driver's call in flight; a call that timed
//!   out after waiting for its node behind another says so, and counts its time from the
//!   call;
//! - a memory-mapped transfer reports its progress after each chunk ([`HwCard::set_progress`],
//!   `xdma_core::progress`);
//! - ENOTCONN and ECONNABORTED (a call made after, or in flight when, the process serving the
//!   nodes died, as `xdma-fuse`) are [`ErrorKind::NoDevice`], as a board that went away;
//! - `_user` and `_control`: one 32-bit word per call at a 4-aligned offset (anything else is
//!   EPROTO), checked against the user BAR's size as the system reports it (the file size, or
//!   for the driver's character device the longest mapping it accepts), because the driver
//!   itself does not check and an access past the BAR is a kernel oops; the user BAR may instead
//!   be mapped into memory, never longer than the node;
//! - `_events_<k>`: interrupts stay latched until the node is read, and several collapse into
//!   one read, so latched ones are drained at open; a wait is a poll then a 4-byte read;
//! - the alignment comes from the ALIGN_GET ioctl (the reference IP answers 1).
//!
//! The backend's settings are the `[hw]` section of the configuration ([`HwConfig`]).

#![cfg(target_os = "linux")]

mod driver;
#[cfg(test)]
mod fake;
mod sys;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use xdma_core::{
    check, AsyncCard, BackendKind, BufResult, Card, CardAddr, CardInfo, ChannelInfo, ChannelKind,
    Config, Direction, DmaBuffer, Error, ErrorKind, ProgressReport, ProgressTracker, Result,
    Transfer, DMA_ALIGN,
};
use xdma_regmap::driver as abi;
use xdma_regmap::{
    engine, engine_base, id_channel, Target, ID_ENGINE_MASK, ID_STREAM, ID_VERSION_MASK,
    MAX_CHANNELS,
};

pub use driver::{DriverInfo, DriverVersion, ModuleParams};
use sys::{os_error, FileKind, Io, Opener, OsOpener, SignalGuard};
pub use sys::{
    IocInfo, ERESTARTSYS, IOCTL_XDMA_ADDRMODE_GET, IOCTL_XDMA_ADDRMODE_SET, IOCTL_XDMA_ALIGN_GET,
    RW_MAX, XDMA_IOCINFO, XDMA_IOCOFFLINE, XDMA_IOCONLINE, XDMA_XCL_MAGIC,
};

/// The card's identifier register on the user BAR.
const REG_CARD_ID: u64 = 0x000;
/// The card's version register on the user BAR.
const REG_CARD_VERSION: u64 = 0x004;

/// Where the driver backend has the card memory's size from, for the error of a transfer past
/// it: the driver cannot tell, and a request past the card's memory is not refused by it (a
/// write there succeeds without landing, a read times out), so the setting is the only guard.
const MEMORY_SIZE_FROM: &str = "as [hw] memory_size sets it: the driver cannot tell a card's memory size, and on the card a write past its memory reports success without landing while a read there times out; set [hw] memory_size to the card's memory";

/// The largest user BAR the mapping probe looks for (a 32-bit BAR's limit).
const MAX_BAR: u64 = 1 << 32;

/// A failure of the driver to keep its own contract, carried as the source of an
/// [`Error::Source`] whose kind is [`ErrorKind::TransferFailed`] (downcast to match it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriverError {
    /// A read or write returned a count outside the buffer (old drivers do this in
    /// end-of-packet mode: negative, or larger than the buffer).
    #[error("{op} on {}: the driver returned {returned} for a {len}-byte buffer; a count outside 0..={len} breaks the driver's contract (drivers before 2025.2 do this in end-of-packet mode), so the buffer's contents cannot be trusted: update the driver", .node.display())]
    Count {
        /// The call.
        op: &'static str,
        /// The node.
        node: PathBuf,
        /// What the call returned.
        returned: i64,
        /// The buffer's length.
        len: usize,
    },
    /// A signal interrupted a stream transfer, which the driver then aborted.
    #[error("{op} on {}: a signal interrupted the transfer and the driver aborted it (stream data may be lost or a frame cut); keep [hw] block_signals = true", .node.display())]
    Interrupted {
        /// The call.
        op: &'static str,
        /// The node.
        node: PathBuf,
    },
}

impl DriverError {
    fn into_error(self) -> Error {
        Error::Source {
            kind: ErrorKind::TransferFailed,
            context: "XDMA driver",
            source: Box::new(self),
        }
    }
}

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
    /// User interrupt event nodes to use (`_events_0` up; the driver makes 16). Default 16.
    pub events: usize,
    /// Bytes of card memory behind the memory-mapped channels (the driver cannot tell, and
    /// does not refuse a request past the card's memory: a write there reports success
    /// without landing, a read times out). Transfers past it are refused with an error that
    /// names it, so set it to the card's memory. Default 2 GiB: the reference board's DDR3.
    pub memory_size: u64,
    /// The most bytes one memory-mapped read or write hands to the driver, which pins all of a
    /// call's pages at once (a large call fails with ENOMEM on a fragmented host). A multiple
    /// of the page size. Default 8 MiB: one descriptor ring (2048 pages) per call.
    pub chunk_bytes: usize,
    /// The most bytes one C2H stream read asks for. Default one page (4096), which is one
    /// descriptor: a longer read can, under back-to-back traffic, hold the end of one packet
    /// and the start of the next, which the count does not show. A receive therefore returns
    /// at most this much (and at most up to the buffer's next page boundary); raise it only when
    /// packets never come back to back.
    pub c2h_stream_read: usize,
    /// The longest H2C stream frame sent. Default one page (4096): a frame that takes more than
    /// one descriptor can leave the card as two packets when the driver's descriptor ring wraps
    /// inside it. Longer frames are refused.
    pub h2c_stream_max_frame: usize,
    /// The folder of the driver's module parameters (`c2h_timeout`, `desc_blen_max`, ...).
    /// Default: `/sys/module/xdma/parameters` for nodes in `/dev`, else `parameters` beside the
    /// nodes (where `xdma-fuse` serves them). A folder that is not there means the driver's
    /// defaults.
    pub module_parameters: Option<PathBuf>,
    /// Block signals in the calling thread during DMA calls, because a signal aborts the
    /// driver's transfer. Signals sent meanwhile are delivered when the call returns.
    /// Default true.
    pub block_signals: bool,
    /// The identifier the card's ID register (user BAR offset 0) must read; open refuses a
    /// node whose ID differs, since another design's registers mean other things. Default
    /// this card's (`0x44415131`, "DAQ1", from the register table). 0 accepts any design
    /// whose ID reads neither 0 nor all ones (what a node that is not a card's BAR reads).
    pub card_id: u32,
}

impl Default for HwConfig {
    fn default() -> Self {
        HwConfig {
            mmap_user: false,
            fallback_alignment: 1,
            events: 16,
            memory_size: 2 << 30,
            chunk_bytes: 8 << 20,
            c2h_stream_read: 4096,
            h2c_stream_max_frame: 4096,
            module_parameters: None,
            block_signals: true,
            card_id: card_regs::id::RESET as u32,
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
        let page = sys::page_size();
        if self.memory_size == 0 {
            return Err(Error::Config(
                "[hw] memory_size = 0: the card needs memory".into(),
            ));
        }
        if !self.fallback_alignment.is_power_of_two() {
            return Err(Error::Config(format!(
                "[hw] fallback_alignment = {}: a power of two",
                self.fallback_alignment
            )));
        }
        if self.chunk_bytes < page
            || !self.chunk_bytes.is_multiple_of(page)
            || self.chunk_bytes > RW_MAX
        {
            return Err(Error::Config(format!(
                "[hw] chunk_bytes = {}: a multiple of the page size ({page}) up to {RW_MAX:#x}, so that chunks keep the buffer's alignment",
                self.chunk_bytes
            )));
        }
        if self.c2h_stream_read == 0 || self.h2c_stream_max_frame == 0 {
            return Err(Error::Config(
                "[hw] c2h_stream_read and h2c_stream_max_frame: at least 1 byte".into(),
            ));
        }
        if self.events > 16 {
            return Err(Error::Config(format!(
                "[hw] events = {}: the driver makes 16 event nodes",
                self.events
            )));
        }
        Ok(())
    }
}

/// Whether the caller of a call still waits for it: an async call's future sets it when it is
/// dropped before its answer (a task aborted, a runtime dropped), so that the call, which runs
/// on a thread of its own, stops at its next chance instead of holding its node for the rest
/// of its timeout. A blocking call's is never set.
#[derive(Debug, Clone, Default)]
struct Abandon(Option<Arc<AtomicBool>>);

impl Abandon {
    fn given_up(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Acquire))
    }

    /// Whether the flag can ever be set: only then is a long wait cut into short ones.
    fn can_give_up(&self) -> bool {
        self.0.is_some()
    }

    /// The error a call given up ends with; nobody receives it.
    fn error(&self, op: &str, node: &Path) -> Error {
        Error::Backend(format!(
            "{op} on {}: its caller gave it up (its future was dropped), so it stopped at its next chance",
            node.display()
        ))
    }
}

/// The call that holds a node, for a call that waits behind it to say what it waited for.
#[derive(Debug, Clone)]
struct Holder {
    what: &'static str,
    since: Instant,
    abandon: Abandon,
}

/// The longest single poll of an event wait whose caller may give it up, in milliseconds.
const ABANDON_POLL_MS: libc::c_int = 50;

/// How long a call may wait for its node before its messages say what it waited behind.
const WAIT_WORTH_SAYING: Duration = Duration::from_millis(100);

/// One device node, opened on first use and kept open; its mutex also serialises the calls on
/// its channel.
#[derive(Debug)]
struct Node {
    path: PathBuf,
    flags: libc::c_int,
    opener: Arc<dyn Opener>,
    io: Mutex<Option<Box<dyn Io>>>,
    /// The call that holds `io`, if any.
    holder: Mutex<Option<Holder>>,
}

impl Node {
    fn new(opener: &Arc<dyn Opener>, path: PathBuf, flags: libc::c_int) -> Node {
        Node {
            path,
            flags,
            opener: opener.clone(),
            io: Mutex::new(None),
            holder: Mutex::new(None),
        }
    }

    /// Locks the node for a call of the backend's own (open, registers).
    fn lock(&self) -> Result<NodeGuard<'_>> {
        self.lock_for("call", &Abandon::default())
    }

    /// Locks the node for the call `what` and opens it if it is not open yet; the guard
    /// remembers how long the call waited and for which call before it. A thread that panicked
    /// while holding the lock leaves nothing half-done (the state is only the open file), so
    /// the lock is taken back rather than poisoned for good.
    fn lock_for(&self, what: &'static str, abandon: &Abandon) -> Result<NodeGuard<'_>> {
        let before = self
            .holder
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let asked = Instant::now();
        let mut g = self.io.lock().unwrap_or_else(|p| p.into_inner());
        let waited = asked.elapsed();
        *self.holder.lock().unwrap_or_else(|p| p.into_inner()) = Some(Holder {
            what,
            since: Instant::now(),
            abandon: abandon.clone(),
        });
        let behind = before.map(|h| (h, asked));
        if g.is_none() {
            match self.opener.open(&self.path, self.flags) {
                Ok(io) => *g = Some(io),
                Err(e) => {
                    *self.holder.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    return Err(os_error("open", &self.path, e));
                }
            }
        }
        Ok(NodeGuard {
            guard: g,
            node: self,
            waited,
            behind,
        })
    }
}

struct NodeGuard<'a> {
    guard: MutexGuard<'a, Option<Box<dyn Io>>>,
    node: &'a Node,
    /// How long the call waited for the node.
    waited: Duration,
    /// The call that held the node when this one asked for it, and when it asked.
    behind: Option<(Holder, Instant)>,
}

impl NodeGuard<'_> {
    fn io(&self) -> Result<&dyn Io> {
        self.guard
            .as_deref()
            .ok_or_else(|| Error::Backend(format!("{} is not open", self.node.path.display())))
    }

    /// What the call waited behind before it reached the driver, when the wait was long
    /// enough to matter, for its timeout's message.
    fn waited_behind(&self) -> Option<String> {
        if self.waited < WAIT_WORTH_SAYING {
            return None;
        }
        let (what, running) = match &self.behind {
            Some((h, asked)) => {
                let running = asked.saturating_duration_since(h.since);
                let given_up = if h.abandon.given_up() {
                    ", whose caller gave it up: it stopped once the driver's call it was in returned"
                } else {
                    ""
                };
                (
                    format!("the {} before it on this node{given_up}", h.what),
                    running,
                )
            }
            None => ("an earlier call on this node".to_string(), Duration::ZERO),
        };
        Some(format!(
            "it first waited {:.1?} for {what} (running for {:.1?} when this call came): calls on one node run one at a time",
            self.waited, running
        ))
    }
}

impl Drop for NodeGuard<'_> {
    fn drop(&mut self) {
        *self.node.holder.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[derive(Debug)]
struct Inner {
    info: CardInfo,
    driver: DriverInfo,
    hw: HwConfig,
    page: usize,
    control: Node,
    user: Node,
    user_map: Option<sys::Mapping>,
    h2c: Vec<Node>,
    c2h: Vec<Node>,
    events: Vec<Node>,
    epoch: Instant,
    /// Where the progress of memory-mapped transfers goes.
    progress: Mutex<ProgressReport>,
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

/// Checks a count the driver returned for a `len`-byte buffer.
fn count(op: &'static str, node: &Path, r: isize, len: usize) -> Result<usize> {
    match usize::try_from(r) {
        Ok(n) if n <= len => Ok(n),
        _ => Err(DriverError::Count {
            op,
            node: node.to_path_buf(),
            returned: r as i64,
            len,
        }
        .into_error()),
    }
}

/// One 32-bit word from a register node at `offset`.
/// A register access that moved other than one word: the driver's register nodes always move
/// exactly 4 bytes (or fail with EPROTO), so the node is something else.
fn not_a_register_node(op: &str, node: &Path, offset: u64, n: usize) -> Error {
    Error::NoDevice {
        what: format!("the XDMA driver's register node {}", node.display()),
        hint: format!(
            "a 4-byte {op} at offset {offset:#x} moved {n} bytes, which the driver's register nodes never do: the node is not the driver's (/dev/null, an empty or short file); check that XDMA_DEVICE names the card's node prefix"
        ),
    }
}

fn read_word(io: &dyn Io, node: &Path, offset: u64) -> Result<u32> {
    let mut b = [0u8; 4];
    loop {
        match io.pread(&mut b, offset) {
            Ok(r) => {
                let n = count("pread", node, r, 4)?;
                if n != 4 {
                    return Err(not_a_register_node("pread", node, offset, n));
                }
                return Ok(u32::from_le_bytes(b));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(os_error("pread", node, e)),
        }
    }
}

fn write_word(io: &dyn Io, node: &Path, offset: u64, value: u32) -> Result<()> {
    loop {
        match io.pwrite(&value.to_le_bytes(), offset) {
            Ok(r) => {
                let n = count("pwrite", node, r, 4)?;
                if n != 4 {
                    return Err(not_a_register_node("pwrite", node, offset, n));
                }
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(os_error("pwrite", node, e)),
        }
    }
}

/// The user BAR's size as the system reports it: a regular file's size (a FUSE mount or a
/// test folder), or, for the driver's character device, the longest mapping its mmap accepts
/// (the driver refuses a mapping longer than the BAR, and BARs are powers of two).
fn bar_size(io: &dyn Io, node: &Path) -> Result<u64> {
    let kind = io.kind().map_err(|e| os_error("fstat", node, e))?;
    let size = match kind {
        FileKind::Regular(n) => n & !3,
        FileKind::CharDevice => {
            let mut found = 0u64;
            let mut len = sys::page_size() as u64;
            while len <= MAX_BAR {
                let Ok(l) = usize::try_from(len) else { break };
                match io.map(l) {
                    Ok(_) => found = len,
                    Err(_) => break,
                }
                len *= 2;
            }
            found
        }
        FileKind::Other => 0,
    };
    if size < 4 {
        return Err(Error::NoDevice {
            what: format!("the user BAR behind {}", node.display()),
            hint: format!(
                "its size could not be learned ({kind:?}: neither a file size nor a mapping the node accepts); the driver does not check register offsets, so the backend will not guess"
            ),
        });
    }
    Ok(size)
}

/// Refuses a `_control` node that is not the XDMA IP's DMA BAR, with the driver's own test
/// for it (`is_config_bar`: the IRQ and config blocks' identifiers), so that a file of zeros
/// or `/dev/zero` is not taken for a card with no channels.
fn check_dma_bar(io: &dyn Io, node: &Path) -> Result<()> {
    let irq_at = xdma_regmap::irq::BASE + xdma_regmap::irq::IDENTIFIER;
    let cfg_at = xdma_regmap::config::BASE + xdma_regmap::config::IDENTIFIER;
    let irq = read_word(io, node, irq_at)?;
    let cfg = read_word(io, node, cfg_at)?;
    if xdma_regmap::is_dma_bar(irq, cfg) {
        return Ok(());
    }
    Err(Error::NoDevice {
        what: format!("the XDMA IP's DMA BAR behind {}", node.display()),
        hint: format!(
            "its IRQ block identifier (offset {irq_at:#x}) reads {irq:#010x} and its config block identifier ({cfg_at:#x}) reads {cfg:#010x}, where the XDMA IP has {:#010x} and {:#010x} (the version byte aside; the driver's own test for its DMA BAR): the node is not the driver's _control node (a file of zeros, /dev/zero, another device); check that XDMA_DEVICE names the card's node prefix",
            Target::Irq.id_base(),
            Target::Config.id_base()
        ),
    })
}

/// Refuses a user BAR whose ID register is not the expected card's (`expected` 0: any ID
/// but the two that no card presents, all zeros and all ones).
fn check_card_id(id: u32, expected: u32, node: &Path) -> Result<()> {
    let refuse = |why: String| Error::NoDevice {
        what: format!("the card behind {}", node.display()),
        hint: why,
    };
    if id == 0 || id == u32::MAX {
        return Err(refuse(format!(
            "its ID register reads {id:#010x}, which is no card's identifier: the node is not a card's user BAR (a file of zeros, /dev/zero, or a BAR whose reads fail); check that XDMA_DEVICE names the card's node prefix"
        )));
    }
    if expected != 0 && id != expected {
        return Err(refuse(format!(
            "its ID register reads {id:#010x}, not this card's {expected:#010x}: it is another design, whose registers mean other things; name this card's nodes in XDMA_DEVICE, or set [hw] card_id to the design's identifier (0 accepts any)"
        )));
    }
    Ok(())
}

impl HwCard {
    /// Opens the card whose nodes start with `cfg.device`, and discovers its channels.
    pub fn open(cfg: &Config) -> Result<HwCard> {
        HwCard::open_with(cfg, Arc::new(OsOpener))
    }

    /// Opens the card through `opener` (the operating system's, or a test's fake nodes).
    fn open_with(cfg: &Config, opener: Arc<dyn Opener>) -> Result<HwCard> {
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
                    let at = engine_base(dir == Direction::C2H, k) + engine::IDENTIFIER;
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

    /// The `_control` node of this card, for messages.
    pub fn control_node(&self) -> &Path {
        &self.inner.control.path
    }

    /// Where the progress of this card's memory-mapped transfers goes from the next transfer
    /// on, for every handle of the card (see [`xdma_core::progress`]): reported after each
    /// chunk of `[hw] chunk_bytes`; by default a line on stderr (or a `tracing` event when a
    /// subscriber is installed) for a transfer that runs longer than 5 s. A callback is called
    /// on the thread that makes the transfer.
    pub fn set_progress(&self, report: ProgressReport) {
        *self
            .inner
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = report;
    }

    /// What open found out about the driver: its version, its module parameters, and what it
    /// had to put right (engines left in fixed-address mode, latched interrupts).
    pub fn driver(&self) -> &DriverInfo {
        &self.inner.driver
    }
}

/// The buffer of a memory-mapped call: sent to the card or filled from it.
enum Buf<'a> {
    Out(&'a [u8]),
    In(&'a mut [u8]),
}

impl Buf<'_> {
    fn len(&self) -> usize {
        match self {
            Buf::Out(d) => d.len(),
            Buf::In(b) => b.len(),
        }
    }
}

impl Inner {
    fn now_ps(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos().saturating_mul(1000)).unwrap_or(u64::MAX)
    }

    fn read_reg(&self, offset: u64) -> Result<u32> {
        check::reg(&self.info, offset)?;
        if let Some(m) = &self.user_map {
            let o = usize::try_from(offset).unwrap_or(usize::MAX);
            return m.read(o).ok_or(Error::RegisterOutOfRange {
                offset,
                size: m.len() as u64,
            });
        }
        let g = self.user.lock()?;
        read_word(g.io()?, &self.user.path, offset)
    }

    fn write_reg(&self, offset: u64, value: u32) -> Result<()> {
        check::reg(&self.info, offset)?;
        if let Some(m) = &self.user_map {
            let o = usize::try_from(offset).unwrap_or(usize::MAX);
            return if m.write(o, value) {
                Ok(())
            } else {
                Err(Error::RegisterOutOfRange {
                    offset,
                    size: m.len() as u64,
                })
            };
        }
        let g = self.user.lock()?;
        write_word(g.io()?, &self.user.path, offset, value)
    }

    /// One pread or pwrite of a whole chunk at `addr`, retried on EINTR and continued after a
    /// partial count; a buffer the driver cannot pin (EFAULT) goes through an owned,
    /// page-aligned copy that keeps the card address's offset within the page (and so the
    /// alignment rule).
    fn mm_chunk(&self, io: &dyn Io, node: &Path, buf: &mut Buf<'_>, addr: u64) -> Result<()> {
        let op = match buf {
            Buf::Out(_) => "pwrite",
            Buf::In(_) => "pread",
        };
        let len = buf.len();
        let mut done = 0usize;
        // The copy, the offset of its first byte within its page, and the chunk offset it
        // starts at.
        let mut bounce: Option<(DmaBuffer, usize, usize)> = None;
        while done < len {
            let at = addr + done as u64;
            let r = {
                let _signals = SignalGuard::new(self.hw.block_signals);
                match (&mut *buf, &mut bounce) {
                    (Buf::Out(d), None) => io.pwrite(&d[done..], at),
                    (Buf::In(b), None) => io.pread(&mut b[done..], at),
                    (Buf::Out(_), Some((c, pad, base))) => io.pwrite(&c[*pad + done - *base..], at),
                    (Buf::In(_), Some((c, pad, base))) => {
                        io.pread(&mut c[*pad + done - *base..], at)
                    }
                }
            };
            match r {
                Ok(r) => {
                    let k = count(op, node, r, len - done)?;
                    if k == 0 {
                        return Err(Error::ShortTransfer {
                            op,
                            node: node.to_path_buf(),
                            done: done as u64,
                            len: len as u64,
                        });
                    }
                    if let (Buf::In(b), Some((c, pad, base))) = (&mut *buf, &bounce) {
                        let from = pad + done - base;
                        b[done..done + k].copy_from_slice(&c[from..from + k]);
                    }
                    done += k;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::EFAULT) && bounce.is_none() => {
                    // The driver pins pages writable in both directions; read-only memory
                    // (or memory it cannot pin) fails, an owned copy does not.
                    let pad = (at % DMA_ALIGN as u64) as usize;
                    let mut c = DmaBuffer::new(pad + len - done)?;
                    if let Buf::Out(d) = buf {
                        c[pad..].copy_from_slice(&d[done..]);
                    }
                    bounce = Some((c, pad, done));
                }
                Err(e) => return Err(self.mm_os_error(op, node, e, at, len - done)),
            }
        }
        Ok(())
    }

    /// A memory-mapped call's failure, naming the card address and length it was at; a read
    /// that timed out says that a read past the card's memory ends so too, with the setting
    /// that let it through.
    fn mm_os_error(
        &self,
        op: &'static str,
        node: &Path,
        source: std::io::Error,
        at: u64,
        len: usize,
    ) -> Error {
        let (kind, op, node, hint, source) = match os_error(op, node, source) {
            Error::Os {
                kind,
                op,
                node,
                hint,
                source,
            } => (kind, op, node, hint, source),
            other => return other,
        };
        let mut hint = format!("{len} bytes at card address {at:#x}: {hint}");
        if kind == ErrorKind::Timeout && op == "pread" {
            hint.push_str(&format!(
                "; a read that starts past the card's memory ends so too (the card refuses it, the engine stops on its first descriptor and the driver waits out c2h_timeout), and [hw] memory_size = {:#x} lets reads below that address through: if the card has less memory, set [hw] memory_size to the card's",
                self.hw.memory_size
            ));
        }
        Error::Os {
            kind,
            op,
            node,
            hint,
            source,
        }
    }

    /// A memory-mapped transfer cut into chunks of `chunk_bytes` (a multiple of the page, so
    /// that every chunk keeps the buffer's alignment against its card address).
    fn mm(
        &self,
        node: &Node,
        channel: usize,
        addr: CardAddr,
        mut buf: Buf<'_>,
        abandon: &Abandon,
    ) -> Result<()> {
        let what = match buf {
            Buf::Out(_) => "memory-mapped H2C write",
            Buf::In(_) => "memory-mapped C2H read",
        };
        let called = Instant::now();
        let g = node.lock_for(what, abandon)?;
        let io = g.io()?;
        let len = buf.len();
        let report = self
            .progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut progress = ProgressTracker::new(&report, what, channel, addr, len as u64);
        let chunk = self.hw.chunk_bytes;
        let mut off = 0usize;
        let r = loop {
            if off >= len {
                break Ok(());
            }
            // A transfer given up by its caller stops between chunks.
            if abandon.given_up() {
                break Err(abandon.error(what, &node.path));
            }
            let n = chunk.min(len - off);
            let mut part = match &mut buf {
                Buf::Out(d) => Buf::Out(&d[off..off + n]),
                Buf::In(b) => Buf::In(&mut b[off..off + n]),
            };
            if let Err(e) = self.mm_chunk(io, &node.path, &mut part, addr.raw() + off as u64) {
                break Err(e);
            }
            off += n;
            progress.update(off as u64, called.elapsed());
        };
        progress.finish(off as u64, called.elapsed());
        r
    }

    /// The receive plan for a stream read: how many driver reads of `c2h_timeout` fit in the
    /// caller's timeout (None: no bound), or the refusal when none does.
    fn recv_attempts(&self, node: &Path, timeout: Duration) -> Result<Option<u128>> {
        let p = &self.driver.params;
        let forever = timeout == Duration::MAX;
        match p.c2h_timeout() {
            None if forever => Ok(None),
            None => Err(Error::Unsupported {
                backend: "hw",
                what: format!("a stream receive on {} with a {timeout:?} timeout", node.display()),
                why: format!(
                    "the driver's module parameter c2h_timeout is 0 ({}), so a read blocks until data comes, and the DMA nodes have no poll and ignore O_NONBLOCK: load the driver with c2h_timeout=<seconds>, or wait forever (Duration::MAX)",
                    p.origin()
                ),
            }),
            Some(t) if timeout < t => Err(Error::Unsupported {
                backend: "hw",
                what: format!("a stream receive on {} with a {timeout:?} timeout", node.display()),
                why: format!(
                    "the driver's stream read blocks until data or its module parameter c2h_timeout = {} s ({}); the DMA nodes have no poll and ignore O_NONBLOCK, so a shorter wait cannot be honoured: pass a timeout of at least {} s, or load the driver with a smaller c2h_timeout (whole seconds)",
                    t.as_secs(),
                    p.origin(),
                    t.as_secs()
                ),
            }),
            Some(_) if forever => Ok(None),
            Some(t) => Ok(Some((timeout.as_nanos() / t.as_nanos()).max(1))),
        }
    }
}

/// The data calls and the event wait, with the flag an async caller sets when it gives the
/// call up ([`Abandon`]); the blocking API's calls are never given up.
impl HwCard {
    fn write_mm_for(
        &self,
        channel: usize,
        addr: CardAddr,
        data: &[u8],
        abandon: &Abandon,
    ) -> Result<Transfer> {
        let i = &self.inner;
        check::mm(
            &i.info,
            "memory-mapped H2C write",
            Direction::H2C,
            channel,
            addr,
            data.as_ptr() as usize,
            data.len(),
            MEMORY_SIZE_FROM,
        )?;
        let start_ps = i.now_ps();
        i.mm(&i.h2c[channel], channel, addr, Buf::Out(data), abandon)?;
        Ok(Transfer {
            bytes: data.len(),
            end_of_packet: false,
            start_ps,
            end_ps: i.now_ps(),
        })
    }

    fn read_mm_for(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: &mut [u8],
        abandon: &Abandon,
    ) -> Result<Transfer> {
        let i = &self.inner;
        check::mm(
            &i.info,
            "memory-mapped C2H read",
            Direction::C2H,
            channel,
            addr,
            buf.as_ptr() as usize,
            buf.len(),
            MEMORY_SIZE_FROM,
        )?;
        let start_ps = i.now_ps();
        let len = buf.len();
        i.mm(&i.c2h[channel], channel, addr, Buf::In(buf), abandon)?;
        Ok(Transfer {
            bytes: len,
            end_of_packet: false,
            start_ps,
            end_ps: i.now_ps(),
        })
    }

    fn recv_for(
        &self,
        channel: usize,
        buf: &mut [u8],
        timeout: Duration,
        abandon: &Abandon,
    ) -> Result<Transfer> {
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
        let attempts = i.recv_attempts(&node.path, timeout)?;
        let called = Instant::now();
        let g = node.lock_for(op, abandon)?;
        let io = g.io()?;
        // One descriptor per read: no further than the buffer's next page boundary.
        let page = i.page;
        let mut chunk = buf.len().min(i.hw.c2h_stream_read);
        if i.hw.c2h_stream_read <= page {
            chunk = chunk.min(page - buf.as_ptr() as usize % page);
        }
        let start_ps = i.now_ps();
        let mut tried: u128 = 0;
        loop {
            // A receive whose caller gave it up makes no further read: the next call on the
            // node waits at most for the driver's read in flight, not for the whole timeout.
            if abandon.given_up() {
                return Err(abandon.error(op, &node.path));
            }
            tried += 1;
            let r = {
                let _signals = SignalGuard::new(i.hw.block_signals);
                io.read(&mut buf[..chunk])
            };
            let e = match r {
                Ok(r) => {
                    let n = count("read", &node.path, r, chunk)?;
                    if n == 0 {
                        return Err(Error::ShortTransfer {
                            op: "read",
                            node: node.path.clone(),
                            done: 0,
                            len: chunk as u64,
                        });
                    }
                    return Ok(Transfer {
                        bytes: n,
                        // With O_TRUNC a read that stops short stopped at end-of-packet.
                        end_of_packet: n < chunk,
                        start_ps,
                        end_ps: i.now_ps(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                    return Err(DriverError::Interrupted {
                        op: "read",
                        node: node.path.clone(),
                    }
                    .into_error())
                }
                Err(e) => os_error("read", &node.path, e),
            };
            if e.kind() != ErrorKind::Timeout || attempts.is_some_and(|a| tried >= a) {
                return Err(if e.kind() == ErrorKind::Timeout {
                    // The driver waits whole c2h_timeouts: what it waited is the reads made
                    // times the parameter, which a timeout that is not a multiple of it rounds
                    // down.
                    // A call that first waited for its node behind another call says so, and
                    // its time counts from the call, not from its first read.
                    let t = i.driver.params.c2h_timeout().unwrap_or(Duration::ZERO);
                    let behind = g
                        .waited_behind()
                        .map(|w| format!("; {w}"))
                        .unwrap_or_default();
                    Error::Timeout {
                        what: format!(
                            "data on {} ({} read(s) of c2h_timeout = {} s each, the driver's whole waits within the {:?} asked for{behind}; {})",
                            node.path.display(),
                            tried,
                            t.as_secs(),
                            timeout,
                            i.driver.describe()
                        ),
                        // The driver's whole waits, or the time since the call when that
                        // is longer (it first waited for its node behind another call).
                        after: t
                            .saturating_mul(u32::try_from(tried).unwrap_or(u32::MAX))
                            .max(called.elapsed()),
                    }
                } else {
                    e
                });
            }
        }
    }

    fn wait_for(&self, event: usize, timeout: Duration, abandon: &Abandon) -> Result<u32> {
        let i = &self.inner;
        check::event(&i.info, event)?;
        let node = &i.events[event];
        let called = Instant::now();
        let g = node.lock_for("user interrupt wait", abandon)?;
        let io = g.io()?;
        // No deadline when the caller waits longer than the clock can count.
        let deadline = Instant::now().checked_add(timeout);
        loop {
            if abandon.given_up() {
                return Err(abandon.error("user interrupt wait", &node.path));
            }
            let mut ms = match deadline {
                None => -1,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    // Round up so that a sub-millisecond timeout still waits rather than spins.
                    left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int
                }
            };
            // A wait its caller may give up polls in short steps, so that it notices.
            if abandon.can_give_up() && !(0..=ABANDON_POLL_MS).contains(&ms) {
                ms = ABANDON_POLL_MS;
            }
            let ready = match io.poll_in(ms) {
                Ok(r) => r,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(os_error("poll", &node.path, e)),
            };
            if !ready {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    let behind = g
                        .waited_behind()
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default();
                    return Err(Error::Timeout {
                        what: format!("user interrupt on {}{behind}", node.path.display()),
                        after: called.elapsed().max(timeout),
                    });
                }
                continue;
            }
            let mut b = [0u8; 4];
            match io.read(&mut b) {
                Ok(r) => {
                    let n = count("read", &node.path, r, 4)?;
                    if n != 4 {
                        return Err(Error::ShortTransfer {
                            op: "read",
                            node: node.path.clone(),
                            done: n as u64,
                            len: 4,
                        });
                    }
                    return Ok(u32::from_le_bytes(b));
                }
                Err(e)
                    if e.kind() == std::io::ErrorKind::Interrupted
                        || e.raw_os_error() == Some(libc::EAGAIN) =>
                {
                    continue
                }
                Err(e) => return Err(os_error("read", &node.path, e)),
            }
        }
    }
}

impl Card for HwCard {
    fn info(&self) -> &CardInfo {
        &self.inner.info
    }

    fn write_mm(&self, channel: usize, addr: CardAddr, data: &[u8]) -> Result<Transfer> {
        self.write_mm_for(channel, addr, data, &Abandon::default())
    }

    fn read_mm(&self, channel: usize, addr: CardAddr, buf: &mut [u8]) -> Result<Transfer> {
        self.read_mm_for(channel, addr, buf, &Abandon::default())
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
        let limit =
            i.hw.h2c_stream_max_frame
                .min(usize::try_from(i.driver.params.desc_blen_max).unwrap_or(usize::MAX));
        if frame.len() > limit {
            return Err(Error::Invalid {
                op,
                problem: format!(
                    "a {}-byte frame takes more than one descriptor (one page, desc_blen_max = {}); the driver cuts a transfer at the end of its descriptor ring, whose position carries over from earlier calls, and ends every piece with end-of-packet, so the frame could leave the card as two packets: send frames of at most {limit} bytes ([hw] h2c_stream_max_frame)",
                    frame.len(),
                    i.driver.params.desc_blen_max
                ),
            });
        }
        let node = &i.h2c[channel];
        let g = node.lock()?;
        let io = g.io()?;
        // A frame that straddles a page boundary would take two descriptors; one page of its
        // own keeps it in one.
        let page = i.page;
        let straddles = (frame.as_ptr() as usize % page) + frame.len() > page;
        let mut copy = if straddles {
            Some(DmaBuffer::from_slice(frame)?)
        } else {
            None
        };
        let start_ps = i.now_ps();
        loop {
            let data: &[u8] = copy.as_deref().unwrap_or(frame);
            let r = {
                let _signals = SignalGuard::new(i.hw.block_signals);
                io.write(data)
            };
            match r {
                Ok(r) => {
                    let n = count("write", &node.path, r, data.len())?;
                    if n != data.len() {
                        return Err(Error::ShortTransfer {
                            op: "write",
                            node: node.path.clone(),
                            done: n as u64,
                            len: data.len() as u64,
                        });
                    }
                    break;
                }
                Err(e) if e.raw_os_error() == Some(libc::EFAULT) && copy.is_none() => {
                    // The driver pins pages writable even to send them: read-only memory
                    // fails, an owned copy does not.
                    copy = Some(DmaBuffer::from_slice(frame)?);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
                    return Err(DriverError::Interrupted {
                        op: "write",
                        node: node.path.clone(),
                    }
                    .into_error())
                }
                Err(e) => return Err(os_error("write", &node.path, e)),
            }
        }
        Ok(Transfer {
            bytes: frame.len(),
            end_of_packet: true,
            start_ps,
            end_ps: i.now_ps(),
        })
    }

    fn recv_stream(&self, channel: usize, buf: &mut [u8], timeout: Duration) -> Result<Transfer> {
        self.recv_for(channel, buf, timeout, &Abandon::default())
    }

    fn read_reg(&self, offset: u64) -> Result<u32> {
        self.inner.read_reg(offset)
    }

    fn write_reg(&self, offset: u64, value: u32) -> Result<()> {
        self.inner.write_reg(offset, value)
    }

    fn wait_event(&self, event: usize, timeout: Duration) -> Result<u32> {
        self.wait_for(event, timeout, &Abandon::default())
    }

    fn now_ps(&self) -> Result<u64> {
        Ok(self.inner.now_ps())
    }
}

/// Runs a blocking driver call on a thread of its own and awaits its end. Not tokio's
/// blocking pool: a runtime that is dropped joins its blocking threads, so a receive in flight
/// would hold the drop (and a program's exit) for the receive's whole timeout. A thread of its
/// own is not joined: the future's runtime drops at once, and the call ends in the driver at
/// its timeout with nobody waiting for it.
///
/// A future dropped before its answer sets the call's [`Abandon`] flag, so that the call makes
/// no further driver call (no next read of a receive, no next chunk of a transfer, no next
/// poll of an event wait) and the node is free for the next call once the driver's call in
/// flight returns.
async fn on_own_thread<T, F>(what: &'static str, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(Abandon) -> T + Send + 'static,
{
    /// Sets the flag when the future is dropped before the answer came.
    struct GiveUpOnDrop(Arc<AtomicBool>, bool);
    impl Drop for GiveUpOnDrop {
        fn drop(&mut self) {
            if !self.1 {
                self.0.store(true, Ordering::Release);
            }
        }
    }
    let flag = Arc::new(AtomicBool::new(false));
    let mut guard = GiveUpOnDrop(flag.clone(), false);
    let abandon = Abandon(Some(flag));
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(format!("xdma-hw {what}"))
        .spawn(move || {
            // The receiver is gone when the caller gave up the call: nothing to hand back.
            let _ = tx.send(f(abandon));
        })
        .map_err(|e| Error::Backend(format!("cannot start a thread for the {what}: {e}")))?;
    let r = rx
        .await
        .map_err(|_| Error::Backend(format!("the {what} thread ended without an answer")));
    guard.1 = true;
    r
}

/// Runs a blocking call with an owned buffer, handing the buffer back.
async fn blocking_buf<F>(card: &HwCard, buf: DmaBuffer, f: F) -> BufResult<Transfer>
where
    F: FnOnce(&HwCard, &mut DmaBuffer, &Abandon) -> Result<Transfer> + Send + 'static,
{
    let c = card.clone();
    match on_own_thread("transfer", move |abandon| {
        let mut buf = buf;
        let r = f(&c, &mut buf, &abandon);
        (r, buf)
    })
    .await
    {
        Ok(done) => done,
        Err(e) => (Err(e), DmaBuffer::empty()),
    }
}

async fn blocking<T, F>(card: &HwCard, what: &'static str, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&HwCard, &Abandon) -> Result<T> + Send + 'static,
{
    let c = card.clone();
    on_own_thread(what, move |abandon| f(&c, &abandon)).await?
}

impl AsyncCard for HwCard {
    async fn write_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        data: DmaBuffer,
    ) -> BufResult<Transfer> {
        blocking_buf(self, data, move |c, b, a| {
            c.write_mm_for(channel, addr, b, a)
        })
        .await
    }

    async fn read_mm_async(
        &self,
        channel: usize,
        addr: CardAddr,
        buf: DmaBuffer,
    ) -> BufResult<Transfer> {
        blocking_buf(self, buf, move |c, b, a| c.read_mm_for(channel, addr, b, a)).await
    }

    async fn send_stream_async(&self, channel: usize, frame: DmaBuffer) -> BufResult<Transfer> {
        blocking_buf(self, frame, move |c, b, _| c.send_stream(channel, b)).await
    }

    async fn recv_stream_async(
        &self,
        channel: usize,
        buf: DmaBuffer,
        timeout: Duration,
    ) -> BufResult<Transfer> {
        blocking_buf(self, buf, move |c, b, a| c.recv_for(channel, b, timeout, a)).await
    }

    async fn read_reg_async(&self, offset: u64) -> Result<u32> {
        blocking(self, "register access", move |c, _| c.read_reg(offset)).await
    }

    async fn write_reg_async(&self, offset: u64, value: u32) -> Result<()> {
        blocking(self, "register access", move |c, _| {
            c.write_reg(offset, value)
        })
        .await
    }

    async fn wait_event_async(&self, event: usize, timeout: Duration) -> Result<u32> {
        blocking(self, "user interrupt wait", move |c, a| {
            c.wait_for(event, timeout, a)
        })
        .await
    }
}

/// What the system says of itself when it is a virtual machine (the firmware's vendor and
/// product, `/sys/class/dmi/id/sys_vendor` and `product_name`), or `None` on bare metal. Times
/// taken in a virtual machine measure the hypervisor's path (under QEMU's TCG, its emulator)
/// as well as the card, so a program that prints times says so.
pub fn virtual_machine() -> Option<String> {
    let read = |f: &str| {
        std::fs::read_to_string(format!("/sys/class/dmi/id/{f}"))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let vendor = read("sys_vendor").unwrap_or_default();
    let product = read("product_name").unwrap_or_default();
    const KNOWN: &[&str] = &[
        "QEMU",
        "KVM",
        "VMware",
        "VirtualBox",
        "innotek",
        "Xen",
        "Bochs",
    ];
    let hit = |s: &str| KNOWN.iter().any(|k| s.contains(k));
    (hit(&vendor) || hit(&product)).then(|| format!("{vendor} {product}").trim().to_string())
}
