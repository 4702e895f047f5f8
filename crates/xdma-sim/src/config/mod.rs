//! The simulated card's settings: the `[sim]` section of the configuration, every field with
//! a range that opening the card checks.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use xdma_core::{BackendKind, ChannelKind, Config, Error, Result};

pub mod ddr;
pub mod driver;
pub mod ip;
pub mod pauses;
pub mod timing;

use ddr::{DataPath, DdrConfig};
use driver::DriverConfig;
use ip::IpCustomization;
use pauses::RandomPauses;
use timing::TimingConfig;

/// Channels per direction that one XDMA IP can have.
pub use xdma_ip::Variant;
pub use xdma_regmap::MAX_CHANNELS;

/// Settings of the simulated card: the `[sim]` section of the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Which XDMA configuration the card is built for: `mm` (memory-mapped channels to DDR,
    /// the reference table's architecture), `stream` (AXI-Stream channels: LOOP, GEN, ECHO,
    /// CHECK) or `combined` (both side by side, which no single XDMA instance has: a
    /// simulation convenience). A variant sets `top`, `h2c` and `c2h` to its own (see
    /// [`Variant`]); giving them as well is an error unless they agree. Default: none, which
    /// leaves those three as given (by default the combined layout).
    pub variant: Option<Variant>,
    /// The RTL top that is the card, by name. Default `sim_top` (card_core with the DDR3
    /// model). A deliberately broken card is named the same way: `sim_top_fault_rd_beat` and
    /// `sim_top_fault_seq` are `sim_top` with one of its faults turned on ([`crate::Fault`]).
    /// A name this build does not have, or a top that is not a card, is a missing device.
    pub top: String,
    /// The H2C channels of the simulated card, by index, at most 4. Default: 0 memory-mapped
    /// (the card's `s_axi` write side), 1 stream (`s_axis_h2c0`).
    pub h2c: Vec<ChannelKind>,
    /// The C2H channels, at most 4. Default: 0 memory-mapped (`s_axi` read side), 1 and 2
    /// streams (`m_axis_c2h0`, `m_axis_c2h1`).
    pub c2h: Vec<ChannelKind>,
    /// User interrupt lines served as event nodes, 1 to 16 and at most the card's
    /// `usr_irq_req` bits. Default 1.
    pub events: usize,
    /// The XDMA IP's customization (`[sim.ip]`; the old name `[sim.engine]` is still read,
    /// with a warning).
    pub ip: IpCustomization,
    /// The link, root complex and host driver timing.
    pub timing: TimingConfig,
    /// The memory-mapped path to the DDR3 model: `card` (the card's own RTL, default) or
    /// `reference` (the reference board's SmartConnect and MIG path; `top` must then be the
    /// combined card, `sim_top`, which it replaces with `sim_top_ref`).
    pub path: DataPath,
    /// The DDR controller model's arbitration and QoS.
    pub ddr: DdrConfig,
    /// The host driver's module parameters.
    pub driver: DriverConfig,
    /// How long, in microseconds of simulated time, the card may hold an H2C stream beat
    /// waiting (TREADY low) before the send fails with a timeout, 1 to 10 000 000. Default
    /// 1000: far longer than any healthy stall, yet short enough to simulate in seconds.
    pub stream_stall_limit_us: u64,
    /// Wall-clock bound on any one call, in seconds, 1 to 86 400; a call that takes longer
    /// fails with a timeout that says so and its transfer is aborted. Default 600.
    pub reply_timeout_s: u64,
    /// Wall-clock time, in milliseconds, that the simulation waits for a handle to make its
    /// next call before it stops waiting for it, 1 to 600 000 (see `docs/timing-model.md`:
    /// simulated time is deterministic as long as the host code between two calls of one handle
    /// runs within this). Default 200.
    pub host_grace_ms: u64,
    /// Protocol monitors on every bus of the card. Default true.
    pub monitors: bool,
    /// Seeded random pauses on every bus the IP drives: idle cycles on what it sends (AXI
    /// requests and write data, H2C stream beats) and backpressure on what it takes (AXI
    /// responses, C2H stream beats), as a real interconnect and engine may add. Off by default.
    /// Timing stays deterministic for one seed; tests use it to shake the card's handshakes.
    pub bus_pauses: Option<RandomPauses>,
}

/// The host's view of a variant's engines: the H2C and C2H channels as an XDMA IP of this
/// configuration has them.
fn channels_of(v: Variant) -> (Vec<ChannelKind>, Vec<ChannelKind>) {
    let kind = |k: xdma_ip::EngineKind| match k {
        xdma_ip::EngineKind::MemoryMapped => ChannelKind::MemoryMapped,
        xdma_ip::EngineKind::Stream => ChannelKind::Stream,
    };
    (
        v.h2c().into_iter().map(kind).collect(),
        v.c2h().into_iter().map(kind).collect(),
    )
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            variant: None,
            top: "sim_top".into(),
            h2c: vec![ChannelKind::MemoryMapped, ChannelKind::Stream],
            c2h: vec![
                ChannelKind::MemoryMapped,
                ChannelKind::Stream,
                ChannelKind::Stream,
            ],
            events: 1,
            ip: IpCustomization::default(),
            timing: TimingConfig::default(),
            path: DataPath::Card,
            ddr: DdrConfig::default(),
            driver: DriverConfig::default(),
            stream_stall_limit_us: 1000,
            reply_timeout_s: 600,
            host_grace_ms: 200,
            monitors: true,
            bus_pauses: None,
        }
    }
}

fn int_range(name: &str, v: u64, lo: u64, hi: u64, what: &str) -> Result<()> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "[sim] {name} = {v}: must be {lo} to {hi} ({what})"
        )))
    }
}

/// Keys of the `[sim]` section that were renamed, as (old, new): the old one is still read, with
/// a warning, so that configuration files written for it keep working.
const RENAMED_KEYS: &[(&str, &str)] = &[("engine", "ip")];

/// The new name of a `[sim]` key that was renamed (`engine` is now `ip`), or `None` for a key
/// that was not; for tools that take keys of the section from their users.
pub fn renamed_key(key: &str) -> Option<&'static str> {
    RENAMED_KEYS
        .iter()
        .find(|(old, _)| *old == key)
        .map(|&(_, new)| new)
}

/// The `[sim]` table with every old key of [`RENAMED_KEYS`] moved to its new name, each with a
/// warning; an error when a table gives both names.
fn renamed_keys(mut table: toml::Table) -> Result<toml::Table> {
    for &(old, new) in RENAMED_KEYS {
        let Some(value) = table.remove(old) else {
            continue;
        };
        if table.contains_key(new) {
            return Err(Error::Config(format!(
                "[sim] gives both `{old}` and `{new}`: `{old}` is the old name of `{new}`; keep `{new}` only"
            )));
        }
        tracing::warn!("[sim] `{old}` is deprecated: it is now called `{new}`; rename it");
        table.insert(new.to_string(), value);
    }
    Ok(table)
}

impl SimConfig {
    /// The `[sim]` section of `cfg`, checked.
    pub fn from_config(cfg: &Config) -> Result<SimConfig> {
        let table = renamed_keys(cfg.section::<toml::Table>(BackendKind::Sim)?)?;
        let s: SimConfig = table
            .try_into()
            .map_err(|e: toml::de::Error| Error::Config(format!("[sim] {}", e.message())))?;
        let s = s.resolved()?;
        s.validate()?;
        Ok(s)
    }

    /// A whole configuration for the simulated card with these settings.
    pub fn into_config(self) -> Result<Config> {
        let mut cfg = Config::default();
        cfg.set_section(BackendKind::Sim, &self)?;
        Ok(cfg)
    }

    /// These settings with the variant, if any, applied to `top`, `h2c` and `c2h`; an error
    /// when one of those was given and disagrees with the variant.
    pub fn resolved(&self) -> Result<SimConfig> {
        let s = self.with_variant()?;
        if s.path == DataPath::Card {
            return Ok(s);
        }
        let top = s.path.top_for(&s.top).ok_or_else(|| {
            Error::Config(format!(
                "[sim] path = \"{}\" exists for the combined card only (top \"sim_top\"), not for top {:?}: remove `variant` and `top`, or use path = \"card\"",
                s.path.name(),
                s.top
            ))
        })?;
        Ok(SimConfig {
            top: top.to_string(),
            ..s
        })
    }

    /// These settings with the variant, if any, applied.
    fn with_variant(&self) -> Result<SimConfig> {
        let Some(v) = self.variant else {
            return Ok(self.clone());
        };
        let dflt = SimConfig::default();
        let (h2c, c2h) = channels_of(v);
        let clash = |field: &str, given: String, wants: String| {
            Error::Config(format!(
                "[sim] variant = \"{}\" sets {field} = {wants}, but {field} = {given} is given too: remove {field}, or the variant",
                v.name()
            ))
        };
        if self.top != dflt.top && self.top != v.top_name() {
            return Err(clash(
                "top",
                format!("{:?}", self.top),
                format!("{:?}", v.top_name()),
            ));
        }
        if self.h2c != dflt.h2c && self.h2c != h2c {
            return Err(clash("h2c", format!("{:?}", self.h2c), format!("{h2c:?}")));
        }
        if self.c2h != dflt.c2h && self.c2h != c2h {
            return Err(clash("c2h", format!("{:?}", self.c2h), format!("{c2h:?}")));
        }
        Ok(SimConfig {
            top: v.top_name().to_string(),
            h2c,
            c2h,
            ..self.clone()
        })
    }

    /// Checks every field against its range; the card's own limits (its interrupt lines, its
    /// stream ports, its bus width) are checked when it is built.
    pub fn validate(&self) -> Result<()> {
        for (name, list) in [("h2c", &self.h2c), ("c2h", &self.c2h)] {
            if list.len() > MAX_CHANNELS {
                return Err(Error::Config(format!(
                    "[sim] {name} lists {} channels: an XDMA IP has at most {MAX_CHANNELS} per direction",
                    list.len()
                )));
            }
        }
        int_range(
            "events",
            self.events as u64,
            1,
            16,
            "usr_irq_req has at most 16 bits",
        )?;
        int_range(
            "stream_stall_limit_us",
            self.stream_stall_limit_us,
            1,
            10_000_000,
            "microseconds of simulated time",
        )?;
        int_range(
            "reply_timeout_s",
            self.reply_timeout_s,
            1,
            86_400,
            "seconds of wall-clock time",
        )?;
        int_range(
            "host_grace_ms",
            self.host_grace_ms,
            1,
            600_000,
            "milliseconds of wall-clock time",
        )?;
        if let Some(p) = self.bus_pauses {
            int_range(
                "bus_pauses.percent",
                u64::from(p.percent),
                0,
                90,
                "percent of cycles; a bus paused more often barely moves",
            )?;
        }
        self.ddr.validate()?;
        self.ip.validate()?;
        self.timing.validate()
    }

    /// The wall-clock bound on one call.
    pub fn reply_timeout(&self) -> Duration {
        Duration::from_secs(self.reply_timeout_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_pass_and_every_bound_names_its_field() {
        assert!(SimConfig::default().validate().is_ok());
        let bad = |f: fn(&mut SimConfig)| {
            let mut c = SimConfig::default();
            f(&mut c);
            let e = c.validate().expect_err("out of range");
            assert_eq!(e.kind(), xdma_core::ErrorKind::Config);
            e.to_string()
        };
        assert!(bad(|c| c.reply_timeout_s = 0).contains("reply_timeout_s"));
        assert!(bad(|c| c.events = 0).contains("events"));
        assert!(bad(|c| c.events = 17).contains("events"));
        assert!(bad(|c| c.stream_stall_limit_us = u64::MAX).contains("stream_stall_limit_us"));
        assert!(bad(|c| c.host_grace_ms = 0).contains("host_grace_ms"));
        assert!(bad(|c| c.h2c = vec![ChannelKind::Stream; 5]).contains("h2c"));
        assert!(bad(|c| c.timing.link.flight_ns = 1e20).contains("flight_ns"));
        assert!(bad(|c| c.ip.c2h_request_ids = 1).contains("c2h_request_ids"));
    }

    #[test]
    fn a_variant_sets_the_top_and_the_channels_and_refuses_a_clash() {
        for v in Variant::ALL {
            let c = SimConfig {
                variant: Some(v),
                ..SimConfig::default()
            }
            .resolved()
            .expect("a variant alone");
            assert_eq!(c.top, v.top_name());
            assert_eq!((c.h2c.clone(), c.c2h.clone()), channels_of(v));
        }
        let mm = SimConfig {
            variant: Some(Variant::Mm),
            h2c: vec![ChannelKind::Stream],
            ..SimConfig::default()
        };
        let e = mm.resolved().expect_err("a clash");
        assert!(e.to_string().contains("h2c"), "{e}");
        let toml = Config::from_toml("[sim]\nvariant = \"stream\"\n").expect("toml");
        let c = SimConfig::from_config(&toml).expect("from a file");
        assert_eq!(c.top, "sim_top_stream");
        assert_eq!(c.h2c, vec![ChannelKind::Stream]);
    }

    #[test]
    fn the_reference_path_replaces_the_combined_top_and_refuses_others() {
        let toml = Config::from_toml("[sim]\npath = \"reference\"\n").expect("toml");
        let c = SimConfig::from_config(&toml).expect("reference path");
        assert_eq!(c.top, "sim_top_ref");
        assert_eq!(c.resolved().expect("twice").top, "sim_top_ref");
        let toml =
            Config::from_toml("[sim]\npath = \"reference\"\nvariant = \"mm\"\n").expect("toml");
        let e = SimConfig::from_config(&toml).expect_err("no mm reference top");
        assert_eq!(e.kind(), xdma_core::ErrorKind::Config);
        assert!(e.to_string().contains("combined card"), "{e}");
        let toml =
            Config::from_toml("[sim.ddr]\narbitration = \"tdm\"\nwrite_qos = 16\n").expect("toml");
        let e = SimConfig::from_config(&toml).expect_err("QoS is four bits");
        assert!(e.to_string().contains("write_qos"), "{e}");
        let toml = Config::from_toml("[sim.ddr]\narbitration = \"fifo\"\n").expect("toml");
        let e = SimConfig::from_config(&toml).expect_err("no such scheme");
        assert!(e.to_string().contains("round-robin"), "{e}");
    }

    #[test]
    fn the_descriptor_placement_is_chosen_by_name() {
        assert_eq!(
            SimConfig::default().timing.host.descriptors,
            timing::Descriptors::FromStart
        );
        let toml = Config::from_toml("[sim.timing.host]\ndescriptors = \"ring\"\n").expect("toml");
        let c = SimConfig::from_config(&toml).expect("ring");
        assert_eq!(c.timing.host.descriptors, timing::Descriptors::Ring);
        let bad = Config::from_toml("[sim.timing.host]\ndescriptors = \"windows\"\n");
        let e = bad
            .and_then(|c| SimConfig::from_config(&c))
            .expect_err("no such placement");
        assert_eq!(e.kind(), xdma_core::ErrorKind::Config);
        assert!(e.to_string().contains("from-start"), "{e}");
    }

    #[test]
    fn the_section_round_trips_and_rejects_unknown_fields() {
        let cfg = SimConfig::default().into_config().expect("config");
        assert_eq!(
            SimConfig::from_config(&cfg).expect("back"),
            SimConfig::default()
        );
        let bad = Config::from_toml("[sim]\nmemory_size = 8589934592\n").expect("toml");
        let e = SimConfig::from_config(&bad).expect_err("unknown field");
        assert!(e.to_string().contains("memory_size"), "{e}");
        let bad = Config::from_toml("[sim.timing.link]\nflight_ns = 1e20\n").expect("toml");
        let e = SimConfig::from_config(&bad).expect_err("out of range");
        assert!(e.to_string().contains("flight_ns"), "{e}");
    }

    #[test]
    fn the_old_engine_table_is_read_as_the_ip_table() {
        let old = Config::from_toml("[sim.engine]\nalignment = 64\n").expect("toml");
        assert_eq!(
            SimConfig::from_config(&old).expect("old key").ip.alignment,
            64
        );
        let new = Config::from_toml("[sim.ip]\nalignment = 64\n").expect("toml");
        assert_eq!(
            SimConfig::from_config(&new).expect("new key").ip.alignment,
            64
        );
        let both = Config::from_toml("[sim.engine]\nalignment = 64\n[sim.ip]\nalignment = 8\n")
            .expect("toml");
        let e = SimConfig::from_config(&both)
            .expect_err("both names")
            .to_string();
        assert!(e.contains("`engine`") && e.contains("`ip`"), "{e}");
    }
}
