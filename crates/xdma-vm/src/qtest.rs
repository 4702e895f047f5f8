//! A client of QEMU's qtest server (`-qtest unix:PATH,server=on,wait=off`), through which the
//! card's interrupts reach the guest: a `writel` of the message for MSI and MSI-X (the write
//! lands in the APIC's MSI window, as a device's would), `set_irq_in` on the IOAPIC for INTx.
//!
//! One worker thread owns the socket, sends the commands in the order they were given and
//! reads their answers: each is answered by a line starting `OK` or `FAIL`, and any other line
//! is skipped. [`Qtest::post`] does not wait (a message interrupt is fire and forget, as on the
//! bus); [`Qtest::call`] waits for the answer, with a timeout, for what must have happened
//! before the device goes on (an INTx level change).

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use thiserror::Error;

/// What went wrong with a qtest command.
#[derive(Debug, Clone, Error)]
pub enum QtestError {
    /// The socket could not be reached.
    #[error("cannot connect to QEMU's qtest socket {path}: {why}")]
    Connect {
        /// The socket's path.
        path: PathBuf,
        /// The last error seen.
        why: String,
    },
    /// QEMU refused the command.
    #[error("QEMU answered `{command}` with `{answer}`")]
    Failed {
        /// The command.
        command: String,
        /// QEMU's answer.
        answer: String,
    },
    /// No answer in time.
    #[error("no answer from QEMU to `{command}` within {after:?}")]
    Timeout {
        /// The command.
        command: String,
        /// How long it waited.
        after: Duration,
    },
    /// The link broke.
    #[error("the qtest link is gone: {0}")]
    Gone(String),
}

struct Request {
    line: String,
    done: Option<Sender<Result<(), QtestError>>>,
}

/// The client. Dropping it ends the worker once it has sent what was queued.
#[derive(Debug)]
pub struct Qtest {
    tx: Sender<Request>,
    timeout: Duration,
}

impl Qtest {
    /// Starts the worker, which connects to `path` (retrying until `connect_within`, since QEMU
    /// creates the socket while it starts) and then serves the commands queued meanwhile.
    /// Every wait for an answer is bounded by `timeout`.
    pub fn spawn(path: &Path, connect_within: Duration, timeout: Duration) -> Qtest {
        let (tx, rx) = mpsc::channel();
        let path = path.to_path_buf();
        let spawned = thread::Builder::new()
            .name("qtest".into())
            .spawn(move || worker(path, rx, connect_within, timeout));
        if let Err(e) = spawned {
            // Without the worker every command fails with `Gone`, which the caller reports.
            tracing::error!("cannot start the qtest thread: {e}");
        }
        Qtest { tx, timeout }
    }

    /// Sends `line` without waiting; a failure is logged when its answer comes.
    pub fn post(&self, line: String) {
        if self.tx.send(Request { line, done: None }).is_err() {
            tracing::error!("the qtest thread is gone; an interrupt was lost");
        }
    }

    /// Sends `line` and waits for QEMU's answer.
    pub fn call(&self, line: String) -> Result<(), QtestError> {
        let (done, answer) = mpsc::channel();
        let command = line.clone();
        self.tx
            .send(Request {
                line,
                done: Some(done),
            })
            .map_err(|_| QtestError::Gone("the qtest thread ended".into()))?;
        // The worker bounds its own wait by the same timeout; allow for the commands queued
        // before this one as well.
        match answer.recv_timeout(self.timeout * 2) {
            Ok(r) => r,
            Err(RecvTimeoutError::Timeout) => Err(QtestError::Timeout {
                command,
                after: self.timeout * 2,
            }),
            Err(RecvTimeoutError::Disconnected) => {
                Err(QtestError::Gone("the qtest thread ended".into()))
            }
        }
    }
}

fn connect(path: &Path, within: Duration) -> Result<UnixStream, QtestError> {
    let deadline = Instant::now() + within;
    loop {
        match UnixStream::connect(path) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() >= deadline => {
                return Err(QtestError::Connect {
                    path: path.to_path_buf(),
                    why: e.to_string(),
                })
            }
            Err(_) => thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Reads whole answer lines, keeping a partial line across timeouts.
struct Answers {
    reader: BufReader<UnixStream>,
    partial: Vec<u8>,
}

enum Answer {
    Ok,
    Fail(String),
}

impl Answers {
    /// The next `OK` or `FAIL` line; other lines are skipped.
    fn next(&mut self) -> Result<Answer, std::io::Error> {
        loop {
            let n = self.reader.read_until(b'\n', &mut self.partial)?;
            if n == 0 {
                return Err(std::io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "QEMU closed the socket",
                ));
            }
            if self.partial.last() != Some(&b'\n') {
                continue;
            }
            let line = String::from_utf8_lossy(&self.partial)
                .trim_end()
                .to_string();
            self.partial.clear();
            if line.starts_with("OK") {
                return Ok(Answer::Ok);
            }
            if line.starts_with("FAIL") {
                return Ok(Answer::Fail(line));
            }
        }
    }
}

fn worker(path: PathBuf, rx: Receiver<Request>, connect_within: Duration, timeout: Duration) {
    let stream = match connect(&path, connect_within)
        .and_then(|s| s.set_read_timeout(Some(timeout)).map(|_| s).map_err(gone))
    {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("{e}");
            // Answer every request with the reason, so that no caller waits in vain.
            for req in rx {
                if let Some(done) = req.done {
                    let _ = done.send(Err(e.clone()));
                }
            }
            return;
        }
    };
    tracing::debug!("qtest connected at {}", path.display());
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(e) => {
            tracing::error!("qtest socket: {e}");
            return;
        }
    };
    let mut answers = Answers {
        reader: BufReader::new(stream),
        partial: Vec::new(),
    };
    // Answers still owed to commands that timed out: they come before the next one's.
    let mut owed = 0usize;
    let mut broken: Option<QtestError> = None;
    for req in rx {
        let result = match &broken {
            Some(e) => Err(e.clone()),
            None => exchange(&mut writer, &mut answers, &req.line, &mut owed, timeout),
        };
        if let Err(QtestError::Gone(_)) = &result {
            broken = result.clone().err();
        }
        match (req.done, result) {
            (Some(done), r) => {
                let _ = done.send(r);
            }
            (None, Err(e)) => tracing::warn!("interrupt not delivered: {e}"),
            (None, Ok(())) => {}
        }
    }
}

fn gone(e: std::io::Error) -> QtestError {
    QtestError::Gone(e.to_string())
}

fn exchange(
    writer: &mut UnixStream,
    answers: &mut Answers,
    line: &str,
    owed: &mut usize,
    timeout: Duration,
) -> Result<(), QtestError> {
    writer
        .write_all(format!("{line}\n").as_bytes())
        .map_err(gone)?;
    loop {
        match answers.next() {
            Ok(_) if *owed > 0 => *owed -= 1,
            Ok(Answer::Ok) => return Ok(()),
            Ok(Answer::Fail(answer)) => {
                return Err(QtestError::Failed {
                    command: line.to_string(),
                    answer,
                })
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                *owed += 1;
                return Err(QtestError::Timeout {
                    command: line.to_string(),
                    after: timeout,
                });
            }
            Err(e) => return Err(gone(e)),
        }
    }
}
