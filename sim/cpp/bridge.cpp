// The free functions of card_sim.h, compiled with the bridge, which defines PortDesc.
#include "card-sim/src/ffi.rs.h"
#include "card_sim.h"

namespace card_sim {

rust::Vec<PortDesc> model_ports(const SimModel& m) {
    rust::Vec<PortDesc> v;
    for (const PortInfo& p : m.port_table()) {
        v.push_back(PortDesc{rust::String(p.name), p.width, p.output,
                             static_cast<size_t>(reinterpret_cast<uintptr_t>(p.addr))});
    }
    return v;
}

rust::Vec<rust::String> model_ddr_instances(const SimModel& m) {
    rust::Vec<rust::String> v;
    for (size_t i = 0; i < m.ddr_count(); ++i) v.push_back(rust::String(m.ddr_name(i)));
    return v;
}

rust::String model_take_output(SimModel& m) {
    const std::string s = m.take_output();
    // RTL text is bytes; lossy conversion keeps a stray byte from failing the call.
    return rust::String::lossy(s.data(), s.size());
}

int32_t model_ddr_read(const SimModel& m, size_t index, uint64_t addr, rust::Slice<uint8_t> out) {
    return m.ddr_read(index, addr, out.data(), out.size());
}

int32_t model_ddr_write(SimModel& m, size_t index, uint64_t addr,
                        rust::Slice<const uint8_t> data) {
    return m.ddr_write(index, addr, data.data(), data.size());
}

}  // namespace card_sim
