//! A model's named memories: storage a simulation-only model registers with the runtime
//! (`cpp/sim_memory.h`), found by kind and instance and reached without bus cycles.

use crate::error::{Result, SimError};
use crate::ffi::MemoryDesc;

/// A named memory of a model: storage a simulation-only model keeps outside the RTL's arrays
/// and registered with the runtime (`cpp/sim_memory.h`), reachable without bus cycles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryInfo {
    /// The kind the model registered it as (its own word, e.g. `ddr3`).
    pub kind: String,
    /// Its hierarchical name in the RTL.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
}

impl From<MemoryDesc> for MemoryInfo {
    fn from(d: MemoryDesc) -> MemoryInfo {
        let (kind, name, size) = d.into_parts();
        MemoryInfo { kind, name, size }
    }
}

/// Of the `memories` of model `model` (all of them, in the order they were registered), the
/// one of `kind` that `instance` names (its full hierarchical name, or its last path
/// components after a dot), or the only one of that kind when `instance` is `None`: its index
/// among all of them, and its description.
pub(crate) fn find(
    memories: Vec<MemoryInfo>,
    model: &str,
    kind: &str,
    instance: Option<&str>,
) -> Result<(usize, MemoryInfo)> {
    let all: Vec<(usize, MemoryInfo)> = memories
        .into_iter()
        .enumerate()
        .filter(|(_, m)| m.kind == kind)
        .collect();
    let names = || {
        all.iter()
            .map(|(_, m)| m.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if all.is_empty() {
        return Err(SimError::NoMemory {
            model: model.to_string(),
            kind: kind.to_string(),
        });
    }
    let hits: Vec<&(usize, MemoryInfo)> = match instance {
        None if all.len() == 1 => all.iter().collect(),
        None => {
            return Err(SimError::MemoryAmbiguous {
                model: model.to_string(),
                kind: kind.to_string(),
                instances: names(),
            })
        }
        Some(want) => all
            .iter()
            .filter(|(_, m)| m.name == want || m.name.ends_with(&format!(".{want}")))
            .collect(),
    };
    match hits.as_slice() {
        [hit] => Ok((*hit).clone()),
        _ => Err(SimError::NoSuchMemory {
            model: model.to_string(),
            kind: kind.to_string(),
            instance: instance.unwrap_or_default().to_string(),
            known: names(),
        }),
    }
}

/// What the C++ side's answer `rc` to a read or write of `len` bytes at `addr` of memory
/// `info` of model `model` means: 0 done, -2 outside the memory, anything else no memory.
pub(crate) fn outcome(rc: i32, info: MemoryInfo, addr: u64, len: usize, model: &str) -> Result<()> {
    match rc {
        0 => Ok(()),
        -2 => Err(SimError::MemoryRange {
            instance: info.name,
            addr,
            len,
            size: info.size,
        }),
        _ => Err(SimError::NoMemory {
            model: model.to_string(),
            kind: info.kind,
        }),
    }
}
