//! Guest RAM over a real memfd, laid out as QEMU lays it out (regions with holes, at offsets
//! into the file): DMA lands at the right place of the file, spans adjacent regions, and a DMA
//! outside RAM is a fault that touches nothing.

use std::os::fd::OwnedFd;

use nix::sys::memfd::{memfd_create, MFdFlags};
use nix::sys::uio::{pread, pwrite};
use xdma_ip::{DmaFault, HostMemory};
use xdma_vm::guest::GuestMemory;
use xdma_vm::proxy::SysmemRegion;

const FILE: usize = 0x2_0000;

fn ram() -> OwnedFd {
    let fd = memfd_create("guest-ram", MFdFlags::MFD_CLOEXEC).expect("memfd");
    nix::unistd::ftruncate(&fd, FILE as i64).expect("ftruncate");
    fd
}

fn region(fd: &OwnedFd, gpa: u64, size: u64, offset: u64) -> SysmemRegion {
    SysmemRegion {
        gpa,
        size,
        offset,
        fd: fd.try_clone().expect("dup"),
    }
}

fn file_bytes(fd: &OwnedFd, offset: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0; len];
    pread(fd, &mut buf, offset as i64).expect("pread");
    buf
}

/// The `pc` machine's layout in small: RAM below a hole, and RAM above it further into the
/// file.
fn layout(fd: &OwnedFd) -> GuestMemory {
    let mut mem = GuestMemory::new();
    let errors = mem.sync(vec![
        region(fd, 0, 0x4000, 0),
        region(fd, 0x1_0000, 0x8000, 0x8000),
    ]);
    assert!(errors.is_empty(), "{errors:?}");
    mem
}

#[test]
fn dma_reaches_the_file_at_the_region_offset() {
    let fd = ram();
    let mut mem = layout(&fd);
    mem.write(0x1_0100, b"card to host").expect("write");
    assert_eq!(file_bytes(&fd, 0x8100, 12), b"card to host");
    pwrite(&fd, b"host to card", 0x20).expect("pwrite");
    let mut buf = [0u8; 12];
    mem.read(0x20, &mut buf).expect("read");
    assert_eq!(&buf, b"host to card");
}

#[test]
fn dma_outside_ram_faults_and_touches_nothing() {
    let fd = ram();
    let mut mem = layout(&fd);
    // Into the hole, across the end of the low region, past the top, and wrapping around.
    for (addr, len) in [
        (0x8000u64, 4usize),
        (0x3FF0, 0x20),
        (0x1_7FFC, 8),
        (u64::MAX - 2, 8),
    ] {
        let data = vec![0xA5; len];
        assert_eq!(
            mem.write(addr, &data),
            Err(DmaFault { addr, len }),
            "write at {addr:#x}"
        );
        let mut buf = vec![0; len];
        assert_eq!(
            mem.read(addr, &mut buf),
            Err(DmaFault { addr, len }),
            "read at {addr:#x}"
        );
    }
    assert!(
        file_bytes(&fd, 0, FILE).iter().all(|&b| b == 0),
        "a faulting DMA wrote something"
    );
}

#[test]
fn nothing_is_ram_before_the_first_sync() {
    let mut mem = GuestMemory::new();
    let mut buf = [0u8; 4];
    assert_eq!(mem.read(0, &mut buf), Err(DmaFault { addr: 0, len: 4 }));
}

#[test]
fn adjacent_regions_take_one_dma_across_them() {
    let fd = ram();
    let mut mem = GuestMemory::new();
    mem.sync(vec![
        region(&fd, 0, 0x4000, 0),
        region(&fd, 0x4000, 0x4000, 0x1_0000),
    ]);
    let data: Vec<u8> = (0..0x20u8).collect();
    mem.write(0x3FF0, &data).expect("write across");
    assert_eq!(file_bytes(&fd, 0x3FF0, 0x10), &data[..0x10]);
    assert_eq!(file_bytes(&fd, 0x1_0000, 0x10), &data[0x10..]);
    let mut back = vec![0u8; 0x20];
    mem.read(0x3FF0, &mut back).expect("read across");
    assert_eq!(back, data);
}

#[test]
fn a_new_layout_replaces_the_old() {
    let fd = ram();
    let mut mem = layout(&fd);
    mem.sync(vec![region(&fd, 0x10_0000, 0x1000, 0x1000)]);
    assert_eq!(mem.layout(), vec![(0x10_0000, 0x1000)]);
    let mut buf = [0u8; 4];
    assert!(mem.read(0x20, &mut buf).is_err(), "the old region is gone");
    mem.write(0x10_0010, &[1, 2, 3, 4]).expect("write");
    assert_eq!(file_bytes(&fd, 0x1010, 4), [1, 2, 3, 4]);
}

#[test]
fn an_offset_inside_a_page_is_honoured() {
    let fd = ram();
    let mut mem = GuestMemory::new();
    let errors = mem.sync(vec![region(&fd, 0x2000, 0x100, 0x4080)]);
    assert!(errors.is_empty(), "{errors:?}");
    mem.write(0x2000, b"x").expect("write");
    assert_eq!(file_bytes(&fd, 0x4080, 1), b"x");
}

#[test]
fn a_region_that_cannot_be_mapped_is_reported_and_left_out() {
    let fd = ram();
    let pipe = nix::unistd::pipe().expect("pipe");
    let mut mem = GuestMemory::new();
    let errors = mem.sync(vec![
        region(&fd, 0, 0x1000, 0),
        SysmemRegion {
            gpa: 0x1000,
            size: 0x1000,
            offset: 0,
            fd: pipe.0,
        },
    ]);
    assert_eq!(errors.len(), 1);
    assert_eq!(mem.layout(), vec![(0, 0x1000)]);
    let mut buf = [0u8; 4];
    assert!(mem.read(0x1000, &mut buf).is_err());
}
