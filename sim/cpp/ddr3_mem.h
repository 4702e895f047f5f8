// Storage of the simulation-only DDR3 model (hdl/sim/ddr3_model.v): sparse pages behind the
// model's DPI-C imports, one store per model instance, and a backdoor through which a test
// harness reads and writes a store without bus cycles. docs/ddr3-model.md documents the C
// interface; everything here has C linkage so any harness can link it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "svdpi.h"

#ifdef __cplusplus
extern "C" {
#endif

// DPI-C imports of ddr3_model.v (their SystemVerilog declarations are in that file).
//
// Opens the storage of the calling instance: `size_bytes` of memory, all zero. Called from an
// initial block as a context import; the store is filed under the calling thread's
// VerilatedContext and the instance's hierarchical name for the backdoor.
void* ddr3_model_open(unsigned long long size_bytes);
// Frees a store (from a final block). A handle that is no longer open is ignored.
void ddr3_model_close(void* mem);
// Reads `nbytes` (at most 64) from `addr` into `data` (16 words, byte 0 in the low byte of
// word 0); bytes beyond nbytes read as zero, and addresses wrap at the store's size.
void ddr3_model_read(void* mem, unsigned long long addr, unsigned int nbytes, svBitVecVal* data);
// Writes the bytes of `data` whose bit in `strb` is set, of the first `nbytes` (at most 64).
void ddr3_model_write(void* mem, unsigned long long addr, unsigned int nbytes,
                      const svBitVecVal* data, unsigned long long strb);

// Backdoor. `ctx` is the VerilatedContext the model was built in (a null pointer stands for
// the thread's current context).
//
// Number of DDR3 model instances open in `ctx`.
size_t ddr3_backdoor_count(const void* ctx);
// Hierarchical name of instance `index` of `ctx` (valid until the instance closes), or null.
const char* ddr3_backdoor_name(const void* ctx, size_t index);
// Size in bytes of instance `index` of `ctx`, or 0 if there is no such instance.
unsigned long long ddr3_backdoor_size(const void* ctx, size_t index);
// Copies `len` bytes at `addr` of instance `index` into `out`. Returns 0, or -1 if there is no
// such instance, or -2 if the range does not fit in the memory.
int ddr3_backdoor_read(const void* ctx, size_t index, unsigned long long addr, uint8_t* out,
                       size_t len);
// Copies `len` bytes from `data` to `addr` of instance `index`. Returns as ddr3_backdoor_read.
int ddr3_backdoor_write(const void* ctx, size_t index, unsigned long long addr,
                        const uint8_t* data, size_t len);
// Closes every instance of `ctx`: for a harness that destroys a model without running its
// final blocks (after an error), so that a later context at the same address starts empty.
void ddr3_backdoor_release(const void* ctx);

#ifdef __cplusplus
}
#endif
