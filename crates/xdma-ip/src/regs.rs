//! The register write convention the IP's blocks share: a register with write-1-to-set and
//! write-1-to-clear aliases in the two dwords after it (PG195's `W1S`/`W1C` registers).

/// Writes `v` to the register `r` whose plain offset is `base`, as an access at offset `at`
/// does: `base` replaces it, `base + 4` sets the bits of `v`, `base + 8` clears them; any other
/// offset leaves it as it is.
pub(crate) fn write_set_clear(r: &mut u32, at: u64, base: u64, v: u32) {
    match at.wrapping_sub(base) {
        0 => *r = v,
        4 => *r |= v,
        8 => *r &= !v,
        _ => {}
    }
}
