//! The one CSV writer: every CSV file `xdma-bench` writes is a list of serde records, one
//! line each under a header of the record's field names. A leaf module, so that the sweep, the
//! what-if table and the report all use it without importing each other.

use serde::Serialize;
use xdma::{Error, Result};

/// `rows` as CSV text: the header line (the record's field names, in order), then a line per
/// row, each ending in `\n`; a field holding a comma, a quote or a line break is quoted. With
/// no rows the text is the header line alone, taken from a default record.
pub fn to_csv<R: Serialize + Default>(rows: &[R]) -> Result<String> {
    let fail = |e: csv::Error| Error::Backend(format!("cannot write the rows as CSV: {e}"));
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    if rows.is_empty() {
        w.serialize(R::default()).map_err(fail)?;
    }
    for r in rows {
        w.serialize(r).map_err(fail)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Backend(format!("cannot write the rows as CSV: {e}")))?;
    let mut text = String::from_utf8(bytes)
        .map_err(|e| Error::Backend(format!("the CSV text is not UTF-8: {e}")))?;
    if rows.is_empty() {
        // Only the header line of the default record's two lines is wanted.
        let end = text.find('\n').map_or(text.len(), |i| i + 1);
        text.truncate(end);
    }
    Ok(text)
}

/// A figure with `decimals` digits after the point, as the CSV files give it.
pub fn fixed(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

/// An optional figure with `decimals` digits after the point; empty when there is none.
pub fn fixed_or_empty(v: Option<f64>, decimals: usize) -> String {
    v.map_or(String::new(), |v| fixed(v, decimals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Default)]
    struct Line {
        name: String,
        bytes: u64,
        mb_s: String,
    }

    #[test]
    fn rows_are_written_under_their_header_and_quoted_only_where_needed() {
        let rows = [
            Line {
                name: "stream 1ch".into(),
                bytes: 4096,
                mb_s: fixed(215.0, 3),
            },
            Line {
                name: "a \"b\", c".into(),
                bytes: 1,
                mb_s: fixed_or_empty(None, 3),
            },
        ];
        assert_eq!(
            to_csv(&rows).expect("csv"),
            "name,bytes,mb_s\nstream 1ch,4096,215.000\n\"a \"\"b\"\", c\",1,\n"
        );
        assert_eq!(to_csv::<Line>(&[]).expect("csv"), "name,bytes,mb_s\n");
    }
}
