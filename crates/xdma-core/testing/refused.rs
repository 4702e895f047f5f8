//! What the command-line tests of `xdma-bench` and `xdma-record` share: the check that an
//! option's value was refused by the option's own parser. Both tools' test modules include
//! this one file (`#[path]`), so the check is written once; it is not part of `xdma-core`'s
//! build, which has neither clap nor proptest.

use proptest::test_runner::TestCaseError;

use xdma::cli::ArgError;

/// Passes when clap refused `opt value` (`parsed`) as a value that failed validation, with
/// the option's typed [`ArgError`] behind clap's error; fails the property otherwise,
/// naming the option and the value.
pub fn refused<T>(
    parsed: Result<T, clap::Error>,
    opt: &str,
    value: &str,
) -> Result<(), TestCaseError> {
    match parsed {
        Ok(_) => Err(TestCaseError::fail(format!("{opt} {value} was taken"))),
        Err(e) => {
            proptest::prop_assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ValueValidation,
                "{} {}: {}",
                opt,
                value,
                e
            );
            let typed = std::error::Error::source(&e)
                .is_some_and(|s| s.downcast_ref::<ArgError>().is_some());
            proptest::prop_assert!(typed, "{} {}: no typed error behind {}", opt, value, e);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::refused;

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
                .value_parser(xdma::cli::size_in(1, 10)),
        );
        let parsed = cmd.try_get_matches_from(["tool", "--size", "11"]);
        assert!(refused(parsed, "--size", "11").is_ok());
    }
}
