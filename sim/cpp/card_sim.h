// The C++ side of card-sim: one abstract model interface over every verilated top, so that the
// Rust bridge is written once and each top only contributes its port table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "rust/cxx.h"

namespace card_sim {

struct PortDesc;

class SimModel {
  public:
    virtual ~SimModel() = default;
    // Evaluates the model at the current time; throws RtlError (a Rust Err) on $stop/$fatal.
    virtual void eval() = 0;
    // Sets the simulated time in picoseconds, the precision every RTL file declares.
    virtual void set_time(uint64_t ps) = 0;
    // Writes one waveform sample at the current time if waves are on.
    virtual void dump(uint64_t ps) = 0;
    // Runs final blocks and closes the waveform file.
    virtual void finish() = 0;
    // True once the RTL called $finish.
    virtual bool got_finish() const = 0;
    // The top's ports with the addresses of their storage inside the model.
    virtual rust::Vec<PortDesc> ports() = 0;
    // Hierarchical names of the DDR3 model instances (hdl/sim/ddr3_model.v) in this model.
    virtual rust::Vec<rust::String> ddr_instances() const = 0;
    // Size in bytes of DDR3 instance `index`, 0 if there is none.
    virtual uint64_t ddr_size(size_t index) const = 0;
    // Backdoor access to DDR3 instance `index`: 0 on success, -1 no such instance, -2 range
    // outside the memory (see ddr3_mem.h).
    virtual int32_t ddr_read(size_t index, uint64_t addr, rust::Slice<uint8_t> out) const = 0;
    virtual int32_t ddr_write(size_t index, uint64_t addr, rust::Slice<const uint8_t> data) = 0;
};

// Builds a model of `top`, named `name` in messages; writes FST waves to `waves` unless empty.
// A non-zero `seed` randomizes every value Verilator leaves open (initial values of variables
// without an initialiser, X assignments) from that seed.
std::unique_ptr<SimModel> new_model(rust::Str top, rust::Str name, rust::Str waves, uint64_t seed);

// The names of the tops this build contains.
rust::Vec<rust::String> top_names();

}  // namespace card_sim
