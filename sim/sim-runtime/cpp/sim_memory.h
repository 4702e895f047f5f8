// Named memories: storage that a simulation-only model keeps outside the RTL's own arrays
// (behind DPI-C, say), filed under the model's VerilatedContext so that a harness can read and
// write it without bus cycles (`Model::memory_read`, `Model::memory_write` in Rust). The
// runtime knows nothing of what a memory models: a model registers each instance with a kind
// (its own word, e.g. "ddr3"), its hierarchical name and its size, and the callbacks that copy
// bytes. Everything here has C linkage, so that a model's C or C++ code in any crate can call
// it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// What the runtime calls on a registered memory. The runtime checks every range against the
// registered size first, so `read` and `write` are only called with ranges that fit.
typedef struct sim_memory_ops {
    // Copies `len` bytes at `addr` into `out`.
    void (*read)(void* mem, uint64_t addr, uint8_t* out, size_t len);
    // Copies `len` bytes from `data` to `addr`.
    void (*write)(void* mem, uint64_t addr, const uint8_t* data, size_t len);
    // Frees the memory. Called when the model that owns it is destroyed while it is still
    // registered (a model stopped by an RTL error never runs the final block that would have
    // closed it), so that a later context at the same address starts without it.
    void (*release)(void* mem);
} sim_memory_ops;

// Files `mem` under the calling thread's current VerilatedContext (the one evaluating, or
// building, the model whose code calls this) as a memory of `kind` named `name`, `size` bytes.
// `kind`, `name` and `ops` are copied or must outlive the registration.
void sim_memory_register(const char* kind, const char* name, uint64_t size, void* mem,
                         const sim_memory_ops* ops);
// Removes `mem`; returns 1 if it was registered, 0 if not (the model already released it).
int sim_memory_unregister(void* mem);

// Number of memories registered under `ctx` (a VerilatedContext*), in registration order.
size_t sim_memory_count(const void* ctx);
// Kind and hierarchical name of memory `index` of `ctx` (valid while it is registered), or null.
const char* sim_memory_kind(const void* ctx, size_t index);
const char* sim_memory_name(const void* ctx, size_t index);
// Size in bytes of memory `index` of `ctx`, 0 if there is none.
uint64_t sim_memory_size(const void* ctx, size_t index);
// Copies `len` bytes at `addr` of memory `index` of `ctx` into `out`. Returns 0, or -1 if
// there is no such memory, or -2 if the range does not fit in it.
int sim_memory_read(const void* ctx, size_t index, uint64_t addr, uint8_t* out, size_t len);
// Copies `len` bytes from `data` to `addr` of memory `index` of `ctx`; returns as the read.
int sim_memory_write(const void* ctx, size_t index, uint64_t addr, const uint8_t* data,
                     size_t len);
// Releases every memory still registered under `ctx` (see sim_memory_ops::release).
void sim_memory_release_all(const void* ctx);

#ifdef __cplusplus
}
#endif
