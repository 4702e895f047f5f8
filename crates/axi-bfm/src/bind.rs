//! Resolving a bus's signals from its port prefix, once, at attach time.

use card_sim::{Model, Port};

use crate::error::{BfmError, Result};

/// The widest data bus the models carry, in 32-bit words (1024 bits); buffers of this size
/// live inside each model so the per-cycle path never allocates.
pub(crate) const MAX_WORDS: usize = 32;

/// Fixed-size word buffer for one beat of data.
pub(crate) type Words = [u32; MAX_WORDS];

pub(crate) struct Bind<'a> {
    pub model: &'a Model,
    pub prefix: &'a str,
}

impl Bind<'_> {
    fn name(&self, sig: &str) -> String {
        format!("{}_{}", self.prefix, sig)
    }

    fn err(&self, problem: String) -> BfmError {
        BfmError::Bind {
            bus: self.prefix.to_string(),
            problem,
        }
    }

    /// A signal the bus model drives: must exist and be an input of the model.
    pub fn drive(&self, sig: &str) -> Result<Port> {
        let name = self.name(sig);
        match self.model.input(&name) {
            Ok(p) => Ok(p),
            Err(e) => Err(self.err(format!("signal `{name}` (driven by this bus model): {e}"))),
        }
    }

    /// A signal the bus model only reads: must exist and be an output of the model.
    pub fn read(&self, sig: &str) -> Result<Port> {
        let name = self.name(sig);
        let p = self
            .model
            .port(&name)
            .map_err(|e| self.err(format!("signal `{name}` (read by this bus model): {e}")))?;
        if !self.model.is_output(p) {
            return Err(self.err(format!(
                "signal `{name}` is an input of the model, but this bus model expects the model to drive it; attach the opposite bus model"
            )));
        }
        Ok(p)
    }

    /// A signal a monitor watches, of either direction.
    pub fn watch(&self, sig: &str) -> Result<Port> {
        let name = self.name(sig);
        self.model
            .port(&name)
            .map_err(|e| self.err(format!("signal `{name}`: {e}")))
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
        self.model.port(&self.name(sig)).ok()
    }

    pub fn has(&self, sig: &str) -> bool {
        let name = self.name(sig);
        self.model.port_names().any(|n| n == name)
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
