//! The message codec over a real socket pair, with the QEMU end played by the test: every
//! message kind both ways, and every kind of malformed input, each a typed error after which
//! the link stays usable where the stream is still in step.

use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;

use nix::sys::memfd::{memfd_create, MFdFlags};
use xdma_vm::proxy::{self, Command, Message, ProtoError, SysmemRegion, HEADER_LEN};

fn pair() -> (UnixStream, UnixStream) {
    UnixStream::pair().expect("socket pair")
}

fn header(cmd: i32, size: u64) -> Vec<u8> {
    let mut h = cmd.to_le_bytes().to_vec();
    h.extend_from_slice(&[0; 4]);
    h.extend_from_slice(&size.to_le_bytes());
    h
}

fn memfd(name: &str) -> OwnedFd {
    memfd_create(name, MFdFlags::MFD_CLOEXEC).expect("memfd")
}

fn inode(fd: &impl AsFd) -> u64 {
    let file = std::fs::File::from(fd.as_fd().try_clone_to_owned().expect("dup"));
    file.metadata().expect("fstat").ino()
}

#[test]
fn every_command_round_trips() {
    let (qemu, dev) = pair();
    let cases = vec![
        Message::ConfigRead { addr: 0x3C, len: 1 },
        Message::ConfigWrite {
            addr: 0x10,
            val: 0xFFFF_FFFF,
            len: 4,
        },
        Message::BarRead {
            addr: 0xFEB0_2000,
            size: 4,
            memory: true,
        },
        Message::BarWrite {
            addr: 0xFEA0_0008,
            val: 0xDEAD_BEEF_0BAD_F00D,
            size: 8,
            memory: true,
        },
        Message::DeviceReset,
        Message::Ret(0x1234_5678_9ABC_DEF0),
    ];
    for m in &cases {
        proxy::send(&qemu, m).expect("send");
        let got = proxy::recv(&dev).expect("recv");
        assert_eq!(format!("{got:?}"), format!("{m:?}"));
    }
}

#[test]
fn sysmem_regions_bring_their_files() {
    let (qemu, dev) = pair();
    let a = memfd("low");
    let b = memfd("high");
    let (ia, ib) = (inode(&a), inode(&b));
    let msg = Message::SyncSysmem(vec![
        SysmemRegion {
            gpa: 0,
            size: 0xC_0000,
            offset: 0,
            fd: a,
        },
        SysmemRegion {
            gpa: 0x10_0000,
            size: 0x1FF0_0000,
            offset: 0x10_0000,
            fd: b,
        },
    ]);
    proxy::send(&qemu, &msg).expect("send");
    let Message::SyncSysmem(regions) = proxy::recv(&dev).expect("recv") else {
        panic!("not a SYNC_SYSMEM");
    };
    assert_eq!(regions.len(), 2);
    assert_eq!(
        (regions[0].gpa, regions[0].size, regions[0].offset),
        (0, 0xC_0000, 0)
    );
    assert_eq!(
        (regions[1].gpa, regions[1].size, regions[1].offset),
        (0x10_0000, 0x1FF0_0000, 0x10_0000)
    );
    assert_eq!(inode(&regions[0].fd), ia);
    assert_eq!(inode(&regions[1].fd), ib);
}

#[test]
fn irqfds_are_received_and_reply_is_well_formed() {
    let (mut qemu, dev) = pair();
    let fds = vec![memfd("intr"), memfd("resample")];
    proxy::send(&qemu, &Message::SetIrqFd(fds)).expect("send");
    match proxy::recv(&dev).expect("recv") {
        Message::SetIrqFd(got) => assert_eq!(got.len(), 2),
        other => panic!("got {other:?}"),
    }
    proxy::reply(&dev, 0xFFFF_FFFF).expect("reply");
    let mut buf = [0u8; HEADER_LEN + 8];
    qemu.read_exact(&mut buf).expect("read reply");
    assert_eq!(&buf[..HEADER_LEN], &header(1, 8)[..]);
    assert_eq!(
        u64::from_le_bytes(buf[16..24].try_into().expect("8 bytes")),
        0xFFFF_FFFF
    );
}

#[test]
fn a_header_cut_short_is_fatal() {
    let (mut qemu, dev) = pair();
    qemu.write_all(&header(3, 12)[..10]).expect("write");
    drop(qemu);
    let e = proxy::recv(&dev).expect_err("short header");
    assert!(matches!(e, ProtoError::ShortHeader { got: 10 }), "{e}");
    assert!(e.is_fatal());
}

#[test]
fn a_payload_cut_short_is_fatal() {
    let (mut qemu, dev) = pair();
    qemu.write_all(&header(5, 24)).expect("write");
    qemu.write_all(&[0; 5]).expect("write");
    drop(qemu);
    let e = proxy::recv(&dev).expect_err("short payload");
    assert!(
        matches!(
            e,
            ProtoError::ShortPayload {
                got: 5,
                want: 24,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.is_fatal());
}

#[test]
fn the_peer_closing_between_messages_is_closed() {
    let (qemu, dev) = pair();
    drop(qemu);
    assert!(matches!(proxy::recv(&dev), Err(ProtoError::Closed)));
}

#[test]
fn an_absurd_size_is_fatal() {
    let (mut qemu, dev) = pair();
    qemu.write_all(&header(4, 1 << 40)).expect("write");
    let e = proxy::recv(&dev).expect_err("oversized");
    assert!(matches!(e, ProtoError::Oversized { .. }), "{e}");
    assert!(e.is_fatal());
}

/// A valid message after a malformed one proves the stream stayed in step.
fn next_is_config_read(qemu: &UnixStream, dev: &UnixStream) {
    proxy::send(qemu, &Message::ConfigRead { addr: 0, len: 2 }).expect("send");
    assert!(matches!(
        proxy::recv(dev).expect("the next message"),
        Message::ConfigRead { addr: 0, len: 2 }
    ));
}

#[test]
fn an_unknown_command_is_skipped() {
    let (mut qemu, dev) = pair();
    qemu.write_all(&header(42, 12)).expect("write");
    qemu.write_all(&[0xAA; 12]).expect("write");
    let e = proxy::recv(&dev).expect_err("unknown");
    assert!(
        matches!(e, ProtoError::UnknownCommand { cmd: 42, size: 12 }),
        "{e}"
    );
    assert!(!e.is_fatal());
    assert_eq!(e.pending_reply(), None);
    next_is_config_read(&qemu, &dev);
}

#[test]
fn a_wrong_payload_size_is_skipped_and_still_wants_its_reply() {
    let (mut qemu, dev) = pair();
    qemu.write_all(&header(5, 12)).expect("write");
    qemu.write_all(&[0; 12]).expect("write");
    let e = proxy::recv(&dev).expect_err("payload size");
    assert!(
        matches!(
            e,
            ProtoError::PayloadSize {
                cmd: Command::BarRead,
                got: 12,
                want: 24
            }
        ),
        "{e}"
    );
    assert!(!e.is_fatal());
    assert_eq!(e.pending_reply(), Some(Command::BarRead));
    next_is_config_read(&qemu, &dev);
}

#[test]
fn bad_access_sizes_are_refused() {
    let (mut qemu, dev) = pair();
    let mut cfg = header(3, 12);
    cfg.extend_from_slice(&0u32.to_le_bytes());
    cfg.extend_from_slice(&0u32.to_le_bytes());
    cfg.extend_from_slice(&3i32.to_le_bytes());
    qemu.write_all(&cfg).expect("write");
    let e = proxy::recv(&dev).expect_err("3-byte config read");
    assert!(
        matches!(
            e,
            ProtoError::BadField {
                cmd: Command::ConfigRead,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.pending_reply(), Some(Command::ConfigRead));

    let (mut bytes, _) = Message::BarWrite {
        addr: 0,
        val: 0,
        size: 4,
        memory: true,
    }
    .encode();
    bytes[HEADER_LEN + 16..HEADER_LEN + 20].copy_from_slice(&16u32.to_le_bytes());
    qemu.write_all(&bytes).expect("write");
    let e = proxy::recv(&dev).expect_err("16-byte BAR write");
    assert!(
        matches!(
            e,
            ProtoError::BadField {
                cmd: Command::BarWrite,
                ..
            }
        ),
        "{e}"
    );
    next_is_config_read(&qemu, &dev);
}

#[test]
fn descriptors_where_none_belong_are_refused_and_closed() {
    let (qemu, dev) = pair();
    let (r, w) = nix::unistd::pipe().expect("pipe");
    let (bytes, _) = Message::BarRead {
        addr: 0,
        size: 4,
        memory: true,
    }
    .encode();
    proxy::send_raw(&qemu, &bytes, &[w.as_raw_fd()]).expect("send");
    drop(w);
    let e = proxy::recv(&dev).expect_err("fds with a BAR read");
    assert!(matches!(e, ProtoError::Fds { got: 1, .. }), "{e}");
    assert_eq!(e.pending_reply(), Some(Command::BarRead));
    assert_write_ends_closed(r);
    next_is_config_read(&qemu, &dev);
}

#[test]
fn too_many_descriptors_are_refused_and_closed() {
    let (qemu, dev) = pair();
    let (r, w) = nix::unistd::pipe().expect("pipe");
    let fds = [w.as_raw_fd(); 9];
    let (bytes, _) = Message::SetIrqFd(Vec::new()).encode();
    proxy::send_raw(&qemu, &bytes, &fds).expect("send");
    drop(w);
    let e = proxy::recv(&dev).expect_err("nine descriptors");
    assert!(matches!(e, ProtoError::Fds { got: 9, .. }), "{e}");
    assert!(!e.is_fatal());
    assert_write_ends_closed(r);
    next_is_config_read(&qemu, &dev);
}

#[test]
fn guest_ram_without_descriptors_is_refused() {
    let (qemu, dev) = pair();
    proxy::send(&qemu, &Message::SyncSysmem(Vec::new())).expect("send");
    let e = proxy::recv(&dev).expect_err("no descriptors");
    assert!(matches!(e, ProtoError::Fds { got: 0, .. }), "{e}");
    next_is_config_read(&qemu, &dev);
}

/// Reading the pipe gives end of file only once every copy of its write end is closed,
/// including the ones the refused message brought into this process; a copy still open makes
/// the non-blocking read fail with `WouldBlock` instead.
fn assert_write_ends_closed(r: OwnedFd) {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    fcntl(&r, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).expect("non-blocking");
    let mut f = std::fs::File::from(r);
    let mut buf = [0u8; 1];
    match f.read(&mut buf) {
        Ok(0) => {}
        other => panic!("a write end of the pipe is still open: {other:?}"),
    }
}
