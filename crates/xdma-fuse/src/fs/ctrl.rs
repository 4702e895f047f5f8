//! The register nodes `_user` and `_control` and the ioctls (cdev_ctrl.c, and cdev_sgdma.c's
//! alignment and address-mode requests): word accesses and the pages a mapping faults in.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use fuser::{Errno, INodeNo};
use xdma_core::{Card, ChannelKind};
use xdma_regmap::{driver, DMA_BAR_SIZE};
use xdma_sim::Control;

use super::state::{errno, lock, spawn, Kind, Shared};

/// How long after a page of `_user` or `_control` was read into the page cache (a mapping
/// faulted it in) the server drops it again, so that the next access reads the registers anew.
const PAGE_LIFE: Duration = Duration::from_millis(2);

// The ioctl requests the driver answers (cdev_sgdma.h, cdev_ctrl.h).
const ALIGN_GET: u32 = driver::IOCTL_XDMA_ALIGN_GET as u32;
const ADDRMODE_GET: u32 = driver::IOCTL_XDMA_ADDRMODE_GET as u32;
const ADDRMODE_SET: u32 = driver::IOCTL_XDMA_ADDRMODE_SET as u32;
const IOCINFO: u32 = driver::XDMA_IOCINFO as u32;
const IOCOFFLINE: u32 = driver::XDMA_IOCOFFLINE as u32;
const IOCONLINE: u32 = driver::XDMA_IOCONLINE as u32;

impl Shared {
    fn bar_size(&self, kind: &Kind) -> u64 {
        match kind {
            Kind::User => self.info.user_bar_size,
            _ => DMA_BAR_SIZE,
        }
    }

    fn read_word(&self, kind: &Kind, offset: u64) -> Result<u32, Errno> {
        if offset + 4 > self.bar_size(kind) {
            // The driver does not check: the access faults in the kernel. Refuse instead.
            return Err(Errno::EFAULT);
        }
        match kind {
            Kind::User => self.card.read_reg(offset).map_err(|e| errno(&e)),
            _ => self
                .card
                .control(Control::Read(offset))
                .map_err(|e| errno(&e)),
        }
    }

    fn write_word(&self, kind: &Kind, offset: u64, value: u32) -> Result<(), Errno> {
        if offset + 4 > self.bar_size(kind) {
            return Err(Errno::EFAULT);
        }
        match kind {
            Kind::User => self.card.write_reg(offset, value).map_err(|e| errno(&e)),
            _ => self
                .card
                .control(Control::Write(offset, value))
                .map(|_| ())
                .map_err(|e| errno(&e)),
        }
    }

    /// A read of a BAR node (the user BAR or the XDMA control BAR): one word with the driver's
    /// rules, or a page for the page cache (a mapping of the node faulted it in; such reads
    /// carry no lock owner).
    pub(super) fn read_bar(
        self: &Arc<Self>,
        ino: u64,
        kind: &Kind,
        offset: u64,
        size: usize,
        from_cache: bool,
    ) -> Result<Vec<u8>, Errno> {
        if !from_cache {
            if offset & 3 != 0 || size < 4 {
                return Err(Errno::EPROTO);
            }
            return Ok(self.read_word(kind, offset)?.to_le_bytes().to_vec());
        }
        let end = (offset + size as u64).min(self.bar_size(kind));
        let mut page = Vec::with_capacity(size);
        let mut at = offset & !3;
        while at < end {
            page.extend_from_slice(&self.read_word(kind, at)?.to_le_bytes());
            at += 4;
        }
        page.truncate(size);
        lock(&self.shadows).insert((ino, offset), page.clone());
        // Drop the page again shortly, so that the next access through the mapping reads the
        // registers anew (and a dirty page is written back).
        let me = self.clone();
        spawn("xdma-fuse-inval", move || {
            std::thread::sleep(PAGE_LIFE);
            if let Some(n) = me.notifier.get() {
                let _ = n.inval_inode(INodeNo(ino), offset as i64, size as i64);
            }
        });
        Ok(page)
    }

    /// A write of a BAR node (the user BAR or the XDMA control BAR): one word with the driver's
    /// rules, or a page written back from the page cache, of which only the words that differ
    /// from what was served are written.
    pub(super) fn write_bar(
        &self,
        ino: u64,
        kind: &Kind,
        offset: u64,
        data: &[u8],
        from_cache: bool,
    ) -> Result<u32, Errno> {
        if !from_cache {
            if offset & 3 != 0 || data.len() < 4 {
                return Err(Errno::EPROTO);
            }
            let v = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
            self.write_word(kind, offset, v)?;
            return Ok(4);
        }
        let shadow = lock(&self.shadows).remove(&(ino, offset));
        for (i, w) in data.chunks_exact(4).enumerate() {
            let at = offset + 4 * i as u64;
            if at + 4 > self.bar_size(kind) {
                break;
            }
            let old = shadow.as_ref().and_then(|s| s.get(4 * i..4 * i + 4));
            if old != Some(w) {
                self.write_word(kind, at, u32::from_le_bytes([w[0], w[1], w[2], w[3]]))?;
            }
        }
        Ok(data.len() as u32)
    }

    // ---------------------------------------------------------------- events

    pub(super) fn ioctl(&self, kind: &Kind, cmd: u32, input: &[u8]) -> Result<Vec<u8>, Errno> {
        let int = |v: i32| v.to_ne_bytes().to_vec();
        match kind {
            Kind::Dma(dir, ch, ck) => match cmd {
                ALIGN_GET => Ok(int(self.info.alignment.min(i32::MAX as u64) as i32)),
                ADDRMODE_GET => Ok(int(i32::from(self.fixed_address(*dir, *ch)?))),
                ADDRMODE_SET => {
                    let v = input.get(..4).ok_or(Errno::EFAULT)?;
                    let fixed = i32::from_ne_bytes([v[0], v[1], v[2], v[3]]) != 0;
                    // Only memory-mapped engines have an address to hold fixed.
                    if *ck == ChannelKind::MemoryMapped {
                        self.card
                            .control(Control::AddrModeSet(*dir, *ch, fixed))
                            .map_err(|e| errno(&e))?;
                    }
                    Ok(Vec::new())
                }
                _ => Err(Errno::EINVAL),
            },
            Kind::User | Kind::Control => match cmd {
                IOCINFO => {
                    let req = driver::IocInfo::from_bytes(input).ok_or(Errno::EFAULT)?;
                    if req.magic != driver::XDMA_XCL_MAGIC {
                        return Err(Errno::ENOTTY);
                    }
                    let info = driver::IocInfo {
                        vendor: 0x10ee,
                        device: 0x7028,
                        subsystem_vendor: 0x10ee,
                        subsystem_device: 0x0007,
                        driver_version: self.version,
                        ..driver::IocInfo::default()
                    };
                    Ok(info.to_bytes().to_vec())
                }
                IOCOFFLINE => {
                    self.offline.store(true, Ordering::SeqCst);
                    Ok(Vec::new())
                }
                IOCONLINE => {
                    self.offline.store(false, Ordering::SeqCst);
                    Ok(Vec::new())
                }
                _ => Err(Errno::ENOTTY),
            },
            _ => Err(Errno::ENOTTY),
        }
    }
}
