//! Time passing with the driver loaded: the kernel's part, which no file of the driver holds.
//!
//! The card runs cycle by cycle while the handlers and the queued work go on.

use crate::dev::Driver;
use crate::error::Result;

/// Cycles the IP runs between two looks at the interrupts or the write-back.
pub(crate) const WAIT_STEP: u64 = 32;

impl Driver {
    /// Runs the card for `cycles` with the interrupt handlers in place (time passing while
    /// no call waits, as it does between system calls).
    pub fn idle(&mut self, cycles: u64) -> Result<()> {
        let mut left = cycles;
        while left > 0 {
            let n = left.min(WAIT_STEP);
            self.run(n)?;
            left -= n;
        }
        Ok(())
    }

    /// Runs the card for `cycles`, the driver's handlers and queued work going on as time
    /// passes.
    pub fn run(&mut self, cycles: u64) -> Result<()> {
        for _ in 0..cycles {
            self.ip.run(1, &mut self.ram, &mut self.irqs)?;
            self.cycles += 1;
            self.handle_irqs()?;
            self.advance()?;
        }
        Ok(())
    }
}
