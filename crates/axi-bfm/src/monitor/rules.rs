//! The checks of the protocol rules, one small function each, named after its rule in the
//! list of [`Rule`]s (after ZipCPU's AXI property files), with what it demands.
//!
//! The monitors gather what each check needs from the bus and call these functions; a check
//! returns `Some(note)` when the rule is broken, with the note saying how.

pub use crate::protocol::Rule;

/// AXI burst types.
// The burst encodings, as the bus carries them (the monitors read AxBURST as a number).
pub(crate) const BURST_FIXED: u64 = crate::burst::FIXED as u64;
pub(crate) const BURST_INCR: u64 = crate::burst::INCR as u64;
pub(crate) const BURST_WRAP: u64 = crate::burst::WRAP as u64;

type Finding = Option<String>;

/// valid_low_in_reset: VALID is low whenever reset is sampled active.
pub(crate) fn valid_low_in_reset(in_reset: bool, valid: bool) -> Finding {
    (in_reset && valid).then(|| "VALID is high while reset is asserted".to_string())
}

/// valid_low_after_reset: at the first edge after reset, VALID is still low (a master may
/// raise it only after an edge that saw reset released).
pub(crate) fn valid_low_after_reset(was_in_reset: bool, in_reset: bool, valid: bool) -> Finding {
    (was_in_reset && !in_reset && valid)
        .then(|| "VALID is high at the first edge after reset was released".to_string())
}

/// valid_held_until_handshake: VALID that was high without READY is still high.
pub(crate) fn valid_held_until_handshake(stalled_before: bool, valid: bool) -> Finding {
    (stalled_before && !valid).then(|| {
        "VALID dropped before its handshake (it was high with READY low at the previous edge)"
            .to_string()
    })
}

/// payload_stable_while_stalled: the payload equals the one stalled at the previous edge.
pub(crate) fn payload_stable_while_stalled(
    stalled_before: bool,
    valid: bool,
    before: &[u32],
    now: &[u32],
) -> Finding {
    (stalled_before && valid && before != now)
        .then(|| "the payload changed while VALID was high and READY low".to_string())
}

/// wlast_on_last_beat: beat number `beat` (from 1) of a burst of `beats` carries WLAST iff it
/// is the last.
pub(crate) fn wlast_on_last_beat(beat: u32, beats: u32, wlast: bool) -> Finding {
    if wlast && beat != beats {
        Some(format!("WLAST on beat {beat} of a {beats}-beat burst"))
    } else if !wlast && beat == beats {
        Some(format!(
            "no WLAST on beat {beat}, the last of a {beats}-beat burst"
        ))
    } else {
        None
    }
}

/// rlast_on_last_beat: as for WLAST, on the read data of one ID.
pub(crate) fn rlast_on_last_beat(beat: u32, beats: u32, rlast: bool) -> Finding {
    if rlast && beat != beats {
        Some(format!("RLAST on beat {beat} of a {beats}-beat burst"))
    } else if !rlast && beat == beats {
        Some(format!(
            "no RLAST on beat {beat}, the last of a {beats}-beat burst"
        ))
    } else {
        None
    }
}

/// no_4k_crossing: an INCR burst stays within one 4 KiB page.
pub(crate) fn no_4k_crossing(addr: u64, len: u64, size: u64, burst: u64) -> Finding {
    if burst != BURST_INCR || size > 7 {
        return None;
    }
    let bytes = 1u64 << size;
    let last = crate::burst::incr_last_byte(addr, len + 1, size as u8);
    crate::burst::crosses_4k(addr, last).then(|| {
        format!("burst of {} beats of {bytes} bytes from {addr:#x} ends at {last:#x}, past the 4 KiB boundary", len + 1)
    })
}

/// len_legal_for_burst: FIXED at most 16 beats; WRAP 2, 4, 8 or 16 beats from an address
/// aligned to the beat size. (INCR allows every 8-bit AxLEN.)
pub(crate) fn len_legal_for_burst(addr: u64, len: u64, size: u64, burst: u64) -> Finding {
    match burst {
        BURST_FIXED if len > 15 => Some(format!("FIXED burst of {} beats; at most 16", len + 1)),
        BURST_WRAP if !matches!(len, 1 | 3 | 7 | 15) => Some(format!(
            "WRAP burst of {} beats; must be 2, 4, 8 or 16",
            len + 1
        )),
        BURST_WRAP if size < 8 && !addr.is_multiple_of(1u64 << size) => Some(format!(
            "WRAP burst from {addr:#x}, not aligned to its {}-byte beats",
            1u64 << size
        )),
        _ => None,
    }
}

/// burst_type_not_reserved: AxBURST is FIXED, INCR or WRAP.
pub(crate) fn burst_type_not_reserved(burst: u64) -> Finding {
    (burst > BURST_WRAP).then(|| format!("AxBURST {burst} is the reserved encoding"))
}

/// size_within_bus_width: a beat is no wider than the data bus.
pub(crate) fn size_within_bus_width(size: u64, data_bytes: usize) -> Finding {
    (size > 7 || (1usize << size) > data_bytes).then(|| {
        format!(
            "AxSIZE {size} ({} bytes) on a {data_bytes}-byte bus",
            1u64 << size.min(63)
        )
    })
}

/// no_b_without_request: a B needs an outstanding write of its ID whose data is complete.
pub(crate) fn no_b_without_request(outstanding: bool, data_done: bool) -> Finding {
    if !outstanding {
        Some("write response with no outstanding write of this ID".into())
    } else if !data_done {
        Some("write response before the last beat of its write data".into())
    } else {
        None
    }
}

/// no_r_without_request: read data needs an outstanding read of its ID. `request_now` is an AR
/// handshake at the same edge: the slave raised RVALID before the read it answers was
/// accepted, which the message says, since the read is then on the bus beside it.
pub(crate) fn no_r_without_request(outstanding: bool, request_now: bool) -> Finding {
    (!outstanding).then(|| {
        if request_now {
            "read data at the same edge as the AR handshake of the read it would answer: RVALID may rise only after that handshake, at a later edge".to_string()
        } else {
            "read data with no outstanding read of this ID".to_string()
        }
    })
}

/// responses_in_order_per_id: a read burst of one ID ended with the length of a later request
/// of that ID rather than of the oldest, so it answered out of order.
pub(crate) fn responses_in_order_per_id(beats: u32, oldest: u32, later: &[u32]) -> Finding {
    (beats != oldest && later.contains(&beats)).then(|| {
        format!("read burst of {beats} beats answered first, but the oldest read of this ID has {oldest} beats")
    })
}

/// exokay_only_for_exclusive: EXOKAY only for a request made with AxLOCK.
pub(crate) fn exokay_only_for_exclusive(resp: u64, exclusive: bool) -> Finding {
    (resp == 1 && !exclusive).then(|| "EXOKAY answers an access that was not exclusive".to_string())
}

/// stall_bound: VALID has waited for READY no more than `bound` cycles.
pub(crate) fn stall_bound(stalled_for: u64, bound: u64) -> Finding {
    (bound > 0 && stalled_for > bound)
        .then(|| format!("VALID waited {stalled_for} cycles for READY; the bound is {bound}"))
}

/// response_latency_bound: the oldest request has waited no more than `bound` cycles.
pub(crate) fn response_latency_bound(waited: u64, bound: u64) -> Finding {
    (bound > 0 && waited > bound).then(|| {
        format!("a request has waited {waited} cycles for its response; the bound is {bound}")
    })
}

/// tkeep_full_except_last: every beat but the TLAST one keeps all bytes.
pub(crate) fn tkeep_full_except_last(tkeep: u128, full: u128, tlast: bool) -> Finding {
    (!tlast && tkeep != full)
        .then(|| format!("TKEEP {tkeep:#x} on a beat before TLAST; must be all ones ({full:#x})"))
}

/// tkeep_last_packed: the TLAST beat keeps a non-empty run of bytes from lane 0.
pub(crate) fn tkeep_last_packed(tkeep: u128, tlast: bool) -> Finding {
    (tlast && (tkeep == 0 || (tkeep & (tkeep.wrapping_add(1))) != 0))
        .then(|| format!("TKEEP {tkeep:#x} on the TLAST beat; must be ones from lane 0 up"))
}

/// frame_length_limits: a frame's byte count within `[min, max]`; `ended` says whether the
/// frame is complete (the minimum applies only then).
pub(crate) fn frame_length_limits(bytes: u64, ended: bool, min: u64, max: u64) -> Finding {
    if max > 0 && bytes > max {
        Some(format!("frame has {bytes} bytes; at most {max} allowed"))
    } else if ended && bytes < min {
        Some(format!("frame has {bytes} bytes; at least {min} required"))
    } else {
        None
    }
}

/// every_request_answered: at the end of a test nothing accepted is still unanswered;
/// `left` describes each unanswered request.
pub(crate) fn every_request_answered(left: &[String]) -> String {
    format!(
        "{} accepted request(s) never answered: {}",
        left.len(),
        left.join("; ")
    )
}

/// response_id_of_oldest: an in-order slave answered with ID `got` while the request of ID
/// `oldest_id` at `oldest_addr`, accepted at cycle `since`, is older and still unanswered.
pub(crate) fn response_id_of_oldest(
    got: u64,
    oldest_id: u64,
    oldest_addr: u64,
    since: u64,
) -> String {
    format!("response with ID {got}, but the oldest outstanding request is ID {oldest_id} at {oldest_addr:#x}, accepted at cycle {since}, and this slave answers in order")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = Rule::ALL.iter().map(|r| r.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Rule::ALL.len());
    }

    #[test]
    fn checks_fire_exactly_on_their_condition() {
        assert!(no_4k_crossing(0xff0, 0, 4, BURST_INCR).is_none());
        assert!(no_4k_crossing(0xff0, 1, 4, BURST_INCR).is_some());
        assert!(
            no_4k_crossing(0xff8, 0, 4, BURST_INCR).is_none(),
            "unaligned start, one beat"
        );
        assert!(len_legal_for_burst(0, 2, 2, BURST_WRAP).is_some());
        assert!(len_legal_for_burst(0, 3, 2, BURST_WRAP).is_none());
        assert!(len_legal_for_burst(2, 3, 2, BURST_WRAP).is_some());
        assert!(len_legal_for_burst(0, 16, 2, BURST_FIXED).is_some());
        assert!(tkeep_last_packed(0b0111, true).is_none());
        assert!(tkeep_last_packed(0b0110, true).is_some());
        assert!(tkeep_last_packed(0, true).is_some());
        assert!(tkeep_full_except_last(0xff, 0xff, false).is_none());
        assert!(wlast_on_last_beat(2, 2, true).is_none());
        assert!(wlast_on_last_beat(1, 2, true).is_some());
        assert!(wlast_on_last_beat(2, 2, false).is_some());
        assert!(responses_in_order_per_id(4, 2, &[4]).is_some());
        assert!(responses_in_order_per_id(3, 2, &[4]).is_none());
    }
}
