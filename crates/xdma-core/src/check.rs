//! Argument checks that every backend applies before touching the card, so that bad input gets
//! the same typed error whichever backend runs.

use crate::addr::CardAddr;
use crate::api::CardInfo;
use crate::channel::{ChannelKind, Direction};
use crate::error::{Error, Result};

/// Checks a memory-mapped transfer: the channel exists and is memory-mapped, the length is not
/// zero, the range lies inside card memory, and the buffer and address meet the engine's
/// alignment rule. `size_from` says where the backend has the card memory's size from and
/// what to do when it is not the card's, for the error ([`Error::OutOfRange`]).
#[allow(clippy::too_many_arguments)]
pub fn mm(
    info: &CardInfo,
    op: &'static str,
    dir: Direction,
    channel: usize,
    addr: CardAddr,
    buf_addr: usize,
    len: usize,
    size_from: &'static str,
) -> Result<()> {
    mm_node(info, op, dir, channel, len)?;
    let len64 = len as u64;
    let end = addr.checked_add(len64);
    if end.is_none_or(|e| e.raw() > info.memory_size) {
        return Err(Error::OutOfRange {
            op,
            addr,
            len: len64,
            size: info.memory_size,
            size_from,
        });
    }
    mm_align(op, info.alignment, buf_addr, addr)
}

/// Checks a memory-mapped transfer as the driver's device node takes it: the channel exists
/// and is memory-mapped, and the length is not zero. Not the card's memory, which the driver
/// does not know (a request past it goes to the card, which answers as its bus does), nor
/// the alignment, which the driver checks against the engine's own alignments register. For
/// a front end that stands in for the driver's nodes.
pub fn mm_node(
    info: &CardInfo,
    op: &'static str,
    dir: Direction,
    channel: usize,
    len: usize,
) -> Result<()> {
    channel_and_length(info, op, dir, channel, ChannelKind::MemoryMapped, len)
}

/// The driver's rule for incrementing-address (memory-mapped) transfers: the buffer's and the
/// card address's offsets within the alignment must match, because the engine moves data in
/// aligned beats on both sides.
pub fn mm_align(op: &'static str, align: u64, buf_addr: usize, addr: CardAddr) -> Result<()> {
    if align <= 1 {
        return Ok(());
    }
    let buf_lsb = buf_addr as u64 % align;
    let addr_lsb = addr.raw() % align;
    if buf_lsb != addr_lsb {
        return Err(Error::Misaligned {
            op,
            problem: format!(
                "buffer at host address {buf_addr:#x} (offset {buf_lsb} in an {align}-byte unit) \
                 and card address {addr} (offset {addr_lsb}) are not aligned alike"
            ),
            align,
        });
    }
    Ok(())
}

/// Checks a stream transfer: the channel exists and is a stream, the length is not zero, and
/// the buffer starts on the engine's alignment.
pub fn stream(
    info: &CardInfo,
    op: &'static str,
    dir: Direction,
    channel: usize,
    buf_addr: usize,
    len: usize,
) -> Result<()> {
    channel_and_length(info, op, dir, channel, ChannelKind::Stream, len)?;
    let align = info.alignment;
    if align > 1 && buf_addr as u64 & (align - 1) != 0 {
        return Err(Error::Misaligned {
            op,
            problem: format!("stream buffer at host address {buf_addr:#x} is not aligned"),
            align,
        });
    }
    Ok(())
}

/// What every transfer needs: a channel of the wanted kind and at least one byte.
fn channel_and_length(
    info: &CardInfo,
    op: &'static str,
    dir: Direction,
    channel: usize,
    wanted: ChannelKind,
    len: usize,
) -> Result<()> {
    channel_kind(info, op, dir, channel, wanted)?;
    if len == 0 {
        return Err(Error::ZeroLength { op });
    }
    Ok(())
}

fn channel_kind(
    info: &CardInfo,
    op: &'static str,
    dir: Direction,
    channel: usize,
    wanted: ChannelKind,
) -> Result<()> {
    let chans = info.channels(dir);
    let ch = chans.get(channel).ok_or(Error::NoSuchChannel {
        dir,
        channel,
        count: chans.len(),
    })?;
    if ch.kind != wanted {
        return Err(Error::WrongChannelKind {
            op,
            dir,
            channel,
            actual: ch.kind,
            wanted,
        });
    }
    Ok(())
}

/// Checks a register offset: 4-aligned and inside the user BAR.
pub fn reg(info: &CardInfo, offset: u64) -> Result<()> {
    if offset & 3 != 0 {
        return Err(Error::RegisterAlignment { offset });
    }
    if offset.checked_add(4).is_none_or(|e| e > info.user_bar_size) {
        return Err(Error::RegisterOutOfRange {
            offset,
            size: info.user_bar_size,
        });
    }
    Ok(())
}

/// Checks a user interrupt event number.
pub fn event(info: &CardInfo, event: usize) -> Result<()> {
    if event >= info.events {
        return Err(Error::NoSuchEvent {
            event,
            count: info.events,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ChannelInfo;
    use crate::error::ErrorKind;

    fn info() -> CardInfo {
        let ch = |dir, index, kind| ChannelInfo {
            dir,
            index,
            kind,
            id_register: 0,
        };
        CardInfo {
            backend: "test".into(),
            h2c: vec![ch(Direction::H2C, 0, ChannelKind::MemoryMapped)],
            c2h: vec![
                ch(Direction::C2H, 0, ChannelKind::MemoryMapped),
                ch(Direction::C2H, 1, ChannelKind::Stream),
            ],
            memory_size: 1 << 20,
            user_bar_size: 0x1000,
            events: 2,
            card_id: 0,
            card_version: 0,
            xdma_version: None,
            alignment: 64,
            min_stream_timeout: std::time::Duration::ZERO,
        }
    }

    #[test]
    fn the_memory_mapped_channel_is_found_or_named_missing() {
        let mut i = info();
        assert_eq!(i.mm_channel(Direction::H2C).expect("h2c"), 0);
        assert_eq!(i.mm_channel(Direction::C2H).expect("c2h"), 0);
        i.c2h.remove(0);
        let e = i
            .mm_channel(Direction::C2H)
            .expect_err("only a stream left");
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert!(e.to_string().contains("memory-mapped C2H"), "{e}");
    }

    #[test]
    fn memory_mapped_checks_in_order() {
        let i = info();
        let k = |r: Result<()>| r.expect_err("must fail").kind();
        let m = |i: &CardInfo,
                 op: &'static str,
                 dir: Direction,
                 ch: usize,
                 addr: CardAddr,
                 buf: usize,
                 len: usize| mm(i, op, dir, ch, addr, buf, len, "the test's");
        assert!(m(&i, "w", Direction::H2C, 0, CardAddr(0), 0x1000, 16).is_ok());
        assert_eq!(
            k(m(&i, "w", Direction::H2C, 1, CardAddr(0), 0, 16)),
            ErrorKind::NoSuchChannel
        );
        assert_eq!(
            k(m(&i, "r", Direction::C2H, 1, CardAddr(0), 0, 16)),
            ErrorKind::WrongChannelKind
        );
        assert_eq!(
            k(m(&i, "w", Direction::H2C, 0, CardAddr(0), 0, 0)),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            k(m(
                &i,
                "w",
                Direction::H2C,
                0,
                CardAddr((1 << 20) - 8),
                0,
                16
            )),
            ErrorKind::OutOfRange
        );
        assert_eq!(
            k(m(&i, "w", Direction::H2C, 0, CardAddr(u64::MAX), 0, 16)),
            ErrorKind::OutOfRange
        );
        assert_eq!(
            k(m(&i, "w", Direction::H2C, 0, CardAddr(0x10), 0x1000, 16)),
            ErrorKind::Misaligned
        );
        // Same offset within the alignment on both sides is what the engine needs.
        assert!(m(&i, "w", Direction::H2C, 0, CardAddr(0x10), 0x1010, 16).is_ok());
        // Exactly up to the end is fine.
        assert!(m(
            &i,
            "w",
            Direction::H2C,
            0,
            CardAddr((1 << 20) - 16),
            0x30,
            16
        )
        .is_ok());
    }

    #[test]
    fn a_range_past_card_memory_names_the_address_the_size_and_where_it_comes_from() {
        let i = info();
        let e = mm(
            &i,
            "memory-mapped H2C write",
            Direction::H2C,
            0,
            CardAddr((1 << 20) - 8),
            0,
            16,
            "as [hw] memory_size sets it",
        )
        .expect_err("past the end");
        let msg = e.to_string();
        for part in ["16 bytes", "0xffff8", "0x100000", "[hw] memory_size"] {
            assert!(msg.contains(part), "{part}: {msg}");
        }
    }

    #[test]
    fn stream_register_and_event_checks() {
        let i = info();
        let k = |r: Result<()>| r.expect_err("must fail").kind();
        assert!(stream(&i, "recv", Direction::C2H, 1, 0x2000, 64).is_ok());
        // Each stream call refused: what, direction, channel, buffer address, length, kind.
        for (what, dir, ch, addr, len, kind) in [
            (
                "recv",
                Direction::C2H,
                0,
                0x2000,
                64,
                ErrorKind::WrongChannelKind,
            ),
            (
                "send",
                Direction::H2C,
                3,
                0x2000,
                64,
                ErrorKind::NoSuchChannel,
            ),
            ("recv", Direction::C2H, 1, 0x2001, 64, ErrorKind::Misaligned),
            (
                "recv",
                Direction::C2H,
                1,
                0x2000,
                0,
                ErrorKind::InvalidInput,
            ),
        ] {
            let r = stream(&i, what, dir, ch, addr, len);
            assert_eq!(
                k(r),
                kind,
                "{what} on channel {ch} at {addr:#x}, {len} bytes"
            );
        }
        assert!(reg(&i, 0xffc).is_ok());
        assert_eq!(k(reg(&i, 2)), ErrorKind::RegisterAccess);
        assert_eq!(k(reg(&i, 0x1000)), ErrorKind::OutOfRange);
        assert_eq!(k(reg(&i, u64::MAX - 3)), ErrorKind::OutOfRange);
        assert!(event(&i, 1).is_ok());
        assert_eq!(k(event(&i, 2)), ErrorKind::NoSuchChannel);
    }
}
