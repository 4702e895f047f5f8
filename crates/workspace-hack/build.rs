// A build script is required for cargo to consider build dependencies: the
// `[build-dependencies]` section unifies the copies that build scripts and proc macros use.
fn main() {}
