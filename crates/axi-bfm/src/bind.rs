//! Resolving a bus's signals from its port prefix, once, at attach time.

use sim_runtime::{Model, Port};

use std::ops::Range;

use crate::env::Env;
use crate::error::{BfmError, Result};
use crate::mem::Memory;
use crate::signal_map::SignalMapping;

/// The widest data bus the models carry, in 32-bit words (1024 bits); buffers of this size
/// live inside each model so the per-cycle path never allocates.
pub(crate) const MAX_WORDS: usize = 32;

/// Fixed-size word buffer for one beat of data.
pub(crate) type Words = [u32; MAX_WORDS];

pub(crate) struct Bind<'a> {
    pub model: &'a Model,
    pub prefix: &'a str,
    map: &'a [SignalMapping],
}

impl<'a> Bind<'a> {
    pub fn new(env: &'a Env, prefix: &'a str) -> Bind<'a> {
        Bind {
            model: env.model(),
            prefix,
            map: env.signal_map(),
        }
    }

    fn name(&self, sig: &str) -> String {
        format!("{}_{}", self.prefix, sig)
    }

    fn err(&self, problem: String) -> BfmError {
        BfmError::Bind {
            bus: self.prefix.to_string(),
            problem,
        }
    }

    /// The model's port for `sig` of this bus: an explicit mapping first, then
    /// `<prefix>_<sig>` as written, then the one port that matches it in any case
    /// (`S_AXI_AWADDR`, `s_axi_awaddr`, `S00_AXI_awaddr` for prefix `S00_AXI`).
    fn resolve(&self, sig: &str) -> Result<Option<String>> {
        if let Some(m) = self
            .map
            .iter()
            .find(|m| m.prefix == self.prefix && m.signal.eq_ignore_ascii_case(sig))
        {
            return if self.model.port_names().any(|n| n == m.port) {
                Ok(Some(m.port.clone()))
            } else {
                Err(self.err(format!(
                    "signal `{sig}` is mapped to port `{}`, which the model does not have; {}",
                    m.port,
                    self.near(sig)
                )))
            };
        }
        let want = self.name(sig);
        if self.model.port_names().any(|n| n == want) {
            return Ok(Some(want));
        }
        let hits: Vec<&str> = self
            .model
            .port_names()
            .filter(|n| n.eq_ignore_ascii_case(&want))
            .collect();
        match hits.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some((*one).to_string())),
            many => Err(self.err(format!(
                "ports {} all match `{want}` but for case; map the one meant with Env::map_signal(\"{}\", \"{sig}\", ...)",
                many.join(", "),
                self.prefix
            ))),
        }
    }

    /// Ports whose names end in the signal's or start with the bus prefix, in any case: what
    /// the user probably meant.
    fn near(&self, sig: &str) -> String {
        let s = sig.to_ascii_lowercase();
        let p = self.prefix.to_ascii_lowercase();
        let near: Vec<&str> = self
            .model
            .port_names()
            .filter(|n| {
                let n = n.to_ascii_lowercase();
                n.ends_with(&s) || (n.starts_with(&p) && n.contains(&s[..s.len().min(2)]))
            })
            .take(12)
            .collect();
        if near.is_empty() {
            format!(
                "no port of the model resembles it; map it with Env::map_signal(\"{}\", \"{sig}\", \"<port>\")",
                self.prefix
            )
        } else {
            format!(
                "near matches: {}; map one with Env::map_signal(\"{}\", \"{sig}\", \"<port>\")",
                near.join(", "),
                self.prefix
            )
        }
    }

    fn find(&self, sig: &str) -> Result<Port> {
        let Some(name) = self.resolve(sig)? else {
            return Err(self.err(format!(
                "no port for signal `{sig}`: tried `{}` in any case; {}",
                self.name(sig),
                self.near(sig)
            )));
        };
        self.model
            .port(&name)
            .map_err(|e| self.err(format!("signal `{name}`: {e}")))
    }

    /// A signal the bus model drives: must exist and be an input of the model.
    pub fn drive(&self, sig: &str) -> Result<Port> {
        let p = self.find(sig)?;
        if self.model.is_output(p) {
            return Err(self.err(format!(
                "signal `{sig}` is an output of the model, but this bus model drives it; attach the opposite bus model"
            )));
        }
        Ok(p)
    }

    /// A signal the bus model only reads: must exist and be an output of the model.
    pub fn read(&self, sig: &str) -> Result<Port> {
        let p = self.find(sig)?;
        if !self.model.is_output(p) {
            return Err(self.err(format!(
                "signal `{sig}` is an input of the model, but this bus model expects the model to drive it; attach the opposite bus model"
            )));
        }
        Ok(p)
    }

    /// A signal a monitor watches, of either direction.
    pub fn watch(&self, sig: &str) -> Result<Port> {
        self.find(sig)
    }

    /// A payload signal of either direction: driven by the bus model when `out`, else read.
    pub fn port(&self, sig: &str, out: bool) -> Result<Port> {
        if out {
            self.drive(sig)
        } else {
            self.read(sig)
        }
    }

    /// An optional payload signal of either direction, as [`Bind::port`].
    pub fn opt_port(&self, sig: &str, out: bool) -> Result<Option<Port>> {
        if out {
            self.opt_drive(sig)
        } else {
            self.opt_read(sig)
        }
    }

    /// An optional driven signal: bound when present.
    pub fn opt_drive(&self, sig: &str) -> Result<Option<Port>> {
        if self.has(sig) {
            self.drive(sig).map(Some)
        } else {
            Ok(None)
        }
    }

    /// An optional read signal: bound when present.
    pub fn opt_read(&self, sig: &str) -> Result<Option<Port>> {
        if self.has(sig) {
            self.read(sig).map(Some)
        } else {
            Ok(None)
        }
    }

    /// An optional watched signal.
    pub fn opt_watch(&self, sig: &str) -> Option<Port> {
        self.resolve(sig)
            .ok()
            .flatten()
            .and_then(|n| self.model.port(&n).ok())
    }

    pub fn has(&self, sig: &str) -> bool {
        self.resolve(sig).ok().flatten().is_some()
    }

    /// The width of a data port in bytes, checked to be a power of two of at most
    /// `MAX_WORDS` words.
    pub fn data_bytes(&self, p: Port, sig: &str) -> Result<usize> {
        let w = p.width();
        if w < 8 || !w.is_power_of_two() || w as usize > MAX_WORDS * 32 {
            return Err(self.err(format!(
                "`{}` is {w} bits wide; data buses of 8 to {} bits, powers of two, are supported",
                self.name(sig),
                MAX_WORDS * 32
            )));
        }
        Ok(w as usize / 8)
    }
}

/// The byte in lane `i` of a word buffer.
#[inline]
pub(crate) fn lane(words: &[u32], i: usize) -> u8 {
    words.get(i / 4).map_or(0, |w| (w >> (8 * (i % 4))) as u8)
}

/// Sets lane `i` of a word buffer.
#[inline]
pub(crate) fn set_lane(words: &mut [u32], i: usize, b: u8) {
    if let Some(w) = words.get_mut(i / 4) {
        let sh = 8 * (i % 4);
        *w = (*w & !(0xff << sh)) | (u32::from(b) << sh);
    }
}

/// Stores the lanes `lanes` of a beat whose strobe bit is set (`words` holding the bus's
/// bytes, lane `i` at address `line + i`): the one way a slave model writes a beat.
pub(crate) fn store_lanes(
    mem: &mut Memory,
    line: u64,
    lanes: Range<usize>,
    words: &[u32],
    strb: u128,
) {
    for i in lanes {
        if strb >> i & 1 == 1 {
            mem.write_byte(line.wrapping_add(i as u64), lane(words, i));
        }
    }
}

/// Loads the lanes `lanes` of a beat at `line` into `words`: the one way a slave model reads
/// a beat.
pub(crate) fn load_lanes(mem: &Memory, line: u64, lanes: Range<usize>, words: &mut [u32]) {
    for i in lanes {
        set_lane(words, i, mem.read_byte(line.wrapping_add(i as u64)));
    }
}

/// Reads a strobe or keep port of up to 128 bits (a 1024-bit bus) as a u128.
#[inline]
pub(crate) fn get_mask(model: &Model, p: Port) -> u128 {
    if p.width() <= 64 {
        u128::from(model.get(p))
    } else {
        let mut w = [0u32; 4];
        model.get_words(p, &mut w);
        u128::from(w[0])
            | (u128::from(w[1]) << 32)
            | (u128::from(w[2]) << 64)
            | (u128::from(w[3]) << 96)
    }
}

/// Drives a strobe or keep port of up to 128 bits.
#[inline]
pub(crate) fn set_mask(model: &mut Model, p: Port, v: u128) {
    if p.width() <= 64 {
        model.set(p, v as u64);
    } else {
        let w = [
            v as u32,
            (v >> 32) as u32,
            (v >> 64) as u32,
            (v >> 96) as u32,
        ];
        model.set_words(p, &w);
    }
}

/// A hasher for the small integer keys (AXI IDs, transaction numbers) that the bus models and
/// monitors look up on every beat: one multiply per key instead of SipHash, whose protection
/// against chosen keys a test bench does not need.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// A map keyed by IDs or transaction numbers.
pub(crate) type IdMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<IdHasher>>;
