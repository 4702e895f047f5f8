//! QEMU's multi-process device protocol ("mpqemu", QEMU 7.2 `hw/remote/mpqemu-link.c`), as
//! the stock `x-pci-proxy-dev` speaks it over a Unix stream socket.
//!
//! A message is a 16-byte header (`int32 cmd`, 4 bytes of padding, `u64 size`) followed by
//! `size` bytes of payload; file descriptors travel as `SCM_RIGHTS` with the header. QEMU sends
//! every command but [`Command::Ret`], which is the device's only message: the reply to a
//! config space access, a BAR access or a reset.
//!
//! Malformed input is a typed [`ProtoError`], never a panic. [`ProtoError::is_fatal`] tells
//! whether the stream is still in step (the payload was read whole, so the next message can
//! be read) or not.

use std::io::{self, IoSlice, IoSliceMut, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;

use nix::errno::Errno;
use nix::sys::socket::{self, ControlMessage, ControlMessageOwned, MsgFlags};
use thiserror::Error;

/// Bytes of a message header.
pub const HEADER_LEN: usize = 16;
/// File descriptors one message may carry (QEMU's `REMOTE_MAX_FDS`).
pub const MAX_FDS: usize = 8;
/// Guest RAM regions one `SYNC_SYSMEM` describes (the slots of its payload).
pub const SYSMEM_SLOTS: usize = 8;
/// The largest payload QEMU can send (its union of payloads, `SyncSysmemMsg`). A header that
/// announces much more than this is not a message: the stream is out of step.
const MAX_SANE_PAYLOAD: u64 = 4096;
/// Descriptors the receive buffer has room for: more than a message may carry, so that a
/// message with too many is seen as such (and its descriptors closed) rather than truncated.
const FD_ROOM: usize = 4 * MAX_FDS;

/// The protocol's commands (`MPQemuCmd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// The guest's RAM as memory file descriptors, one per region.
    SyncSysmem = 0,
    /// A reply, carrying one `u64`.
    Ret = 1,
    /// A config space write.
    ConfigWrite = 2,
    /// A config space read.
    ConfigRead = 3,
    /// A write to a BAR.
    BarWrite = 4,
    /// A read of a BAR.
    BarRead = 5,
    /// The INTx eventfds (QEMU routes them only under KVM).
    SetIrqFd = 6,
    /// The function's reset.
    DeviceReset = 7,
}

impl Command {
    /// The command of a wire number.
    pub fn from_raw(cmd: i32) -> Option<Command> {
        Some(match cmd {
            0 => Command::SyncSysmem,
            1 => Command::Ret,
            2 => Command::ConfigWrite,
            3 => Command::ConfigRead,
            4 => Command::BarWrite,
            5 => Command::BarRead,
            6 => Command::SetIrqFd,
            7 => Command::DeviceReset,
            _ => return None,
        })
    }

    /// The payload's size on the wire.
    pub fn payload_len(self) -> usize {
        match self {
            Command::SyncSysmem => 3 * 8 * SYSMEM_SLOTS,
            Command::Ret => 8,
            Command::ConfigWrite | Command::ConfigRead => 12,
            Command::BarWrite | Command::BarRead => 24,
            Command::SetIrqFd | Command::DeviceReset => 0,
        }
    }

    /// Whether QEMU waits for a [`Command::Ret`] after sending it.
    pub fn wants_reply(self) -> bool {
        matches!(
            self,
            Command::ConfigWrite
                | Command::ConfigRead
                | Command::BarWrite
                | Command::BarRead
                | Command::DeviceReset
        )
    }

    /// Whether the command carries file descriptors.
    fn takes_fds(self) -> bool {
        matches!(self, Command::SyncSysmem | Command::SetIrqFd)
    }
}

/// One region of guest RAM: `size` bytes at guest physical `gpa`, backed by `fd` from byte
/// `offset`.
#[derive(Debug)]
pub struct SysmemRegion {
    /// Guest physical address of the region's first byte.
    pub gpa: u64,
    /// Bytes in the region.
    pub size: u64,
    /// Where the region starts in the file.
    pub offset: u64,
    /// The memory file (a memfd).
    pub fd: OwnedFd,
}

/// A decoded message.
#[derive(Debug)]
pub enum Message {
    /// The guest's RAM, replacing every region sent before.
    SyncSysmem(Vec<SysmemRegion>),
    /// A reply.
    Ret(u64),
    /// A config space write of `len` bytes (1, 2 or 4).
    ConfigWrite {
        /// Offset in config space.
        addr: u32,
        /// The value, in the low `len` bytes.
        val: u32,
        /// Bytes written.
        len: u32,
    },
    /// A config space read of `len` bytes (1, 2 or 4).
    ConfigRead {
        /// Offset in config space.
        addr: u32,
        /// Bytes read.
        len: u32,
    },
    /// A BAR write of `size` bytes (1, 2, 4 or 8) at guest physical `addr`.
    BarWrite {
        /// Guest physical address.
        addr: u64,
        /// The value, in the low `size` bytes.
        val: u64,
        /// Bytes written.
        size: u32,
        /// Memory space (rather than I/O space).
        memory: bool,
    },
    /// A BAR read of `size` bytes (1, 2, 4 or 8) at guest physical `addr`.
    BarRead {
        /// Guest physical address.
        addr: u64,
        /// Bytes read.
        size: u32,
        /// Memory space (rather than I/O space).
        memory: bool,
    },
    /// The INTx eventfds.
    SetIrqFd(Vec<OwnedFd>),
    /// The function's reset.
    DeviceReset,
}

impl Message {
    /// The message's command.
    pub fn command(&self) -> Command {
        match self {
            Message::SyncSysmem(_) => Command::SyncSysmem,
            Message::Ret(_) => Command::Ret,
            Message::ConfigWrite { .. } => Command::ConfigWrite,
            Message::ConfigRead { .. } => Command::ConfigRead,
            Message::BarWrite { .. } => Command::BarWrite,
            Message::BarRead { .. } => Command::BarRead,
            Message::SetIrqFd(_) => Command::SetIrqFd,
            Message::DeviceReset => Command::DeviceReset,
        }
    }

    /// The message's bytes on the wire, header included, and the descriptors that go with it.
    pub fn encode(&self) -> (Vec<u8>, Vec<RawFd>) {
        let cmd = self.command();
        let mut out = Vec::with_capacity(HEADER_LEN + cmd.payload_len());
        out.extend_from_slice(&(cmd as i32).to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&(cmd.payload_len() as u64).to_le_bytes());
        let mut fds = Vec::new();
        match self {
            Message::SyncSysmem(regions) => {
                let slot = |f: &dyn Fn(&SysmemRegion) -> u64, out: &mut Vec<u8>| {
                    for i in 0..SYSMEM_SLOTS {
                        let v = regions.get(i).map_or(0, f);
                        out.extend_from_slice(&v.to_le_bytes());
                    }
                };
                slot(&|r| r.gpa, &mut out);
                slot(&|r| r.size, &mut out);
                slot(&|r| r.offset, &mut out);
                fds.extend(regions.iter().map(|r| r.fd.as_raw_fd()));
            }
            Message::Ret(v) => out.extend_from_slice(&v.to_le_bytes()),
            Message::ConfigWrite { addr, val, len } => {
                out.extend_from_slice(&addr.to_le_bytes());
                out.extend_from_slice(&val.to_le_bytes());
                out.extend_from_slice(&len.to_le_bytes());
            }
            Message::ConfigRead { addr, len } => {
                out.extend_from_slice(&addr.to_le_bytes());
                out.extend_from_slice(&0u32.to_le_bytes());
                out.extend_from_slice(&len.to_le_bytes());
            }
            Message::BarWrite {
                addr,
                val,
                size,
                memory,
            } => encode_bar(&mut out, *addr, *val, *size, *memory),
            Message::BarRead { addr, size, memory } => {
                encode_bar(&mut out, *addr, 0, *size, *memory)
            }
            Message::SetIrqFd(list) => fds.extend(list.iter().map(|f| f.as_raw_fd())),
            Message::DeviceReset => {}
        }
        (out, fds)
    }
}

fn encode_bar(out: &mut Vec<u8>, addr: u64, val: u64, size: u32, memory: bool) {
    out.extend_from_slice(&addr.to_le_bytes());
    out.extend_from_slice(&val.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&[u8::from(memory), 0, 0, 0]);
}

/// What can go wrong on the link.
#[derive(Debug, Error)]
pub enum ProtoError {
    /// The peer closed the link between two messages.
    #[error("the link closed")]
    Closed,
    /// The peer closed the link inside a header.
    #[error("the link closed {got} bytes into a {HEADER_LEN}-byte header")]
    ShortHeader {
        /// Bytes of the header received.
        got: usize,
    },
    /// The peer closed the link inside a payload.
    #[error("the link closed {got} bytes into the {want}-byte payload of command {cmd}")]
    ShortPayload {
        /// The command's wire number.
        cmd: i32,
        /// Payload bytes received.
        got: usize,
        /// Payload bytes announced.
        want: u64,
    },
    /// A header announced a payload no message has: the stream is out of step.
    #[error("command {cmd} announces a {size}-byte payload, more than any message has")]
    Oversized {
        /// The command's wire number.
        cmd: i32,
        /// Payload bytes announced.
        size: u64,
    },
    /// A command number the protocol does not have (its payload was skipped).
    #[error("unknown command {cmd} (its {size}-byte payload skipped)")]
    UnknownCommand {
        /// The wire number.
        cmd: i32,
        /// Payload bytes skipped.
        size: u64,
    },
    /// A known command with a payload of the wrong size (skipped).
    #[error("{cmd:?} with a {got}-byte payload (it takes {want})")]
    PayloadSize {
        /// The command.
        cmd: Command,
        /// Payload bytes received.
        got: u64,
        /// Payload bytes the command takes.
        want: usize,
    },
    /// File descriptors where the command takes none, none where it needs some, or more than
    /// a message may carry (all of them closed).
    #[error("command {cmd} with {got} file descriptors: {why}")]
    Fds {
        /// The command's wire number.
        cmd: i32,
        /// Descriptors received.
        got: usize,
        /// What is wrong with them.
        why: &'static str,
    },
    /// A field out of range (a config access of 3 bytes, a BAR access of 16...).
    #[error("{cmd:?}: {why}")]
    BadField {
        /// The command.
        cmd: Command,
        /// What is wrong.
        why: String,
    },
    /// The socket failed.
    #[error("socket: {0}")]
    Io(#[from] io::Error),
}

impl ProtoError {
    /// Whether the link can no longer be read: the peer is gone or the stream is out of step.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            ProtoError::Closed
                | ProtoError::ShortHeader { .. }
                | ProtoError::ShortPayload { .. }
                | ProtoError::Oversized { .. }
                | ProtoError::Io(_)
        )
    }

    /// For a message that was read whole but rejected: its command, when QEMU is waiting for
    /// a reply to it (and so must get one, or its vCPU hangs).
    pub fn pending_reply(&self) -> Option<Command> {
        let cmd = match self {
            ProtoError::PayloadSize { cmd, .. } | ProtoError::BadField { cmd, .. } => *cmd,
            ProtoError::Fds { cmd, .. } => Command::from_raw(*cmd)?,
            _ => return None,
        };
        cmd.wants_reply().then_some(cmd)
    }
}

/// Reads bytes into `buf` until it is full, collecting the descriptors that come with them.
/// Returns the bytes read (fewer than `buf.len()` only at end of file) and whether the kernel
/// cut the control data, which happens only with more descriptors than [`FD_ROOM`].
fn read_full(
    sock: &UnixStream,
    buf: &mut [u8],
    fds: &mut Vec<OwnedFd>,
) -> Result<(usize, bool), ProtoError> {
    let mut got = 0;
    let mut cut = false;
    let mut cmsg = nix::cmsg_space!([RawFd; FD_ROOM]);
    while got < buf.len() {
        let mut iov = [IoSliceMut::new(&mut buf[got..])];
        let msg = match socket::recvmsg::<()>(
            sock.as_raw_fd(),
            &mut iov,
            Some(&mut cmsg),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(m) => m,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(ProtoError::Io(e.into())),
        };
        let n = msg.bytes;
        match msg.cmsgs() {
            Ok(cmsgs) => {
                for c in cmsgs {
                    if let ControlMessageOwned::ScmRights(raw) = c {
                        // SAFETY: the kernel has just installed these descriptors in this
                        // process for this message; nothing else knows them, so each is owned
                        // once, here.
                        fds.extend(
                            raw.into_iter()
                                .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                        );
                    }
                }
            }
            // Those that fit were installed but cannot be reached through the iterator; the
            // message is refused for its descriptor count once it has been read whole.
            Err(_) => cut = true,
        }
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok((got, cut))
}

/// Reads one message.
pub fn recv(sock: &UnixStream) -> Result<Message, ProtoError> {
    let mut fds = Vec::new();
    let mut header = [0u8; HEADER_LEN];
    let (got, cut_header) = read_full(sock, &mut header, &mut fds)?;
    if got == 0 {
        return Err(ProtoError::Closed);
    }
    if got < HEADER_LEN {
        return Err(ProtoError::ShortHeader { got });
    }
    let raw_cmd = i32::from_le_bytes([header[0], header[1], header[2], header[3]]);
    let size = u64::from_le_bytes(header[8..16].try_into().unwrap_or([0; 8]));
    if size > MAX_SANE_PAYLOAD {
        return Err(ProtoError::Oversized { cmd: raw_cmd, size });
    }
    let mut payload = vec![0u8; size as usize];
    let (got, cut_payload) = read_full(sock, &mut payload, &mut fds)?;
    if got < payload.len() {
        return Err(ProtoError::ShortPayload {
            cmd: raw_cmd,
            got,
            want: size,
        });
    }
    // The whole message is read: from here on every error leaves the stream in step.
    if cut_header || cut_payload || fds.len() > MAX_FDS {
        return Err(ProtoError::Fds {
            cmd: raw_cmd,
            got: fds.len(),
            why: "more than a message may carry",
        });
    }
    let Some(cmd) = Command::from_raw(raw_cmd) else {
        return Err(ProtoError::UnknownCommand { cmd: raw_cmd, size });
    };
    if payload.len() != cmd.payload_len() {
        return Err(ProtoError::PayloadSize {
            cmd,
            got: size,
            want: cmd.payload_len(),
        });
    }
    if !cmd.takes_fds() && !fds.is_empty() {
        return Err(ProtoError::Fds {
            cmd: raw_cmd,
            got: fds.len(),
            why: "the command takes none",
        });
    }
    decode(cmd, &payload, fds)
}

/// Little-endian fields of a payload, read in order.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let n = N.min(self.0.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        out
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
}

fn decode(cmd: Command, payload: &[u8], fds: Vec<OwnedFd>) -> Result<Message, ProtoError> {
    let mut f = Fields(payload);
    let bad = |why: String| ProtoError::BadField { cmd, why };
    Ok(match cmd {
        Command::SyncSysmem => {
            if fds.is_empty() {
                return Err(ProtoError::Fds {
                    cmd: cmd as i32,
                    got: 0,
                    why: "guest RAM needs one per region",
                });
            }
            let gpa: Vec<u64> = (0..SYSMEM_SLOTS).map(|_| f.u64()).collect();
            let size: Vec<u64> = (0..SYSMEM_SLOTS).map(|_| f.u64()).collect();
            let offset: Vec<u64> = (0..SYSMEM_SLOTS).map(|_| f.u64()).collect();
            let regions = fds
                .into_iter()
                .enumerate()
                .map(|(i, fd)| SysmemRegion {
                    gpa: gpa[i],
                    size: size[i],
                    offset: offset[i],
                    fd,
                })
                .collect();
            Message::SyncSysmem(regions)
        }
        Command::Ret => Message::Ret(f.u64()),
        Command::ConfigWrite | Command::ConfigRead => {
            let addr = f.u32();
            let val = f.u32();
            let len = i32::from_le_bytes(f.take());
            let len = match len {
                1 | 2 | 4 => len as u32,
                _ => return Err(bad(format!("an access of {len} bytes"))),
            };
            if cmd == Command::ConfigWrite {
                Message::ConfigWrite { addr, val, len }
            } else {
                Message::ConfigRead { addr, len }
            }
        }
        Command::BarWrite | Command::BarRead => {
            let addr = f.u64();
            let val = f.u64();
            let size = f.u32();
            let memory = f.take::<1>()[0] != 0;
            if !matches!(size, 1 | 2 | 4 | 8) {
                return Err(bad(format!("an access of {size} bytes")));
            }
            if cmd == Command::BarWrite {
                Message::BarWrite {
                    addr,
                    val,
                    size,
                    memory,
                }
            } else {
                Message::BarRead { addr, size, memory }
            }
        }
        Command::SetIrqFd => Message::SetIrqFd(fds),
        Command::DeviceReset => Message::DeviceReset,
    })
}

/// Sends raw bytes with `fds` attached to their first byte, as QEMU does.
pub fn send_raw(sock: &UnixStream, bytes: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let mut sent = 0;
    if !fds.is_empty() {
        let cmsg = [ControlMessage::ScmRights(fds)];
        loop {
            match socket::sendmsg::<()>(
                sock.as_raw_fd(),
                &[IoSlice::new(bytes)],
                &cmsg,
                MsgFlags::empty(),
                None,
            ) {
                Ok(n) => {
                    sent = n;
                    break;
                }
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }
    // `Write` on a shared reference writes to the same socket; the descriptors went above.
    let mut w = sock;
    w.write_all(&bytes[sent..])
}

/// Sends a message.
pub fn send(sock: &UnixStream, msg: &Message) -> io::Result<()> {
    let (bytes, fds) = msg.encode();
    send_raw(sock, &bytes, &fds)
}

/// Sends the reply to a command.
pub fn reply(sock: &UnixStream, value: u64) -> io::Result<()> {
    send(sock, &Message::Ret(value))
}
