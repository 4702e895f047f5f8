//! One call of the API as the simulation thread carries it: a system call into the driver
//! model (a transfer on a channel's node, a user BAR access), or a read of an event node.
//! What each does, phase by phase, is the driver model's and the register-level IP's; this
//! module only turns an API call into the driver's system call and the driver's answer into
//! the API's.

use std::time::Duration;

use card_harness::CardBus;
use xdma_core::{Error, Result, Transfer};
use xdma_driver::{Call, Driver, DriverError, Ended, Errno, Submit};
use xdma_ip::Ps;

/// What a call asks of the card.
#[derive(Debug)]
pub(crate) enum Op {
    /// The XDMA IP's own registers and the driver's engine settings.
    Control(crate::control::Control),
    ReadReg(u64),
    WriteReg(u64, u32),
    WaitEvent(usize, Duration),
    /// A transfer on a channel's node: `data` for a write, `len` bytes for a read.
    Transfer {
        kind: Kind,
        channel: usize,
        addr: u64,
        page_offset: usize,
        data: Option<Vec<u8>>,
        len: usize,
        timeout: Option<Duration>,
        /// A stream read that ends at end-of-packet (the node opened with `O_TRUNC`, which
        /// every receive of the API is); otherwise it ends when its buffer is full.
        eop_flush: bool,
        /// The answer reports the driver's own end-of-packet, which a front end standing in
        /// for the driver's node knows; the API reports only what the driver's caller can see.
        driver_eop: bool,
    },
}

/// Which kind of transfer, as the API names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    WriteMm,
    ReadMm,
    Send,
    Recv,
}

impl Kind {
    /// The API's name of the call.
    pub(crate) fn op(self) -> &'static str {
        match self {
            Kind::WriteMm => "memory-mapped H2C write",
            Kind::ReadMm => "memory-mapped C2H read",
            Kind::Send => "stream H2C send",
            Kind::Recv => "stream C2H receive",
        }
    }
}

/// What a call gets back.
#[derive(Debug)]
pub(crate) enum Answer {
    Word(u32),
    Done,
    Moved(Transfer, Vec<u8>),
}

/// What a job tells the simulation thread after a poll.
#[derive(Debug)]
pub(crate) enum Poll {
    /// Still going.
    Pending,
    /// Finished: the answer, which reaches the caller at `end`, and when the call's lane is
    /// free for the next queued call.
    Done {
        end: Ps,
        free_at: Ps,
        answer: Result<Answer>,
    },
}

/// A read of an event node: returns at once when the driver holds interrupts of that line,
/// else when one arrives, bounded in simulated time.
#[derive(Debug)]
pub(crate) struct Wait {
    event: usize,
    stamp: Ps,
    deadline: Ps,
    timeout: Duration,
    abort_at: Option<Ps>,
}

/// A call in the driver.
#[derive(Debug)]
pub(crate) struct InDriver {
    call: Call,
    kind: Option<Kind>,
    channel: usize,
    write: bool,
    stamp: Ps,
    len: usize,
    timeout: Option<Duration>,
    abort_at: Option<Ps>,
    driver_eop: bool,
}

/// A job: one call on its way through the driver model.
#[derive(Debug)]
pub(crate) enum Job {
    Driver(InDriver),
    Wait(Wait),
    /// Done when it started: its answer and when the caller has it.
    Done(Option<Result<Answer>>, Ps),
}

/// A duration as ps, saturating.
pub(crate) fn dur_ps(d: Duration) -> Ps {
    u64::try_from(d.as_nanos().saturating_mul(1000)).unwrap_or(u64::MAX)
}

/// The host's costs the jobs need besides the driver's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Host {
    pub(crate) register: Ps,
    pub(crate) wake: Ps,
}

impl Job {
    /// The job for `op`, its system call made at `stamp`.
    pub(crate) fn new(driver: &mut Driver, host: Host, op: Op, stamp: Ps) -> Result<Job> {
        let in_driver = |call, kind, channel, write, len, timeout| {
            Job::Driver(InDriver {
                call,
                kind,
                channel,
                write,
                stamp,
                len,
                timeout,
                abort_at: None,
                driver_eop: false,
            })
        };
        Ok(match op {
            // The `_control` node maps the DMA BAR: an access is one MMIO access of the
            // system call's thread.
            Op::Control(c) => {
                let r = match c {
                    crate::control::Control::Read(off) => driver.control_read(off),
                    crate::control::Control::Write(off, v) => {
                        driver.control_write(off, v).map(|()| 0)
                    }
                    crate::control::Control::AddrModeGet(dir, ch) => {
                        driver.addrmode_get(dir_of(dir), ch).map(u32::from)
                    }
                    crate::control::Control::AddrModeSet(dir, ch, fixed) => {
                        driver.addrmode_set(dir_of(dir), ch, fixed).map(|()| 0)
                    }
                };
                Job::Done(
                    Some(r.map(Answer::Word).map_err(model)),
                    stamp + host.register,
                )
            }
            Op::ReadReg(off) => in_driver(
                driver.submit_user(off, None, stamp),
                None,
                0,
                false,
                0,
                None,
            ),
            Op::WriteReg(off, v) => in_driver(
                driver.submit_user(off, Some(v), stamp),
                None,
                0,
                true,
                0,
                None,
            ),
            // The read enters the driver after its system call, which checks for a latched
            // interrupt and only then sleeps for the timeout.
            Op::WaitEvent(event, timeout) => Job::Wait(Wait {
                event,
                stamp,
                deadline: (stamp + host.register).saturating_add(dur_ps(timeout)),
                timeout,
                abort_at: None,
            }),
            Op::Transfer {
                kind,
                channel,
                addr,
                page_offset,
                data,
                len,
                timeout,
                eop_flush,
                driver_eop,
            } => {
                let dir = match kind {
                    Kind::WriteMm | Kind::Send => xdma_driver::Dir::H2c,
                    Kind::ReadMm | Kind::Recv => xdma_driver::Dir::C2h,
                };
                let s = Submit {
                    dir,
                    channel,
                    card_addr: addr,
                    len,
                    page_offset,
                    eop_flush: eop_flush && kind == Kind::Recv,
                    at: stamp,
                    timeout,
                };
                let call = driver
                    .submit(s, data.as_deref())
                    .map_err(|e| from_driver(e, kind, len, timeout))?;
                let mut job = in_driver(call, Some(kind), channel, false, len, timeout);
                if let Job::Driver(d) = &mut job {
                    d.driver_eop = driver_eop;
                }
                job
            }
        })
    }

    /// The bus a job drives, as the harness names it; `None` for a job that drives none.
    pub(crate) fn bus(&self, ports: &Ports) -> Option<CardBus> {
        match self {
            Job::Wait(_) => Some(CardBus::UserIrq),
            Job::Done(..) => None,
            Job::Driver(d) => match d.kind {
                None => Some(CardBus::Registers),
                Some(Kind::WriteMm | Kind::ReadMm) => Some(CardBus::Dma),
                Some(Kind::Send) => ports
                    .h2c
                    .get(d.channel())
                    .copied()
                    .flatten()
                    .map(CardBus::H2c),
                Some(Kind::Recv) => ports
                    .c2h
                    .get(d.channel())
                    .copied()
                    .flatten()
                    .map(CardBus::C2h),
            },
        }
    }

    /// The bytes a memory-mapped transfer has moved so far (its finished engine runs), or
    /// `None` for any other call.
    pub(crate) fn progress(&self, driver: &Driver) -> Option<usize> {
        match self {
            Job::Driver(d) if matches!(d.kind, Some(Kind::WriteMm | Kind::ReadMm)) => {
                driver.progress(d.call).map(|(done, _)| done)
            }
            _ => None,
        }
    }

    /// Stops the job from `at` on, the way the driver aborts an engine: nothing new goes on a
    /// bus, what is on a bus finishes, and the job then ends without an answer.
    pub(crate) fn abort(&mut self, at: Ps) {
        let slot = match self {
            Job::Driver(d) => &mut d.abort_at,
            Job::Wait(w) => &mut w.abort_at,
            Job::Done(..) => return,
        };
        *slot = Some(slot.map_or(at, |t| t.min(at)));
    }

    /// The job's call in the driver, given up at once (a failure elsewhere ended it).
    pub(crate) fn quiet(&mut self, driver: &mut Driver) {
        if let Job::Driver(d) = self {
            let _ = driver.cancel(d.call);
        }
    }

    /// Moves the job on at `now`.
    pub(crate) fn poll(&mut self, driver: &mut Driver, now: Ps, host: Host) -> Poll {
        match self {
            Job::Driver(d) => d.poll(driver, now),
            Job::Wait(w) => w.poll(driver, now, host),
            Job::Done(answer, end) => Poll::Done {
                end: *end,
                free_at: now,
                answer: answer.take().unwrap_or(Ok(Answer::Done)),
            },
        }
    }
}

/// Which stream port each channel's node drives, per direction.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ports {
    pub(crate) h2c: Vec<Option<usize>>,
    pub(crate) c2h: Vec<Option<usize>>,
}

/// An aborted job that has drained: nobody waits for an answer.
fn drained(now: Ps) -> Poll {
    Poll::Done {
        end: now,
        free_at: now,
        answer: Err(Error::Backend(
            "the call was cancelled and its transfer aborted on the card".into(),
        )),
    }
}

impl InDriver {
    fn channel(&self) -> usize {
        self.channel
    }

    fn poll(&mut self, driver: &mut Driver, now: Ps) -> Poll {
        if self.abort_at.is_some_and(|t| t <= now) {
            // The driver aborts the engine as a signal does; what is on the bus finishes in
            // the IP, and the engine takes the next call once it has stopped.
            if let Err(e) = driver.cancel(self.call) {
                return Poll::Done {
                    end: now,
                    free_at: now,
                    answer: Err(model(e)),
                };
            }
            return drained(now);
        }
        // The thread runs the driver every cycle: what it finished is there to take.
        let Some(ended) = driver.ended(self.call) else {
            return Poll::Pending;
        };
        let Ended { result, end, free } = ended;
        let answer = match (self.kind, result) {
            (_, Err(e)) => Err(match self.kind {
                Some(k) => from_driver(e, k, self.len, self.timeout),
                None => model(e),
            }),
            (None, Ok(r)) if self.write => {
                let _ = r;
                Ok(Answer::Done)
            }
            (None, Ok(r)) => Ok(Answer::Word(r.word)),
            (Some(k), Ok(r)) => {
                let bytes = match k {
                    Kind::WriteMm | Kind::Send => r.written,
                    Kind::ReadMm | Kind::Recv => r.data.len(),
                };
                // The engine ends every send with end-of-packet on its last beat. A packet
                // that exactly fills a receive's buffer reports no end-of-packet, as the
                // driver's caller sees it: it cannot tell whether the packet ended there (see
                // `Transfer::end_of_packet`).
                let eop = match k {
                    Kind::Send => true,
                    Kind::Recv if self.driver_eop => r.end_of_packet,
                    Kind::Recv => bytes < self.len,
                    _ => false,
                };
                Ok(Answer::Moved(
                    Transfer {
                        bytes,
                        end_of_packet: eop,
                        start_ps: self.stamp,
                        end_ps: end,
                    },
                    r.data,
                ))
            }
        };
        Poll::Done {
            end,
            free_at: free,
            answer,
        }
    }
}

fn dir_of(d: xdma_core::Direction) -> xdma_driver::Dir {
    match d {
        xdma_core::Direction::H2C => xdma_driver::Dir::H2c,
        xdma_core::Direction::C2H => xdma_driver::Dir::C2h,
    }
}

/// A failure of the model itself (the card's simulation) as the API's error.
fn model(e: DriverError) -> Error {
    match e {
        DriverError::Ip(xdma_ip::IpError::Card(b)) => crate::error::bfm(b),
        other => Error::Backend(format!("simulated card: {other}")),
    }
}

/// The driver's errno for a transfer as the API's error.
fn from_driver(e: DriverError, kind: Kind, len: usize, timeout: Option<Duration>) -> Error {
    let (errno, why) = match e {
        DriverError::Errno { errno, why } => (errno, why),
        other => return model(other),
    };
    let what = kind.op();
    match errno {
        Errno::TimedOut if kind == Kind::Recv => Error::Timeout {
            what: "a C2H stream packet, counted from the engine's start as the driver waits (simulated time)".into(),
            after: timeout.unwrap_or_default(),
        },
        Errno::TimedOut => Error::Timeout {
            what: format!("the {what} of {len} bytes to complete (simulated time: {why})"),
            after: timeout.unwrap_or_default(),
        },
        Errno::Io => Error::Bus(format!(
            "{what} of {len} bytes: the engine stopped with an error ({why}); look at the card's AXI slave in the waves (SIM_WAVES=1)"
        )),
        Errno::NoMemory => Error::Backend(format!(
            "{what} of {len} bytes: the simulated host memory cannot hold it ({why})"
        )),
        // EINVAL is the caller's: the request broke a rule of the driver's (an alignment
        // in fixed-address mode, say), as the same call on a board's driver reports it.
        Errno::Invalid => Error::Invalid {
            op: what,
            problem: format!("the driver refused it ({why}); meet the engine's rule or change its address mode"),
        },
    }
}

impl Wait {
    fn poll(&mut self, driver: &mut Driver, now: Ps, host: Host) -> Poll {
        if self.abort_at.is_some_and(|t| t <= now) {
            // The read of the event node is interrupted; interrupts stay latched.
            return drained(now);
        }
        let Some(q) = driver.user_latched(self.event) else {
            return Poll::Done {
                end: now,
                free_at: now,
                answer: Err(Error::Backend(format!("no event line {}", self.event))),
            };
        };
        // The read enters the driver after its system call; interrupts the driver already
        // holds then are returned at once, collapsed into one read; otherwise the reader
        // sleeps until the next one and is woken.
        let enter = self.stamp + host.register;
        if let Some(&first) = q.front() {
            let seen = first.max(enter);
            if seen <= now && seen <= self.deadline {
                let n = q.iter().take_while(|&&t| t <= seen).count();
                q.drain(..n);
                let end = if first <= enter {
                    enter
                } else {
                    seen + host.wake
                };
                return Poll::Done {
                    end,
                    free_at: end,
                    answer: Ok(Answer::Word(n as u32)),
                };
            }
        }
        if now >= self.deadline {
            return Poll::Done {
                end: self.deadline,
                free_at: self.deadline,
                answer: Err(Error::Timeout {
                    what: format!("user interrupt {} (simulated time)", self.event),
                    after: self.timeout,
                }),
            };
        }
        Poll::Pending
    }
}
