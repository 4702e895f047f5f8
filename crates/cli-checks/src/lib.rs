//! The command-line tools' shared test of their numeric options (`xdma-bench` and
//! `xdma-record` take it as a dev-dependency): every option of a tool that takes a value is
//! in the tool's table with its range, and each takes exactly that range and refuses the rest
//! with [`xdma_core::cli`]'s typed error behind clap's.

use proptest::prelude::any;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Passes when clap refused `opt value` (`parsed`) as a value that failed validation, with
/// the option's typed [`ArgError`](xdma_core::cli::ArgError) behind clap's error (checked by
/// [`xdma_core::cli::refused`]); fails the property otherwise, naming the option and the value.
pub fn refused<T>(
    parsed: Result<T, clap::Error>,
    opt: &str,
    value: &str,
) -> Result<(), TestCaseError> {
    if let Err(e) = &parsed {
        proptest::prop_assert_eq!(
            e.kind(),
            clap::error::ErrorKind::ValueValidation,
            "{} {}: {}",
            opt,
            value,
            e
        );
    }
    xdma_core::cli::refused(parsed, opt, value).map_err(|e| TestCaseError::fail(e.to_string()))
}

/// What a numeric option takes.
#[derive(Debug, Clone, Copy)]
pub enum Takes {
    /// Bytes from `min` to `max`.
    Size(u64, u64),
    /// A whole number from `min` to `max`.
    Count(u64, u64),
    /// A number above 0 and up to `max`.
    Positive(f64),
}

/// A numeric option of a tool: the arguments before it (its subcommand first, then any the
/// subcommand needs), its long name and what it takes.
pub type NumericOption = (&'static [&'static str], &'static str, Takes);

/// Every option of `cmd`'s subcommands that takes a value and is not named (by its long
/// name) in `non_numeric`, as its subcommand and `--long`: the options a tool's table of
/// numeric options must list, so that one added without a range check is caught.
pub fn numeric_options(cmd: &clap::Command, non_numeric: &[&str]) -> Vec<(String, String)> {
    let mut numeric = Vec::new();
    for sub in cmd.get_subcommands() {
        for a in sub.get_arguments() {
            let Some(long) = a.get_long() else { continue };
            if a.get_action().takes_values() && !non_numeric.contains(&long) {
                numeric.push((sub.get_name().to_string(), format!("--{long}")));
            }
        }
    }
    numeric
}

/// A tool's whole numeric-option check: every option of `cmd` that takes a value, but those
/// of `non_numeric`, is in `options`, and each of `options` passes [`takes_its_range`] for
/// proptest's random numbers. Panics with the failing option and value otherwise.
pub fn check_numeric_options(cmd: &clap::Command, options: &[NumericOption], non_numeric: &[&str]) {
    for (sub, opt) in numeric_options(cmd, non_numeric) {
        assert!(
            options
                .iter()
                .any(|(before, o, _)| before.first() == Some(&sub.as_str()) && *o == opt),
            "{sub} {opt} is not in the table"
        );
    }
    let parse = |before: &[&str], opt: &str, value: &str| {
        let mut args = vec![cmd.get_name()];
        args.extend_from_slice(before);
        args.extend([opt, value]);
        cmd.clone().try_get_matches_from(args)
    };
    let numbers = (0..options.len(), any::<u64>(), any::<f64>(), 0u64..100_000);
    // Failures are reported with their inputs; no regression file is kept for a check that
    // two crates share.
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&numbers, |(k, n, x, small)| {
        let (before, opt, takes) = options[k];
        takes_its_range(opt, takes, |v| parse(before, opt, v), (n, x, small))
    });
    if let Err(e) = result {
        panic!("a numeric option: {e}");
    }
}

/// Passes when the numeric option `opt` takes exactly what `takes` says and refuses negative
/// numbers, values that are not finite and values out of its range, each with a typed
/// error. `parse` parses the tool's command line with `opt` set to a value; `n`, `x` and
/// `small` are the case's random numbers (any `u64`, any `f64`, a small whole number).
pub fn takes_its_range<T>(
    opt: &str,
    takes: Takes,
    parse: impl Fn(&str) -> Result<T, clap::Error>,
    (n, x, small): (u64, f64, u64),
) -> Result<(), TestCaseError> {
    let refused_value = |value: &str| refused(parse(value), opt, value);
    for bad in ["nan", "NaN", "inf", "-inf", "infinity", "1e309", "", "ten"] {
        refused_value(bad)?;
    }
    refused_value(&format!("-{}", n.max(1)))?;
    match takes {
        Takes::Size(min, max) | Takes::Count(min, max) => {
            for v in [n, small, min, max] {
                let text = v.to_string();
                if (min..=max).contains(&v) {
                    proptest::prop_assert!(parse(&text).is_ok(), "{} {}", opt, text);
                } else {
                    refused_value(&text)?;
                }
            }
            if max < u64::MAX {
                refused_value(&(max + 1).to_string())?;
            }
            refused_value("18446744073709551616")?;
            if min > 0 {
                refused_value(&(min - 1).to_string())?;
            }
            refused_value(&format!("{min}.5"))?;
        }
        Takes::Positive(max) => {
            let text = x.to_string();
            if x.is_finite() && x > 0.0 && x <= max {
                proptest::prop_assert!(parse(&text).is_ok(), "{} {}", opt, text);
            } else {
                refused_value(&text)?;
            }
            for bad in ["0", "-0", "1e300"] {
                refused_value(bad)?;
            }
            refused_value(&(max * 2.0).to_string())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{numeric_options, refused};

    #[test]
    fn only_a_refusal_by_the_options_own_parser_passes() {
        assert!(refused(Ok(()), "--size", "1").is_err(), "a value taken");
        let untyped = clap::Error::raw(clap::error::ErrorKind::ValueValidation, "no\n");
        assert!(
            refused::<()>(Err(untyped), "--size", "x").is_err(),
            "no typed error behind clap's"
        );
        let cmd = clap::Command::new("tool").arg(
            clap::Arg::new("size")
                .long("size")
                .value_parser(xdma_core::cli::size_in(1, 10)),
        );
        let parsed = cmd.try_get_matches_from(["tool", "--size", "11"]);
        assert!(refused(parsed, "--size", "11").is_ok());
    }

    #[test]
    fn numeric_options_are_those_with_values_and_a_long_name_not_listed() {
        let sub = clap::Command::new("go")
            .arg(clap::Arg::new("size").long("size"))
            .arg(clap::Arg::new("out").long("out"))
            .arg(
                clap::Arg::new("quiet")
                    .long("quiet")
                    .action(clap::ArgAction::SetTrue),
            )
            .arg(clap::Arg::new("file"));
        let cmd = clap::Command::new("tool").subcommand(sub);
        assert_eq!(
            numeric_options(&cmd, &["out"]),
            vec![("go".to_string(), "--size".to_string())]
        );
    }
}
