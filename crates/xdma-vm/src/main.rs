//! `xdma-vm run`: a QEMU guest whose PCIe function is the simulated card.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use xdma_vm::vm::{self, RunOptions};
use xdma_vm::Variant;

#[derive(Debug, Parser)]
#[command(
    version,
    about = "The simulated card as the PCIe function of a QEMU guest"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Boot a guest with the card; the guest console goes to stdout, the device's log to
    /// stderr, and the exit code is QEMU's (124 on timeout, 128+N on signal N, 3 when the
    /// card's simulation failed).
    Run(RunArgs),
}

// The options of `run`, a struct of their own so that they reach `RunOptions` by name.
#[derive(Debug, Args)]
struct RunArgs {
    /// The guest kernel (bzImage).
    #[arg(long)]
    kernel: PathBuf,
    /// The guest initramfs.
    #[arg(long)]
    initrd: PathBuf,
    /// Which card.
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// Extra kernel arguments, after the console and quiet-boot ones.
    #[arg(long, allow_hyphen_values = true)]
    append: Option<String>,
    /// Guest RAM, in QEMU's syntax.
    #[arg(long, default_value = "512M")]
    memory: String,
    /// The QEMU binary.
    #[arg(long, default_value = "qemu-system-x86_64")]
    qemu: PathBuf,
    /// Stop the guest after this many seconds (0: never).
    #[arg(long, default_value_t = 0)]
    timeout: u64,
    /// Turn the protocol monitors on the card's buses off (faster).
    #[arg(long)]
    no_monitors: bool,
    /// User interrupt lines of the IP (the card drives one).
    #[arg(long, default_value_t = 1)]
    user_irqs: usize,
    /// The engines' address alignment in bytes, a power of two up to 128 (1: the IP
    /// allows unaligned transfers, as the reference board's does).
    #[arg(long, default_value_t = 1)]
    alignment: u32,
    /// Card cycles run between two looks at QEMU's socket.
    #[arg(long, default_value_t = 128)]
    slice: u64,
}

/// A variant by its name (`mm`, `stream` or `combined`).
fn parse_variant(s: &str) -> Result<Variant, String> {
    Variant::from_name(s).ok_or_else(|| format!("`{s}`: the variants are mm, stream and combined"))
}

fn main() -> ExitCode {
    xdma_vm::log::init(xdma_vm::log::level_from_env(tracing::Level::INFO));
    let Cli {
        command: Cmd::Run(a),
    } = Cli::parse();
    let opts = RunOptions {
        kernel: a.kernel,
        initrd: a.initrd,
        variant: a.variant,
        append: a.append,
        memory: a.memory,
        qemu: a.qemu,
        timeout: (a.timeout > 0).then(|| Duration::from_secs(a.timeout)),
        monitors: !a.no_monitors,
        user_irqs: a.user_irqs,
        alignment: a.alignment,
        slice: a.slice.max(1),
    };
    match vm::run(&opts) {
        Ok(r) => {
            if let Some(report) = &r.report {
                tracing::info!("{report}");
            }
            let why = match r.stopped {
                Some(vm::Stop::Timeout) => " (stopped: timeout)".to_string(),
                Some(vm::Stop::Signal(s)) => format!(" (stopped: {s})"),
                Some(vm::Stop::DeviceFailed) => " (stopped: the card's simulation failed)".into(),
                None => String::new(),
            };
            tracing::info!(
                "QEMU exited with {} after {:.1} s{why}",
                r.qemu,
                r.wall.as_secs_f64()
            );
            ExitCode::from(u8::try_from(r.exit_code()).unwrap_or(1))
        }
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::from(2)
        }
    }
}
