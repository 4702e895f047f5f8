//! Memory-mapped integrity: sizes from 1 B to 8 MiB with odd ones among them, every card
//! address alignment modulo 64, both ends of card memory, overlapping writes, read-after-write
//! across the width converters (128-bit AXI to the 512-bit DDR side) and the clock crossing
//! (axi_aclk to ddr_clk), and H2C and C2H at once on different and on overlapping ranges.
//! What a read must return is what the test wrote, kept in plain host memory.

use card_tests::fixture::ok;
use card_tests::mm::{self, first_difference};
use card_tests::{pattern, Fixture};
use rstest::rstest;
use xdma::{AsyncCard, Card, CardAddr, DmaBuffer};

fn round_trip(b: &Fixture, h2c: usize, c2h: usize, addr: u64, len: usize, seed: u32) {
    let mut data = vec![0u8; len];
    pattern(seed, &mut data);
    ok("write", mm::write(&b.card, h2c, addr, &data));
    let back = ok("read", mm::read(&b.card, c2h, addr, len));
    if let Some(d) = first_difference(&back, &data) {
        panic!("{len} bytes at {addr:#x}: {d}");
    }
}

#[rstest]
#[case::one_byte(1)]
#[case::three(3)]
#[case::beat_less_one(15)]
#[case::beat(16)]
#[case::line_plus_one(65)]
#[case::odd(1000)]
#[case::page_less_one(4095)]
#[case::page_plus_one(4097)]
#[case::odd_large(65_537)]
#[case::one_mib_odd(1_048_573)]
#[case::eight_mib(8 << 20)]
fn every_size_comes_back(#[case] len: usize) {
    let Some((b, h2c, c2h)) = Fixture::open_mm() else {
        return;
    };
    // An address that is no multiple of anything, and one on a 4 KiB boundary.
    round_trip(&b, h2c, c2h, 0x10_0000 + 7 * 64 + 13, len, len as u32);
    round_trip(&b, h2c, c2h, 0x200_0000, len, !(len as u32));
}

#[test]
fn every_alignment_modulo_64() {
    let Some((b, h2c, c2h)) = Fixture::open_mm() else {
        return;
    };
    // Every start offset within a 64-byte DDR line, with lengths that end at every offset too.
    for off in 0..64u64 {
        let len = 1 + (off as usize * 37) % 200;
        round_trip(&b, h2c, c2h, 0x30_0000 + off + 4096 * off, len, off as u32);
        round_trip(
            &b,
            h2c,
            c2h,
            0x30_0000 + off + 4096 * off + 2048,
            130,
            off as u32 + 99,
        );
    }
}

#[test]
fn both_ends_of_card_memory() {
    let Some((b, h2c, c2h)) = Fixture::open_mm() else {
        return;
    };
    let size = b.card.info().memory_size;
    for len in [1usize, 64, 4096, 100_000] {
        round_trip(&b, h2c, c2h, 0, len, 1);
        round_trip(&b, h2c, c2h, size - len as u64, len, 2);
    }
    // The last byte alone, and a transfer across the middle of memory.
    round_trip(&b, h2c, c2h, size - 1, 1, 3);
    round_trip(&b, h2c, c2h, size / 2 - 5000, 10_000, 4);
}

#[test]
fn overlapping_writes_leave_the_last_one_on_top() {
    let Some((b, h2c, c2h)) = Fixture::open_mm() else {
        return;
    };
    let base = 0x50_0000u64;
    let mut expect = vec![0u8; 8192];
    pattern(10, &mut expect);
    ok("write", mm::write(&b.card, h2c, base, &expect));
    // Writes that start and end inside each other and inside one beat or one line.
    for (i, (off, len)) in [
        (100usize, 3000usize),
        (50, 70),
        (3050, 2000),
        (7, 1),
        (8000, 192),
        (0, 17),
    ]
    .into_iter()
    .enumerate()
    {
        let mut d = vec![0u8; len];
        pattern(20 + i as u32, &mut d);
        ok("write", mm::write(&b.card, h2c, base + off as u64, &d));
        expect[off..off + len].copy_from_slice(&d);
    }
    let back = ok("read", mm::read(&b.card, c2h, base, expect.len()));
    if let Some(d) = first_difference(&back, &expect) {
        panic!("after overlapping writes: {d}");
    }
}

#[test]
fn read_after_write_across_the_width_and_clock_crossings() {
    let Some((b, h2c, c2h)) = Fixture::open_mm() else {
        return;
    };
    // Each write is read at once, partly and in whole: a read that overtook the write's last
    // beats in the 512-bit converter or the DDR clock crossing would see old bytes. The old
    // bytes are set first so that they differ.
    let base = 0x70_0000u64;
    let old = vec![0xeeu8; 1 << 16];
    ok("write", mm::write(&b.card, h2c, base, &old));
    let mut at = 0u64;
    for i in 0..40u32 {
        let len = [1usize, 15, 16, 17, 48, 63, 64, 65, 100, 129][i as usize % 10];
        let mut d = vec![0u8; len];
        pattern(i, &mut d);
        ok("write", mm::write(&b.card, h2c, base + at, &d));
        let back = ok("read", mm::read(&b.card, c2h, base + at, len));
        if let Some(e) = first_difference(&back, &d) {
            panic!(
                "write {i}: {len} bytes at {:#x}, read at once: {e}",
                base + at
            );
        }
        // A read of the last byte only, then of the write and its neighbours.
        let last = ok(
            "read",
            mm::read(&b.card, c2h, base + at + len as u64 - 1, 1),
        );
        assert_eq!(last[0], d[len - 1], "write {i}: its last byte");
        at += len as u64 + (i as u64 % 3) * 16;
    }
}

/// H2C and C2H at once: both calls are submitted together (the async API) and run at the same
/// time. On different ranges each sees only its own; on one range the read sees, byte by byte,
/// the old or the new data.
#[rstest]
#[case::different_ranges(false)]
#[case::overlapping_ranges(true)]
fn h2c_and_c2h_at_once(#[case] overlap: bool) {
    let Some((b, h2c, c2h)) = Fixture::open_mm() else {
        return;
    };
    let len = 256 << 10;
    let (w_addr, r_addr) = if overlap {
        (0x90_0000u64, 0x90_0000u64 + (64 << 10))
    } else {
        (0x90_0000u64, 0x90_0000u64 + 2 * len as u64)
    };
    let base = w_addr.min(r_addr);
    let mut old = vec![0u8; (w_addr.max(r_addr) - base) as usize + len];
    pattern(5, &mut old);
    ok("write", mm::write(&b.card, h2c, base, &old));
    let mut new = ok("buffer", DmaBuffer::new(len));
    pattern(6, &mut new);
    let new_copy = new.to_vec();
    let card = b.card.clone();
    let (w, (r, got)) = b.block_on(async move {
        let w = card.write_mm_async(h2c, CardAddr(w_addr), new);
        let buf = DmaBuffer::new(len).expect("buffer");
        let r = card.read_mm_async(c2h, CardAddr(r_addr), buf);
        let ((w, _), r) = tokio::join!(w, r);
        (w, r)
    });
    let w = ok("write", w);
    let r = ok("read", r);
    assert!(
        r.start_ps < w.end_ps && w.start_ps < r.end_ps,
        "the two transfers did not overlap in time: write {}..{} ps, read {}..{} ps",
        w.start_ps,
        w.end_ps,
        r.start_ps,
        r.end_ps
    );
    for (i, &x) in got.iter().enumerate() {
        let a = r_addr + i as u64;
        let before = old[(a - base) as usize];
        let written = (w_addr..w_addr + len as u64)
            .contains(&a)
            .then(|| new_copy[(a - w_addr) as usize]);
        let fine = x == before || written == Some(x);
        assert!(
            fine,
            "card address {a:#x}: read {x:#04x}, old {before:#04x}, new {written:?}"
        );
    }
    // Afterwards the write is all there.
    let back = ok("read", mm::read(&b.card, c2h, w_addr, len));
    if let Some(d) = first_difference(&back, &new_copy) {
        panic!("after the concurrent read, the write: {d}");
    }
}
