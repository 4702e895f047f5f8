//! The scenarios leave the card as they found it: one program may run them one after another
//! on one card, as a board or a mounted simulated card is used by one program after another.

use std::time::Duration;

use xdma::{Config, Xdma};
use xdma_bench::rtt;
use xdma_bench::scenario::{self, StreamMode};

#[test]
fn the_round_trip_loop_runs_after_the_stream_scenario_on_one_card() {
    let card = Xdma::open(&Config::default()).expect("open the simulated card");
    for mode in [StreamMode::OneAtATime, StreamMode::Queued] {
        let s = scenario::streams(&card, 4096, 2, mode, 8, &|| {}).expect("streams");
        assert!(s.channels.iter().all(|c| c.frames == 8), "{s:?}");
    }
    let plan = rtt::Plan {
        total: Duration::from_micros(400),
        segment: Duration::from_micros(200),
        frame: 4096,
    };
    let r = rtt::run(&card, &plan, None, true, |_| {}).expect("the loop after the streams");
    assert!(r.segments.iter().all(|s| s.frames > 1), "{r:?}");
    let s = scenario::streams(&card, 4096, 1, StreamMode::Queued, 8, &|| {})
        .expect("streams after the loop");
    assert_eq!(s.channels[0].frames, 8);
}
