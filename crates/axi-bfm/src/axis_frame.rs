//! The AXI-Stream frame a source sends and a sink collects, and a frame as a monitor saw it: a
//! leaf that both the stream models and the stream monitor import.

/// One AXI-Stream frame: the bytes TKEEP marks, in order, and the side-band values (taken
/// from the first beat by a sink; driven on every beat by a source).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AxisFrame {
    /// The frame's bytes.
    pub data: Vec<u8>,
    /// TID.
    pub tid: u64,
    /// TDEST.
    pub tdest: u64,
    /// TUSER.
    pub tuser: u64,
}

impl AxisFrame {
    /// A frame of `data` with zero side-band values.
    pub fn new(data: impl Into<Vec<u8>>) -> AxisFrame {
        AxisFrame {
            data: data.into(),
            ..AxisFrame::default()
        }
    }
}

/// A frame as a monitor saw it pass, with when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedFrame {
    /// The frame.
    pub frame: AxisFrame,
    /// Time of the edge that took its first beat, in picoseconds.
    pub start_ps: u64,
    /// Time of the edge that took its last beat.
    pub end_ps: u64,
    /// Cycle of the first beat.
    pub start_cycle: u64,
    /// Cycle of the last beat.
    pub end_cycle: u64,
}
