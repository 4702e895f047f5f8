//! The Linux driver's side of the contract (`dma_ip_drivers`, `XDMA/linux-kernel/xdma`): the
//! device nodes it makes, its ioctls and their argument, the module parameters it shows and
//! the errno it returns that the kernel does not define for user space. The driver backend
//! (`xdma-hw`) uses them as a client, the FUSE nodes (`xdma-fuse`) serve them, and the driver
//! model (`xdma-driver`) follows them.

use crate::MAX_USER_IRQ;

/// The suffix of the node of H2C channel `k` after the device prefix (`/dev/xdma0`).
pub fn h2c_node(k: usize) -> String {
    format!("_h2c_{k}")
}

/// The suffix of the node of C2H channel `k`.
pub fn c2h_node(k: usize) -> String {
    format!("_c2h_{k}")
}

/// The suffix of the node of user interrupt `k`'s events.
pub fn events_node(k: usize) -> String {
    format!("_events_{k}")
}

/// The suffix of the user BAR's register node.
pub const USER_NODE: &str = "_user";
/// The suffix of the DMA BAR's register node.
pub const CONTROL_NODE: &str = "_control";
/// Event nodes the driver makes: one per user interrupt line.
pub const EVENT_NODES: usize = MAX_USER_IRQ;

/// `XDMA_ENGINE_XFER_MAX_DESC`: descriptors in each engine's ring. A transfer starts at the
/// ring's next free index, and one that would pass the ring's end is cut there.
pub const RING_DESCRIPTORS: usize = 0x800;

/// The module parameters that change what a call does, as `/sys/module/xdma/parameters`
/// names them.
pub const MODULE_PARAMETERS: [&str; 6] = [
    "c2h_timeout",
    "h2c_timeout",
    "desc_blen_max",
    "enable_st_c2h_credit",
    "interrupt_mode",
    "poll_mode",
];

const IOC_WRITE: u64 = 1;
const IOC_READ: u64 = 2;
/// `sizeof(int)` of the ioctls that take one.
const INT_BYTES: usize = 4;

/// Linux's `_IOC(dir, type, nr, size)` on the architectures with the generic ioctl layout
/// (direction in bits 31..30, size in 29..16, type in 15..8, number in 7..0).
const fn ioc(dir: u64, ty: u8, nr: u8, size: usize) -> u64 {
    (dir << 30) | ((size as u64) << 16) | ((ty as u64) << 8) | nr as u64
}

/// `_IOR('q', 6, int)`: the DMA nodes' ALIGN_GET ioctl, which returns the engine's address
/// alignment in bytes.
pub const IOCTL_XDMA_ALIGN_GET: u64 = ioc(IOC_READ, b'q', 6, INT_BYTES);
/// `_IOW('q', 4, int)`: ADDRMODE_SET; 1 puts the engine in fixed-address mode, 0 back in
/// incrementing mode. The mode belongs to the engine, not the open file.
pub const IOCTL_XDMA_ADDRMODE_SET: u64 = ioc(IOC_WRITE, b'q', 4, INT_BYTES);
/// `_IOR('q', 5, int)`: ADDRMODE_GET.
pub const IOCTL_XDMA_ADDRMODE_GET: u64 = ioc(IOC_READ, b'q', 5, INT_BYTES);
/// `_IOWR('x', 1, struct xdma_ioc_info)`: XDMA_IOCINFO on `_control` (and `_user`): the PCI
/// identity and the driver's version number.
pub const XDMA_IOCINFO: u64 = ioc(IOC_READ | IOC_WRITE, b'x', 1, size_of::<IocInfo>());
/// `_IO('x', 2)`: XDMA_IOCOFFLINE, which takes the device offline (transfers then fail with
/// EBUSY).
pub const XDMA_IOCOFFLINE: u64 = ioc(0, b'x', 2, 0);
/// `_IO('x', 3)`: XDMA_IOCONLINE.
pub const XDMA_IOCONLINE: u64 = ioc(0, b'x', 3, 0);
/// The magic number XDMA_IOCINFO wants in its request ("XL OpenCL").
pub const XDMA_XCL_MAGIC: u32 = 0x586c_0c6c;

/// The driver's answer for a DMA timeout in every release before 2025.2: ERESTARTSYS, which
/// the kernel only turns into a restart when a signal is pending, so it leaks to user space.
pub const ERESTARTSYS: i32 = 512;

/// `struct xdma_ioc_info` of the driver's `cdev_ctrl.h`, laid out as C lays it out.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IocInfo {
    /// `base.magic`: [`XDMA_XCL_MAGIC`] in the request.
    pub magic: u32,
    /// `base.command`.
    pub command: u32,
    /// PCI vendor id.
    pub vendor: u16,
    /// PCI device id.
    pub device: u16,
    /// PCI subsystem vendor id.
    pub subsystem_vendor: u16,
    /// PCI subsystem device id.
    pub subsystem_device: u16,
    /// Not filled in by any release.
    pub dma_engine_version: u32,
    /// `major * 1000 + minor * 100 + patch`, for example 2025200 for 2025.2.0.
    pub driver_version: u32,
    /// The IP's feature identifier.
    pub feature_id: u64,
    /// PCI domain.
    pub domain: u16,
    /// PCI bus.
    pub bus: u8,
    /// PCI device (slot).
    pub dev: u8,
    /// PCI function.
    pub func: u8,
}

impl IocInfo {
    /// The structure's bytes, as the ioctl passes them.
    pub fn to_bytes(&self) -> [u8; size_of::<IocInfo>()] {
        let mut b = [0u8; size_of::<IocInfo>()];
        b[0..4].copy_from_slice(&self.magic.to_ne_bytes());
        b[4..8].copy_from_slice(&self.command.to_ne_bytes());
        b[8..10].copy_from_slice(&self.vendor.to_ne_bytes());
        b[10..12].copy_from_slice(&self.device.to_ne_bytes());
        b[12..14].copy_from_slice(&self.subsystem_vendor.to_ne_bytes());
        b[14..16].copy_from_slice(&self.subsystem_device.to_ne_bytes());
        b[16..20].copy_from_slice(&self.dma_engine_version.to_ne_bytes());
        b[20..24].copy_from_slice(&self.driver_version.to_ne_bytes());
        b[24..32].copy_from_slice(&self.feature_id.to_ne_bytes());
        b[32..34].copy_from_slice(&self.domain.to_ne_bytes());
        b[34] = self.bus;
        b[35] = self.dev;
        b[36] = self.func;
        b
    }

    /// The structure read back from its bytes; None when there are too few.
    pub fn from_bytes(b: &[u8]) -> Option<IocInfo> {
        let u16_at = |o: usize| Some(u16::from_ne_bytes(b.get(o..o + 2)?.try_into().ok()?));
        let u32_at = |o: usize| Some(u32::from_ne_bytes(b.get(o..o + 4)?.try_into().ok()?));
        Some(IocInfo {
            magic: u32_at(0)?,
            command: u32_at(4)?,
            vendor: u16_at(8)?,
            device: u16_at(10)?,
            subsystem_vendor: u16_at(12)?,
            subsystem_device: u16_at(14)?,
            dma_engine_version: u32_at(16)?,
            driver_version: u32_at(20)?,
            feature_id: u64::from_ne_bytes(b.get(24..32)?.try_into().ok()?),
            domain: u16_at(32)?,
            bus: *b.get(34)?,
            dev: *b.get(35)?,
            func: *b.get(36)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_match_the_drivers_headers() {
        // The values the driver's headers compute on x86-64 and arm64, worked out by hand from
        // the _IOC layout: direction << 30 | size << 16 | type << 8 | number.
        assert_eq!(IOCTL_XDMA_ALIGN_GET, 0x8004_7106);
        assert_eq!(IOCTL_XDMA_ADDRMODE_SET, 0x4004_7104);
        assert_eq!(IOCTL_XDMA_ADDRMODE_GET, 0x8004_7105);
        // struct xdma_ioc_info is 37 bytes of fields padded to 40 by its 8-byte member.
        assert_eq!(size_of::<IocInfo>(), 40);
        assert_eq!(XDMA_IOCINFO, 0xc028_7801);
        assert_eq!(XDMA_IOCOFFLINE, 0x7802);
        assert_eq!(XDMA_IOCONLINE, 0x7803);
    }

    #[test]
    fn ioc_info_round_trips_through_its_bytes() {
        let i = IocInfo {
            magic: XDMA_XCL_MAGIC,
            driver_version: 2_025_200,
            bus: 3,
            func: 1,
            ..IocInfo::default()
        };
        assert_eq!(IocInfo::from_bytes(&i.to_bytes()), Some(i));
        assert_eq!(IocInfo::from_bytes(&[0; 36]), None);
    }

    #[test]
    fn node_names_are_the_drivers() {
        assert_eq!(h2c_node(1), "_h2c_1");
        assert_eq!(c2h_node(0), "_c2h_0");
        assert_eq!(events_node(15), "_events_15");
        assert_eq!(EVENT_NODES, 16);
    }
}
