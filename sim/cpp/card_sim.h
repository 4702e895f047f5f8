// The C++ side of card-sim's Rust bridge: the model interface (sim_model.h) and the few free
// functions that turn its plain C++ results into Rust types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "rust/cxx.h"
#include "sim_model.h"

namespace card_sim {

struct PortDesc;

// The model's ports as the bridge's shared struct.
rust::Vec<PortDesc> model_ports(const SimModel& m);
// Hierarchical names of the DDR3 model instances.
rust::Vec<rust::String> model_ddr_instances(const SimModel& m);
// What the RTL printed since the last call.
rust::String model_take_output(SimModel& m);
int32_t model_ddr_read(const SimModel& m, size_t index, uint64_t addr, rust::Slice<uint8_t> out);
int32_t model_ddr_write(SimModel& m, size_t index, uint64_t addr,
                        rust::Slice<const uint8_t> data);

}  // namespace card_sim
