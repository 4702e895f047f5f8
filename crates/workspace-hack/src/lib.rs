//! workspace-hack: no code, only dependencies. Every member depends on it, so every build of
//! any selection of members (`cargo test -p X` as much as `cargo test --workspace`) compiles
//! each third-party crate with one feature set, the union the workspace needs, and reuses what
//! an earlier build compiled. `cargo hakari generate` writes its manifest from
//! `.config/hakari.toml`; the tidy test `a_package_build_reuses_the_workspace_build` fails when
//! the manifest is out of date.
