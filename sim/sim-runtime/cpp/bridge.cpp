// The free functions of sim_runtime.h, compiled with the bridge, which defines PortDesc.
#include "sim-runtime/src/ffi.rs.h"
#include "sim_runtime.h"

namespace sim_runtime {

rust::Vec<PortDesc> model_ports(const SimModel& m) {
    rust::Vec<PortDesc> v;
    for (const PortInfo& p : m.port_table()) {
        v.push_back(PortDesc{rust::String(p.name), p.width, p.output,
                             static_cast<size_t>(reinterpret_cast<uintptr_t>(p.addr))});
    }
    return v;
}

rust::Vec<MemoryDesc> model_memories(const SimModel& m) {
    rust::Vec<MemoryDesc> v;
    for (size_t i = 0; i < m.memory_count(); ++i) {
        v.push_back(MemoryDesc{rust::String(m.memory_kind(i)), rust::String(m.memory_name(i)),
                               m.memory_size(i)});
    }
    return v;
}

rust::String model_take_output(SimModel& m) {
    const std::string s = m.take_output();
    // RTL text is bytes; lossy conversion keeps a stray byte from failing the call.
    return rust::String::lossy(s.data(), s.size());
}

int32_t model_memory_read(const SimModel& m, size_t index, uint64_t addr,
                          rust::Slice<uint8_t> out) {
    return m.memory_read(index, addr, out.data(), out.size());
}

int32_t model_memory_write(SimModel& m, size_t index, uint64_t addr,
                           rust::Slice<const uint8_t> data) {
    return m.memory_write(index, addr, data.data(), data.size());
}

bool model_write_coverage(SimModel& m, rust::Str path) {
    return m.write_coverage(std::string(path.data(), path.size()));
}

}  // namespace sim_runtime
