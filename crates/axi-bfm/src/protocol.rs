//! The words of the protocol that every layer shares: the channels of a bus, the rules the
//! monitors check (one line each), and the violation a broken rule becomes. The environment,
//! the errors and the pause generators use these; the monitors build on them, never the other
//! way round.

/// A protocol rule: the list of what the monitors check, one line each; the check of each
/// is the function of the same name in [`crate::monitor::rules`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// No VALID while the bus is in reset.
    ValidLowInReset,
    /// VALID low at the first edge after reset is released.
    ValidLowAfterReset,
    /// Once VALID is high it stays high until the handshake.
    ValidHeldUntilHandshake,
    /// The payload does not change while VALID && !READY (for AXI-Stream, the bytes TKEEP
    /// marks, and the side-band signals).
    PayloadStableWhileStalled,
    /// WLAST exactly on beat AWLEN+1.
    WlastOnLastBeat,
    /// RLAST exactly on beat ARLEN+1.
    RlastOnLastBeat,
    /// No INCR burst crosses a 4 KiB boundary.
    No4kCrossing,
    /// AxLEN legal for the burst type: FIXED up to 16 beats, WRAP 2, 4, 8 or 16 beats from an
    /// address aligned to the beat size.
    LenLegalForBurst,
    /// AxBURST is not the reserved encoding 3.
    BurstTypeNotReserved,
    /// AxSIZE no wider than the data bus.
    SizeWithinBusWidth,
    /// No write response without an outstanding write with that ID whose data is complete.
    NoBWithoutRequest,
    /// No read data without an outstanding read with that ID.
    NoRWithoutRequest,
    /// Responses for one ID come in the order of the requests.
    ResponsesInOrderPerId,
    /// EXOKAY only answers an exclusive access (never on AXI4-Lite).
    ExokayOnlyForExclusive,
    /// VALID is not stalled by !READY for longer than the configured bound.
    StallBound,
    /// Every request is answered within the configured number of cycles.
    ResponseLatencyBound,
    /// AXI-Stream, where the sink requires it (XDMA): TKEEP all ones on every beat but the last.
    TkeepFullExceptLast,
    /// AXI-Stream, where the sink requires it: on the TLAST beat TKEEP is a non-empty run of
    /// ones from lane 0.
    TkeepLastPacked,
    /// AXI-Stream: frame length within the configured limits.
    FrameLengthLimits,
    /// Every accepted request gets exactly one response: checked per ID as responses come
    /// (`no_b_without_request`, `no_r_without_request` catch the extra ones) and at the end of
    /// a test ([`crate::Env::finish`]) for the missing ones, each listed with its address and
    /// the cycle it was accepted.
    EveryRequestAnswered,
    /// With the monitor told the slave answers in order (`AxiMonitorConfig::in_order`), a
    /// response carries the ID of the oldest outstanding request, not another one's.
    ResponseIdOfOldest,
}

impl Rule {
    /// Every rule, in the order of the table above.
    pub const ALL: [Rule; 21] = [
        Rule::ValidLowInReset,
        Rule::ValidLowAfterReset,
        Rule::ValidHeldUntilHandshake,
        Rule::PayloadStableWhileStalled,
        Rule::WlastOnLastBeat,
        Rule::RlastOnLastBeat,
        Rule::No4kCrossing,
        Rule::LenLegalForBurst,
        Rule::BurstTypeNotReserved,
        Rule::SizeWithinBusWidth,
        Rule::NoBWithoutRequest,
        Rule::NoRWithoutRequest,
        Rule::ResponsesInOrderPerId,
        Rule::ExokayOnlyForExclusive,
        Rule::StallBound,
        Rule::ResponseLatencyBound,
        Rule::TkeepFullExceptLast,
        Rule::TkeepLastPacked,
        Rule::FrameLengthLimits,
        Rule::EveryRequestAnswered,
        Rule::ResponseIdOfOldest,
    ];

    /// The rule's name, as reported.
    pub fn name(self) -> &'static str {
        match self {
            Rule::ValidLowInReset => "valid_low_in_reset",
            Rule::ValidLowAfterReset => "valid_low_after_reset",
            Rule::ValidHeldUntilHandshake => "valid_held_until_handshake",
            Rule::PayloadStableWhileStalled => "payload_stable_while_stalled",
            Rule::WlastOnLastBeat => "wlast_on_last_beat",
            Rule::RlastOnLastBeat => "rlast_on_last_beat",
            Rule::No4kCrossing => "no_4k_crossing",
            Rule::LenLegalForBurst => "len_legal_for_burst",
            Rule::BurstTypeNotReserved => "burst_type_not_reserved",
            Rule::SizeWithinBusWidth => "size_within_bus_width",
            Rule::NoBWithoutRequest => "no_b_without_request",
            Rule::NoRWithoutRequest => "no_r_without_request",
            Rule::ResponsesInOrderPerId => "responses_in_order_per_id",
            Rule::ExokayOnlyForExclusive => "exokay_only_for_exclusive",
            Rule::StallBound => "stall_bound",
            Rule::ResponseLatencyBound => "response_latency_bound",
            Rule::TkeepFullExceptLast => "tkeep_full_except_last",
            Rule::TkeepLastPacked => "tkeep_last_packed",
            Rule::FrameLengthLimits => "frame_length_limits",
            Rule::EveryRequestAnswered => "every_request_answered",
            Rule::ResponseIdOfOldest => "response_id_of_oldest",
        }
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A channel of a bus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    /// Write address.
    Aw,
    /// Write data.
    W,
    /// Write response.
    B,
    /// Read address.
    Ar,
    /// Read data.
    R,
    /// AXI-Stream transfer.
    T,
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Channel::Aw => "AW",
            Channel::W => "W",
            Channel::B => "B",
            Channel::Ar => "AR",
            Channel::R => "R",
            Channel::T => "T",
        })
    }
}

/// A broken protocol rule, with where and when it broke and the values that broke it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule.
    pub rule: Rule,
    /// The bus (its port prefix).
    pub bus: String,
    /// The channel.
    pub channel: Channel,
    /// Simulated time of the edge at which the values were sampled, in picoseconds.
    pub time_ps: u64,
    /// The edge's number on the bus's clock.
    pub cycle: u64,
    /// The offending signal values, by signal name.
    pub values: Vec<(String, u64)>,
    /// What was wrong, in words.
    pub note: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "protocol violation `{}` on bus `{}`, channel {}, at {} ps (cycle {}): {}",
            self.rule, self.bus, self.channel, self.time_ps, self.cycle, self.note
        )?;
        if !self.values.is_empty() {
            f.write_str(" [")?;
            for (i, (n, v)) in self.values.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                // Counts read best in decimal, addresses and bus values in hex.
                if is_count(n) {
                    write!(f, "{n}={v}")?;
                } else {
                    write!(f, "{n}={v:#x}")?;
                }
            }
            f.write_str("]")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violation {}

/// Value names that are counts of cycles or beats, shown in decimal.
fn is_count(name: &str) -> bool {
    ["cycle", "waited", "beat", "count", "len", "frames", "bytes"]
        .iter()
        .any(|k| name.contains(k))
}
