//! What a randomizing slave decides, shared by its AXI4 and AXI4-Lite forms: the caller's
//! [`SlaveProfile`] (ranges and probabilities), the [`SlaveChoices`] one case draws from it
//! (one [`ReqChoice`] per request, in the order the slave accepts them), a proptest strategy
//! for those choices, the [`SlaveLog`] of what the slave answered, and the exclusive-access
//! monitor of AXI A7.2.
//!
//! The choices are plain data, so a fuzz case holds them and a failure shrinks them with the
//! master's work: a shorter list leaves the later requests to the polite default (no stall,
//! no latency, in order, OKAY), and every field shrinks toward that default.

use std::ops::RangeInclusive;

use proptest::prelude::*;

use crate::burst::Burst;
use crate::error::Resp;

/// Addresses a slave always answers with an error, `[lo, hi)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorWindow {
    /// First address of the window.
    pub lo: u64,
    /// One past its last address.
    pub hi: u64,
    /// The response given there: SLVERR or DECERR.
    pub resp: Resp,
}

/// What a randomizing slave may do, as the caller narrows it: each request draws its
/// behaviour from these ranges and probabilities (0.0 never, 1.0 always).
#[derive(Debug, Clone, PartialEq)]
pub struct SlaveProfile {
    /// Cycles a request (or a write burst's data) waits with READY low once VALID is up.
    pub stall: RangeInclusive<u32>,
    /// Cycles from a request's acceptance (a write: its address and last data) to its response.
    pub latency: RangeInclusive<u32>,
    /// Idle cycles between two read beats of a burst, and WREADY low between write beats.
    pub beat_gap: RangeInclusive<u32>,
    /// Chance that a request lets younger requests of other IDs be answered before it.
    pub reorder: f64,
    /// Chance that a read burst's beats are interleaved with another ID's read data.
    pub interleave: f64,
    /// Chance that a write's data is taken before its address.
    pub data_first: f64,
    /// Chance that a request is answered SLVERR or DECERR (an errored write changes nothing).
    pub error_rate: f64,
    /// Addresses always answered with an error, whatever the rate.
    pub error_window: Option<ErrorWindow>,
    /// Monitor exclusive accesses and answer them EXOKAY as A7.2 says; off, the slave is one
    /// without exclusive support: it answers OKAY and treats them as normal accesses.
    pub exclusive: bool,
    /// Requests of one direction held at once; AxREADY is low while that many are held.
    pub max_queued: usize,
    /// Requests per direction whose behaviour a case draws; later ones are answered politely.
    pub max_requests: usize,
}

impl Default for SlaveProfile {
    /// Everything a legal slave may do: stalls of up to 8 cycles, latencies up to 24, gaps up
    /// to 2, reordering and interleaving half the time, data before address a third of the
    /// time, errors on one request in ten, exclusive monitoring, 8 requests held per
    /// direction, 64 requests drawn per direction.
    fn default() -> Self {
        SlaveProfile {
            stall: 0..=8,
            latency: 0..=24,
            beat_gap: 0..=2,
            reorder: 0.5,
            interleave: 0.5,
            data_first: 0.3,
            error_rate: 0.1,
            error_window: None,
            exclusive: true,
            max_queued: 8,
            max_requests: 64,
        }
    }
}

impl SlaveProfile {
    /// The polite slave: no stall, no latency, in order, whole bursts, OKAY, exclusive
    /// monitoring on. What a master that passes only this has never been tested against.
    pub fn polite() -> SlaveProfile {
        SlaveProfile {
            stall: 0..=0,
            latency: 0..=0,
            beat_gap: 0..=0,
            reorder: 0.0,
            interleave: 0.0,
            data_first: 0.0,
            error_rate: 0.0,
            error_window: None,
            exclusive: true,
            max_queued: 8,
            max_requests: 0,
        }
    }
}

/// How the slave answers one request.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct ReqChoice {
    /// Cycles READY stays low once the request's VALID is up.
    pub stall: u32,
    /// Cycles from acceptance to the first response beat, at least.
    pub latency: u32,
    /// Idle cycles between read beats (WREADY low between write beats).
    pub gap: u32,
    /// Priority among due responses of different IDs: lower goes first, ties go oldest first.
    pub rank: u8,
    /// A read burst may be interrupted by another ID's read data after each beat.
    pub interleave: bool,
    /// A write's data may be taken before its address.
    pub data_first: bool,
    /// An error response (SLVERR or DECERR) instead of the access.
    pub error: Option<Resp>,
}

impl std::fmt::Debug for ReqChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Written as Rust, so a printed failure pastes back into a test.
        let error = match self.error {
            Some(r) => format!("Some(Resp::{r:?})"),
            None => "None".into(),
        };
        write!(
            f,
            "ReqChoice {{ stall: {}, latency: {}, gap: {}, rank: {}, interleave: {}, \
             data_first: {}, error: {error} }}",
            self.stall, self.latency, self.gap, self.rank, self.interleave, self.data_first
        )
    }
}

/// What a slave does over one case: a choice per write and per read request, in acceptance
/// order, and the fixed parts of its profile.
#[derive(Clone, PartialEq, Default)]
pub struct SlaveChoices {
    /// The choices of the write requests, the k-th for the k-th AW accepted.
    pub writes: Vec<ReqChoice>,
    /// The choices of the read requests.
    pub reads: Vec<ReqChoice>,
    /// Addresses always answered with an error.
    pub error_window: Option<ErrorWindow>,
    /// Exclusive monitoring on.
    pub exclusive: bool,
    /// Requests held per direction at most.
    pub max_queued: usize,
}

impl SlaveChoices {
    /// The polite slave's choices: every request answered at once, in order, OKAY.
    pub fn polite() -> SlaveChoices {
        SlaveChoices {
            exclusive: true,
            max_queued: 8,
            ..SlaveChoices::default()
        }
    }

    /// The choice of the k-th write (or read) request; past the list, the polite one.
    pub(crate) fn of(&self, write: bool, k: usize) -> ReqChoice {
        let list = if write { &self.writes } else { &self.reads };
        list.get(k).copied().unwrap_or_default()
    }

    /// The error a request at `[lo, hi)` with choice `c` gets, if any: the window wins.
    pub(crate) fn error_for(&self, lo: u64, hi: u64, c: &ReqChoice) -> Option<Resp> {
        match self.error_window {
            Some(w) if lo < w.hi && w.lo < hi => Some(w.resp),
            _ => c.error,
        }
    }
}

impl std::fmt::Debug for SlaveChoices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |v: &[ReqChoice]| {
            let items: Vec<String> = v.iter().map(|c| format!("{c:?}")).collect();
            format!("vec![{}]", items.join(", "))
        };
        let window = match self.error_window {
            Some(w) => format!(
                "Some(ErrorWindow {{ lo: {:#x}, hi: {:#x}, resp: Resp::{:?} }})",
                w.lo, w.hi, w.resp
            ),
            None => "None".into(),
        };
        write!(
            f,
            "SlaveChoices {{ writes: {}, reads: {}, error_window: {window}, exclusive: {}, \
             max_queued: {} }}",
            list(&self.writes),
            list(&self.reads),
            self.exclusive,
            self.max_queued
        )
    }
}

/// A draw that shrinks toward `false`: true with probability `p`.
fn chance(p: f64) -> BoxedStrategy<bool> {
    if p <= 0.0 {
        Just(false).boxed()
    } else if p >= 1.0 {
        Just(true).boxed()
    } else {
        prop::bool::weighted(p).boxed()
    }
}

/// A strategy for one request's choice under `p`.
pub fn req_choice(p: &SlaveProfile) -> impl Strategy<Value = ReqChoice> {
    let err = chance(p.error_rate);
    (
        p.stall.clone(),
        p.latency.clone(),
        p.beat_gap.clone(),
        chance(p.reorder),
        1u8..4,
        chance(p.interleave),
        chance(p.data_first),
        (err, any::<bool>()),
    )
        .prop_map(
            |(stall, latency, gap, reorder, rank, interleave, data_first, (err, dec))| ReqChoice {
                stall,
                latency,
                gap,
                rank: if reorder { rank } else { 0 },
                interleave,
                data_first,
                error: err.then_some(if dec { Resp::DecErr } else { Resp::SlvErr }),
            },
        )
}

/// A strategy for a whole case's choices under `p`.
pub fn slave_choices(p: &SlaveProfile) -> impl Strategy<Value = SlaveChoices> {
    let n = p.max_requests;
    let (window, exclusive, max_queued) = (p.error_window, p.exclusive, p.max_queued.max(1));
    (
        prop::collection::vec(req_choice(p), 0..=n),
        prop::collection::vec(req_choice(p), 0..=n),
    )
        .prop_map(move |(writes, reads)| SlaveChoices {
            writes,
            reads,
            error_window: window,
            exclusive,
            max_queued,
        })
}

/// What a randomizing slave answered, request by request in acceptance order per direction:
/// what a reference model needs to say what memory must hold (which exclusive writes
/// succeeded, which accesses failed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlaveLog {
    /// Each write request and its response.
    pub writes: Vec<(Burst, Resp)>,
    /// Each read request and its response.
    pub reads: Vec<(Burst, Resp)>,
    /// The slave monitored exclusive accesses: an exclusive write answered OKAY failed and
    /// changed nothing. Without monitoring, AxLOCK meant nothing and OKAY writes wrote.
    pub exclusive: bool,
}

impl SlaveLog {
    /// An empty log of a slave that does (`exclusive`) or does not monitor exclusives.
    pub(crate) fn new(exclusive: bool) -> SlaveLog {
        SlaveLog {
            exclusive,
            ..SlaveLog::default()
        }
    }

    /// Whether a write of `b` answered `resp` changed memory.
    pub fn wrote(&self, b: &Burst, resp: Resp) -> bool {
        match resp {
            Resp::ExOkay => true,
            Resp::Okay => !(b.lock && self.exclusive),
            _ => false,
        }
    }
}

/// The exclusive-access monitor of AXI A7.2: one reservation per ID.
#[derive(Debug, Default)]
pub(crate) struct Exclusives {
    held: Vec<(u32, Burst)>,
}

/// The bytes `[lo, hi)` an exclusive access covers, if it is a legal one: at most 16 beats,
/// a power-of-two total of at most 128 bytes, aligned to that total (A7.2.4).
fn excl_span(b: &Burst) -> Option<(u64, u64)> {
    let total = u64::from(b.beats()) << b.size.min(7);
    let legal =
        b.beats() <= 16 && total.is_power_of_two() && total <= 128 && b.addr.is_multiple_of(total);
    legal.then_some((b.addr, b.addr + total))
}

impl Exclusives {
    /// An exclusive read accepted: EXOKAY and a reservation for its ID when it is a legal
    /// exclusive access, OKAY (and none) otherwise.
    pub(crate) fn read(&mut self, b: &Burst) -> Resp {
        self.held.retain(|(id, _)| *id != b.id);
        if excl_span(b).is_some() {
            self.held.push((b.id, *b));
            Resp::ExOkay
        } else {
            Resp::Okay
        }
    }

    /// An exclusive write: EXOKAY when its ID holds a reservation of the same address, size
    /// and length that no write has touched since, OKAY (and it must not change memory)
    /// otherwise. Either way its ID's reservation ends.
    pub(crate) fn write(&mut self, b: &Burst) -> Resp {
        let pos = self.held.iter().position(|(id, r)| {
            *id == b.id && r.addr == b.addr && r.size == b.size && r.len == b.len
        });
        self.held.retain(|(id, _)| *id != b.id);
        match pos {
            Some(_) if excl_span(b).is_some() => Resp::ExOkay,
            _ => Resp::Okay,
        }
    }

    /// A write that changed `[lo, hi)`: every reservation it touches is lost.
    pub(crate) fn wrote(&mut self, lo: u64, hi: u64) {
        self.held
            .retain(|(_, r)| excl_span(r).is_some_and(|(rlo, rhi)| !(rlo < hi && lo < rhi)));
    }

    /// Reset: no reservation.
    pub(crate) fn clear(&mut self) {
        self.held.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exclusive_pair_succeeds_unless_a_write_comes_between() {
        let mut x = Exclusives::default();
        let mut b = Burst::incr(1, 0x40, 2, 4);
        b.lock = true;
        assert_eq!(x.read(&b), Resp::ExOkay);
        assert_eq!(x.write(&b), Resp::ExOkay);
        assert_eq!(
            x.write(&b),
            Resp::Okay,
            "the reservation ends with the write"
        );
        assert_eq!(x.read(&b), Resp::ExOkay);
        x.wrote(0x4c, 0x50);
        assert_eq!(
            x.write(&b),
            Resp::Okay,
            "a write to the location in between"
        );
        x.read(&b);
        x.wrote(0x50, 0x60);
        assert_eq!(
            x.write(&b),
            Resp::ExOkay,
            "a write next to it does not count"
        );
        let mut other = b;
        other.len = 1;
        x.read(&b);
        assert_eq!(x.write(&other), Resp::Okay, "another length fails");
        let mut odd = Burst::incr(0, 0x44, 2, 4);
        odd.lock = true;
        assert_eq!(x.read(&odd), Resp::Okay, "not aligned to its 16 bytes");
    }

    #[test]
    fn choices_print_as_rust() {
        let c = SlaveChoices {
            writes: vec![ReqChoice {
                error: Some(Resp::SlvErr),
                ..ReqChoice::default()
            }],
            ..SlaveChoices::polite()
        };
        let s = format!("{c:?}");
        assert!(s.contains("writes: vec![ReqChoice { stall: 0"), "{s}");
        assert!(s.contains("error: Some(Resp::SlvErr)"), "{s}");
    }
}
