//! `xdma-fuse mount <DIR> [--config FILE]`: serves one simulated card as the XDMA driver's
//! nodes under `<DIR>`, in the foreground, until Ctrl-C or SIGTERM.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "xdma-fuse",
    about = "The simulated card served as the XDMA driver's device nodes"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Mount DIR and serve the nodes until Ctrl-C or SIGTERM, then unmount.
    Mount {
        /// An existing, empty folder.
        dir: PathBuf,
        /// A TOML file with a [server] section (c2h_timeout, driver_version, ...) and a [sim]
        /// section (the simulated card).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::Mount { dir, config } = cli.command;
    let cfg = match config {
        Some(path) => match xdma_fuse::FuseConfig::from_file(&path) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("xdma-fuse: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => xdma_fuse::FuseConfig::default(),
    };
    match xdma_fuse::serve(&dir, &cfg) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xdma-fuse: {e}");
            ExitCode::FAILURE
        }
    }
}
