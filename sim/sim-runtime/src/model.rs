//! One verilated model from build to drop: its options, clocks, evaluation, waveform and
//! coverage files. Its port table (`port.rs`), the look-up of its named memories
//! (`memory.rs`) and the environment it reads (`env.rs`) live in files of their own.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::clock::{self, Clock, ClockId, Edges, Scheduler};
use crate::env::{
    coverage_dir, env_flag, randomized, trace_dir, waves_dir, waves_requested, ECHO_ENV,
};
use crate::error::{Result, SimError};
use crate::ffi;
use crate::memory::{self, MemoryInfo};
use crate::port::{Port, PortSet, Ports};
use crate::top::{ModelOptions, TopDef};
use crate::trace::{TraceWriter, TRACE_EXT};

static NEXT_MODEL_ID: AtomicU64 = AtomicU64::new(1);

/// How to build a [`Model`].
#[derive(Debug, Clone)]
pub struct ModelBuilder {
    top: TopDef,
    name: Option<String>,
    waves: Option<PathBuf>,
    seed: Option<u64>,
    echo: Option<bool>,
    trace: Option<PathBuf>,
}

impl ModelBuilder {
    /// Names the model in messages and waveform files. The default is the current thread's
    /// name, which for a test is the test's path.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Writes an FST waveform to `path` whatever `SIM_WAVES` says.
    pub fn waves(mut self, path: impl Into<PathBuf>) -> Self {
        self.waves = Some(path.into());
        self
    }

    /// Writes an output trace to `path` (see [`crate::trace`]) whatever `SIM_TRACE_DIR` says.
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Self {
        self.trace = Some(path.into());
        self
    }

    /// Randomises the values Verilator leaves open (`--x-initial unique`, `--x-assign
    /// unique` tops) from `seed`, reproducibly; without it they are zero.
    pub fn random_init(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Copies what the RTL prints to stdout as well as capturing it (default: `SIM_RTL_ECHO`).
    pub fn echo(mut self, on: bool) -> Self {
        self.echo = Some(on);
        self
    }

    /// Builds the model and evaluates it once at time zero, so initial blocks have run.
    pub fn build(self) -> Result<Model> {
        let name = self.name.unwrap_or_else(default_name);
        let waves = match self.waves {
            Some(p) => Some(p),
            None if waves_requested() => Some(claim_path(
                &WAVES_CLAIMED,
                &waves_dir(),
                &name,
                "fst",
                Some(self.top.name()),
            )),
            None => None,
        };
        if let Some(dir) = waves.as_deref().and_then(Path::parent) {
            std::fs::create_dir_all(dir).map_err(|source| SimError::Waves {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let waves_str = waves
            .as_deref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (def, seed) = randomized(self.top, self.seed);
        let top = def.name();
        let mut err = vec![0u8; 2048];
        let opts = ModelOptions {
            name: name.as_ptr(),
            name_len: name.len(),
            waves: waves_str.as_ptr(),
            waves_len: waves_str.len(),
            seed: seed.map_or(0, |s| s | 1),
            rand_reset: if seed.is_some() { 2 } else { 0 },
            echo: u32::from(self.echo.unwrap_or_else(|| env_flag(ECHO_ENV))),
            err: err.as_mut_ptr(),
            err_cap: err.len(),
        };
        let factory = crate::library::factory_of(def)?;
        // SAFETY: the factory is the one sim-build generated in this top's library (its
        // recipe comes from TopDef::from_recipe, which only generated code calls); it reads
        // `opts` and the strings it points to during the call only, writes at most `err_cap`
        // bytes into `err`, and returns either null or a pointer from `new` to a
        // `sim_runtime::SimModel`, whose ownership passes here.
        let raw = unsafe { factory(&opts) };
        if raw.is_null() {
            let end = err.iter().position(|&b| b == 0).unwrap_or(err.len());
            return Err(SimError::Create {
                top: top.to_string(),
                message: String::from_utf8_lossy(&err[..end]).into_owned(),
            });
        }
        // SAFETY: `raw` is a non-null, uniquely owned `SimModel*` (see above); the UniquePtr
        // deletes it through the virtual destructor.
        let mut inner = unsafe { cxx::UniquePtr::from_raw(raw.cast::<ffi::SimModel>()) };
        let ptr = NonNull::new(raw.cast::<ffi::SimModel>()).ok_or_else(|| SimError::Create {
            top: top.to_string(),
            message: "the model constructor returned nothing".to_string(),
        })?;
        let descs = ffi::model_ports(pin(&mut inner, top)?.as_ref().get_ref());
        let id = NEXT_MODEL_ID.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the descriptions come from the model `inner` owns, which lives on the heap
        // at a fixed address until the `Model` that holds both is dropped; the table is a field
        // of that `Model`, and a `Model` never leaves its thread.
        let ports = unsafe { Ports::new(id, top, &descs) };
        // A trace is named after the model alone, not its top, so that the runs of one test on
        // two builds of a design (the RTL and its netlist twin) name their traces alike.
        let trace = match self.trace {
            Some(p) => Some(p),
            None => trace_dir().map(|d| claim_path(&TRACES_CLAIMED, &d, &name, TRACE_EXT, None)),
        }
        .map(|p| TraceWriter::create(&p, top, &name, &ports))
        .transpose()?;
        let mut model = Model {
            inner,
            ptr,
            id,
            top: def,
            name,
            ports,
            sched: Scheduler::default(),
            clock_bits: Vec::new(),
            time_ps: 0,
            last_dump_ps: None,
            poisoned: false,
            evaluations: 0,
            waves,
            trace,
            _not_send: PhantomData,
        };
        // Every input starts at zero, as a testbench drives it: a randomized build draws the
        // top's inputs at random too, and the agents set them only after the first edge.
        if seed.is_some() {
            model.ports.zero_inputs();
        }
        model.eval()?;
        Ok(model)
    }
}

/// One verilated model with its own `VerilatedContext`.
///
/// The handle is neither `Send` nor `Sync`: Verilator's per-thread state means a model must be
/// evaluated on the thread that built it. Run several models at once by building each on its
/// own thread.
pub struct Model {
    inner: cxx::UniquePtr<ffi::SimModel>,
    /// The object `inner` owns, kept as a plain pointer: asking the UniquePtr for it is a call
    /// into C++, and every step needs it.
    ptr: NonNull<ffi::SimModel>,
    id: u64,
    top: TopDef,
    name: String,
    ports: Ports,
    sched: Scheduler,
    /// The storage of each clock's port, by clock index: a 1-bit input, so one byte (see
    /// [`Model::add_clock`]), written at every edge without a port look-up.
    clock_bits: Vec<*mut u8>,
    time_ps: u64,
    last_dump_ps: Option<u64>,
    poisoned: bool,
    /// Evaluations of the whole model so far: what a harness's per-cycle cost is made of.
    evaluations: u64,
    waves: Option<PathBuf>,
    /// The output trace, when one was asked for.
    trace: Option<TraceWriter>,
    _not_send: PhantomData<*mut ()>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("top", &self.top)
            .field("name", &self.name)
            .field("time_ps", &self.time_ps)
            .field("clocks", &self.sched.clocks)
            .field("poisoned", &self.poisoned)
            .finish_non_exhaustive()
    }
}

fn pin<'a>(
    inner: &'a mut cxx::UniquePtr<ffi::SimModel>,
    top: &str,
) -> Result<Pin<&'a mut ffi::SimModel>> {
    inner.as_mut().ok_or_else(|| SimError::Create {
        top: top.to_string(),
        message: "the model constructor returned nothing".to_string(),
    })
}

impl Model {
    /// Builds a model of `top` (a [`crate::Top`] of this crate or a [`TopDef`] another
    /// crate built) with default settings; see [`ModelBuilder`].
    pub fn new(top: impl Into<TopDef>) -> Result<Model> {
        Model::builder(top).build()
    }

    /// Starts building a model of `top`.
    pub fn builder(top: impl Into<TopDef>) -> ModelBuilder {
        ModelBuilder {
            top: top.into(),
            name: None,
            waves: None,
            seed: None,
            echo: None,
            trace: None,
        }
    }

    /// The top this model was built from.
    pub fn top(&self) -> TopDef {
        self.top
    }

    /// Takes what the RTL printed (`$display`, assertion messages) since the last call: the
    /// text is captured per model rather than printed, so tests can check it.
    pub fn take_output(&mut self) -> String {
        match self.inner.as_mut() {
            Some(m) => ffi::model_take_output(m),
            None => String::new(),
        }
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The waveform file, when waves are on.
    pub fn waves_path(&self) -> Option<&Path> {
        self.waves.as_deref()
    }

    /// Simulated time in picoseconds.
    pub fn time_ps(&self) -> u64 {
        self.time_ps
    }

    /// True once the RTL called `$finish`.
    pub fn finished(&self) -> bool {
        self.inner.as_ref().is_some_and(|m| m.got_finish())
    }

    /// The names of the top's ports, in declaration order.
    pub fn port_names(&self) -> impl Iterator<Item = &str> {
        self.ports.names()
    }

    /// Resolves a port by name, once; the returned handle is used in the per-cycle path.
    pub fn port(&self, name: &str) -> Result<Port> {
        self.ports.port(name)
    }

    /// Resolves an input port, refusing outputs.
    pub fn input(&self, name: &str) -> Result<Port> {
        self.ports.input(name)
    }

    /// True if the port is an output of the model.
    pub fn is_output(&self, port: Port) -> bool {
        self.ports.is_output(port)
    }

    /// Reads a port of up to 64 bits; for a wider port, its low 64 bits.
    #[inline]
    pub fn get(&self, port: Port) -> u64 {
        self.ports.get(port)
    }

    /// Reads a 1-bit (or any) port as a boolean: true when non-zero.
    #[inline]
    pub fn get_bool(&self, port: Port) -> bool {
        self.ports.get_bool(port)
    }

    /// Gathers ports of this model into a set for [`Model::any_nonzero`]. Panics, as every
    /// accessor does, if a port was resolved by another model.
    pub fn port_set(&self, ports: &[Port]) -> PortSet {
        self.ports.port_set(ports)
    }

    /// Whether any port of `set` reads non-zero (false for an empty set). Panics if another
    /// model made the set.
    #[inline]
    pub fn any_nonzero(&self, set: &PortSet) -> bool {
        self.ports.any_nonzero(set)
    }

    /// Drives an input of up to 64 bits; bits above the port's width are dropped.
    #[inline]
    pub fn set(&mut self, port: Port, value: u64) {
        self.ports.set(port, value);
    }

    /// Drives a 1-bit input.
    #[inline]
    pub fn set_bool(&mut self, port: Port, value: bool) {
        self.ports.set_bool(port, value);
    }

    /// Reads a port of any width into 32-bit words, least significant first. Words beyond the
    /// port's width are set to zero; words the slice has no room for are not read.
    #[inline]
    pub fn get_words(&self, port: Port, out: &mut [u32]) {
        self.ports.get_words(port, out);
    }

    /// Drives an input of any width from 32-bit words, least significant first. Missing words
    /// are zero; bits above the port's width are dropped.
    #[inline]
    pub fn set_words(&mut self, port: Port, words: &[u32]) {
        self.ports.set_words(port, words);
    }

    /// Reads a port into bytes, least significant first (little-endian, as AXI lays out data).
    pub fn get_bytes(&self, port: Port, out: &mut [u8]) {
        self.ports.get_bytes(port, out);
    }

    /// Drives an input from bytes, least significant first.
    pub fn set_bytes(&mut self, port: Port, bytes: &[u8]) {
        self.ports.set_bytes(port, bytes);
    }

    /// Adds a clock on a 1-bit input port at `freq_hz`; it starts low at the current time.
    pub fn add_clock(&mut self, port_name: &str, freq_hz: u64) -> Result<ClockId> {
        if freq_hz == 0 || freq_hz > clock::MAX_FREQ_HZ {
            return Err(SimError::BadClock {
                port: port_name.to_string(),
                freq_hz,
            });
        }
        let port = self.input(port_name)?;
        let Some(bit) = self.ports.clock_bit(port) else {
            return Err(self
                .ports
                .misuse(port, "is not a 1-bit input and cannot be a clock"));
        };
        if self.sched.clocks.len() >= 32 {
            return Err(self
                .ports
                .misuse(port, "cannot be added: a model has at most 32 clocks"));
        }
        let mut c = Clock::new(port_name, freq_hz);
        // A clock added after time zero keeps its phase relative to its own start.
        c.next_ps += self.time_ps;
        self.sched.add(c);
        if let Some(t) = &mut self.trace {
            t.clock(self.sched.clocks.len() - 1, port_name, freq_hz);
        }
        // A 1-bit input of this model (checked above), so its storage is one byte of it.
        self.clock_bits.push(bit);
        self.set(port, 0);
        Ok(ClockId((self.sched.clocks.len() - 1) as u8))
    }

    /// Completed cycles (rising edges) of `clock`.
    #[inline]
    pub fn cycles(&self, clock: ClockId) -> u64 {
        self.sched
            .clocks
            .get(clock.index())
            .map_or(0, Clock::cycles)
    }

    /// The port name of `clock` (empty for a clock this model does not have).
    pub fn clock_name(&self, clock: ClockId) -> &str {
        self.sched
            .clocks
            .get(clock.index())
            .map_or("", |c| c.name.as_str())
    }

    /// The frequency of `clock` in hertz.
    pub fn clock_freq_hz(&self, clock: ClockId) -> u64 {
        self.sched
            .clocks
            .get(clock.index())
            .map_or(0, |c| c.freq_hz)
    }

    /// The next instant at which any clock has an edge, and which edges those are, without
    /// applying them: monitors sample here, before the edge.
    #[inline]
    pub fn next_edges(&self) -> Option<(u64, Edges)> {
        self.sched.peek()
    }

    /// How many times the model has been evaluated (by [`Model::eval`], steps and ticks):
    /// the unit a harness's speed is made of, for counting what a change of stepping saves.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Evaluates the model at the current time: call after driving inputs so that
    /// combinational outputs settle.
    pub fn eval(&mut self) -> Result<()> {
        self.eval_at(self.time_ps)?;
        // Inputs driven after an edge show in the waves one picosecond after it, like a
        // clock-to-output delay, without reordering anything in simulated time.
        if self.waves.is_some() {
            let at = match self.last_dump_ps {
                Some(t) if t >= self.time_ps => t + 1,
                _ => self.time_ps,
            };
            if self.sched.next_time().is_none_or(|n| at < n) {
                self.dump(at)?;
            }
        }
        Ok(())
    }

    /// Advances to the next clock edge instant, applies every edge due then and evaluates once.
    /// With no clock, returns no edges and leaves time unchanged.
    #[inline]
    pub fn step(&mut self) -> Result<Edges> {
        self.check_alive()?;
        let Some((t, edges)) = self.sched.peek() else {
            return Ok(Edges::default());
        };
        self.sched.apply(t);
        let rising = edges.rising_mask();
        let mut moved = rising | edges.falling_mask();
        while moved != 0 {
            let i = moved.trailing_zeros() as usize;
            moved &= moved - 1;
            // A clock that rose is high now, one that fell low.
            let level = (rising >> i) & 1;
            if let Some(&bit) = self.clock_bits.get(i) {
                // SAFETY: `bit` is the one-byte storage of a 1-bit input of this model
                // (`add_clock` took it from a port this model resolved), which `self.inner`
                // keeps at a fixed address until `self` is dropped; nothing else accesses it
                // between evaluations, which `&mut self` excludes.
                unsafe { bit.write(level as u8) };
            }
        }
        self.time_ps = t;
        self.eval_unchecked(t)?;
        if self.waves.is_some() {
            self.dump(t)?;
        }
        Ok(edges)
    }

    /// Steps until `clock` has risen once more.
    pub fn tick(&mut self, clock: ClockId) -> Result<()> {
        if clock.index() >= self.sched.clocks.len() {
            return Err(SimError::Timeout {
                clock: format!(
                    "#{} (this model has {} clocks)",
                    clock.index(),
                    self.sched.clocks.len()
                ),
                cycles: 0,
                what: "a clock this model does not have".to_string(),
            });
        }
        loop {
            if self.step()?.rising(clock) {
                return Ok(());
            }
        }
    }

    /// Steps `n` rising edges of `clock`.
    pub fn ticks(&mut self, clock: ClockId, n: u64) -> Result<()> {
        for _ in 0..n {
            self.tick(clock)?;
        }
        Ok(())
    }

    /// Ticks `clock` until `done(model)` is true after an edge, at most `limit` cycles.
    pub fn wait_until(
        &mut self,
        clock: ClockId,
        limit: u64,
        what: &str,
        mut done: impl FnMut(&Model) -> bool,
    ) -> Result<u64> {
        for n in 1..=limit {
            self.tick(clock)?;
            if done(self) {
                return Ok(n);
            }
        }
        Err(SimError::Timeout {
            clock: self
                .sched
                .clocks
                .get(clock.index())
                .map_or_else(String::new, |c| c.name.clone()),
            cycles: limit,
            what: what.to_string(),
        })
    }

    /// The named memories that this model's RTL registered (storage that a simulation-only
    /// model keeps behind DPI-C, see `cpp/sim_memory.h`), in the order they were registered.
    pub fn memories(&self) -> Vec<MemoryInfo> {
        self.inner.as_ref().map_or_else(Vec::new, |m| {
            ffi::model_memories(m)
                .into_iter()
                .map(MemoryInfo::from)
                .collect()
        })
    }

    /// The memory of `kind` that `instance` names (its full hierarchical name, or its last
    /// path components after a dot), or the only one of that kind when `instance` is `None`:
    /// its index among all the model's memories, and its description.
    pub fn memory(&self, kind: &str, instance: Option<&str>) -> Result<(usize, MemoryInfo)> {
        memory::find(self.memories(), &self.name, kind, instance)
    }

    /// Writes `data` at byte address `addr` of the memory of `kind` that `instance` names (see
    /// [`Model::memory`]), without bus cycles: a preload that the RTL sees from its next
    /// access on.
    pub fn memory_write(
        &mut self,
        kind: &str,
        instance: Option<&str>,
        addr: u64,
        data: &[u8],
    ) -> Result<()> {
        let (idx, info) = self.memory(kind, instance)?;
        let top = self.top.name();
        let rc = ffi::model_memory_write(pin(&mut self.inner, top)?, idx, addr, data);
        memory::outcome(rc, info, addr, data.len(), &self.name)
    }

    /// Reads `out.len()` bytes at byte address `addr` of the memory of `kind` that `instance`
    /// names (see [`Model::memory`]), without bus cycles.
    pub fn memory_read(
        &self,
        kind: &str,
        instance: Option<&str>,
        addr: u64,
        out: &mut [u8],
    ) -> Result<()> {
        let (idx, info) = self.memory(kind, instance)?;
        let len = out.len();
        let rc = self
            .inner
            .as_ref()
            .map_or(-1, |m| ffi::model_memory_read(m, idx, addr, out));
        memory::outcome(rc, info, addr, len, &self.name)
    }

    #[inline]
    fn check_alive(&self) -> Result<()> {
        if self.poisoned {
            Err(SimError::Poisoned {
                model: self.name.clone(),
            })
        } else {
            Ok(())
        }
    }

    #[inline]
    fn eval_at(&mut self, t: u64) -> Result<()> {
        self.check_alive()?;
        self.eval_unchecked(t)
    }

    /// Evaluates at `t` a model known not to be poisoned (the caller checked).
    #[inline]
    fn eval_unchecked(&mut self, t: u64) -> Result<()> {
        // SAFETY: `ptr` is the object that `self.inner` owns, alive until `self` is dropped and
        // never moved (the C++ object lives on the heap), so pinning it holds; `&mut self`
        // makes this the only reference to it while `m` lives.
        let m = unsafe { Pin::new_unchecked(&mut *self.ptr.as_ptr()) };
        self.evaluations += 1;
        if let Err(e) = m.eval(t) {
            self.poisoned = true;
            return Err(SimError::Rtl {
                model: self.name.clone(),
                time_ps: t,
                message: e.what().to_string(),
            });
        }
        if self.trace.is_some() {
            self.record_trace(t);
        }
        Ok(())
    }

    /// Writes the outputs to the trace after an evaluation at `t`.
    #[cold]
    #[inline(never)]
    fn record_trace(&mut self, t: u64) {
        if let Some(trace) = &mut self.trace {
            let cycles = self.sched.clocks.iter().map(Clock::cycles);
            trace.record(&self.ports, t, cycles);
        }
    }

    fn dump(&mut self, t: u64) -> Result<()> {
        let top = self.top.name();
        pin(&mut self.inner, top)?.dump(t);
        self.last_dump_ps = Some(t);
        Ok(())
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        if let Some(t) = &mut self.trace {
            t.close();
        }
        // A poisoned model is mid-evaluation; running its final blocks could fail again.
        if !self.poisoned {
            if let Some(m) = self.inner.as_mut() {
                let _ = m.finish();
            }
        }
        // What a coverage build counted, even for a poisoned model: the lines that led to an
        // RTL error were reached. A failure to write is said, not raised, in a Drop.
        if self.counts_coverage() {
            let dir = coverage_dir();
            let file = dir.join(format!(
                "{}-{}-{}-{}.dat",
                file_safe(&self.name),
                std::process::id(),
                self.id,
                self.top.name()
            ));
            if let Err(e) = std::fs::create_dir_all(&dir)
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    self.write_coverage(&file)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
            {
                eprintln!(
                    "sim-runtime: cannot write the coverage of {}: {e}",
                    file.display()
                );
            }
        }
    }
}

impl Model {
    /// Whether this model's top was built with coverage (`sim_build::Build::coverage`).
    pub fn counts_coverage(&mut self) -> bool {
        self.inner
            .as_mut()
            .is_some_and(|m| ffi::model_write_coverage(m, ""))
    }

    /// Writes the coverage counted so far to `path`, in Verilator's coverage data format (what
    /// `verilator_coverage` merges and turns into lcov). Returns false, writing nothing, when
    /// the top was built without coverage. A dropped model of a coverage build writes its
    /// counts by itself (see [`COVERAGE_DIR_ENV`]).
    pub fn write_coverage(&mut self, path: &Path) -> Result<bool> {
        let text = path.to_str().ok_or_else(|| SimError::BadPath {
            path: path.to_path_buf(),
            problem: "the coverage file's path must be UTF-8".into(),
        })?;
        if text.is_empty() {
            return Err(SimError::BadPath {
                path: path.to_path_buf(),
                problem: "the coverage file's path is empty".into(),
            });
        }
        Ok(self
            .inner
            .as_mut()
            .is_some_and(|m| ffi::model_write_coverage(m, text)))
    }
}

fn default_name() -> String {
    std::thread::current()
        .name()
        .map_or_else(|| "model".to_string(), str::to_string)
}

/// The waveform files claimed so far in this process.
static WAVES_CLAIMED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
/// The trace files claimed so far in this process.
static TRACES_CLAIMED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// The file in `dir` with extension `ext` of a model named `name` (its test's name):
/// `<name>.<ext>` for the first in this process, `<name>-<n>[-<top>].<ext>` for the n-th after
/// it, so that two models of one test (two cards open at once) never write one file.
fn claim_path(
    claimed: &std::sync::Mutex<Vec<PathBuf>>,
    dir: &Path,
    name: &str,
    ext: &str,
    top: Option<&str>,
) -> PathBuf {
    let mut claimed = claimed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let base = file_safe(name);
    let mut path = dir.join(format!("{base}.{ext}"));
    let mut n = 1;
    while claimed.contains(&path) {
        n += 1;
        let top = top.map_or_else(String::new, |t| format!("-{}", file_safe(t)));
        path = dir.join(format!("{base}-{n}{top}.{ext}"));
    }
    claimed.push(path.clone());
    path
}

fn file_safe(name: &str) -> String {
    name.replace("::", "__")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_become_file_names() {
        assert_eq!(file_safe("tests::waves on"), "tests__waves_on");
    }
}
