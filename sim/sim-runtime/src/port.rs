//! A model's ports: the table of its top's ports, each resolved by name once into a [`Port`]
//! and then read and written in place in the model's storage.

use crate::error::{Result, SimError};
use crate::ffi::PortDesc;

/// How a port's value is stored inside the model, from Verilator's width classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    U8,
    U16,
    U32,
    U64,
    /// `VlWide<N>`: N 32-bit words, least significant first.
    Wide(u32),
}

impl Storage {
    #[inline]
    fn of_width(width: u32) -> Storage {
        match width {
            0..=8 => Storage::U8,
            9..=16 => Storage::U16,
            17..=32 => Storage::U32,
            33..=64 => Storage::U64,
            w => Storage::Wide(w.div_ceil(32)),
        }
    }
}

/// One port of the top as the model describes it: the storage's address inside the model.
#[derive(Debug)]
struct Slot {
    name: String,
    width: u32,
    output: bool,
    addr: *mut u8,
}

/// A resolved port of one model: the address of its storage inside the model and its width,
/// so that per-cycle access is one load or store with no look-up at all.
///
/// A `Port` belongs to the model that resolved it; using it with another model panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Port {
    model: u64,
    /// The storage's address (as a number, so that a `Port` stays a plain value); it is only
    /// dereferenced by the model whose id is `model`, which owns the storage.
    addr: usize,
    /// The bits an input of this width keeps, for ports of up to 64 bits.
    mask: u64,
    idx: u32,
    width: u32,
    /// Worked out once here rather than at every access: the per-cycle accessors run for
    /// every port of every agent at every edge.
    storage: Storage,
}

impl Port {
    fn new(model: u64, addr: *mut u8, idx: usize, width: u32) -> Port {
        Port {
            model,
            addr: addr as usize,
            mask: if width >= 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            },
            idx: u32::try_from(idx).unwrap_or(u32::MAX),
            width,
            storage: Storage::of_width(width),
        }
    }

    /// The port's width in bits.
    pub fn width(self) -> u32 {
        self.width
    }
    /// How many 32-bit words hold its value.
    pub fn words(self) -> usize {
        self.width.div_ceil(32) as usize
    }
}

/// Ports of one model asked together whether any of them is non-zero, such as the VALID
/// signals that wake an idle agent at every edge: checked against the model once, when the set
/// is made ([`crate::Model::port_set`]), and then read without a check or a dispatch per port.
#[derive(Debug, Clone, Default)]
pub struct PortSet {
    /// The model that made the set (0, which no model has, for an empty set).
    model: u64,
    /// The storage of each port of up to 8 bits: one byte each, the common case.
    bytes: Vec<usize>,
    /// The wider ports, read through [`crate::Model::get`].
    wide: Vec<Port>,
}

impl PortSet {
    /// True when the set has no port.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty() && self.wide.is_empty()
    }
}

/// The panic of a port used with a model that did not resolve it, out of line so that the
/// per-cycle accessors carry only the comparison.
#[cold]
#[inline(never)]
fn foreign_port() -> ! {
    panic!("port handle used with a model that did not resolve it");
}

/// The port table of one model: what [`crate::Model`]'s port methods resolve and access.
#[derive(Debug)]
pub(crate) struct Ports {
    /// The id of the model that owns the storage (see [`Port`]).
    model: u64,
    /// The top's name, for messages.
    top: &'static str,
    slots: Vec<Slot>,
}

impl Ports {
    /// The table of model `model`, a model of `top`, from the ports its library describes.
    ///
    /// # Safety
    /// Each description's address must be its port's storage inside one live model, of the
    /// type Verilator's width classes give for its width, kept at a fixed address for as long
    /// as this table lives and accessed only from the thread that owns the model.
    pub(crate) unsafe fn new(model: u64, top: &'static str, descs: &[PortDesc]) -> Ports {
        Ports {
            model,
            top,
            slots: descs
                .iter()
                .map(|d| Slot {
                    name: d.name().to_string(),
                    width: d.width(),
                    output: d.is_output(),
                    addr: d.addr() as *mut u8,
                })
                .collect(),
        }
    }

    /// Drives every input to zero, as a testbench does before the first edge.
    pub(crate) fn zero_inputs(&mut self) {
        let inputs: Vec<Port> = (0..self.slots.len())
            .filter(|&i| !self.slots[i].output)
            .map(|i| Port::new(self.model, self.slots[i].addr, i, self.slots[i].width))
            .collect();
        for p in inputs {
            self.set_words(p, &[]);
        }
    }

    /// The storage of a 1-bit input, one byte, which a clock writes at every edge without a
    /// look-up; `None` for a port that is not a 1-bit input of this model.
    pub(crate) fn clock_bit(&self, port: Port) -> Option<*mut u8> {
        let (addr, storage) = self.place(port);
        (storage == Storage::U8 && port.width == 1 && !self.slot(port).output).then_some(addr)
    }

    /// The names of the top's ports, in declaration order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.slots.iter().map(|s| s.name.as_str())
    }

    /// Every output with its name, in declaration order.
    pub(crate) fn outputs(&self) -> Vec<(Port, &str)> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].output)
            .map(|i| {
                let s = &self.slots[i];
                (Port::new(self.model, s.addr, i, s.width), s.name.as_str())
            })
            .collect()
    }

    /// Resolves a port by name, once; the returned handle is used in the per-cycle path.
    pub(crate) fn port(&self, name: &str) -> Result<Port> {
        let idx = self
            .slots
            .iter()
            .position(|s| s.name == name)
            .ok_or_else(|| SimError::NoSuchPort {
                top: self.top.to_string(),
                port: name.to_string(),
                known: self
                    .slots
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Ok(Port::new(
            self.model,
            self.slots[idx].addr,
            idx,
            self.slots[idx].width,
        ))
    }

    /// Resolves an input port, refusing outputs.
    pub(crate) fn input(&self, name: &str) -> Result<Port> {
        let p = self.port(name)?;
        if self.slot(p).output {
            return Err(self.misuse(p, "is an output and cannot be driven"));
        }
        Ok(p)
    }

    /// True if the port is an output of the model.
    pub(crate) fn is_output(&self, port: Port) -> bool {
        self.slot(port).output
    }

    pub(crate) fn misuse(&self, port: Port, problem: &str) -> SimError {
        let s = self.slot(port);
        SimError::PortUse {
            top: self.top.to_string(),
            port: s.name.clone(),
            width: s.width,
            direction: if s.output { "output" } else { "input" },
            problem: problem.to_string(),
        }
    }

    #[inline]
    fn slot(&self, port: Port) -> &Slot {
        self.own(port);
        &self.slots[port.idx as usize]
    }

    /// Panics unless this model resolved `port`: only then does its address point into this
    /// model's storage.
    #[inline]
    fn own(&self, port: Port) {
        // A plain comparison rather than `assert_eq!`: the latter takes references to both
        // values for its message, which makes every accessor copy the whole `Port` to memory.
        if port.model != self.model {
            foreign_port();
        }
    }

    /// Where `port`'s value lives and how it is stored, for the per-cycle accessors.
    #[inline]
    fn place(&self, port: Port) -> (*mut u8, Storage) {
        self.own(port);
        (port.addr as *mut u8, port.storage)
    }

    /// Reads a port of up to 64 bits; for a wider port, its low 64 bits.
    #[inline]
    pub(crate) fn get(&self, port: Port) -> u64 {
        let (addr, storage) = self.place(port);
        // SAFETY: `addr` is the address of this port's storage inside the C++ model (`place`
        // checked that this model resolved the port), which the model that owns this table keeps
        // at a fixed address as long as the table lives (see `Ports::new`); the storage has the type that Verilator's
        // width classes give for the port's width (see `Storage`), and a VlWide has at least
        // two words whenever it is read as one u64 from two u32s.
        unsafe {
            match storage {
                Storage::U8 => u64::from(addr.cast::<u8>().read()),
                Storage::U16 => u64::from(addr.cast::<u16>().read()),
                Storage::U32 => u64::from(addr.cast::<u32>().read()),
                Storage::U64 => addr.cast::<u64>().read(),
                Storage::Wide(_) => {
                    let w = addr.cast::<u32>();
                    u64::from(w.read()) | (u64::from(w.add(1).read()) << 32)
                }
            }
        }
    }

    /// Reads a 1-bit (or any) port as a boolean: true when non-zero.
    #[inline]
    pub(crate) fn get_bool(&self, port: Port) -> bool {
        self.get(port) != 0
    }

    /// Gathers ports of this model into a set for [`Ports::any_nonzero`]. Panics, as every
    /// accessor does, if a port was resolved by another model.
    pub(crate) fn port_set(&self, ports: &[Port]) -> PortSet {
        let mut set = PortSet {
            model: if ports.is_empty() { 0 } else { self.model },
            ..PortSet::default()
        };
        for &p in ports {
            let (addr, storage) = self.place(p);
            if storage == Storage::U8 {
                set.bytes.push(addr as usize);
            } else {
                set.wide.push(p);
            }
        }
        set
    }

    /// Whether any port of `set` reads non-zero (false for an empty set). Panics if another
    /// model made the set.
    #[inline]
    pub(crate) fn any_nonzero(&self, set: &PortSet) -> bool {
        if set.is_empty() {
            return false;
        }
        if set.model != self.model {
            foreign_port();
        }
        set.bytes.iter().any(|&addr| {
            // SAFETY: `addr` is the one-byte storage of a port of this model (`port_set`
            // checked every port, and the set's model is this one), which the model that owns this
            // table keeps at a fixed address as long as the table lives (see `Ports::new`).
            unsafe { (addr as *const u8).read() != 0 }
        }) || set.wide.iter().any(|&p| self.get(p) != 0)
    }

    /// Drives an input of up to 64 bits; bits above the port's width are dropped.
    #[inline]
    pub(crate) fn set(&mut self, port: Port, value: u64) {
        let (addr, storage) = self.place(port);
        let v = value & port.mask;
        // SAFETY: as in `get`; the model is only evaluated from its own thread and not during
        // this write (`&mut self`), so nothing else accesses the storage.
        unsafe {
            match storage {
                Storage::U8 => addr.cast::<u8>().write(v as u8),
                Storage::U16 => addr.cast::<u16>().write(v as u16),
                Storage::U32 => addr.cast::<u32>().write(v as u32),
                Storage::U64 => addr.cast::<u64>().write(v),
                Storage::Wide(n) => {
                    let w = addr.cast::<u32>();
                    w.write(v as u32);
                    w.add(1).write((v >> 32) as u32);
                    for i in 2..n as usize {
                        w.add(i).write(0);
                    }
                }
            }
        }
    }

    /// Drives a 1-bit input.
    #[inline]
    pub(crate) fn set_bool(&mut self, port: Port, value: bool) {
        self.set(port, u64::from(value));
    }

    /// Reads a port of any width into 32-bit words, least significant first. Words beyond the
    /// port's width are set to zero; words the slice has no room for are not read.
    #[inline]
    pub(crate) fn get_words(&self, port: Port, out: &mut [u32]) {
        let (addr, storage) = self.place(port);
        match storage {
            Storage::Wide(n) => {
                let n = n as usize;
                let w = addr.cast::<u32>();
                for (i, o) in out.iter_mut().enumerate() {
                    // SAFETY: `i < n` keeps the read inside the port's VlWide storage.
                    *o = if i < n { unsafe { w.add(i).read() } } else { 0 };
                }
            }
            _ => {
                let v = self.get(port);
                for (i, o) in out.iter_mut().enumerate() {
                    *o = match i {
                        0 => v as u32,
                        1 => (v >> 32) as u32,
                        _ => 0,
                    };
                }
            }
        }
    }

    /// Drives an input of any width from 32-bit words, least significant first. Missing words
    /// are zero; bits above the port's width are dropped.
    #[inline]
    pub(crate) fn set_words(&mut self, port: Port, words: &[u32]) {
        let (addr, storage) = self.place(port);
        match storage {
            Storage::Wide(n) => {
                let n = n as usize;
                let top_bits = port.width % 32;
                let w = addr.cast::<u32>();
                for i in 0..n {
                    let mut v = words.get(i).copied().unwrap_or(0);
                    if i == n - 1 && top_bits != 0 {
                        v &= (1u32 << top_bits) - 1;
                    }
                    // SAFETY: `i < n` keeps the write inside the port's VlWide storage.
                    unsafe { w.add(i).write(v) };
                }
            }
            _ => {
                let lo = u64::from(words.first().copied().unwrap_or(0));
                let hi = u64::from(words.get(1).copied().unwrap_or(0));
                self.set(port, lo | (hi << 32));
            }
        }
    }

    /// Reads a port into bytes, least significant first (little-endian, as AXI lays out data).
    pub(crate) fn get_bytes(&self, port: Port, out: &mut [u8]) {
        let mut words = [0u32; 32];
        let n = port.words().min(words.len());
        self.get_words(port, &mut words[..n]);
        for (i, b) in out.iter_mut().enumerate() {
            *b = words.get(i / 4).map_or(0, |w| (w >> (8 * (i % 4))) as u8);
        }
    }

    /// Drives an input from bytes, least significant first.
    pub(crate) fn set_bytes(&mut self, port: Port, bytes: &[u8]) {
        let mut words = [0u32; 32];
        for (i, b) in bytes.iter().enumerate().take(words.len() * 4) {
            words[i / 4] |= u32::from(*b) << (8 * (i % 4));
        }
        let n = port.words().min(words.len());
        self.set_words(port, &words[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_follows_verilator_width_classes() {
        assert_eq!(Storage::of_width(1), Storage::U8);
        assert_eq!(Storage::of_width(16), Storage::U16);
        assert_eq!(Storage::of_width(17), Storage::U32);
        assert_eq!(Storage::of_width(64), Storage::U64);
        assert_eq!(Storage::of_width(65), Storage::Wide(3));
        assert_eq!(Storage::of_width(512), Storage::Wide(16));
    }
}
