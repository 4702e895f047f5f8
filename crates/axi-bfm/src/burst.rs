//! AXI4 burst arithmetic, in one place for every bus model, monitor and test: the address and
//! byte lanes of each beat as the AXI specification defines them, and the splitting of a byte
//! range into legal INCR bursts (never across a 4 KiB boundary, never longer than a given number
//! of beats).

/// FIXED burst type.
pub const FIXED: u8 = 0;
/// INCR burst type.
pub const INCR: u8 = 1;
/// WRAP burst type.
pub const WRAP: u8 = 2;

/// AXI's rule: a burst must not cross a 4 KiB address boundary.
pub const BOUNDARY: u64 = 4096;

/// Bytes from `addr` up to the next 4 KiB boundary (4096 at a boundary).
pub fn to_boundary(addr: u64) -> u64 {
    BOUNDARY - addr % BOUNDARY
}

/// The last byte an INCR burst of `beats` beats of `1 << size` bytes from `addr` touches: its
/// beats count from `addr` aligned down to the beat size (wrapping at the top of the address
/// space).
pub fn incr_last_byte(addr: u64, beats: u64, size: u8) -> u64 {
    let bytes = 1u64 << size.min(7);
    (addr & !(bytes - 1)).wrapping_add((beats * bytes).wrapping_sub(1))
}

/// Whether the bytes from `first` to `last` leave the 4 KiB page of `first` (or wrap around
/// the address space): what no INCR burst may do.
pub fn crosses_4k(first: u64, last: u64) -> bool {
    first / BOUNDARY != last / BOUNDARY || last < first
}

/// One burst exactly as it goes on an address channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Burst {
    /// AxID.
    pub id: u32,
    /// AxADDR: the address of the first byte.
    pub addr: u64,
    /// AxLEN: beats minus one.
    pub len: u8,
    /// AxSIZE: log2 of the bytes per beat.
    pub size: u8,
    /// AxBURST: 0 FIXED, 1 INCR, 2 WRAP (3 is reserved).
    pub burst: u8,
    /// AxLOCK: exclusive access.
    pub lock: bool,
}

impl Burst {
    /// An INCR burst of `beats` beats of `1 << size` bytes at `addr` (1 to 256 beats).
    pub fn incr(id: u32, addr: u64, size: u8, beats: u32) -> Burst {
        Burst {
            id,
            addr,
            len: beats.clamp(1, 256).saturating_sub(1) as u8,
            size,
            burst: INCR,
            lock: false,
        }
    }

    /// Beats on the bus (AxLEN + 1).
    pub fn beats(&self) -> u32 {
        u32::from(self.len) + 1
    }

    /// The address of beat `k`, as the AXI specification defines it.
    pub fn beat_addr(&self, k: u32) -> u64 {
        let bytes = 1u64 << self.size.min(7);
        let aligned = self.addr & !(bytes - 1);
        match self.burst {
            FIXED => self.addr,
            WRAP => {
                let wrap = bytes * (u64::from(self.len) + 1);
                let lower = self.addr & !(wrap - 1);
                if k == 0 {
                    self.addr
                } else {
                    lower + (aligned - lower + u64::from(k) * bytes) % wrap
                }
            }
            _ => {
                if k == 0 {
                    self.addr
                } else {
                    aligned.wrapping_add(u64::from(k) * bytes)
                }
            }
        }
    }

    /// The byte lanes `[lo, hi)` that beat `k` uses on a bus of `bus_bytes` lanes.
    pub fn beat_lanes(&self, k: u32, bus_bytes: usize) -> (usize, usize) {
        let bytes = 1u64 << self.size.min(7);
        let a = self.beat_addr(k);
        let bb = bus_bytes as u64;
        let lo = (a % bb) as usize;
        let hi = (((a & !(bytes - 1)) % bb) + bytes).min(bb) as usize;
        (lo, hi)
    }

    /// The address of byte lane 0 of beat `k` on a bus of `bus_bytes` lanes.
    pub fn beat_line(&self, k: u32, bus_bytes: usize) -> u64 {
        self.beat_addr(k) & !(bus_bytes as u64 - 1)
    }

    /// The address of every byte the lanes of its beats carry, beat by beat in lane order: what
    /// a burst moves with every strobe set, as a reference model sees it.
    pub fn byte_addrs(&self, bus_bytes: usize) -> Vec<u64> {
        (0..self.beats())
            .flat_map(|k| {
                let line = self.beat_line(k, bus_bytes);
                let (lo, hi) = self.beat_lanes(k, bus_bytes);
                (lo..hi).map(move |i| line + i as u64)
            })
            .collect()
    }

    /// Bytes the lanes of all beats carry (what a burst moves with every strobe set).
    pub fn lane_bytes(&self, bus_bytes: usize) -> usize {
        (0..self.beats())
            .map(|k| {
                let (lo, hi) = self.beat_lanes(k, bus_bytes);
                hi.saturating_sub(lo)
            })
            .sum()
    }
}

/// One burst of a split byte range, with the part of the range it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// The burst: INCR, full-width beats, AxADDR the first byte's address.
    pub burst: Burst,
    /// Offset of the burst's first byte in the range.
    pub offset: usize,
    /// Bytes of the range the burst carries.
    pub bytes: usize,
}

/// Splits `[addr, addr + len)` into INCR bursts of full-width beats on a bus of `bus_bytes`
/// lanes, each at most `max_beats` beats long and none crossing a 4 KiB boundary. An unaligned
/// first byte takes room in its burst's first beat, since the beats count from the aligned-down
/// address. With `bus_bytes = 1` this is the rule for PCIe requests: pieces of at most
/// `max_beats` bytes that never cross 4 KiB.
pub fn split(id: u32, addr: u64, len: usize, bus_bytes: usize, max_beats: u32) -> Vec<Piece> {
    let bb = bus_bytes.max(1) as u64;
    let size = bb.trailing_zeros() as u8;
    let max_span = u64::from(max_beats.max(1)) * bb;
    let mut out = Vec::with_capacity(len / max_span as usize + 2);
    let (mut a, mut off) = (addr, 0usize);
    while off < len {
        let lane = a % bb;
        let to_boundary = to_boundary(a);
        let n = ((len - off) as u64).min(to_boundary).min(max_span - lane);
        let beats = (lane + n).div_ceil(bb) as u32;
        out.push(Piece {
            burst: Burst::incr(id, a, size, beats),
            offset: off,
            bytes: n as usize,
        });
        a = a.wrapping_add(n);
        off += n as usize;
    }
    out
}

/// AXI4's longest FIXED burst, in beats.
pub const FIXED_MAX_BEATS: u32 = 16;

/// Splits `len` bytes moved through the one address `addr` (a keyhole, such as a FIFO's
/// window) into FIXED bursts of full-width beats on a bus of `bus_bytes` lanes, each at most
/// [`FIXED_MAX_BEATS`] long. `addr` and `len` are multiples of `bus_bytes` (a FIXED burst
/// repeats its first beat's lanes, so an unaligned one could not carry whole beats): the
/// caller checks, and an unaligned `addr` is taken down to its beat.
pub fn split_fixed(id: u32, addr: u64, len: usize, bus_bytes: usize) -> Vec<Piece> {
    let bb = bus_bytes.max(1);
    let size = bb.trailing_zeros() as u8;
    let at = addr & !(bb as u64 - 1);
    let span = FIXED_MAX_BEATS as usize * bb;
    (0..len)
        .step_by(span)
        .map(|off| {
            let bytes = (len - off).min(span);
            Piece {
                burst: Burst {
                    burst: FIXED,
                    ..Burst::incr(id, at, size, bytes.div_ceil(bb) as u32)
                },
                offset: off,
                bytes,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_kib_arithmetic() {
        assert_eq!(to_boundary(0x1000), 4096);
        assert_eq!(to_boundary(0x1ff0), 16);
        // 16-byte beats count from the aligned-down address.
        assert_eq!(incr_last_byte(0xff8, 1, 4), 0xfff);
        assert_eq!(incr_last_byte(0xff0, 2, 4), 0x100f);
        assert!(!crosses_4k(0xff8, 0xfff));
        assert!(crosses_4k(0xff0, 0x100f));
        // Wrapping past the top of the address space counts as a crossing.
        assert!(crosses_4k(u64::MAX - 7, incr_last_byte(u64::MAX - 7, 2, 3)));
    }

    #[test]
    fn wrap_and_fixed_beat_addresses_follow_the_specification() {
        let wrap = Burst {
            burst: WRAP,
            ..Burst::incr(0, 0x1038, 3, 4)
        };
        let a: Vec<u64> = (0..4).map(|k| wrap.beat_addr(k)).collect();
        assert_eq!(a, vec![0x1038, 0x1020, 0x1028, 0x1030]);
        let fixed = Burst {
            burst: FIXED,
            ..Burst::incr(0, 0x1030, 3, 4)
        };
        assert!((0..4).all(|k| fixed.beat_addr(k) == 0x1030));
    }

    #[test]
    fn a_keyhole_range_is_fixed_bursts_of_sixteen_beats_at_one_address() {
        // 608 bytes on a 16-byte bus: 38 beats, so 16 + 16 + 6.
        let p = split_fixed(3, 0x2000, 608, 16);
        let shape: Vec<(u64, u32, usize, usize)> = p
            .iter()
            .map(|p| (p.burst.addr, p.burst.beats(), p.offset, p.bytes))
            .collect();
        assert_eq!(
            shape,
            vec![
                (0x2000, 16, 0, 256),
                (0x2000, 16, 256, 256),
                (0x2000, 6, 512, 96)
            ]
        );
        assert!(p
            .iter()
            .all(|p| p.burst.burst == FIXED && p.burst.size == 4 && p.burst.id == 3));
        assert!(split_fixed(0, 0, 0, 16).is_empty());
    }

    #[test]
    fn lanes_of_narrow_and_unaligned_beats() {
        // A 2-byte burst starting at byte 3 of a 16-byte bus: the first beat uses lane 3 only,
        // then lanes 4..6 and 6..8.
        let narrow = Burst::incr(0, 0x1003, 1, 3);
        assert_eq!(narrow.beat_lanes(0, 16), (3, 4));
        assert_eq!(narrow.beat_lanes(1, 16), (4, 6));
        assert_eq!(narrow.beat_lanes(2, 16), (6, 8));
        assert_eq!(narrow.beat_line(2, 16), 0x1000);
        assert_eq!(narrow.lane_bytes(16), 5);
        // A full-width burst crossing into the next line.
        let wide = Burst::incr(0, 0x1008, 4, 2);
        assert_eq!(wide.beat_lanes(1, 16), (0, 16));
        assert_eq!(wide.beat_line(1, 16), 0x1010);
    }

    #[test]
    fn split_keeps_4k_and_the_burst_length() {
        // 16-byte bus, 16 beats: 256-byte bursts, cut at the 4 KiB boundary.
        let p = split(3, 0x0ff8, 600, 16, 16);
        let spans: Vec<(u64, usize, u32)> = p
            .iter()
            .map(|x| (x.burst.addr, x.bytes, x.burst.beats()))
            .collect();
        assert_eq!(
            spans,
            vec![
                (0x0ff8, 8, 1),
                (0x1000, 256, 16),
                (0x1100, 256, 16),
                (0x1200, 80, 5)
            ]
        );
        assert!(p.iter().all(|x| x.burst.id == 3 && x.burst.size == 4));
        assert_eq!(p.iter().map(|x| x.bytes).sum::<usize>(), 600);
        // An unaligned start takes room in the first beat: 4 + 252 bytes in 16 beats.
        let q = split(0, 0x2004, 300, 16, 16);
        assert_eq!((q[0].bytes, q[0].burst.beats()), (252, 16));
        // One-byte lanes: the PCIe rule, pieces of at most 512 bytes within 4 KiB.
        let r = split(0, 0x0f00, 1024, 1, 512);
        assert_eq!(
            r.iter().map(|x| x.bytes).collect::<Vec<_>>(),
            vec![256, 512, 256]
        );
        assert!(split(0, 0, 0, 16, 16).is_empty());
    }
}
