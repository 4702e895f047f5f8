//! How a byte count reads in the tables and plots: a leaf module, so that the report and the
//! what-if table, which the report prints, both use it without importing each other.

/// A byte count as a plot or a table labels it: in MiB or KiB where it is a whole number of
/// them, else in bytes.
pub fn bytes_label(b: f64) -> String {
    let b = b.round() as u64;
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b}")
    }
}
