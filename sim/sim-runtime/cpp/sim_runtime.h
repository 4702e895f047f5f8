// The C++ side of sim-runtime's Rust bridge: the model interface (sim_model.h) and the few free
// functions that turn its plain C++ results into Rust types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "rust/cxx.h"
#include "sim_model.h"

namespace sim_runtime {

struct PortDesc;
struct MemoryDesc;

// The model's ports as the bridge's shared struct.
rust::Vec<PortDesc> model_ports(const SimModel& m);
// The named memories of the model's context (sim_memory.h).
rust::Vec<MemoryDesc> model_memories(const SimModel& m);
// What the RTL printed since the last call.
rust::String model_take_output(SimModel& m);
int32_t model_memory_read(const SimModel& m, size_t index, uint64_t addr,
                          rust::Slice<uint8_t> out);
int32_t model_memory_write(SimModel& m, size_t index, uint64_t addr,
                           rust::Slice<const uint8_t> data);
// Writes the model's coverage to `path`; false when the top was built without coverage.
bool model_write_coverage(SimModel& m, rust::Str path);

}  // namespace sim_runtime
