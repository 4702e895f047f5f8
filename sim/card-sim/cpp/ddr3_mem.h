// Storage of the simulation-only DDR3 model (hdl/sim/ddr3_model.v): sparse pages behind the
// model's DPI-C imports, one store per model instance, each registered with the simulation
// runtime as a named memory of kind "ddr3", through which a test harness reads and writes it
// without bus cycles. docs/ddr3-model.md documents the C
// interface; everything here has C linkage so any harness can link it.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "sim_memory.h"
#include "svdpi.h"

// The kind under which every store is a named memory of the runtime (sim_memory.h): the
// backdoor (`card_sim::DdrBackdoor` in Rust) finds the DDR3 stores of a model by it.
#define DDR3_MEMORY_KIND "ddr3"

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

#ifdef __cplusplus
}
#endif
