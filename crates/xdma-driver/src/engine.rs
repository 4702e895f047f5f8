//! The engines, as `libxdma.c` sets them up, starts, stops and services them.
//!
//! `engine_init_regs`, `engine_alignments`, `engine_start`, `xdma_engine_stop` and
//! `engine_service`: each engine's registers set up, a run started and stopped, and the
//! engine's status and completed count judged.

use xdma_ip::HostMemory;
use xdma_regmap::{
    self as map, control, engine_regs as ereg, sgdma, status, DESC_BYTES, RESULT_BYTES, RESULT_EOP,
    WB_COUNT_MASK, WB_ERR,
};

use crate::call::Dir;
use crate::dev::{Driver, EngineState, Transfer};
use crate::error::{DriverError, Errno, Result};

/// How a transfer ended, as `engine_service` leaves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Submitted,
    Completed { desc_cmpl: usize, eop: bool },
    Failed { status: u32, completed: usize },
}

impl Driver {
    /// `engine_init_regs` and `engine_alloc_resource` for one engine.
    pub(crate) fn engine_init(&mut self, dir: Dir, ch: usize, streaming: bool) -> Result<()> {
        let base = map::engine_base(dir == Dir::C2h, ch);
        self.dma_write(base + ereg::CONTROL_W1C, control::NON_INCR_ADDR)?;
        let mut ie = control::IE_ALIGN_MISMATCH
            | control::IE_MAGIC_STOPPED
            | control::IE_READ_ERROR
            | control::IE_DESC_ERROR;
        let no_room = || DriverError::errno(Errno::NoMemory, "no host memory for the rings");
        let mut poll_wb = 0;
        if self.params.poll_mode {
            poll_wb = self.ram.alloc_coherent(8).ok_or_else(no_room)?;
            self.dma_write(base + ereg::POLL_WB_LO, poll_wb as u32)?;
            self.dma_write(base + ereg::POLL_WB_HI, (poll_wb >> 32) as u32)?;
        } else {
            ie |= control::IE_DESC_STOPPED | control::IE_DESC_COMPLETED;
        }
        self.dma_write(base + ereg::IE_MASK, ie)?;
        let desc_bus = self
            .ram
            .alloc_coherent(self.ring_descriptors() * DESC_BYTES)
            .ok_or_else(no_room)?;
        let result_bus = if streaming && dir == Dir::C2h {
            self.ram
                .alloc_coherent(self.ring_descriptors() * RESULT_BYTES)
                .ok_or_else(no_room)?
        } else {
            0
        };
        let irq_bit = (self.h2c.len() + self.c2h.len()) as u32;
        let e = EngineState {
            dir,
            channel: ch,
            streaming,
            irq_bit,
            desc_bus,
            desc_idx: 0,
            result_bus,
            poll_wb,
            ie_mask: ie,
            irq_at: None,
            free_at: 0,
            non_incr_addr: false,
            addr_align: 1,
            len_granularity: 1,
            seen_completed: 0,
            stopped_on_error: false,
        };
        match dir {
            Dir::H2c => self.h2c.push(e),
            Dir::C2h => self.c2h.push(e),
        }
        self.engine_alignments(dir, ch)
    }

    /// `engine_alignments`: the address alignment and length granularity the engine asks
    /// for, from its alignments register; 1 and 1 when the register reads zero.
    pub(crate) fn engine_alignments(&mut self, dir: Dir, ch: usize) -> Result<()> {
        let w = self.dma_read(map::engine_base(dir == Dir::C2h, ch) + ereg::ALIGNMENTS)?;
        let (align, granularity) = if w == 0 {
            (1, 1)
        } else {
            (u64::from((w >> 16) & 0xFF), u64::from((w >> 8) & 0xFF))
        };
        if let Some(e) = self.engine_mut(dir, ch) {
            // A zero field would make every length a multiple of it; the driver would divide
            // by nothing. Treat it as no constraint.
            e.addr_align = align.max(1);
            e.len_granularity = granularity.max(1);
        }
        Ok(())
    }

    /// `engine_start` and `engine_start_mode_config`.
    pub(crate) fn engine_start(&mut self, dir: Dir, channel: usize, xfer: Transfer) -> Result<()> {
        let sg = map::sgdma_base(dir == Dir::C2h, channel);
        let base = map::engine_base(dir == Dir::C2h, channel);
        if self.params.poll_mode {
            // The write-back is cleared before the run, so that the count seen is this run's.
            let wb = self.engines(dir)[channel].poll_wb;
            self.ram
                .write(wb, &[0; 8])
                .map_err(|e| DriverError::errno(Errno::NoMemory, e.to_string()))?;
        }
        if let Some(e) = self.engine_mut(dir, channel) {
            e.seen_completed = 0;
            e.stopped_on_error = false;
        }
        self.dma_write(sg + sgdma::FIRST_DESC_LO, xfer.desc_bus as u32)?;
        self.dma_write(sg + sgdma::FIRST_DESC_HI, (xfer.desc_bus >> 32) as u32)?;
        self.dma_write(sg + sgdma::FIRST_DESC_ADJACENT, xfer.first_adj)?;
        let fixed = if self.engines(dir)[channel].non_incr_addr {
            control::NON_INCR_ADDR
        } else {
            0
        };
        self.dma_write(
            base + ereg::CONTROL,
            control::RUN | self.run_control() | fixed,
        )?;
        // The dummy read that flushes the writes, then engine_status_read(engine, 0, 0).
        self.dma_read(base + ereg::STATUS)?;
        self.dma_read(base + ereg::STATUS)?;
        Ok(())
    }

    /// The control register's bits besides RUN that the driver writes both when it starts
    /// an engine and when it stops one: the error interrupts, and the completion interrupts or
    /// the poll-mode write-back.
    fn run_control(&self) -> u32 {
        let errors = control::IE_ALIGN_MISMATCH
            | control::IE_MAGIC_STOPPED
            | control::IE_READ_ERROR
            | control::IE_DESC_ERROR;
        if self.params.poll_mode {
            errors | control::POLL_MODE_WB
        } else {
            errors | control::IE_DESC_STOPPED | control::IE_DESC_COMPLETED
        }
    }

    /// `xdma_engine_stop`: RUN cleared, the interrupt enables the driver keeps.
    pub(crate) fn engine_stop(&mut self, dir: Dir, channel: usize) -> Result<()> {
        let base = map::engine_base(dir == Dir::C2h, channel);
        let fixed = if self.engines(dir)[channel].non_incr_addr {
            control::NON_INCR_ADDR
        } else {
            0
        };
        self.dma_write(base + ereg::CONTROL, self.run_control() | fixed)
    }

    /// `engine_service` with `engine_service_final_transfer` for a single queued transfer:
    /// what the engine's status and completed count say about it.
    pub(crate) fn service(
        &mut self,
        dir: Dir,
        channel: usize,
        xfer: Transfer,
        eop_flush: bool,
        writeback: u32,
    ) -> Result<State> {
        let base = map::engine_base(dir == Dir::C2h, channel);
        let mut desc_count = writeback & WB_COUNT_MASK;
        let err_flag = writeback & WB_ERR != 0;
        let mut st = 0;
        if desc_count == 0 || err_flag {
            st = self.dma_read(base + ereg::STATUS_RC)?;
        }
        if st & status::BUSY == 0 || (!eop_flush && desc_count != 0) {
            self.engine_stop(dir, channel)?;
        }
        if desc_count == 0 {
            desc_count = self.dma_read(base + ereg::COMPLETED)?;
        }
        // Nothing completed: the driver leaves the transfer as it is, even with an error in
        // the status (the first descriptor failed), so that only the caller's timeout ends it.
        if desc_count == 0 {
            if let Some(e) = self.engine_mut(dir, channel) {
                e.stopped_on_error = st & error_mask(dir) != 0;
            }
            return Ok(State::Submitted);
        }
        if let Some(e) = self.engine_mut(dir, channel) {
            e.seen_completed = desc_count;
        }
        let completed = desc_count as usize;
        if st & error_mask(dir) != 0 {
            return Ok(State::Failed {
                status: st,
                completed,
            });
        }
        if completed < xfer.desc_num {
            if eop_flush {
                for i in 0..completed {
                    let at = xfer.res_bus + (i * RESULT_BYTES) as u64;
                    let s = self
                        .ram
                        .dword(at)
                        .map_err(|e| DriverError::errno(Errno::Io, e.to_string()))?;
                    if s & RESULT_EOP != 0 {
                        self.engine_stop(dir, channel)?;
                        return Ok(State::Completed {
                            desc_cmpl: i + 1,
                            eop: true,
                        });
                    }
                }
                return Ok(State::Submitted);
            }
            return Ok(State::Failed {
                status: st,
                completed,
            });
        }
        // Every descriptor completed: the driver does not look for end-of-packet here, so a
        // request longer than one transfer goes on with the next.
        Ok(State::Completed {
            desc_cmpl: xfer.desc_num,
            eop: false,
        })
    }
}

/// `XDMA_STAT_H2C_ERR_MASK` / `XDMA_STAT_C2H_ERR_MASK`: the status bits that fail a transfer.
fn error_mask(dir: Dir) -> u32 {
    let common = status::ALIGN_MISMATCH
        | status::MAGIC_STOPPED
        | status::INVALID_LEN
        | status::DESC_UNSUPP_REQ
        | status::DESC_COMPL_ABORT;
    match dir {
        Dir::H2c => {
            common
                | status::H2C_R_UNSUPP_REQ
                | status::H2C_R_COMPL_ABORT
                | status::H2C_W_DECODE_ERR
                | status::H2C_W_SLAVE_ERR
        }
        Dir::C2h => common | status::C2H_R_DECODE_ERR | status::C2H_R_SLAVE_ERR,
    }
}
