// Replacements for Verilator's user-definable functions (VL_USER_STOP, VL_USER_FATAL,
// VL_USER_FINISH). The defaults print and call exit(), which would end the whole test process;
// here they throw, so the error reaches the Rust test that drove the model.
#include "hooks.h"

#include <cstdarg>
#include <cstdio>
#include <vector>

#include "verilated.h"

namespace sim_runtime {

std::string& thread_log() {
    static thread_local std::string log;
    return log;
}

}  // namespace sim_runtime

namespace {

// What one evaluation may print before the model moves it into its own output; older text is
// dropped so a chatty model cannot grow the log without bound.
constexpr size_t LOG_LIMIT = 16 * 1024;
// How much of it an error message quotes.
constexpr size_t QUOTE_LIMIT = 2048;

// The text printed during the failing evaluation, trimmed to its last QUOTE_LIMIT bytes.
std::string printed_text(const std::string& log) {
    size_t end = log.find_last_not_of("\r\n");
    if (end == std::string::npos) return std::string();
    size_t start = end + 1 > QUOTE_LIMIT ? end + 1 - QUOTE_LIMIT : 0;
    return log.substr(start, end - start + 1);
}

[[noreturn]] void raise(const char* kind, const char* filename, int linenum, const char* msg) {
    std::string what = std::string(kind) + " at " + filename + ":" + std::to_string(linenum);
    const std::string printed = printed_text(sim_runtime::thread_log());
    if (msg && *msg) what += ": " + std::string(msg);
    // A single printed line (the message of the $error that stopped) reads best inline; more
    // text follows on lines of its own.
    if (printed.find('\n') == std::string::npos) {
        if (!printed.empty()) what += ": " + printed;
    } else {
        what += "; the RTL printed:\n" + printed;
    }
    if (VerilatedContext* ctx = Verilated::threadContextp()) {
        ctx->gotError(true);
        ctx->gotFinish(true);
    }
    throw sim_runtime::RtlError(what);
}

}  // namespace

void sim_runtime_vl_printf(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    va_list copy;
    va_copy(copy, ap);
    const int len = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    std::vector<char> buf(len > 0 ? static_cast<size_t>(len) + 1 : 1, '\0');
    if (len > 0) std::vsnprintf(buf.data(), buf.size(), fmt, ap);
    va_end(ap);
    // Captured, not printed: the model hands it to the test (Model::take_output and errors),
    // and SIM_RTL_ECHO=1 copies it to stdout.
    std::string& log = sim_runtime::thread_log();
    log += buf.data();
    if (log.size() > LOG_LIMIT) log.erase(0, log.size() - LOG_LIMIT);
}

void vl_finish(const char* filename, int linenum, const char* hier) {
    (void)hier;
    // Into the model's output like any other RTL text.
    std::string& log = sim_runtime::thread_log();
    log += "- " + std::string(filename) + ":" + std::to_string(linenum) + ": Verilog $finish\n";
    if (VerilatedContext* ctx = Verilated::threadContextp()) ctx->gotFinish(true);
}

void vl_stop(const char* filename, int linenum, const char* hier) {
    (void)hier;
    raise("$stop", filename, linenum, nullptr);
}

void vl_fatal(const char* filename, int linenum, const char* hier, const char* msg) {
    (void)hier;
    raise("fatal", filename, linenum, msg);
}
