//! Opening the simulated card: the IP built in front of the card, the card's settings held on
//! it, and the driver model's probe, on the simulation thread.

use std::time::Duration;

use card_harness::CardTop;
use xdma_core::{ChannelInfo, ChannelKind, Direction, Error, Result};
use xdma_driver::{Costs, Driver, HostRam, InterruptMode, Params};
use xdma_ip::AXI_HZ;
use xdma_ip::{EngineKind, IpConfig, XdmaIp};
use xdma_regmap::Target;

use crate::config::timing::ns;
use crate::config::SimConfig;
use crate::error::sim;
use crate::job::{Host, Ports};
use crate::thread::SimThread;

/// What the thread reports once the card is built.
pub(crate) struct Found {
    pub(crate) card_id: u32,
    pub(crate) card_version: u32,
    pub(crate) bar_size: u64,
    pub(crate) memory_size: u64,
    pub(crate) h2c_ports: usize,
    pub(crate) c2h_ports: usize,
    pub(crate) bus_bytes: usize,
}

/// The card as configured: a top of this build, or a deliberate fault of one, by name
/// (card-harness's table); a name that is neither is a missing device.
fn find_top(name: &str) -> Result<CardTop> {
    CardTop::from_name(name).map_err(|e| Error::NoDevice {
        what: format!("simulated card `{name}`"),
        hint: format!("{e}; set sim.top to one of them (the card is `sim_top`)"),
    })
}

/// The bus address of the simulated host's memory: above 4 GiB, as a 64-bit host's DMA
/// buffers are.
const HOST_RAM_BASE: u64 = 1 << 32;

/// Builds the IP in front of the card and probes it with the driver model, on the simulation
/// thread.
pub(crate) fn build(cfg: &SimConfig, name: &str) -> Result<(SimThread, Found)> {
    let selected = find_top(&cfg.top)?;
    let not_a_card = |e: String| Error::NoDevice {
        what: format!("simulated card `{}`", selected.name()),
        hint: format!("this RTL top is not a card with the XDMA-side ports ({e}); use `sim_top`"),
    };
    let stall_cycles =
        u64::try_from(u128::from(cfg.stream_stall_limit_us) * u128::from(AXI_HZ) / 1_000_000)
            .unwrap_or(u64::MAX);
    let kinds = |v: &[ChannelKind]| -> Vec<EngineKind> {
        v.iter()
            .map(|k| match k {
                ChannelKind::MemoryMapped => EngineKind::MemoryMapped,
                ChannelKind::Stream => EngineKind::Stream,
            })
            .collect()
    };
    let ip_cfg = IpConfig {
        name: Some(name.to_string()),
        monitors: cfg.monitors,
        h2c_stall_bound: stall_cycles.max(1),
        user_irqs: cfg.events,
        alignment: u32::try_from(cfg.ip.alignment).unwrap_or(u32::MAX),
        max_burst_beats: cfg.ip.max_burst_beats,
        pcie: Some(cfg.ip.pcie(&cfg.timing)),
        fault: selected.fault,
        ..IpConfig::new(selected.top, kinds(&cfg.h2c), kinds(&cfg.c2h))
    };
    let mut ip = match XdmaIp::new(ip_cfg) {
        Ok(ip) => ip,
        // The RTL failing or the model not building is the simulator's failure; a port the
        // harness needs that the top lacks means the top is not a card; a layout the card
        // cannot hold is the configuration's.
        Err(xdma_ip::IpError::Card(axi_bfm::BfmError::Sim(
            e @ (card_sim::SimError::Rtl { .. } | card_sim::SimError::Create { .. }),
        ))) => return Err(sim(e)),
        Err(xdma_ip::IpError::Card(e)) => return Err(not_a_card(e.to_string())),
        Err(xdma_ip::IpError::Config(e)) => {
            return Err(Error::Config(format!(
                "[sim] the card cannot be built so: {e}; match h2c, c2h and events to the card"
            )))
        }
    };
    let mut card = ip.card_setup();
    card.set_ddr_controller(cfg.ddr.controller())
        .map_err(|e| not_a_card(e.to_string()))?;
    if let Some(p) = cfg.bus_pauses {
        card.set_bus_pauses(&axi_bfm::PauseSpec::random(p.seed, p.percent));
    }
    let found = Found {
        card_id: 0,
        card_version: 0,
        bar_size: card.bar_size(),
        memory_size: card.memory_size().unwrap_or(0),
        h2c_ports: card.h2c_streams(),
        c2h_ports: card.c2h_streams(),
        bus_bytes: card.bus_bytes(),
    };
    // Host memory for the driver's rings and every buffer in flight: lazily zeroed, so only
    // the pages transfers touch cost anything.
    let ram_bytes = (2 * found.memory_size.max(64 << 20) + (64 << 20)) as usize;
    let ram = HostRam::new(HOST_RAM_BASE, ram_bytes);
    let params = Params {
        poll_mode: cfg.driver.poll_mode,
        interrupt_mode: InterruptMode::MsiX,
        desc_layout: cfg.timing.host.descriptors.layout(),
        // The driver's 10 s wait after an engine stopped on an error with nothing done would
        // take minutes of simulation; its outcome, ETIMEDOUT, comes at once instead.
        end_dead_waits: true,
        ..Params::default()
    };
    let mut driver = Driver::probe(ip, ram, params).map_err(|e| {
        Error::Backend(format!(
            "simulated card: the driver model's probe failed: {e}"
        ))
    })?;
    let h = &cfg.timing.host;
    driver.set_costs(Costs {
        submit: ns(h.submit_ns),
        start: ns(h.start_ns),
        irq: ns(h.irq_ns),
        wake: ns(h.wake_ns),
        register: 0,
    });
    let card_id = driver
        .user_read(0x000)
        .map_err(|e| Error::Backend(e.to_string()))?;
    let card_version = driver
        .user_read(0x004)
        .map_err(|e| Error::Backend(e.to_string()))?;
    // Register accesses from here on cost their system call.
    driver.set_costs(Costs {
        register: ns(h.register_ns),
        ..Costs {
            submit: ns(h.submit_ns),
            start: ns(h.start_ns),
            irq: ns(h.irq_ns),
            wake: ns(h.wake_ns),
            register: 0,
        }
    });
    let found = Found {
        card_id,
        card_version,
        ..found
    };
    let host = Host {
        register: ns(h.register_ns),
        wake: ns(h.wake_ns),
    };
    let ports = Ports {
        h2c: ports(&cfg.h2c, found.h2c_ports, Direction::H2C)?,
        c2h: ports(&cfg.c2h, found.c2h_ports, Direction::C2H)?,
    };
    let thread = SimThread::new(
        driver,
        host,
        ns(h.turnaround_ns),
        ports,
        Duration::from_millis(cfg.host_grace_ms),
        cfg.reply_timeout(),
    );
    Ok((thread, found))
}

/// The channel layout: each channel's stream port, checked against the ports the card has.
fn ports(kinds: &[ChannelKind], have: usize, dir: Direction) -> Result<Vec<Option<usize>>> {
    let mut next = 0;
    let mut map = Vec::with_capacity(kinds.len());
    for &k in kinds {
        if k == ChannelKind::Stream {
            if next >= have {
                return Err(Error::Config(format!(
                    "[sim] {} lists more stream channels than the card has {dir} stream ports ({have})",
                    dir.to_string().to_ascii_lowercase()
                )));
            }
            map.push(Some(next));
            next += 1;
        } else {
            map.push(None);
        }
    }
    Ok(map)
}

pub(crate) fn channels(dir: Direction, target: Target, kinds: &[ChannelKind]) -> Vec<ChannelInfo> {
    kinds
        .iter()
        .enumerate()
        .map(|(index, &kind)| ChannelInfo {
            dir,
            index,
            kind,
            // The IP's identifier layout (subsystem, target, stream bit, channel); version 0,
            // since this is a model rather than an IP release.
            id_register: target.identifier_version(index, kind == ChannelKind::Stream, 0),
        })
        .collect()
}
