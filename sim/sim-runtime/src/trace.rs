//! Output traces: a model's outputs after every evaluation that changed one, with the time and
//! each clock's cycle count, so that two runs of one program (a test on the RTL and on its
//! netlist, say) can be compared afterwards for the first cycle at which they differ.
//!
//! A run whose inputs follow from its outputs (a harness that answers the design) stays in
//! step with another run for exactly as long as their outputs agree: simulated time is
//! deterministic, so the first output that differs is where the two designs part, and every
//! difference after it may be its consequence. [`compare`] finds, per output, the first
//! instant at which its values differ; the earliest of those is the run's first difference.
//!
//! The file is text, one record per line, so that a reader can look at it:
//!
//! ```text
//! sim-runtime trace 1
//! # top sim_top_mm model xdma-sim-registers::reads
//! port 0 m_axil_rdata 32
//! clock 0 axi_aclk 250000000
//! @0 0 0=0 1=0
//! @2000 1 1=1
//! ```
//!
//! `port` lines name the traced outputs by index; `clock` lines name the clocks by index as
//! they are added; an `@time_ps cycles,cycles... index=hex...` line gives the outputs that
//! changed in an evaluation at that time (every output in the first), with every clock's
//! completed cycles then. `#` lines say what was run and are not compared.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Result, SimError};
use crate::port::{Port, Ports};

/// The first line of a trace file: its format and version.
const MAGIC: &str = "sim-runtime trace 1";

/// The extension of trace files, which [`compare_dirs`] pairs by name.
pub const TRACE_EXT: &str = "trace";

/// The writer of one model's trace (see the module's documentation).
#[derive(Debug)]
pub(crate) struct TraceWriter {
    out: BufWriter<std::fs::File>,
    path: PathBuf,
    /// The traced outputs, with where each one's words start in `last`.
    ports: Vec<(Port, usize)>,
    /// Every traced output's value as last written, words least significant first.
    last: Vec<u32>,
    /// The values read at this evaluation.
    now: Vec<u32>,
    /// Nothing written yet: the first record gives every output.
    first: bool,
    /// The first write error, said once when the trace is closed rather than at every cycle.
    failed: Option<std::io::Error>,
}

impl TraceWriter {
    /// Creates the trace of a model of `top` named `model` at `path`, tracing every output
    /// of `ports`.
    pub(crate) fn create(path: &Path, top: &str, model: &str, ports: &Ports) -> Result<Self> {
        let io = |source| SimError::Trace {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut out = BufWriter::new(std::fs::File::create(path).map_err(io)?);
        let outputs = ports.outputs();
        let mut header = format!("{MAGIC}\n# top {top} model {model}\n");
        let mut traced = Vec::with_capacity(outputs.len());
        let mut words = 0;
        for (p, name) in outputs {
            let _ = writeln!(header, "port {} {name} {}", traced.len(), p.width());
            traced.push((p, words));
            words += p.words();
        }
        out.write_all(header.as_bytes()).map_err(io)?;
        Ok(TraceWriter {
            out,
            path: path.to_path_buf(),
            ports: traced,
            last: vec![0; words],
            now: vec![0; words],
            first: true,
            failed: None,
        })
    }

    /// Says that clock `index` is `name` at `freq_hz`.
    pub(crate) fn clock(&mut self, index: usize, name: &str, freq_hz: u64) {
        let line = format!("clock {index} {name} {freq_hz}\n");
        self.write(line.as_bytes());
    }

    /// Records the outputs after an evaluation at `time_ps`, when any changed.
    pub(crate) fn record(
        &mut self,
        ports: &Ports,
        time_ps: u64,
        cycles: impl Iterator<Item = u64>,
    ) {
        for &(p, at) in &self.ports {
            ports.get_words(p, &mut self.now[at..at + p.words()]);
        }
        if !self.first && self.now == self.last {
            return;
        }
        let mut line = format!("@{time_ps} ");
        for (i, c) in cycles.enumerate() {
            let _ = write!(line, "{}{c}", if i == 0 { "" } else { "," });
        }
        for (i, &(p, at)) in self.ports.iter().enumerate() {
            let words = &self.now[at..at + p.words()];
            if self.first || words != &self.last[at..at + p.words()] {
                let _ = write!(line, " {i}={}", hex(words));
            }
        }
        line.push('\n');
        self.first = false;
        std::mem::swap(&mut self.last, &mut self.now);
        self.write(line.as_bytes());
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.failed.is_none() {
            if let Err(e) = self.out.write_all(bytes) {
                self.failed = Some(e);
            }
        }
    }

    /// Flushes the file, saying on stderr what could not be written: a trace is closed from
    /// the model's `Drop`, which has no caller to return an error to.
    pub(crate) fn close(&mut self) {
        let flushed = self.out.flush();
        if let Some(e) = self.failed.take().or(flushed.err()) {
            eprintln!(
                "sim-runtime: the trace {} is incomplete: {e}",
                self.path.display()
            );
        }
    }
}

/// Words (least significant first) as one hexadecimal number without leading zeros.
fn hex(words: &[u32]) -> String {
    let mut s = String::new();
    for w in words.iter().rev() {
        if s.is_empty() {
            if *w != 0 {
                let _ = write!(s, "{w:x}");
            }
        } else {
            let _ = write!(s, "{w:08x}");
        }
    }
    if s.is_empty() {
        s.push('0');
    }
    s
}

/// Where one output of two traces first differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The output's name.
    pub port: String,
    /// The simulated time of the first instant at which its values differ.
    pub time_ps: u64,
    /// Each clock's completed cycles then, by name, in the order the clocks were added.
    pub cycles: Vec<(String, u64)>,
    /// Its value in the first trace then, in hexadecimal.
    pub a: String,
    /// Its value in the second trace then.
    pub b: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.cycles.first() {
            Some((clock, n)) => write!(f, "cycle {n} of {clock}")?,
            None => write!(f, "no clock")?,
        }
        write!(
            f,
            " ({} ps): {} is 0x{} in one, 0x{} in the other",
            self.time_ps, self.port, self.a, self.b
        )
    }
}

/// What [`compare`] found between two traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// Per output that differs, its first difference; the earliest first (outputs that part
    /// at one instant in the traces' port order).
    pub differences: Vec<Difference>,
    /// The last instant both traces reach, up to which they were compared.
    pub compared_to_ps: u64,
    /// The last instant of each trace.
    pub ends_ps: (u64, u64),
}

impl Comparison {
    /// The earliest difference: where the two runs part.
    pub fn first(&self) -> Option<&Difference> {
        self.differences.first()
    }
}

/// One record: its time, the clocks' cycles then and the outputs it changed.
type Record = (u64, Vec<u64>, Vec<(usize, String)>);

/// One trace read back as it is compared: its ports and clocks so far, its records one by one.
struct Reader {
    path: PathBuf,
    lines: std::io::Lines<BufReader<std::fs::File>>,
    line_no: usize,
    ports: Vec<(String, u32)>,
    clocks: Vec<String>,
    /// The next record, read ahead so that the merge can see its time.
    next: Option<Record>,
}

impl Reader {
    /// Opens a trace and reads up to its first record.
    fn open(path: &Path) -> Result<Reader> {
        let file = std::fs::File::open(path).map_err(|source| SimError::Trace {
            path: path.to_path_buf(),
            source,
        })?;
        let mut r = Reader {
            path: path.to_path_buf(),
            lines: BufReader::new(file).lines(),
            line_no: 0,
            ports: Vec::new(),
            clocks: Vec::new(),
            next: None,
        };
        r.advance()?;
        Ok(r)
    }

    /// Reads up to the next record (or the end), taking in the port and clock lines before it.
    fn advance(&mut self) -> Result<()> {
        self.next = None;
        while let Some(line) = self.lines.next() {
            let line = line.map_err(|source| SimError::Trace {
                path: self.path.clone(),
                source,
            })?;
            self.line_no += 1;
            let at = |what: &str| SimError::BadPath {
                path: self.path.clone(),
                problem: format!("line {}: {what}: `{line}`", self.line_no),
            };
            if self.line_no == 1 {
                if line != MAGIC {
                    return Err(at(
                        "not a sim-runtime trace (its first line is not the format's)",
                    ));
                }
                continue;
            }
            let mut f = line.split(' ');
            match f.next() {
                Some("#" | "") | None => {}
                Some("port") => {
                    let (_, name, width) = (f.next(), f.next(), f.next());
                    match (name, width.and_then(|w| w.parse().ok())) {
                        (Some(name), Some(w)) => self.ports.push((name.to_string(), w)),
                        _ => return Err(at("a port line is `port INDEX NAME WIDTH`")),
                    }
                }
                Some("clock") => match (f.next(), f.next()) {
                    (Some(_), Some(name)) => self.clocks.push(name.to_string()),
                    _ => return Err(at("a clock line is `clock INDEX NAME HZ`")),
                },
                Some(rec) if rec.starts_with('@') => {
                    let time = rec[1..]
                        .parse()
                        .map_err(|_| at("a record starts with @TIME_PS"))?;
                    let cycles = f
                        .next()
                        .unwrap_or("")
                        .split(',')
                        .filter(|c| !c.is_empty())
                        .map(str::parse)
                        .collect::<std::result::Result<Vec<u64>, _>>()
                        .map_err(|_| at("a record's cycles are numbers separated by commas"))?;
                    let mut changes = Vec::new();
                    for c in f {
                        let (i, v) = c
                            .split_once('=')
                            .and_then(|(i, v)| Some((i.parse::<usize>().ok()?, v)))
                            .filter(|(i, _)| *i < self.ports.len())
                            .ok_or_else(|| at("a change is INDEX=HEX of a port named above"))?;
                        changes.push((i, v.to_string()));
                    }
                    self.next = Some((time, cycles, changes));
                    return Ok(());
                }
                Some(_) => return Err(at("unknown record")),
            }
        }
        Ok(())
    }

    /// Applies every record at `t` to `values`, returning the clocks' cycles then (`None`
    /// when this trace has no record at `t`), and its last time so far in `end`.
    fn apply(&mut self, t: u64, values: &mut [String], end: &mut u64) -> Result<Option<Vec<u64>>> {
        let mut cycles = None;
        while let Some((time, c, changes)) = self.next.take_if(|r| r.0 == t) {
            *end = time;
            for (p, v) in changes {
                if let Some(slot) = values.get_mut(p) {
                    *slot = v;
                }
            }
            cycles = Some(c);
            self.advance()?;
        }
        Ok(cycles)
    }
}

/// Compares two traces of one program (the same top's ports and clocks): per output, the
/// first instant at which its values differ, up to the last instant both reach. Each instant
/// is judged by the outputs after its last evaluation, as the next clock edge samples them.
/// The traces are read as they are compared, so that their size does not matter.
pub fn compare(a: &Path, b: &Path) -> Result<Comparison> {
    let (mut ra, mut rb) = (Reader::open(a)?, Reader::open(b)?);
    if ra.ports != rb.ports {
        return Err(SimError::BadPath {
            path: b.to_path_buf(),
            problem: format!(
                "its outputs are not those of {}: they are traces of different tops",
                a.display()
            ),
        });
    }
    let mut va: Vec<String> = vec!["0".into(); ra.ports.len()];
    let mut vb = va.clone();
    let mut first: BTreeMap<usize, Difference> = BTreeMap::new();
    let mut ends_ps = (0, 0);
    // The instants after one trace ended are not compared: the other's outputs then have
    // nothing to be judged against.
    while let (Some(na), Some(nb)) = (ra.next.as_ref().map(|r| r.0), rb.next.as_ref().map(|r| r.0))
    {
        let t = na.min(nb);
        let ca = ra.apply(t, &mut va, &mut ends_ps.0)?;
        let cb = rb.apply(t, &mut vb, &mut ends_ps.1)?;
        let cycles = ca.or(cb).unwrap_or_default();
        for (p, (x, y)) in va.iter().zip(&vb).enumerate() {
            if x != y && !first.contains_key(&p) {
                let clocks = if ra.clocks.len() >= rb.clocks.len() {
                    &ra.clocks
                } else {
                    &rb.clocks
                };
                first.insert(
                    p,
                    Difference {
                        port: ra.ports[p].0.clone(),
                        time_ps: t,
                        cycles: clocks.iter().cloned().zip(cycles.iter().copied()).collect(),
                        a: x.clone(),
                        b: y.clone(),
                    },
                );
            }
        }
    }
    // What is left of the longer trace gives its end.
    for (r, end) in [(&mut ra, &mut ends_ps.0), (&mut rb, &mut ends_ps.1)] {
        while let Some(rec) = r.next.take() {
            *end = rec.0;
            r.advance()?;
        }
    }
    let compared_to_ps = ends_ps.0.min(ends_ps.1);
    let mut differences: Vec<(usize, Difference)> = first.into_iter().collect();
    differences.sort_by_key(|(p, d)| (d.time_ps, *p));
    Ok(Comparison {
        differences: differences.into_iter().map(|(_, d)| d).collect(),
        compared_to_ps,
        ends_ps,
    })
}

/// Compares the traces of two folders pair by pair, by file name: every trace in `a` with the
/// one of the same name in `b` (a run's models are named after their tests, so one test's
/// model has one name in both runs). A trace that only one folder has is an error.
pub fn compare_dirs(a: &Path, b: &Path) -> Result<Vec<(String, Comparison)>> {
    let names = |dir: &Path| -> Result<Vec<String>> {
        let entries = std::fs::read_dir(dir).map_err(|source| SimError::Trace {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut v: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(&format!(".{TRACE_EXT}")))
            .collect();
        v.sort();
        Ok(v)
    };
    let (na, nb) = (names(a)?, names(b)?);
    if na != nb {
        return Err(SimError::BadPath {
            path: b.to_path_buf(),
            problem: format!(
                "its traces ({}) are not those of {} ({}): the runs built different models",
                nb.join(", "),
                a.display(),
                na.join(", ")
            ),
        });
    }
    na.into_iter()
        .map(|n| Ok((n.clone(), compare(&a.join(&n), &b.join(&n))?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(
            &p,
            format!(
                "{MAGIC}\n# top t model m\nport 0 a 8\nport 1 b 40\nclock 0 clk 250000000\n{body}"
            ),
        )
        .expect("write");
        p
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("sim-trace-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("dir");
        d
    }

    #[test]
    fn words_are_one_hex_number() {
        assert_eq!(hex(&[0]), "0");
        assert_eq!(hex(&[0x1f]), "1f");
        assert_eq!(hex(&[0x1, 0x2]), "200000001");
        assert_eq!(hex(&[0x1, 0]), "1");
    }

    #[test]
    fn the_first_instant_an_output_differs_is_found_per_output() {
        let d = dir("first");
        // b parts at 4000 ps (cycle 2) on a; at 8000 b differs, and a is back in step.
        let x = write(
            &d,
            "x.trace",
            "@0 0 0=0 1=0\n@2000 1 0=1\n@4000 2 0=2\n@8000 4 0=3 1=10\n@9000 4 1=11\n",
        );
        let y = write(
            &d,
            "y.trace",
            "@0 0 0=0 1=0\n@2000 1 0=1\n@4000 2 0=5\n@6000 3 0=2\n@8000 4 0=3 1=12\n@10000 5 1=1\n",
        );
        let c = compare(&x, &y).expect("compare");
        assert_eq!(c.ends_ps, (9000, 10000));
        assert_eq!(c.compared_to_ps, 9000);
        let first = c.first().expect("they differ");
        assert_eq!((first.port.as_str(), first.time_ps), ("a", 4000));
        assert_eq!(first.cycles, vec![("clk".to_string(), 2)]);
        assert_eq!((first.a.as_str(), first.b.as_str()), ("2", "5"));
        assert_eq!(c.differences.len(), 2);
        assert_eq!(
            (c.differences[1].port.as_str(), c.differences[1].time_ps),
            ("b", 8000)
        );
        assert_eq!(
            first.to_string(),
            "cycle 2 of clk (4000 ps): a is 0x2 in one, 0x5 in the other"
        );
        // The same trace has no difference.
        assert_eq!(compare(&x, &x).expect("compare").first(), None);
    }

    #[test]
    fn within_one_instant_the_last_evaluation_counts() {
        let d = dir("instant");
        // After the edge a reads 1 in one run and 2 in the other, but the inputs driven then
        // settle both to 3 before the next edge: no difference.
        let x = write(&d, "x.trace", "@0 0 0=0 1=0\n@2000 1 0=1\n@2000 1 0=3\n");
        let y = write(&d, "y.trace", "@0 0 0=0 1=0\n@2000 1 0=2\n@2000 1 0=3\n");
        assert_eq!(compare(&x, &y).expect("compare").first(), None);
    }

    #[test]
    fn a_file_that_is_no_trace_or_of_another_top_is_refused() {
        let d = dir("refused");
        let x = write(&d, "x.trace", "@0 0 0=0 1=0\n");
        let junk = d.join("junk.trace");
        std::fs::write(&junk, "hello\n").expect("write");
        let e = compare(&x, &junk).expect_err("not a trace").to_string();
        assert!(e.contains("not a sim-runtime trace"), "{e}");
        let other = d.join("other.trace");
        std::fs::write(&other, format!("{MAGIC}\nport 0 c 8\n@0 0 0=0\n")).expect("write");
        let e = compare(&x, &other).expect_err("other top").to_string();
        assert!(e.contains("different tops"), "{e}");
        let bad = d.join("bad.trace");
        std::fs::write(&bad, format!("{MAGIC}\nport 0 a 8\n@0 0 7=1\n")).expect("write");
        let e = compare(&bad, &bad).expect_err("bad index").to_string();
        assert!(e.contains("line 3") && e.contains("INDEX=HEX"), "{e}");
    }
}
