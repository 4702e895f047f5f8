// Sparse storage for hdl/sim/ddr3_model.v; see ddr3_mem.h and docs/ddr3-model.md.
#include "ddr3_mem.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "verilated.h"

namespace {

// 64 KiB pages: a 2 GiB memory needs at most 32 Ki of them, and a test that touches a few
// buffers allocates a few hundred KiB.
constexpr uint64_t PAGE_BITS = 16;
constexpr uint64_t PAGE_SIZE = uint64_t(1) << PAGE_BITS;

class Store {
  public:
    Store(const void* ctx, std::string name, uint64_t size)
        : ctx_(ctx), name_(std::move(name)), size_(size) {}

    const void* ctx() const { return ctx_; }
    const std::string& name() const { return name_; }
    uint64_t size() const { return size_; }

    // Copies bytes out; pages never written read as zero.
    void read(uint64_t addr, uint8_t* out, size_t len) {
        while (len > 0) {
            const uint64_t off = addr & (PAGE_SIZE - 1);
            const size_t n = static_cast<size_t>(std::min<uint64_t>(len, PAGE_SIZE - off));
            const uint8_t* page = find(addr >> PAGE_BITS);
            if (page) {
                std::memcpy(out, page + off, n);
            } else {
                std::memset(out, 0, n);
            }
            out += n;
            addr += n;
            len -= n;
        }
    }

    // Copies bytes in, allocating pages as needed.
    void write(uint64_t addr, const uint8_t* data, size_t len) {
        while (len > 0) {
            const uint64_t off = addr & (PAGE_SIZE - 1);
            const size_t n = static_cast<size_t>(std::min<uint64_t>(len, PAGE_SIZE - off));
            std::memcpy(page(addr >> PAGE_BITS) + off, data, n);
            data += n;
            addr += n;
            len -= n;
        }
    }

    // The page holding `addr`, allocated zeroed on first use.
    uint8_t* page(uint64_t index) {
        if (index == last_index_ && last_page_) return last_page_;
        auto& slot = pages_[index];
        if (!slot) {
            slot.reset(new uint8_t[PAGE_SIZE]);
            std::memset(slot.get(), 0, PAGE_SIZE);
        }
        last_index_ = index;
        last_page_ = slot.get();
        return last_page_;
    }

  private:
    const uint8_t* find(uint64_t index) {
        if (index == last_index_ && last_page_) return last_page_;
        auto it = pages_.find(index);
        if (it == pages_.end()) return nullptr;
        last_index_ = index;
        last_page_ = it->second.get();
        return last_page_;
    }

    const void* ctx_;
    std::string name_;
    uint64_t size_;
    std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
    // The page of the previous access: bursts touch the same page beat after beat.
    uint64_t last_index_ = ~uint64_t(0);
    uint8_t* last_page_ = nullptr;
};

// Every open store of the process. Models on different threads open and close stores
// concurrently, so the list is locked; a store's contents are only used by the thread that
// evaluates its model, so the data path takes no lock.
struct Registry {
    std::mutex lock;
    std::vector<std::unique_ptr<Store>> stores;
};

Registry& registry() {
    static Registry r;
    return r;
}

const void* current_ctx() { return Verilated::threadContextp(); }

const void* resolve(const void* ctx) { return ctx ? ctx : current_ctx(); }

// The `index`-th store of `ctx`, in the order they were opened. Caller holds the lock.
Store* nth(const void* ctx, size_t index) {
    for (auto& s : registry().stores) {
        if (s->ctx() == ctx) {
            if (index == 0) return s.get();
            --index;
        }
    }
    return nullptr;
}

bool fits(const Store& s, uint64_t addr, size_t len) {
    return addr <= s.size() && len <= s.size() - addr;
}

}  // namespace

extern "C" {

void* ddr3_model_open(unsigned long long size_bytes) {
    std::string name = "ddr3_model";
    if (svScope scope = svGetScope()) {
        if (const char* n = svGetNameFromScope(scope)) name = n;
    }
    auto store = std::make_unique<Store>(current_ctx(), std::move(name), size_bytes);
    Store* raw = store.get();
    std::lock_guard<std::mutex> g(registry().lock);
    registry().stores.push_back(std::move(store));
    return raw;
}

void ddr3_model_close(void* mem) {
    std::lock_guard<std::mutex> g(registry().lock);
    auto& v = registry().stores;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [mem](const std::unique_ptr<Store>& s) { return s.get() == mem; }),
            v.end());
}

void ddr3_model_read(void* mem, unsigned long long addr, unsigned int nbytes, svBitVecVal* data) {
    uint8_t buf[64] = {};
    Store* s = static_cast<Store*>(mem);
    const size_t n = std::min<size_t>(nbytes, sizeof buf);
    if (s && s->size() != 0) {
        const uint64_t a = addr % s->size();
        if (fits(*s, a, n)) {
            s->read(a, buf, n);
        } else {
            // A beat that runs past the end wraps, like the address bits do.
            const size_t first = static_cast<size_t>(s->size() - a);
            s->read(a, buf, first);
            s->read(0, buf + first, n - first);
        }
    }
    for (size_t w = 0; w < 16; ++w) {
        data[w] = uint32_t(buf[4 * w]) | (uint32_t(buf[4 * w + 1]) << 8) |
                  (uint32_t(buf[4 * w + 2]) << 16) | (uint32_t(buf[4 * w + 3]) << 24);
    }
}

void ddr3_model_write(void* mem, unsigned long long addr, unsigned int nbytes,
                      const svBitVecVal* data, unsigned long long strb) {
    Store* s = static_cast<Store*>(mem);
    if (!s || s->size() == 0) return;
    const size_t n = std::min<size_t>(nbytes, 64);
    for (size_t i = 0; i < n; ++i) {
        if (!((strb >> i) & 1)) continue;
        const uint8_t b = static_cast<uint8_t>(data[i / 4] >> (8 * (i % 4)));
        const uint64_t a = (addr + i) % s->size();
        s->page(a >> PAGE_BITS)[a & (PAGE_SIZE - 1)] = b;
    }
}

size_t ddr3_backdoor_count(const void* ctx) {
    ctx = resolve(ctx);
    std::lock_guard<std::mutex> g(registry().lock);
    return static_cast<size_t>(std::count_if(
        registry().stores.begin(), registry().stores.end(),
        [ctx](const std::unique_ptr<Store>& s) { return s->ctx() == ctx; }));
}

const char* ddr3_backdoor_name(const void* ctx, size_t index) {
    ctx = resolve(ctx);
    std::lock_guard<std::mutex> g(registry().lock);
    Store* s = nth(ctx, index);
    return s ? s->name().c_str() : nullptr;
}

unsigned long long ddr3_backdoor_size(const void* ctx, size_t index) {
    ctx = resolve(ctx);
    std::lock_guard<std::mutex> g(registry().lock);
    Store* s = nth(ctx, index);
    return s ? s->size() : 0;
}

int ddr3_backdoor_read(const void* ctx, size_t index, unsigned long long addr, uint8_t* out,
                       size_t len) {
    ctx = resolve(ctx);
    std::lock_guard<std::mutex> g(registry().lock);
    Store* s = nth(ctx, index);
    if (!s) return -1;
    if (!fits(*s, addr, len)) return -2;
    s->read(addr, out, len);
    return 0;
}

int ddr3_backdoor_write(const void* ctx, size_t index, unsigned long long addr,
                        const uint8_t* data, size_t len) {
    ctx = resolve(ctx);
    std::lock_guard<std::mutex> g(registry().lock);
    Store* s = nth(ctx, index);
    if (!s) return -1;
    if (!fits(*s, addr, len)) return -2;
    s->write(addr, data, len);
    return 0;
}

void ddr3_backdoor_release(const void* ctx) {
    ctx = resolve(ctx);
    std::lock_guard<std::mutex> g(registry().lock);
    auto& v = registry().stores;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [ctx](const std::unique_ptr<Store>& s) { return s->ctx() == ctx; }),
            v.end());
}

}  // extern "C"
