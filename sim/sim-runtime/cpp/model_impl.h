// The part of a model that is the same for every verilated top; the glue that sim-build
// generates for each top instantiates it with that top's port table, in whichever crate built
// the top. It depends only on sim_model.h, the hooks, the named memories and the Verilator
// runtime that sim-runtime links, never on Rust-generated code.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "hooks.h"
#include "sim_memory.h"
#include "sim_model.h"
#include "verilated.h"
#if VM_COVERAGE
#include "verilated_cov.h"
#endif
#include "verilated_fst_c.h"

namespace sim_runtime {

template <typename Top>
class ModelImpl final : public SimModel {
  public:
    using PortFn = void (*)(Top&, std::vector<PortInfo>&);

    ModelImpl(PortFn port_fn, const ModelOptions& o)
        : ctx_(new VerilatedContext), echo_(o.echo != 0) {
        const std::string inst(o.name, o.name_len);
        const std::string path(o.waves, o.waves_len);
        // Tracing must be allowed before the model is built; leaving it off otherwise keeps
        // the trace bookkeeping out of every evaluation.
        ctx_->traceEverOn(!path.empty());
        ctx_->fatalOnError(false);
        ctx_->randReset(static_cast<int>(o.rand_reset));
        if (o.seed != 0) ctx_->randSeed(static_cast<int>(o.seed & 0x7fffffff));
        // Verilator files the model's scopes under the thread's current context, both when it
        // builds them and when it destroys them; every step that does either makes this
        // model's context current first, so that several models can share a thread.
        Verilated::threadContextp(ctx_.get());
        log_ = &thread_log();
        log_->clear();
        top_.reset(new Top(ctx_.get(), inst.c_str()));
        port_fn(*top_, ports_);
        if (!path.empty()) {
            fst_.reset(new VerilatedFstC);
            top_->trace(fst_.get(), 99);
            fst_->open(path.c_str());
            if (!fst_->isOpen()) throw RtlError("cannot open waveform file " + path);
        }
        collect();
    }

    ~ModelImpl() override {
        if (fst_) fst_->close();
        // A model that stopped on an RTL error never runs its final blocks; the memories its
        // models registered must still go, or a later context at the same address would find
        // them.
        sim_memory_release_all(ctx_.get());
        Verilated::threadContextp(ctx_.get());
        fst_.reset();
        top_.reset();
        // The context dies next; leave no dangling pointer to it as the thread's current one.
        Verilated::threadContextp(nullptr);
    }

    void eval(uint64_t ps) override {
        ctx_->time(ps);
        // Several models may live on one thread; Verilator looks up the context through a
        // thread-local for $display's %t and for error reporting.
        Verilated::threadContextp(ctx_.get());
        std::string& log = *log_;
        if (!log.empty()) log.clear();
        try {
            top_->eval();
        } catch (...) {
            collect();
            throw;
        }
        if (!log.empty()) collect();
    }

    void dump(uint64_t ps) override {
        if (fst_) fst_->dump(ps);
    }

    void finish() override {
        if (!finished_) {
            finished_ = true;
            Verilated::threadContextp(ctx_.get());
            thread_log().clear();
            top_->final();
            collect();
            if (fst_) fst_->close();
        }
    }

    bool got_finish() const override { return ctx_->gotFinish(); }

    const std::vector<PortInfo>& port_table() const override { return ports_; }

    std::string take_output() override {
        std::string s;
        s.swap(output_);
        return s;
    }

    size_t memory_count() const override { return sim_memory_count(ctx_.get()); }

    std::string memory_kind(size_t index) const override {
        const char* kind = sim_memory_kind(ctx_.get(), index);
        return kind ? kind : "";
    }

    std::string memory_name(size_t index) const override {
        const char* name = sim_memory_name(ctx_.get(), index);
        return name ? name : "";
    }

    uint64_t memory_size(size_t index) const override {
        return sim_memory_size(ctx_.get(), index);
    }

    int32_t memory_read(size_t index, uint64_t addr, uint8_t* out, size_t len) const override {
        return sim_memory_read(ctx_.get(), index, addr, out, len);
    }

    int32_t memory_write(size_t index, uint64_t addr, const uint8_t* data, size_t len) override {
        return sim_memory_write(ctx_.get(), index, addr, data, len);
    }

    bool write_coverage(const std::string& path) override {
#if VM_COVERAGE
        // An empty path only asks whether the top counts coverage.
        if (path.empty()) return true;
        Verilated::threadContextp(ctx_.get());
        ctx_->coveragep()->write(path);
        return true;
#else
        (void)path;
        return false;
#endif
    }

  private:
    // Moves what the RTL printed during the last step into this model's own output, so that
    // it reaches the test through take_output and errors instead of the process's stdout.
    void collect() {
        std::string& log = *log_;
        if (log.empty()) return;
        if (echo_) std::fputs(log.c_str(), stdout);
        output_ += log;
        log.clear();
        constexpr size_t LIMIT = 64 * 1024;
        if (output_.size() > LIMIT) output_.erase(0, output_.size() - LIMIT);
    }

    std::unique_ptr<VerilatedContext> ctx_;
    // This thread's log (thread_log()), looked up once: the model is built, evaluated and
    // dropped on one thread (the Rust handle is neither Send nor Sync), and each look-up of a
    // thread-local of a shared library is a call, twice per evaluation otherwise.
    std::string* log_ = nullptr;
    std::unique_ptr<Top> top_;
    std::unique_ptr<VerilatedFstC> fst_;
    std::vector<PortInfo> ports_;
    std::string output_;
    bool echo_ = false;
    bool finished_ = false;
};

// The body of every generated factory: builds the model, or writes why not into opts->err.
template <typename Top>
void* new_model_impl(typename ModelImpl<Top>::PortFn port_fn, const ModelOptions* opts) {
    try {
        return static_cast<SimModel*>(new ModelImpl<Top>(port_fn, *opts));
    } catch (const std::exception& e) {
        if (opts->err && opts->err_cap > 0) {
            const size_t n = std::min(std::strlen(e.what()), opts->err_cap - 1);
            std::memcpy(opts->err, e.what(), n);
            opts->err[n] = '\0';
        }
        return nullptr;
    }
}

}  // namespace sim_runtime
