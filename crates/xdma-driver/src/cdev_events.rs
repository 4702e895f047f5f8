//! The event nodes, as `cdev_events.c` serves them.
//!
//! `char_events_read`: the user interrupts taken per line, and those no reader has taken yet.

use std::collections::VecDeque;

use xdma_ip::Ps;

use crate::dev::Driver;

impl Driver {
    /// User interrupts taken so far on line `line`.
    pub fn user_events(&self, line: usize) -> u64 {
        self.user_events.get(line).copied().unwrap_or(0)
    }

    /// The user interrupts of line `line` that a reader of its event node has not taken yet,
    /// each with when the driver had it (its handler done); a reader takes them from here.
    pub fn user_latched(&mut self, line: usize) -> Option<&mut VecDeque<Ps>> {
        self.user_latched.get_mut(line)
    }
}
