//! AXI4 bus models: a [`master`] that turns reads and writes of any length and alignment into
//! legal bursts, and a [`slave`] backed by sparse memory. Both are built of the five channels
//! (a [`Source`](crate::channel::Source) or [`Sink`](crate::channel::Sink) each) over the
//! payloads below.

mod master;
mod rslave;
mod slave;

use sim_runtime::{Model, Port};

pub use master::{AxiMaster, AxiMasterConfig, MasterFaults};
pub use rslave::RandomAxiSlave;
pub use slave::{AxiSlave, AxiSlaveConfig, SlaveFaults};

use crate::bind::{get_mask, set_mask, Bind, Words, MAX_WORDS};
use crate::burst::{Burst, INCR};
use crate::channel::{Garbage, Payload, Sink, Source};
use crate::error::{Resp, Result};

/// A handle on a transaction issued by a bus model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TxnId(pub u64);

/// Whether the bus has read channels: write-only ports (a capture engine's) have no `araddr`.
fn has_reads(b: &Bind<'_>) -> bool {
    b.has("araddr")
}

/// A slave's read side: absent on a write-only bus.
struct SlaveRead {
    ar: Sink<AxPorts>,
    r: Source<RPorts>,
}

/// A slave's channels, bound on `b` in the order that makes a bus missing several signals
/// name the same first, whichever slave binds them.
struct SlavePorts {
    bus_bytes: usize,
    aw: Sink<AxPorts>,
    w: Sink<WPorts>,
    b: Source<BPorts>,
    rd: Option<SlaveRead>,
}

impl SlavePorts {
    fn bind(b: &Bind<'_>) -> Result<SlavePorts> {
        let bus_bytes = b.data_bytes(b.port("wdata", false)?, "wdata")?;
        let aw = Sink::bind(b, "aw", AxPorts::bind(b, "aw", false, bus_bytes)?)?;
        let rd = if has_reads(b) {
            Some(SlaveRead {
                ar: Sink::bind(b, "ar", AxPorts::bind(b, "ar", false, bus_bytes)?)?,
                r: Source::bind(b, "r", RPorts::bind(b, false)?)?,
            })
        } else {
            None
        };
        let (wports, _) = WPorts::bind(b, false)?;
        Ok(SlavePorts {
            bus_bytes,
            aw,
            w: Sink::bind(b, "w", wports)?,
            b: Source::bind(b, "b", BPorts::bind(b, false)?)?,
            rd,
        })
    }

    /// Every channel quiet, as in reset: READY low on the channels the slave takes, VALID low
    /// on those it drives.
    fn off(&mut self, m: &mut Model) {
        self.aw.off(m);
        self.w.off(m);
        self.b.reset(m, false);
        if let Some(rd) = &mut self.rd {
            rd.ar.off(m);
            rd.r.reset(m, false);
        }
    }
}

/// The payload of AW or AR.
struct AxPorts {
    id: Option<Port>,
    addr: Port,
    len: Port,
    size: Option<Port>,
    burst: Option<Port>,
    lock: Option<Port>,
    cache: Option<Port>,
    prot: Option<Port>,
    qos: Option<Port>,
    /// AxSIZE of a bus without the signal: full-width beats.
    full_size: u8,
}

/// One AW or AR beat: the burst and the attributes that go with it.
#[derive(Debug, Clone, Copy)]
struct AxBeat {
    b: Burst,
    cache: u8,
    prot: u8,
    qos: u8,
}

impl AxPorts {
    /// The ports of channel `ch` (`aw`, `ar`) driven by a master (`out`) or read by a slave,
    /// which binds only what it uses.
    fn bind(b: &Bind<'_>, ch: &str, out: bool, bus_bytes: usize) -> Result<AxPorts> {
        let opt = |s: &str| b.opt_port(&format!("{ch}{s}"), out);
        let master_only = |s: &str| if out { opt(s) } else { Ok(None) };
        Ok(AxPorts {
            id: opt("id")?,
            addr: b.port(&format!("{ch}addr"), out)?,
            len: b.port(&format!("{ch}len"), out)?,
            size: opt("size")?,
            burst: opt("burst")?,
            lock: opt("lock")?,
            cache: master_only("cache")?,
            prot: master_only("prot")?,
            qos: master_only("qos")?,
            full_size: bus_bytes.trailing_zeros() as u8,
        })
    }
}

impl Payload for AxPorts {
    type Beat = AxBeat;

    #[inline]
    fn drive(&self, m: &mut Model, a: &AxBeat) {
        let b = &a.b;
        if let Some(x) = self.id {
            m.set(x, u64::from(b.id));
        }
        m.set(self.addr, b.addr);
        m.set(self.len, u64::from(b.len));
        if let Some(x) = self.size {
            m.set(x, u64::from(b.size));
        }
        if let Some(x) = self.burst {
            m.set(x, u64::from(b.burst));
        }
        if let Some(x) = self.lock {
            m.set_bool(x, b.lock);
        }
        if let Some(x) = self.cache {
            m.set(x, u64::from(a.cache));
        }
        if let Some(x) = self.prot {
            m.set(x, u64::from(a.prot));
        }
        if let Some(x) = self.qos {
            m.set(x, u64::from(a.qos & 0xf));
        }
    }

    #[inline]
    fn sample(&self, m: &Model) -> AxBeat {
        AxBeat {
            b: Burst {
                id: self.id.map_or(0, |x| m.get(x)) as u32,
                addr: m.get(self.addr),
                len: m.get(self.len) as u8,
                size: self.size.map_or(self.full_size, |x| m.get(x) as u8),
                burst: self.burst.map_or(INCR, |x| m.get(x) as u8),
                lock: self.lock.is_some_and(|x| m.get_bool(x)),
            },
            cache: 0,
            prot: 0,
            qos: 0,
        }
    }

    fn garbage(&self, m: &mut Model, g: &mut Garbage) {
        let g = g.next();
        m.set(self.addr, g);
        m.set(self.len, g >> 8);
        for x in [
            self.id, self.size, self.burst, self.cache, self.prot, self.qos,
        ]
        .into_iter()
        .flatten()
        {
            m.set(x, g >> 17);
        }
        if let Some(x) = self.lock {
            m.set_bool(x, g >> 40 & 1 == 1);
        }
    }
}

/// The payload of W.
struct WPorts {
    nwords: usize,
    data: Port,
    strb: Port,
    last: Port,
}

/// One W beat.
struct WBeat {
    words: Words,
    strb: u128,
    last: bool,
}

impl WPorts {
    fn bind(b: &Bind<'_>, out: bool) -> Result<(WPorts, usize)> {
        let data = b.port("wdata", out)?;
        let bus_bytes = b.data_bytes(data, "wdata")?;
        let w = WPorts {
            nwords: data.words(),
            data,
            strb: b.port("wstrb", out)?,
            last: b.port("wlast", out)?,
        };
        Ok((w, bus_bytes))
    }
}

impl Payload for WPorts {
    type Beat = WBeat;

    #[inline]
    fn drive(&self, m: &mut Model, w: &WBeat) {
        m.set_words(self.data, &w.words[..self.nwords]);
        set_mask(m, self.strb, w.strb);
        m.set_bool(self.last, w.last);
    }

    #[inline]
    fn sample(&self, m: &Model) -> WBeat {
        let mut words = [0; MAX_WORDS];
        m.get_words(self.data, &mut words[..self.nwords]);
        WBeat {
            words,
            strb: get_mask(m, self.strb),
            last: m.get_bool(self.last),
        }
    }

    fn garbage(&self, m: &mut Model, g: &mut Garbage) {
        let words = g.words(self.nwords);
        let x = g.next();
        m.set_words(self.data, &words[..self.nwords]);
        set_mask(m, self.strb, u128::from(x));
        m.set_bool(self.last, x >> 63 == 1);
    }
}

/// The payload of B.
struct BPorts {
    id: Option<Port>,
    resp: Port,
}

impl BPorts {
    /// The ports of a master (`out`, it reads them) or a slave (it drives them).
    fn bind(b: &Bind<'_>, out: bool) -> Result<BPorts> {
        Ok(BPorts {
            id: b.opt_port("bid", !out)?,
            resp: b.port("bresp", !out)?,
        })
    }
}

impl Payload for BPorts {
    /// BID and BRESP.
    type Beat = (u32, Resp);

    #[inline]
    fn drive(&self, m: &mut Model, &(id, resp): &(u32, Resp)) {
        if let Some(p) = self.id {
            m.set(p, u64::from(id));
        }
        m.set(self.resp, resp.bits());
    }

    #[inline]
    fn sample(&self, m: &Model) -> (u32, Resp) {
        (
            self.id.map_or(0, |p| m.get(p)) as u32,
            Resp::from_bits(m.get(self.resp)),
        )
    }

    fn garbage(&self, _: &mut Model, _: &mut Garbage) {}
}

/// The payload of R.
struct RPorts {
    nwords: usize,
    id: Option<Port>,
    data: Port,
    resp: Port,
    last: Port,
}

/// One R beat.
struct RBeat {
    id: u32,
    resp: Resp,
    last: bool,
    words: Words,
}

impl RPorts {
    /// The ports of a master (`out`, it reads them) or a slave (it drives them).
    fn bind(b: &Bind<'_>, out: bool) -> Result<RPorts> {
        let data = b.port("rdata", !out)?;
        Ok(RPorts {
            nwords: data.words(),
            id: b.opt_port("rid", !out)?,
            data,
            resp: b.port("rresp", !out)?,
            last: b.port("rlast", !out)?,
        })
    }
}

impl Payload for RPorts {
    type Beat = RBeat;

    #[inline]
    fn drive(&self, m: &mut Model, r: &RBeat) {
        if let Some(p) = self.id {
            m.set(p, u64::from(r.id));
        }
        m.set_words(self.data, &r.words[..self.nwords]);
        m.set(self.resp, r.resp.bits());
        m.set_bool(self.last, r.last);
    }

    #[inline]
    fn sample(&self, m: &Model) -> RBeat {
        let mut words = [0; MAX_WORDS];
        m.get_words(self.data, &mut words[..self.nwords]);
        RBeat {
            id: self.id.map_or(0, |p| m.get(p)) as u32,
            resp: Resp::from_bits(m.get(self.resp)),
            last: m.get_bool(self.last),
            words,
        }
    }

    fn garbage(&self, _: &mut Model, _: &mut Garbage) {}
}
