//! The frame source (`hdl/rtl/frame_source.v`) on its own, its stream taken by an AXI-Stream
//! sink bus model with the protocol monitor on (which checks that a stalled beat holds still,
//! that TVALID never drops under a stall, and the XDMA TKEEP rule): every header field, the
//! CRC against the `crc` crate (through the `frame` reference crate), both payload patterns,
//! frame lengths at the limits and odd ones, the inter-frame gap, both backpressure policies
//! under seeded random TREADY, the one-shot interface, and a clear at random moments, which
//! must never cut a frame.

use std::cell::RefCell;
use std::rc::Rc;

use axi_bfm::{AxisMonitorConfig, AxisSink, Env, PauseSpec, ResetPolarity, Result};
use card_sim::{ClockId, Model, Port, Top};
use frame::{Header, Pattern, SeqTracker};
use rand::{Rng as _, RngExt, SeedableRng};
use rand_xorshift::XorShiftRng;
use rstest::rstest;
use rtl_tests::{fires, hook, on_sample, AXI_HZ};

/// How the test drives TREADY.
#[derive(Clone, Copy)]
enum Ready {
    Always,
    Never,
    /// Ready on this percentage of cycles, drawn from the source's seed.
    Random(u8),
}

/// A frame as the bus delivered it.
struct Received {
    bytes: Vec<u8>,
    /// Completed cycles before its first beat's handshake.
    first_cycle: u64,
    /// Completed cycles before its last beat's handshake.
    last_cycle: u64,
}

struct Source {
    env: Env,
    clk: ClockId,
    sink: AxisSink,
    /// The seed of the random TREADY pattern.
    seed: u64,
    /// The spec in force, so that it is installed again only when it changes.
    ready: Option<PauseSpec>,
    enable: Port,
    channel: Port,
    frame_len: Port,
    gap_cycles: Port,
    pattern: Port,
    seed_in: Port,
    drop_policy: Port,
    oneshot: Port,
    send: Port,
    send_seq: Port,
    tvalid: Port,
    frames_sent: Port,
    frames_dropped: Port,
    send_ready: Port,
    clear: Port,
    clearing: Port,
    clear_tail: Port,
    /// Cycles on which TVALID was low, for gap checks.
    idle_cycles: Rc<RefCell<Vec<u64>>>,
    /// Whether the bus is inside a frame: a beat was taken and its frame's last was not.
    mid_frame: Rc<RefCell<bool>>,
}

impl Source {
    /// A reset frame source whose random TREADY draws from `seed`.
    fn new(seed: u64) -> Result<Source> {
        let mut env = Env::new(Model::new(Top::FrameSource)?);
        let clk = env.add_clock("clk", AXI_HZ)?;
        env.add_reset(clk, "rst", ResetPolarity::ActiveHigh)?;
        let sink = AxisSink::attach(&mut env, "m_axis", clk)?;
        if let Some(mon) = sink.monitor() {
            mon.set_config(AxisMonitorConfig {
                // The source feeds the XDMA C2H engine: TKEEP is packed.
                tkeep_packed: true,
                record: true,
                // The drop-policy test holds TREADY low for thousands of cycles on purpose.
                stall_bound: 0,
                ..mon.config()
            });
        }
        let m = env.model();
        let (timestamp, tvalid) = (m.input("timestamp")?, m.port("m_axis_tvalid")?);
        let (tready, tlast) = (m.port("m_axis_tready")?, m.port("m_axis_tlast")?);
        // The timestamp input counts completed cycles, as the card's timestamp counter does.
        hook(
            &mut env,
            clk,
            |_, _| {},
            move |m, cx| m.set(timestamp, cx.cycle),
        );
        let idle_cycles = Rc::new(RefCell::new(Vec::new()));
        let idle = idle_cycles.clone();
        let mid_frame = Rc::new(RefCell::new(false));
        let mid = mid_frame.clone();
        on_sample(&mut env, clk, move |m, cx| {
            if !m.get_bool(tvalid) {
                idle.borrow_mut().push(cx.cycle - 1);
            }
            if fires(m, tvalid, tready) {
                *mid.borrow_mut() = !m.get_bool(tlast);
            }
        });
        let m = env.model();
        let mut s = Source {
            clk,
            sink,
            seed,
            ready: None,
            enable: m.input("enable")?,
            channel: m.input("channel")?,
            frame_len: m.input("frame_len")?,
            gap_cycles: m.input("gap_cycles")?,
            pattern: m.input("pattern")?,
            seed_in: m.input("seed")?,
            drop_policy: m.input("drop_policy")?,
            oneshot: m.input("oneshot")?,
            send: m.input("send")?,
            send_seq: m.input("send_seq")?,
            tvalid,
            frames_sent: m.port("frames_sent")?,
            frames_dropped: m.port("frames_dropped")?,
            send_ready: m.port("send_ready")?,
            clear: m.input("clear")?,
            clearing: m.port("clearing")?,
            clear_tail: m.port("clear_tail")?,
            idle_cycles,
            mid_frame,
            env,
        };
        s.env.reset(s.clk, 4)?;
        Ok(s)
    }

    fn m(&mut self) -> &mut Model {
        self.env.model_mut()
    }

    fn get(&self, p: Port) -> u64 {
        self.env.model().get(p)
    }

    /// Drives an input that no bus model owns.
    fn set(&mut self, p: Port, v: u64) -> Result<()> {
        let m = self.m();
        m.set(p, v);
        Ok(m.eval()?)
    }

    fn configure(
        &mut self,
        channel: u8,
        len: u64,
        gap: u64,
        pattern: Pattern,
        seed: u32,
    ) -> Result<()> {
        self.set(self.channel, u64::from(channel))?;
        self.set(self.frame_len, len)?;
        self.set(self.gap_cycles, gap)?;
        self.set(self.pattern, pattern as u64)?;
        self.set(self.seed_in, u64::from(seed))
    }

    /// One clock cycle with TREADY as `ready` says; frames that completed go to `out`.
    fn cycle(&mut self, ready: Ready, out: &mut Vec<Received>) -> Result<()> {
        let spec = match ready {
            Ready::Always => PauseSpec::Never,
            Ready::Never => PauseSpec::Always,
            Ready::Random(p) => PauseSpec::random(self.seed, 100 - p.min(100)),
        };
        if self.ready.as_ref() != Some(&spec) {
            self.sink.set_pauses(&spec);
            self.ready = Some(spec);
        }
        self.env.tick(self.clk)?;
        if self.sink.pending() > 0 {
            while self.sink.try_recv().is_some() {}
            let frames = self
                .sink
                .monitor()
                .map(axi_bfm::AxisMonitor::take_frames)
                .unwrap_or_default();
            out.extend(frames.into_iter().map(|f| Received {
                bytes: f.frame.data,
                first_cycle: f.start_cycle - 1,
                last_cycle: f.end_cycle - 1,
            }));
        }
        Ok(())
    }

    /// Runs until `n` more frames arrived, at most `limit` cycles.
    fn collect(&mut self, n: usize, ready: Ready, limit: u64) -> Result<Vec<Received>> {
        let mut out = Vec::new();
        for _ in 0..limit {
            if out.len() >= n {
                return Ok(out);
            }
            self.cycle(ready, &mut out)?;
        }
        panic!("only {} of {n} frames in {limit} cycles", out.len());
    }

    /// Runs with TREADY high until the bus has been idle for 64 cycles.
    fn drain(&mut self, limit: u64) -> Result<Vec<Received>> {
        let mut out = Vec::new();
        let mut quiet = 0;
        for _ in 0..limit {
            if quiet >= 64 {
                return Ok(out);
            }
            let before = out.len();
            let busy = self.env.model().get_bool(self.tvalid);
            self.cycle(Ready::Always, &mut out)?;
            quiet = if busy || out.len() != before {
                0
            } else {
                quiet + 1
            };
        }
        panic!("source still sending after {limit} cycles");
    }

    /// Starts exactly one frame: enable for one cycle while the generator is idle.
    fn one_frame(&mut self, len: u64) -> Result<Received> {
        self.set(self.frame_len, len)?;
        self.set(self.enable, 1)?;
        let mut out = Vec::new();
        self.cycle(Ready::Always, &mut out)?;
        self.set(self.enable, 0)?;
        let mut rest = self.drain(20_000)?;
        out.append(&mut rest);
        assert_eq!(out.len(), 1, "one enable cycle starts one frame");
        Ok(out.remove(0))
    }
}

fn header_of(r: &Received) -> Header {
    frame::parse(&r.bytes)
        .expect("the source sends valid frames")
        .header
}

/// Every field of every frame equals what the reference crate builds for the same header, so
/// every byte (magic, version, channel, pattern, sequence, payload length, timestamp, seed,
/// payload, CRC) is checked; the CRC also against the `crc` crate directly.
#[rstest]
#[case::counter_64(Pattern::Counter, 64, 0xA5, 0x1234_5678)]
#[case::counter_odd(Pattern::Counter, 333, 0x01, 0)]
#[case::prbs_64(Pattern::Prbs, 64, 0xFF, 0xDEAD_BEEF)]
#[case::prbs_odd(Pattern::Prbs, 1501, 0x7E, 0)]
fn every_field_matches_the_reference(
    #[case] pattern: Pattern,
    #[case] len: u64,
    #[case] channel: u8,
    #[case] seed: u32,
) -> Result<()> {
    let gap = 3;
    let mut s = Source::new(1)?;
    s.configure(channel, len, gap, pattern, seed)?;
    s.set(s.enable, 1)?;
    let frames = s.collect(8, Ready::Always, 10_000)?;
    let beats = frame::beat_count(len as usize) as u64;
    // The `crc` crate's CRC-32/ISO-HDLC, as the frame crate exports it.
    let crc = frame::CRC32;
    for (i, r) in frames.iter().enumerate() {
        let h = header_of(r);
        let expected = Header {
            channel,
            pattern,
            sequence: i as u32,
            timestamp: h.timestamp,
            seed,
        };
        assert_eq!(h, expected, "frame {i}");
        assert_eq!(
            r.bytes,
            frame::build(&expected, len as usize).expect("legal length")
        );
        let n = r.bytes.len();
        assert_eq!(
            r.bytes[n - 4..],
            crc.checksum(&r.bytes[..n - 4]).to_le_bytes(),
            "frame {i}: CRC trailer"
        );
        // The timestamp is taken in the cycle the source decides to start (one cycle after it
        // sees enable), one cycle before the first beat enters the generator's stage A; the
        // beat then passes stages R, P and C, the FIFO's memory and its output register:
        // seven cycles before the bus.
        assert_eq!(
            r.first_cycle - h.timestamp,
            7,
            "frame {i}: timestamp against the bus"
        );
    }
    for w in frames.windows(2) {
        assert_eq!(
            header_of(&w[1]).timestamp - header_of(&w[0]).timestamp,
            beats + gap
        );
    }
    Ok(())
}

#[test]
fn lengths_at_the_limits_and_odd_ones() -> Result<()> {
    let mut s = Source::new(2)?;
    let lengths = [
        64u64, 65, 66, 67, 75, 76, 77, 78, 79, 80, 81, 95, 96, 97, 1023, 4097, 65535, 65536,
    ];
    for (i, &len) in lengths.iter().enumerate() {
        let pattern = if i % 2 == 0 {
            Pattern::Prbs
        } else {
            Pattern::Counter
        };
        s.configure(9, len, 0, pattern, 0x5555_0000 + i as u32)?;
        let r = s.one_frame(len)?;
        // The assembler took the byte count of the last beat from its TKEEP (and checked
        // that every other beat keeps all lanes), so the length checks TKEEP too.
        assert_eq!(r.bytes.len() as u64, len, "frame length");
        let h = header_of(&r);
        assert_eq!(h.sequence, i as u32);
        assert_eq!(h.pattern, pattern);
    }
    // Lengths out of range are clamped to the legal ones.
    s.configure(9, 10, 0, Pattern::Counter, 0)?;
    assert_eq!(s.one_frame(10)?.bytes.len(), 64);
    assert_eq!(s.one_frame(0x1_FFFF)?.bytes.len(), 65536);
    let sent = s.get(s.frames_sent);
    assert_eq!(sent, lengths.len() as u64 + 2);
    Ok(())
}

/// With TREADY high the bus shows exactly `gap` idle cycles between frames, and none with a
/// gap of zero.
#[rstest]
#[case(0, 64)]
#[case(0, 77)]
#[case(1, 64)]
#[case(7, 200)]
fn the_gap_appears_on_the_bus(#[case] gap: u64, #[case] len: u64) -> Result<()> {
    let mut s = Source::new(3)?;
    s.configure(0, len, gap, Pattern::Counter, 0)?;
    s.set(s.enable, 1)?;
    let frames = s.collect(6, Ready::Always, 10_000)?;
    let beats = frame::beat_count(len as usize) as u64;
    for w in frames.windows(2) {
        assert_eq!(
            w[0].last_cycle - w[0].first_cycle + 1,
            beats,
            "one beat per cycle"
        );
        assert_eq!(
            w[1].first_cycle - w[0].last_cycle - 1,
            gap,
            "idle cycles between frames"
        );
        let idle = s
            .idle_cycles
            .borrow()
            .iter()
            .filter(|&&c| c > w[0].last_cycle && c < w[1].first_cycle)
            .count() as u64;
        assert_eq!(idle, gap);
    }
    Ok(())
}

/// Stall policy: nothing is lost, sequence numbers are consecutive, beats hold still under a
/// stall (checked on every cycle by the sink's protocol monitor). TREADY is random, drawn from
/// the case's seed.
#[rstest]
#[case::half(50, Pattern::Prbs, 100, 0x50)]
#[case::sparse(15, Pattern::Counter, 77, 0x15)]
#[case::dense(90, Pattern::Prbs, 64, 0x90)]
fn stall_policy_loses_nothing(
    #[case] ready_percent: u8,
    #[case] pattern: Pattern,
    #[case] len: u64,
    #[case] seed: u64,
) -> Result<()> {
    let mut s = Source::new(seed)?;
    s.configure(4, len, 0, pattern, 0xABCD)?;
    s.set(s.drop_policy, 0)?;
    s.set(s.enable, 1)?;
    let mut frames = s.collect(40, Ready::Random(ready_percent), 100_000)?;
    s.set(s.enable, 0)?;
    frames.append(&mut s.drain(100_000)?);
    for (i, r) in frames.iter().enumerate() {
        assert_eq!(
            header_of(r).sequence,
            i as u32,
            "no frame lost or reordered"
        );
    }
    assert_eq!(s.get(s.frames_dropped), 0);
    assert_eq!(s.get(s.frames_sent), frames.len() as u64);
    Ok(())
}

/// Drop policy: with the bus stalled long enough to fill the FIFO, whole frames are dropped,
/// counted, and visible as sequence gaps; what is sent is intact, and the source keeps its
/// line-rate schedule (timestamps advance by whole slots, sent or dropped).
#[rstest]
#[case::counter(Pattern::Counter, 1024, 0)]
#[case::prbs_odd(Pattern::Prbs, 1000, 5)]
fn drop_policy_drops_whole_frames(
    #[case] pattern: Pattern,
    #[case] len: u64,
    #[case] gap: u64,
) -> Result<()> {
    // TREADY's random phase draws from this seed.
    let mut s = Source::new(77)?;
    s.configure(2, len, gap, pattern, 99)?;
    s.set(s.drop_policy, 1)?;
    s.set(s.enable, 1)?;
    let mut frames = Vec::new();
    // 4096 beats of FIFO fill in about 4096 cycles; then the source must drop.
    for _ in 0..6000 {
        s.cycle(Ready::Never, &mut frames)?;
    }
    assert!(frames.is_empty());
    assert!(s.get(s.frames_dropped) > 0, "a full FIFO drops frames");
    for _ in 0..8000 {
        s.cycle(Ready::Random(40), &mut frames)?;
    }
    s.set(s.enable, 0)?;
    frames.append(&mut s.drain(20_000)?);

    let sent = s.get(s.frames_sent);
    let dropped = s.get(s.frames_dropped);
    assert_eq!(sent, frames.len() as u64);
    let mut tracker = SeqTracker::new();
    for r in &frames {
        tracker.observe(&r.bytes).expect("sent frames are intact");
    }
    let last = header_of(frames.last().expect("frames were sent")).sequence as u64;
    let trailing = sent + dropped - 1 - last;
    assert_eq!(tracker.bad_frames(), 0);
    assert_eq!(header_of(&frames[0]).sequence, 0);
    assert_eq!(
        tracker.missing() + trailing,
        dropped,
        "every drop is a sequence gap"
    );
    assert!(tracker.missing() > 0, "gaps between sent frames");
    let slot = frame::beat_count(len as usize) as u64 + gap;
    let t0 = header_of(&frames[0]).timestamp;
    for r in &frames {
        let h = header_of(r);
        assert_eq!(
            h.timestamp - t0,
            u64::from(h.sequence) * slot,
            "slot of frame {}",
            h.sequence
        );
    }
    Ok(())
}

/// One-shot mode: frames only on request, each carrying the requested sequence number;
/// enable and the periodic sequence counter are left alone.
#[test]
fn oneshot_sends_one_frame_per_request() -> Result<()> {
    // TREADY's random phases draw from this seed.
    let mut s = Source::new(5)?;
    s.configure(1, 80, 0, Pattern::Prbs, 3)?;
    s.set(s.oneshot, 1)?;
    s.set(s.enable, 1)?;
    let mut frames = Vec::new();
    for _ in 0..200 {
        s.cycle(Ready::Always, &mut frames)?;
    }
    assert!(frames.is_empty(), "no frame without a request");
    let seqs = [0xDEAD_0001u32, 7, 7, 0];
    for &seq in &seqs {
        let mut waited = 0;
        while s.get(s.send_ready) == 0 {
            s.cycle(Ready::Random(50), &mut frames)?;
            waited += 1;
            assert!(waited < 1000, "send_ready never came");
        }
        s.set(s.send_seq, u64::from(seq))?;
        s.set(s.send, 1)?;
        s.cycle(Ready::Random(50), &mut frames)?;
        // A second pulse while the request is being served is ignored.
        let busy = s.get(s.send_ready) == 0;
        s.set(s.send, u64::from(busy))?;
        s.cycle(Ready::Random(50), &mut frames)?;
        s.set(s.send, 0)?;
    }
    frames.append(&mut s.drain(10_000)?);
    let got: Vec<u32> = frames.iter().map(|r| header_of(r).sequence).collect();
    assert_eq!(got, seqs);
    // Back to periodic mode: its sequence numbers start where they were, at 0.
    s.set(s.oneshot, 0)?;
    let f = s.collect(2, Ready::Always, 1000)?;
    assert_eq!(header_of(&f[0]).sequence, 0);
    assert_eq!(header_of(&f[1]).sequence, 1);
    Ok(())
}

/// A clear at random moments (mid-frame on the bus, with a beat presented and stalled, between
/// frames, in the gap, with the FIFO full, with the source enabled or not) never cuts a frame:
/// every frame the bus delivers is whole and valid. A frame that had begun on the bus when the
/// clear came (a beat taken, or one presented) finishes, and it is the only frame before the
/// restart, as `clear_tail` says; then the sequence starts at 0 and the counters count the new
/// run's frames alone. The seeds are ones whose 24 rounds include clears between frames as
/// well as mid-frame (about a third of seeds draw none between frames, which the test refuses
/// as saying nothing about that case).
#[rstest]
#[case::stall(0, 0xC1EA_0004)]
#[case::drop(1, 0xC1EA_0005)]
fn a_clear_at_any_moment_never_cuts_a_frame(
    #[case] drop_policy: u64,
    #[case] seed: u64,
) -> Result<()> {
    let mut rng = XorShiftRng::seed_from_u64(seed);
    let mut s = Source::new(seed)?;
    s.set(s.drop_policy, drop_policy)?;
    let mut tails = 0;
    // The last sequence number of the run under way (None: no frame since the restart).
    let mut prev = None;
    for round in 0..24 {
        let len = 64 + rng.random_range(0..3000u64);
        let gap = [0, 0, 3, 40][rng.random_range(0..4usize)];
        s.configure(1, len, gap, Pattern::Prbs, rng.next_u32())?;
        s.set(s.enable, 1)?;
        let mut run = Vec::new();
        // A random stretch: the bus takes beats at a random rate, or none (the FIFO fills).
        let cycles = rng.random_range(0..6000u64);
        let ready = match rng.random_range(0..4u32) {
            0 => Ready::Never,
            1 => Ready::Always,
            _ => Ready::Random(5 + rng.random_range(0..90u8)),
        };
        for _ in 0..cycles {
            s.cycle(ready, &mut run)?;
        }
        if rng.random_range(0..100) < 30 {
            s.set(s.enable, 0)?;
        }
        // The clear, with the bus as the stretch left it.
        s.set(s.clear, 1)?;
        s.cycle(ready, &mut run)?;
        s.set(s.clear, 0)?;
        let begun = *s.mid_frame.borrow() || s.env.model().get_bool(s.tvalid);
        assert_eq!(
            s.get(s.clear_tail),
            u64::from(begun),
            "round {round}: clear_tail says whether a frame had begun on the bus"
        );
        assert_eq!(
            s.get(s.frames_sent),
            0,
            "round {round}: counters zero at the clear"
        );
        assert_eq!(s.get(s.frames_dropped), 0);
        check_run(&run, &mut prev, drop_policy, round);
        prev = None;
        // Until the restart only the frame in flight may come, however long the bus waits.
        let mut before = Vec::new();
        for _ in 0..rng.random_range(0..3000u64) {
            s.cycle(Ready::Never, &mut before)?;
        }
        let mut waited = 0u64;
        while s.get(s.clearing) == 1 {
            s.cycle(Ready::Random(50), &mut before)?;
            waited += 1;
            assert!(waited < 200_000, "round {round}: the clear never finished");
        }
        assert_eq!(
            before.len(),
            usize::from(begun),
            "round {round}: only the frame in flight comes before the restart"
        );
        for r in &before {
            frame::parse(&r.bytes).expect("the frame in flight finishes whole");
        }
        tails += before.len();
        assert_eq!(
            s.get(s.frames_sent),
            0,
            "the frame in flight is not counted"
        );
        // The new run starts at sequence 0.
        s.set(s.enable, 1)?;
        let mut fresh = s.collect(3, Ready::Random(70), 200_000)?;
        s.set(s.enable, 0)?;
        fresh.append(&mut s.drain(200_000)?);
        check_run(&fresh, &mut prev, drop_policy, round);
        assert_eq!(
            s.get(s.frames_sent),
            fresh.len() as u64,
            "round {round}: the new run's count"
        );
        if drop_policy == 0 {
            assert_eq!(header_of(&fresh[0]).sequence, 0, "round {round}");
        }
    }
    // The rounds must have hit both cases, or the test says nothing about one of them.
    assert!(
        tails > 0 && tails < 24,
        "{tails} of 24 clears found a frame in flight"
    );
    Ok(())
}

/// Every frame of a run whole and valid, in order after `prev`: consecutive from 0 under the
/// stall policy, increasing under the drop policy.
fn check_run(run: &[Received], prev: &mut Option<u32>, drop_policy: u64, round: usize) {
    for r in run {
        let h = frame::parse(&r.bytes)
            .unwrap_or_else(|e| panic!("round {round}: a cut or broken frame: {e}"))
            .header;
        match (*prev, drop_policy) {
            (None, 0) => assert_eq!(h.sequence, 0, "round {round}: a run starts at 0"),
            (Some(p), 0) => assert_eq!(h.sequence, p + 1, "round {round}"),
            (Some(p), _) => assert!(h.sequence > p, "round {round}"),
            (None, _) => {}
        }
        *prev = Some(h.sequence);
    }
}
