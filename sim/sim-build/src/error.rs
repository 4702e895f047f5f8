//! The build's one error type, reported to Cargo whole.

use std::path::{Path, PathBuf};

/// What went wrong while building tops. [`BuildError::emit`] reports it to Cargo.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// No usable Verilator.
    #[error("{0}")]
    NoVerilator(String),
    /// Verilator rejected the sources of a top; `diagnostics` is what it printed.
    #[error(
        "verilator failed on top `{top}` (module `{module}`):\n{diagnostics}\ncommand: {command}"
    )]
    Verilator {
        /// The top's name.
        top: String,
        /// Its module.
        module: String,
        /// Verilator's own messages (`%Error-MODMISSING: ...` and the like), every line.
        diagnostics: String,
        /// The command that was run, to reproduce it by hand.
        command: String,
    },
    /// A line of a tops list that cannot be read.
    #[error("{file}:{line}: {problem}")]
    TopsFile {
        /// The list's file.
        file: String,
        /// Line number, from 1.
        line: usize,
        /// What is wrong and how to write it.
        problem: String,
    },
    /// A top described in a way that cannot be built.
    #[error("top `{top}`: {problem}")]
    BadTop {
        /// The top's name.
        top: String,
        /// What is wrong.
        problem: String,
    },
    /// The C++ compiler failed.
    #[error("compiling {what} failed: {message}")]
    Compile {
        /// What was being compiled.
        what: String,
        /// The compiler's message.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The build script does not run under Cargo, or sim-runtime is not a dependency.
    #[error("{0}")]
    Environment(String),
}

impl BuildError {
    /// Reports the error to Cargo, one `cargo::error=` line per line of the message, so that a
    /// multi-line Verilator diagnostic shows whole in `cargo build` output.
    pub fn emit(&self) {
        for line in cargo_error_lines(&self.to_string()) {
            println!("{line}");
        }
    }
}

/// The `cargo::error=` directives for a message: one per line, since Cargo reads a directive
/// up to the end of its line and would show only the first.
pub fn cargo_error_lines(message: &str) -> Vec<String> {
    message
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| format!("cargo::error={l}"))
        .collect()
}

pub(crate) fn io(path: &Path, e: impl std::fmt::Display) -> BuildError {
    BuildError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_an_error_becomes_its_own_directive() {
        let e = BuildError::Verilator {
            top: "x".into(),
            module: "x".into(),
            diagnostics: "%Error-MODMISSING: x.v:3:5: Cannot find file containing module: 'sub'\n        : ... note\n%Error: Exiting due to 1 error(s)".into(),
            command: "verilator x.v".into(),
        };
        let lines = cargo_error_lines(&e.to_string());
        assert!(lines.iter().all(|l| l.starts_with("cargo::error=")));
        assert!(
            lines.iter().any(|l| l.contains("%Error-MODMISSING")),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.contains("Exiting due to")),
            "{lines:?}"
        );
        assert!(lines.len() >= 4);
    }
}
