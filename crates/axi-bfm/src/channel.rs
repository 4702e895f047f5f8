//! One VALID/READY channel, the piece every bus model is built from (as cocotbext-axi builds
//! every bus from one stream channel): a [`Source`] that drives VALID and a payload, and a
//! [`Sink`] that drives READY and takes beats. What differs between channels, the payload's
//! ports and how a beat goes onto them or comes off them, is a [`Payload`].
//!
//! Both halves ask their pause generator once per cycle out of reset. A source never drops a
//! VALID it raised (unless a fault asks it to) and drives idle garbage on the payload while
//! VALID is low when asked; a sink raises READY when its pause generator and its owner allow.

use rand::{Rng, SeedableRng};
use rand_xorshift::XorShiftRng;
use sim_runtime::{Model, Port};

use crate::bind::{Bind, Words, MAX_WORDS};
use crate::error::Result;
use crate::pause::Pause;

/// The payload ports of one channel, and how a beat is driven onto them and sampled off them.
pub(crate) trait Payload {
    /// One beat as a bus model holds it.
    type Beat;
    /// Puts `beat` on the payload ports (a source, with VALID high).
    fn drive(&self, m: &mut Model, beat: &Self::Beat);
    /// Reads the beat on the payload ports (a sink, at a handshake).
    fn sample(&self, m: &Model) -> Self::Beat;
    /// Puts changing garbage on the payload ports (a source, with VALID low), so that a
    /// receiver that uses a payload without its VALID reads nonsense.
    fn garbage(&self, m: &mut Model, g: &mut Garbage);
}

/// The idle-garbage generator of a source.
#[derive(Debug, Clone)]
pub(crate) struct Garbage(XorShiftRng);

impl Garbage {
    /// A generator; `salt` gives every channel its own sequence.
    pub(crate) fn new(salt: u64) -> Garbage {
        Garbage(XorShiftRng::seed_from_u64(0x9e37_79b9_7f4a_7c15 ^ salt))
    }

    /// The next 64 garbage bits.
    #[inline]
    pub(crate) fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A beat's worth of garbage words.
    #[inline]
    pub(crate) fn words(&mut self, n: usize) -> Words {
        let mut w = [0u32; MAX_WORDS];
        for x in &mut w[..n] {
            *x = self.0.next_u32();
        }
        w
    }
}

/// What a source does this cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// The beat on the bus waits for READY and stays up.
    Stalled,
    /// No beat waits: a new one may go up when `go` (the pause generator allows it).
    Free {
        /// The pause generator lets a new beat go up.
        go: bool,
    },
}

/// The sending half of a channel: drives VALID and the payload, reads READY.
pub(crate) struct Source<P: Payload> {
    /// The payload's ports.
    pub(crate) ports: P,
    valid: Port,
    ready: Port,
    /// When VALID holds back (idle cycles).
    pub(crate) pause: Pause,
    /// The beat on the bus (VALID high), if any.
    shown: Option<P::Beat>,
    /// VALID was high without READY at the last edge: the beat stays up.
    stalled: bool,
    /// Garbage on the payload while VALID is low, when on.
    garbage: Option<Garbage>,
}

impl<P: Payload> Source<P> {
    /// The source of the channel `<prefix>valid`/`<prefix>ready` of a bus with `ports`.
    pub(crate) fn bind(b: &Bind<'_>, prefix: &str, ports: P) -> Result<Source<P>> {
        Ok(Source {
            ports,
            valid: b.drive(&format!("{prefix}valid"))?,
            ready: b.read(&format!("{prefix}ready"))?,
            pause: Pause::default(),
            shown: None,
            stalled: false,
            garbage: None,
        })
    }

    /// Before the edge: the beat the sink takes at it, if any. A beat not taken stays up.
    #[inline]
    pub(crate) fn sample(&mut self, m: &Model) -> Option<P::Beat> {
        if self.shown.is_none() {
            self.stalled = false;
            return None;
        }
        self.stalled = !m.get_bool(self.ready);
        if self.stalled {
            None
        } else {
            self.shown.take()
        }
    }

    /// After the edge, first: asks the pause generator for this cycle. A stalled beat stays
    /// up ([`Turn::Stalled`]: the owner may apply a fault to it); otherwise the owner follows
    /// with [`Source::show`].
    #[inline]
    pub(crate) fn turn(&mut self) -> Turn {
        let go = !self.pause.pause_now();
        if self.stalled {
            Turn::Stalled
        } else {
            Turn::Free { go }
        }
    }

    /// After [`Turn::Free`]: shows `beat` (VALID high), or, with none, drops VALID and drives
    /// idle garbage when that is on.
    #[inline]
    pub(crate) fn show(&mut self, m: &mut Model, beat: Option<P::Beat>) {
        self.shown = beat;
        self.drive_shown(m);
    }

    /// After [`Turn::Free`]: as [`Source::show`], with the beat built where the source keeps
    /// it. `build` is handed the payload's ports and the slot, and leaves the next beat in the
    /// slot or empties it: a wide beat is then not copied on its way to the bus.
    #[inline]
    pub(crate) fn show_in_place(
        &mut self,
        m: &mut Model,
        build: impl FnOnce(&P, &mut Option<P::Beat>),
    ) {
        build(&self.ports, &mut self.shown);
        self.drive_shown(m);
    }

    /// Drives the shown beat with VALID high, or VALID low (and idle garbage when that is on).
    #[inline]
    fn drive_shown(&mut self, m: &mut Model) {
        match &self.shown {
            Some(beat) => {
                self.ports.drive(m, beat);
                m.set_bool(self.valid, true);
            }
            None => {
                m.set_bool(self.valid, false);
                if let Some(g) = &mut self.garbage {
                    self.ports.garbage(m, g);
                }
            }
        }
    }

    /// In reset: VALID at `valid` (low, unless a fault raises it), nothing shown.
    pub(crate) fn reset(&mut self, m: &mut Model, valid: bool) {
        m.set_bool(self.valid, valid);
        self.shown = None;
        self.stalled = false;
    }

    /// Whether a beat is up (VALID high).
    #[inline]
    pub(crate) fn is_shown(&self) -> bool {
        self.shown.is_some()
    }

    /// Fault: drops VALID of a stalled beat before its handshake; returns the beat.
    pub(crate) fn drop_valid(&mut self, m: &mut Model) -> Option<P::Beat> {
        m.set_bool(self.valid, false);
        self.stalled = false;
        self.shown.take()
    }

    /// Fault: changes the stalled beat with `f` and drives it again.
    pub(crate) fn change_shown(&mut self, m: &mut Model, f: impl FnOnce(&mut P::Beat)) {
        if let Some(beat) = &mut self.shown {
            f(beat);
            self.ports.drive(m, beat);
        }
    }

    /// Turns idle garbage on (seeded with `salt`) or off.
    pub(crate) fn set_garbage(&mut self, on: Option<u64>) {
        self.garbage = on.map(Garbage::new);
    }

    /// Whether idle garbage is on.
    pub(crate) fn garbage_on(&self) -> bool {
        self.garbage.is_some()
    }
}

/// The receiving half of a channel: drives READY, reads VALID and the payload.
pub(crate) struct Sink<P: Payload> {
    /// The payload's ports.
    pub(crate) ports: P,
    valid: Port,
    ready: Port,
    /// When READY holds back (backpressure).
    pub(crate) pause: Pause,
    /// READY is high.
    up: bool,
}

impl<P: Payload> Sink<P> {
    /// The sink of the channel `<prefix>valid`/`<prefix>ready` of a bus with `ports`.
    pub(crate) fn bind(b: &Bind<'_>, prefix: &str, ports: P) -> Result<Sink<P>> {
        Ok(Sink {
            ports,
            valid: b.read(&format!("{prefix}valid"))?,
            ready: b.drive(&format!("{prefix}ready"))?,
            pause: Pause::default(),
            up: false,
        })
    }

    /// Before the edge: whether a beat passes at it (READY and VALID high).
    #[inline]
    pub(crate) fn fires(&self, m: &Model) -> bool {
        self.up && m.get_bool(self.valid)
    }

    /// Before the edge: the beat taken at it, if any.
    #[inline]
    pub(crate) fn sample(&self, m: &Model) -> Option<P::Beat> {
        self.fires(m).then(|| self.ports.sample(m))
    }

    /// After the edge: asks the pause generator and raises READY when it and `want` allow.
    /// Returns READY.
    #[inline]
    pub(crate) fn drive(&mut self, m: &mut Model, want: bool) -> bool {
        self.up = !self.pause.pause_now() && want;
        m.set_bool(self.ready, self.up);
        self.up
    }

    /// READY low without asking the pause generator (in reset, or switched off).
    pub(crate) fn off(&mut self, m: &mut Model) {
        self.up = false;
        m.set_bool(self.ready, false);
    }

    /// The VALID port: what wakes an idle sink.
    pub(crate) fn valid_port(&self) -> Port {
        self.valid
    }
}
