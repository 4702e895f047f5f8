//! The register nodes `_user` and `_control`, as `cdev_ctrl.c` serves them.
//!
//! `char_ctrl_read` and `char_ctrl_write`: a dword of the user BAR or of the DMA BAR, at once
//! or as a call that crosses the link.

use xdma_ip::{Bar, Ps};

use crate::call::Call;
use crate::dev::{Driver, RegCall, RegPhase};
use crate::error::Result;

impl Driver {
    /// Reads a dword of the user BAR (a `pread` on the `_user` node).
    pub fn user_read(&mut self, offset: u64) -> Result<u32> {
        self.bar_read(Bar::User, offset)
    }

    /// Writes a dword of the user BAR.
    pub fn user_write(&mut self, offset: u64, value: u32) -> Result<()> {
        self.bar_write(Bar::User, offset, value)
    }

    /// Reads a dword of the DMA BAR (a `pread` on the `_control` node: `char_ctrl_read`).
    pub fn control_read(&mut self, offset: u64) -> Result<u32> {
        self.dma_read(offset)
    }

    /// Writes a dword of the DMA BAR (a `pwrite` on the `_control` node).
    pub fn control_write(&mut self, offset: u64, value: u32) -> Result<()> {
        self.dma_write(offset, value)
    }

    /// Starts a user BAR access whose system call is made at `at`: a read, or a write of
    /// `write`. Its end is the value read (a write's is 0) in [`Received::word`](crate::Received::word).
    pub fn submit_user(&mut self, offset: u64, write: Option<u32>, at: Ps) -> Call {
        let id = self.next_call;
        self.next_call += 1;
        self.regs.push(RegCall {
            id,
            offset,
            write,
            stamp: at,
            phase: RegPhase::Issue,
        });
        Call(id)
    }

    /// The user BAR accesses: the system call, the request down the link, the card's
    /// answer on `s_axil`, a read's completion back up the link.
    pub(crate) fn advance_regs(&mut self, now: Ps) -> Result<()> {
        for i in 0..self.regs.len() {
            let c = &self.regs[i];
            match c.phase {
                RegPhase::Issue => {
                    let issue = c.stamp.saturating_add(self.costs.register);
                    if issue > now {
                        continue;
                    }
                    let write = c.write.is_some();
                    let at = self.ip.pcie().from_host(issue, write);
                    self.regs[i].phase = RegPhase::Down { at };
                    if at <= now {
                        self.reg_at_card(i)?;
                    }
                }
                RegPhase::Down { at } if at <= now => self.reg_at_card(i)?,
                RegPhase::OnCard(a) => {
                    if let Some(v) = self.ip.user_poll(a)? {
                        self.reg_answered(i, v, now);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn reg_at_card(&mut self, i: usize) -> Result<()> {
        let (offset, write) = (self.regs[i].offset, self.regs[i].write);
        match self.ip.user_start(offset, write.map(|v| (v, 0xF)))? {
            Some(a) => self.regs[i].phase = RegPhase::OnCard(a),
            // Past the BAR: the IP answers at once, reads zero.
            None => {
                let now = self.now();
                self.reg_answered(i, 0, now);
            }
        }
        Ok(())
    }

    /// The card answered: a posted write's call returned once its system call was done (the
    /// register path was held until the card took it, so accesses stay in order as PCIe
    /// keeps them); a read's completion goes back up the link.
    fn reg_answered(&mut self, i: usize, v: u32, now: Ps) {
        let c = &self.regs[i];
        let phase = if c.write.is_some() {
            RegPhase::Ended {
                word: 0,
                end: c.stamp.saturating_add(self.costs.register),
                free: now,
            }
        } else {
            let back = self.ip.pcie().completion_to_host(now, 4);
            RegPhase::Ended {
                word: v,
                end: back,
                free: now,
            }
        };
        self.regs[i].phase = phase;
    }
}
