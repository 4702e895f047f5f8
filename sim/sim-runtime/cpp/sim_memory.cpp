// The registry of named memories; see sim_memory.h.
#include "sim_memory.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "verilated.h"

namespace {

struct Entry {
    const void* ctx;
    std::string kind;
    std::string name;
    uint64_t size;
    void* mem;
    sim_memory_ops ops;
};

// Every registered memory of the process. Models on different threads open and close their
// memories concurrently, so the list is locked; a memory's contents are only touched by the
// thread that evaluates its model, or by a backdoor call on that same thread.
struct Registry {
    std::mutex lock;
    std::vector<Entry> entries;
};

Registry& registry() {
    static Registry r;
    return r;
}

// The `index`-th memory of `ctx`, in registration order. Caller holds the lock.
Entry* nth(const void* ctx, size_t index) {
    for (Entry& e : registry().entries) {
        if (e.ctx == ctx) {
            if (index == 0) return &e;
            --index;
        }
    }
    return nullptr;
}

bool fits(const Entry& e, uint64_t addr, size_t len) {
    return addr <= e.size && len <= e.size - addr;
}

}  // namespace

extern "C" {

void sim_memory_register(const char* kind, const char* name, uint64_t size, void* mem,
                         const sim_memory_ops* ops) {
    Entry e{Verilated::threadContextp(), kind ? kind : "", name ? name : "", size, mem, *ops};
    std::lock_guard<std::mutex> g(registry().lock);
    registry().entries.push_back(std::move(e));
}

int sim_memory_unregister(void* mem) {
    std::lock_guard<std::mutex> g(registry().lock);
    auto& v = registry().entries;
    auto it = std::find_if(v.begin(), v.end(), [mem](const Entry& e) { return e.mem == mem; });
    if (it == v.end()) return 0;
    v.erase(it);
    return 1;
}

size_t sim_memory_count(const void* ctx) {
    std::lock_guard<std::mutex> g(registry().lock);
    return static_cast<size_t>(
        std::count_if(registry().entries.begin(), registry().entries.end(),
                      [ctx](const Entry& e) { return e.ctx == ctx; }));
}

const char* sim_memory_kind(const void* ctx, size_t index) {
    std::lock_guard<std::mutex> g(registry().lock);
    Entry* e = nth(ctx, index);
    return e ? e->kind.c_str() : nullptr;
}

const char* sim_memory_name(const void* ctx, size_t index) {
    std::lock_guard<std::mutex> g(registry().lock);
    Entry* e = nth(ctx, index);
    return e ? e->name.c_str() : nullptr;
}

uint64_t sim_memory_size(const void* ctx, size_t index) {
    std::lock_guard<std::mutex> g(registry().lock);
    Entry* e = nth(ctx, index);
    return e ? e->size : 0;
}

int sim_memory_read(const void* ctx, size_t index, uint64_t addr, uint8_t* out, size_t len) {
    std::lock_guard<std::mutex> g(registry().lock);
    Entry* e = nth(ctx, index);
    if (!e) return -1;
    if (!fits(*e, addr, len)) return -2;
    e->ops.read(e->mem, addr, out, len);
    return 0;
}

int sim_memory_write(const void* ctx, size_t index, uint64_t addr, const uint8_t* data,
                     size_t len) {
    std::lock_guard<std::mutex> g(registry().lock);
    Entry* e = nth(ctx, index);
    if (!e) return -1;
    if (!fits(*e, addr, len)) return -2;
    e->ops.write(e->mem, addr, data, len);
    return 0;
}

void sim_memory_release_all(const void* ctx) {
    std::vector<Entry> gone;
    {
        std::lock_guard<std::mutex> g(registry().lock);
        auto& v = registry().entries;
        auto mid = std::stable_partition(v.begin(), v.end(),
                                         [ctx](const Entry& e) { return e.ctx != ctx; });
        gone.assign(std::make_move_iterator(mid), std::make_move_iterator(v.end()));
        v.erase(mid, v.end());
    }
    // Outside the lock: a release callback may itself call into the registry.
    for (Entry& e : gone) {
        if (e.ops.release) e.ops.release(e.mem);
    }
}

}  // extern "C"
