// Hooks that replace Verilator's default reactions to $stop, $fatal, $finish and internal
// errors, and that capture what the RTL prints. Force-included into the Verilator runtime so
// that VL_PRINTF resolves to sim_runtime_vl_printf.
#pragma once

#include <stdexcept>
#include <string>

// Every line the RTL prints ($display, assertion messages) goes through here.
void sim_runtime_vl_printf(const char* fmt, ...);

namespace sim_runtime {

// Thrown out of eval() by $stop, $fatal, $error, a failed assertion or a Verilator runtime
// error. The model that threw is poisoned: its state is mid-evaluation and must not be used.
class RtlError : public std::runtime_error {
  public:
    explicit RtlError(const std::string& what) : std::runtime_error(what) {}
};

// The most recent lines the RTL printed on this thread. Each model is evaluated only on the
// thread that owns it, so a thread-local log is per model while that model evaluates.
std::string& thread_log();

}  // namespace sim_runtime
