//! The probe, as `xdma_mod.c`'s `probe_one` does it through `libxdma.c`'s `xdma_device_open`.
//!
//! The engines found by their identifiers and set up, the interrupts set up, and what the
//! bound driver shows.

use std::collections::VecDeque;

use xdma_ip::{IrqMode, Ps, XdmaIp};
use xdma_regmap::{self as map, engine_regs as ereg, Target};

use crate::call::Dir;
use crate::dev::{Driver, Irqs};
use crate::error::Result;
use crate::params::{Costs, InterruptMode, Params};
use crate::ram::HostRam;

impl Driver {
    /// Probes the card behind `ip` as the driver's `probe` does, with host memory `ram`.
    pub fn probe(ip: XdmaIp, ram: HostRam, params: Params) -> Result<Driver> {
        let mut d = Driver {
            ip,
            ram,
            irqs: Irqs::default(),
            params,
            h2c: Vec::new(),
            c2h: Vec::new(),
            user_events: vec![0; map::MAX_USER_IRQ],
            user_latched: vec![VecDeque::new(); map::MAX_USER_IRQ],
            cycles: 0,
            calls: Vec::new(),
            regs: Vec::new(),
            next_call: 0,
            costs: Costs::default(),
            max_read: 512,
        };
        // The PCI core enables the interrupt capability the driver asked for.
        let mode = match d.params.interrupt_mode {
            _ if d.params.poll_mode => IrqMode::MsiX {
                function_mask: false,
            },
            InterruptMode::MsiX => IrqMode::MsiX {
                function_mask: false,
            },
            InterruptMode::Msi => IrqMode::Msi { vectors: 1 },
            InterruptMode::Legacy => IrqMode::Intx { disabled: false },
        };
        d.ip.set_irq_mode(mode, &mut d.irqs);
        let mrrs = d.dma_read(map::config::BASE + map::config::MAX_READ)? & 0x7;
        d.max_read = 128 << mrrs.min(5);
        // probe_engines: an engine is there when its identifier names its target and channel.
        for dir in [Dir::H2c, Dir::C2h] {
            for ch in 0..map::MAX_CHANNELS {
                let id = d.dma_read(map::engine_base(dir == Dir::C2h, ch) + ereg::IDENTIFIER)?;
                let target = if dir == Dir::C2h {
                    Target::C2h
                } else {
                    Target::H2c
                };
                if id & map::ID_ENGINE_MASK != target.id_base() || map::id_channel(id) != ch {
                    break;
                }
                let streaming = id & map::ID_STREAM != 0;
                d.engine_init(dir, ch, streaming)?;
            }
        }
        d.irq_setup()?;
        Ok(d)
    }

    /// The driver's parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Sets the host's costs of the driver's work.
    pub fn set_costs(&mut self, costs: Costs) {
        self.costs = costs;
    }

    /// The simulated time, in ps.
    pub fn now(&self) -> Ps {
        self.ip.now()
    }

    /// The host memory model.
    pub fn ram(&mut self) -> &mut HostRam {
        &mut self.ram
    }

    /// The IP behind the driver.
    pub fn ip(&mut self) -> &mut XdmaIp {
        &mut self.ip
    }

    /// `axi_aclk` cycles the driver's calls have run the card for.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }

    /// The channels the probe found in a direction, and whether each is a stream.
    pub fn channels(&self, dir: Dir) -> Vec<bool> {
        self.engines(dir).iter().map(|e| e.streaming).collect()
    }
}
