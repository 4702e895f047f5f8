//! The numbers the tools read from their command lines, one parser for each kind, shared by
//! `xdma-bench` and `xdma-record` so that a size or a duration reads the same in both.
//!
//! - Byte sizes ([`parse_size`], [`size_in`]): a whole number in decimal or in hex (`0x`),
//!   optionally followed by `K`, `M` or `G` (x1024, also written `KiB`, `MiB`, `GiB`).
//! - Counts ([`count_in`]): a whole decimal number.
//! - Positive amounts such as seconds ([`positive_in`]): a decimal number, fractions allowed.
//!
//! Each refuses what it cannot honour with an [`ArgError`] that says what was wrong and what
//! to give instead: text that is not a number, a negative number, a value that is not finite
//! (`nan`, `inf`, or one that overflows), and a value outside the option's range. The range
//! parsers return closures that clap takes as value parsers
//! (`#[arg(value_parser = xdma::cli::size_in(4096, 1 << 30))]`).
//!
//! [`refused`] is the check the tools' command-line tests share: that a value was refused by
//! the option's own parser, with its [`ArgError`] behind the command-line parser's error.

/// Why a number on the command line was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgError {
    /// Nothing was given.
    #[error("an empty value: give {expected}")]
    Empty {
        /// What the option takes.
        expected: String,
    },
    /// The text is not a number of the kind the option takes.
    #[error("`{text}` is not {expected}")]
    NotANumber {
        /// The text as given.
        text: String,
        /// What the option takes.
        expected: String,
    },
    /// A negative number where only positive ones mean anything.
    #[error("`{text}` is negative: give {expected}")]
    Negative {
        /// The text as given.
        text: String,
        /// What the option takes.
        expected: String,
    },
    /// Not a finite number (`nan`, `inf`, or a number too large for its type).
    #[error("`{text}` is not a finite number: give {expected}")]
    NotFinite {
        /// The text as given.
        text: String,
        /// What the option takes.
        expected: String,
    },
    /// A number outside the option's range.
    #[error("`{text}` is out of range: give {expected}")]
    OutOfRange {
        /// The text as given.
        text: String,
        /// What the option takes.
        expected: String,
    },
}

const SIZE_FORM: &str =
    "a byte count: a whole number, in decimal or hex (0x...), optionally with K, M or G (x1024)";

/// A byte count for people: `4K`, `1M`, `2G` when it is a whole multiple, else the number.
pub fn format_size(n: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "K")] {
        if n != 0 && n.trailing_zeros() >= shift {
            return format!("{}{unit}", n >> shift);
        }
    }
    n.to_string()
}

/// Reads a byte count: decimal or hex (`0x1000`), optionally with a binary suffix `K`, `M` or
/// `G` (also `KiB`, `MiB`, `GiB`; either case). Zero is a byte count; ranges are the callers'
/// ([`size_in`]).
pub fn parse_size(text: &str) -> Result<u64, ArgError> {
    let t = text.trim();
    let not = || ArgError::NotANumber {
        text: text.into(),
        expected: SIZE_FORM.into(),
    };
    if t.is_empty() {
        return Err(ArgError::Empty {
            expected: SIZE_FORM.into(),
        });
    }
    if t.starts_with('-') {
        return Err(ArgError::Negative {
            text: text.into(),
            expected: SIZE_FORM.into(),
        });
    }
    let lower = t.to_ascii_lowercase();
    let (digits, shift) = if let Some(d) = lower.strip_suffix("kib").or(lower.strip_suffix('k')) {
        (d, 10)
    } else if let Some(d) = lower.strip_suffix("mib").or(lower.strip_suffix('m')) {
        (d, 20)
    } else if let Some(d) = lower.strip_suffix("gib").or(lower.strip_suffix('g')) {
        (d, 30)
    } else {
        (lower.as_str(), 0)
    };
    let digits = digits.trim_end();
    let (digits, radix) = match digits.strip_prefix("0x") {
        Some(h) => (h, 16),
        None => (digits, 10),
    };
    // `from_str_radix` takes a sign; the digits alone are the number here.
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(not());
    }
    let n = u64::from_str_radix(digits, radix).map_err(|_| ArgError::OutOfRange {
        text: text.into(),
        expected: format!("a byte count up to {} (2^64 - 1)", u64::MAX),
    })?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| ArgError::OutOfRange {
            text: text.into(),
            expected: format!("a byte count up to {} (2^64 - 1)", u64::MAX),
        })
}

/// A value parser for a byte count from `min` to `max` bytes (both included).
pub fn size_in(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<u64, ArgError> + Clone + Send + Sync + 'static {
    move |text| {
        let n = parse_size(text)?;
        if (min..=max).contains(&n) {
            Ok(n)
        } else {
            Err(ArgError::OutOfRange {
                text: text.into(),
                expected: format!(
                    "{} to {} bytes (K, M, G and 0x... are read)",
                    format_size(min),
                    format_size(max)
                ),
            })
        }
    }
}

/// A value parser for a whole number from `min` to `max` (both included), as the type `T` the
/// option holds.
pub fn count_in<T>(
    min: u64,
    max: u64,
) -> impl Fn(&str) -> Result<T, ArgError> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64>,
{
    move |text| {
        let expected = || format!("a whole number from {min} to {max}");
        let t = text.trim();
        if t.is_empty() {
            return Err(ArgError::Empty {
                expected: expected(),
            });
        }
        if t.starts_with('-') {
            return Err(ArgError::Negative {
                text: text.into(),
                expected: expected(),
            });
        }
        if !t.chars().all(|c| c.is_ascii_digit()) {
            // Say `inf` and `nan` for what they are; `1e3` or `2.5` is not a whole number.
            let word = t.to_ascii_lowercase();
            if matches!(word.trim_start_matches('+'), "inf" | "infinity" | "nan") {
                return Err(ArgError::NotFinite {
                    text: text.into(),
                    expected: expected(),
                });
            }
            return Err(ArgError::NotANumber {
                text: text.into(),
                expected: expected(),
            });
        }
        t.parse::<u64>()
            .ok()
            .filter(|n| (min..=max).contains(n))
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| ArgError::OutOfRange {
                text: text.into(),
                expected: expected(),
            })
    }
}

/// A value parser for a positive number up to `max` (above zero, `max` included; fractions
/// allowed), such as a duration in seconds.
pub fn positive_in(
    max: f64,
) -> impl Fn(&str) -> Result<f64, ArgError> + Clone + Send + Sync + 'static {
    move |text| {
        let expected =
            || format!("a number above 0 and up to {max} (decimals are fine, e.g. 0.002)");
        let t = text.trim();
        if t.is_empty() {
            return Err(ArgError::Empty {
                expected: expected(),
            });
        }
        let v: f64 = t.parse().map_err(|_| ArgError::NotANumber {
            text: text.into(),
            expected: expected(),
        })?;
        if !v.is_finite() {
            return Err(ArgError::NotFinite {
                text: text.into(),
                expected: expected(),
            });
        }
        if v < 0.0 || (v == 0.0 && t.starts_with('-')) {
            return Err(ArgError::Negative {
                text: text.into(),
                expected: expected(),
            });
        }
        if v > 0.0 && v <= max {
            Ok(v)
        } else {
            Err(ArgError::OutOfRange {
                text: text.into(),
                expected: expected(),
            })
        }
    }
}

/// A command line's answer to `opt value` that was not a refusal by the option's own parser.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotRefused {
    /// The value was taken.
    #[error("{opt} {value} was taken: its parser must refuse it with an ArgError")]
    Taken {
        /// The option.
        opt: String,
        /// The value given to it.
        value: String,
    },
    /// The value was refused, but not with an [`ArgError`] directly behind the error: some
    /// other check refused it, or the option has no parser of this module.
    #[error(
        "{opt} {value}: no ArgError behind `{error}`; parse the option with a parser of xdma::cli"
    )]
    Untyped {
        /// The option.
        opt: String,
        /// The value given to it.
        value: String,
        /// The command-line parser's error, as it reads.
        error: String,
    },
}

/// Checks that the command line refused `opt value` (`parsed`) with the option's own parser:
/// an error whose source is the parser's [`ArgError`]. A clap error has a source only when a
/// value parser failed (clap's `ValueValidation`), so this needs no knowledge of clap. The
/// tools' tests call it with what `try_parse_from` returned.
pub fn refused<T, E>(parsed: Result<T, E>, opt: &str, value: &str) -> Result<(), NotRefused>
where
    E: std::error::Error + 'static,
{
    match parsed {
        Ok(_) => Err(NotRefused::Taken {
            opt: opt.to_string(),
            value: value.to_string(),
        }),
        Err(e) if e.source().is_some_and(|s| s.is::<ArgError>()) => Ok(()),
        Err(e) => Err(NotRefused::Untyped {
            opt: opt.to_string(),
            value: value.to_string(),
            error: e.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A command-line parser's error with the value parser's error behind it, or none, as
    /// clap builds one for a value parser's refusal and for its own checks.
    #[derive(Debug)]
    struct ParseError(Option<Box<dyn std::error::Error + 'static>>);

    impl std::fmt::Display for ParseError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("invalid value")
        }
    }

    impl std::error::Error for ParseError {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.0.as_deref()
        }
    }

    fn behind(e: impl std::error::Error + 'static) -> ParseError {
        ParseError(Some(Box::new(e)))
    }

    #[test]
    fn only_a_refusal_by_the_options_own_parser_passes() {
        let taken: Result<u64, ParseError> = Ok(1);
        assert!(matches!(
            refused(taken, "--size", "1"),
            Err(NotRefused::Taken { .. })
        ));
        let untyped: Result<u64, _> = Err(ParseError(None));
        assert!(matches!(
            refused(untyped, "--size", "x"),
            Err(NotRefused::Untyped { .. })
        ));
        let other: Result<u64, _> = Err(behind(std::fmt::Error));
        assert!(matches!(
            refused(other, "--size", "x"),
            Err(NotRefused::Untyped { .. })
        ));
        let parsed = size_in(1, 10)("11").map_err(behind);
        assert_eq!(refused(parsed, "--size", "11"), Ok(()));
    }

    #[test]
    fn sizes_read_in_every_form() {
        for (text, want) in [
            ("4096", 4096),
            ("4K", 4096),
            ("4k", 4096),
            ("4KiB", 4096),
            ("1M", 1 << 20),
            ("2 MiB", 2 << 20),
            ("1G", 1 << 30),
            ("0x1000", 4096),
            ("0X10", 16),
            ("0x10M", 16 << 20),
            (" 0 ", 0),
        ] {
            assert_eq!(parse_size(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn bad_sizes_say_why() {
        assert!(matches!(parse_size(""), Err(ArgError::Empty { .. })));
        assert!(matches!(parse_size("-4K"), Err(ArgError::Negative { .. })));
        assert!(matches!(
            parse_size("1.5M"),
            Err(ArgError::NotANumber { .. })
        ));
        assert!(matches!(parse_size("+4"), Err(ArgError::NotANumber { .. })));
        assert!(matches!(parse_size("0x"), Err(ArgError::NotANumber { .. })));
        assert!(matches!(
            parse_size("inf"),
            Err(ArgError::NotANumber { .. })
        ));
        assert!(matches!(
            parse_size("18446744073709551616"),
            Err(ArgError::OutOfRange { .. })
        ));
        assert!(matches!(
            parse_size("17179869184G"),
            Err(ArgError::OutOfRange { .. })
        ));
        let e = size_in(4096, 1 << 30)("2G").expect_err("above the range");
        assert_eq!(
            e.to_string(),
            "`2G` is out of range: give 4K to 1G bytes (K, M, G and 0x... are read)"
        );
    }

    #[test]
    fn counts_and_amounts_say_why() {
        let c = count_in::<usize>(1, 64);
        assert_eq!(c("64"), Ok(64));
        assert!(matches!(c("0"), Err(ArgError::OutOfRange { .. })));
        assert!(matches!(c("-1"), Err(ArgError::Negative { .. })));
        assert!(matches!(c("inf"), Err(ArgError::NotFinite { .. })));
        assert!(matches!(c("1e3"), Err(ArgError::NotANumber { .. })));
        // Inside the range but not inside the type.
        assert!(matches!(
            count_in::<u8>(0, 1000)("300"),
            Err(ArgError::OutOfRange { .. })
        ));
        let p = positive_in(3600.0);
        assert_eq!(p("0.002"), Ok(0.002));
        assert!(matches!(p("1e300"), Err(ArgError::OutOfRange { .. })));
        assert!(matches!(p("1e309"), Err(ArgError::NotFinite { .. })));
        assert!(matches!(p("NaN"), Err(ArgError::NotFinite { .. })));
        assert!(matches!(p("-0"), Err(ArgError::Negative { .. })));
        assert!(matches!(p("-5"), Err(ArgError::Negative { .. })));
        assert!(matches!(p("0"), Err(ArgError::OutOfRange { .. })));
        assert!(matches!(p("ten"), Err(ArgError::NotANumber { .. })));
    }

    fn suffix() -> impl Strategy<Value = (&'static str, u32)> {
        prop_oneof![
            Just(("", 0)),
            Just(("K", 10)),
            Just(("k", 10)),
            Just(("KiB", 10)),
            Just(("M", 20)),
            Just(("MiB", 20)),
            Just(("G", 30)),
            Just(("gib", 30)),
        ]
    }

    proptest! {
        /// Any number written with any suffix, in decimal or hex, reads back as its value, or
        /// as out of range when the suffix takes it past 2^64.
        #[test]
        fn a_size_reads_back_as_its_value(n in any::<u64>(), (s, shift) in suffix(), hex in any::<bool>()) {
            let text = if hex { format!("{n:#x}{s}") } else { format!("{n}{s}") };
            match n.checked_mul(1 << shift) {
                Some(v) => prop_assert_eq!(parse_size(&text), Ok(v)),
                None => prop_assert!(matches!(parse_size(&text), Err(ArgError::OutOfRange { .. })), "{}", text),
            }
        }

        /// Arbitrary text never panics, and whatever reads as a size is one that prints back
        /// to the same value.
        #[test]
        fn any_text_is_a_size_or_a_typed_error(text in "\\PC{0,24}") {
            if let Ok(n) = parse_size(&text) {
                prop_assert_eq!(parse_size(&n.to_string()), Ok(n));
            }
        }

        /// A range parser takes exactly its range.
        #[test]
        fn a_range_takes_exactly_its_range(min in 0u64..1 << 40, span in 0u64..1 << 40, n in any::<u64>()) {
            let max = min + span;
            let r = size_in(min, max)(&n.to_string());
            prop_assert_eq!(r.is_ok(), (min..=max).contains(&n));
            let c = count_in::<u64>(min, max)(&n.to_string());
            prop_assert_eq!(c.is_ok(), (min..=max).contains(&n));
        }

        /// Negative, non-finite and out-of-range amounts are refused, each with its kind.
        #[test]
        fn bad_amounts_are_refused_with_their_kind(v in any::<f64>(), max in 1e-3f64..1e7) {
            let r = positive_in(max)(&v.to_string());
            if v.is_nan() || v.is_infinite() {
                prop_assert!(matches!(r, Err(ArgError::NotFinite { .. })), "{v}: {r:?}");
            } else if v < 0.0 || (v == 0.0 && v.is_sign_negative()) {
                prop_assert!(matches!(r, Err(ArgError::Negative { .. })), "{v}: {r:?}");
            } else if v == 0.0 || v > max {
                prop_assert!(matches!(r, Err(ArgError::OutOfRange { .. })), "{v}: {r:?}");
            } else {
                prop_assert_eq!(r, Ok(v));
            }
        }

        /// Whole numbers given as negative numbers, fractions or infinities are refused.
        #[test]
        fn counts_refuse_negatives_and_fractions(n in 1u64.., frac in 1u32..1000) {
            let c = count_in::<u64>(0, u64::MAX);
            prop_assert!(
                matches!(c(&format!("-{n}")), Err(ArgError::Negative { .. })),
                "-{}",
                n
            );
            prop_assert!(
                matches!(c(&format!("{n}.{frac}")), Err(ArgError::NotANumber { .. })),
                "{}.{}",
                n,
                frac
            );
        }
    }
}
