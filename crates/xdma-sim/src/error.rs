//! How the simulator's and the bus models' failures become the API's errors.

use xdma_core::{Error, ErrorKind};

/// A simulator failure as the API's error.
pub(crate) fn sim(e: card_sim::SimError) -> Error {
    let kind = match e {
        card_sim::SimError::Timeout { .. } => ErrorKind::Timeout,
        _ => ErrorKind::Backend,
    };
    Error::Source {
        kind,
        context: "simulated card",
        source: Box::new(e),
    }
}

/// A bus-model or protocol-monitor failure as the API's error.
pub(crate) fn bfm(e: axi_bfm::BfmError) -> Error {
    let e = match e {
        axi_bfm::BfmError::Sim(inner) => return sim(inner),
        other => other,
    };
    let kind = match &e {
        axi_bfm::BfmError::Timeout { .. } => ErrorKind::Timeout,
        // A stall past the monitor's bound is the simulated card's timeout.
        axi_bfm::BfmError::Violation(v) if v.rule == axi_bfm::Rule::StallBound => {
            ErrorKind::Timeout
        }
        _ => ErrorKind::Backend,
    };
    Error::Source {
        kind,
        context: "simulated card",
        source: Box::new(e),
    }
}
