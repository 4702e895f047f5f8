//! One generated file: a leaf that the register table's and the rule table's code generators
//! both build, so that neither imports the other.

use std::path::PathBuf;

/// One generated file: where it goes and what it must hold.
pub struct Output {
    pub path: PathBuf,
    pub text: String,
}
