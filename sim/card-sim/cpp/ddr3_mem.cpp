// Sparse storage for hdl/sim/ddr3_model.v, reachable through the simulation runtime's named
// memories; see ddr3_mem.h and docs/ddr3-model.md.
#include "ddr3_mem.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

#include "verilated.h"

namespace {

// 64 KiB pages: a 2 GiB memory needs at most 32 Ki of them, and a test that touches a few
// buffers allocates a few hundred KiB.
constexpr uint64_t PAGE_BITS = 16;
constexpr uint64_t PAGE_SIZE = uint64_t(1) << PAGE_BITS;

class Store {
  public:
    explicit Store(uint64_t size) : size_(size) {}

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

    uint64_t size_;
    std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
    // The page of the previous access: bursts touch the same page beat after beat.
    uint64_t last_index_ = ~uint64_t(0);
    uint8_t* last_page_ = nullptr;
};

bool fits(uint64_t size, uint64_t addr, size_t len) { return addr <= size && len <= size - addr; }

void store_read(void* mem, uint64_t addr, uint8_t* out, size_t len) {
    static_cast<Store*>(mem)->read(addr, out, len);
}

void store_write(void* mem, uint64_t addr, const uint8_t* data, size_t len) {
    static_cast<Store*>(mem)->write(addr, data, len);
}

void store_release(void* mem) { delete static_cast<Store*>(mem); }

// The backdoor of every store, through the runtime's named memories (kind "ddr3").
const sim_memory_ops STORE_OPS = {store_read, store_write, store_release};

}  // namespace

extern "C" {

void* ddr3_model_open(unsigned long long size_bytes) {
    std::string name = "ddr3_model";
    if (svScope scope = svGetScope()) {
        if (const char* n = svGetNameFromScope(scope)) name = n;
    }
    Store* store = new Store(size_bytes);
    sim_memory_register(DDR3_MEMORY_KIND, name.c_str(), size_bytes, store, &STORE_OPS);
    return store;
}

void ddr3_model_close(void* mem) {
    // A store its model already released (after an RTL error) is no longer registered.
    if (sim_memory_unregister(mem)) delete static_cast<Store*>(mem);
}

void ddr3_model_read(void* mem, unsigned long long addr, unsigned int nbytes, svBitVecVal* data) {
    uint8_t buf[64] = {};
    Store* s = static_cast<Store*>(mem);
    const size_t n = std::min<size_t>(nbytes, sizeof buf);
    if (s && s->size() != 0) {
        const uint64_t a = addr % s->size();
        if (fits(s->size(), a, n)) {
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

}  // extern "C"
