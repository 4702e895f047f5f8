// The plain C++ Verilator bench that the Rust harness is measured against: the same verilated
// sim_top that card-sim builds (same flow, same flags, same object code: sim-build compiles
// this file into sim_top's library as its companion), driven the way a
// hand-written testbench would, with the same handshakes as the Rust workloads: sample the
// outputs before each axi_aclk rising edge, apply the edges due at that instant, evaluate
// once, drive the inputs for the next edge. ddr_clk runs beside it at 200 MHz.
#include <cstdint>
#include <memory>
#include <vector>

#include "Vcard_sim__sim_top.h"
#include "verilated.h"

namespace {

using Top = Vcard_sim__sim_top;

constexpr uint64_t PS_PER_S = 1000000000000ull;

// Edge k (from 1) of a clock of f Hz falls at k * 10^12 / (2 f) ps, rounded (as card-sim's
// scheduler places it).
uint64_t edge_ps(uint64_t k, uint64_t f) { return (k * PS_PER_S + f) / (2 * f); }

uint8_t pattern(uint64_t frame, uint64_t i) {
    return static_cast<uint8_t>(i * 7 + frame * 13 + (i >> 8));
}

struct Bench {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Top> top;
    uint64_t axi_edges = 0, ddr_edges = 0, axi_cycles = 0;

    Bench() : ctx(new VerilatedContext) {
        Verilated::threadContextp(ctx.get());
        top.reset(new Top(ctx.get(), "baseline"));
        top->axi_aclk = 0;
        top->ddr_clk = 0;
        top->axi_aresetn = 1;
        top->ddr_rst = 0;
        top->eval();
    }

    ~Bench() {
        Verilated::threadContextp(ctx.get());
        top->final();
        top.reset();
        Verilated::threadContextp(nullptr);
    }

    // Advances to the next edge instant; returns true when axi_aclk rose there. `sample` runs
    // before a rising axi_aclk edge, `drive` after it.
    template <typename S, typename D>
    bool step(S&& sample, D&& drive) {
        const uint64_t ta = edge_ps(axi_edges + 1, 250000000);
        const uint64_t td = edge_ps(ddr_edges + 1, 200000000);
        const uint64_t t = ta < td ? ta : td;
        const bool a = ta == t, d = td == t;
        const bool rise = a && (axi_edges % 2 == 0);
        if (rise) sample();
        if (a) top->axi_aclk = (++axi_edges) % 2;
        if (d) top->ddr_clk = (++ddr_edges) % 2;
        ctx->time(t);
        top->eval();
        if (rise) {
            ++axi_cycles;
            drive();
        }
        return rise;
    }

    template <typename S, typename D>
    void cycle(S&& sample, D&& drive) {
        while (!step(sample, drive)) {
        }
    }

    void idle(uint64_t n) {
        for (uint64_t i = 0; i < n; ++i) cycle([] {}, [] {});
    }

    void reset() {
        top->axi_aresetn = 0;
        top->ddr_rst = 1;
        for (int i = 0; i < 8; ++i) cycle([] {}, [] {});
        top->axi_aresetn = 1;
        top->ddr_rst = 0;
        idle(4);
    }

    bool axil_write(uint32_t addr, uint32_t value) {
        top->s_axil_awaddr = addr;
        top->s_axil_awvalid = 1;
        top->s_axil_wdata = value;
        top->s_axil_wstrb = 0xf;
        top->s_axil_wvalid = 1;
        top->s_axil_bready = 1;
        bool aw = false, w = false, b = false;
        for (int i = 0; i < 10000 && !b; ++i) {
            bool aw_fire = false, w_fire = false, b_fire = false;
            cycle(
                [&] {
                    aw_fire = top->s_axil_awvalid && top->s_axil_awready;
                    w_fire = top->s_axil_wvalid && top->s_axil_wready;
                    b_fire = top->s_axil_bvalid && top->s_axil_bready;
                },
                [&] {
                    if (aw_fire) top->s_axil_awvalid = 0, aw = true;
                    if (w_fire) top->s_axil_wvalid = 0, w = true;
                    if (b_fire) b = true, top->s_axil_bready = 0;
                });
        }
        return aw && w && b;
    }
};

void set_beat(VlWide<4>& d, uint64_t frame, uint64_t off) {
    for (int w = 0; w < 4; ++w) {
        uint32_t v = 0;
        for (int b = 0; b < 4; ++b) v |= uint32_t(pattern(frame, off + w * 4 + b)) << (8 * b);
        d[w] = v;
    }
}

}  // namespace

// LOOP: `frames` back-to-back frames of `len` bytes (a multiple of 16) into H2C0, every one
// checked byte for byte as it leaves C2H0. Returns the axi_aclk cycles taken, or 0 if a frame
// came back wrong or the run did not finish.
extern "C" uint64_t sim_export_bench_loop(uint64_t frames, uint64_t len, uint32_t control_addr,
                                       uint32_t control_value) {
    Bench b;
    b.reset();
    if (!b.axil_write(control_addr, control_value)) return 0;
    Top& t = *b.top;
    t.m_axis_c2h0_tready = 1;
    t.m_axis_c2h1_tready = 1;
    const uint64_t beats = len / 16;
    uint64_t tx_frame = 0, tx_beat = 0, rx_frame = 0, rx_off = 0;
    bool ok = true;
    const uint64_t start = b.axi_cycles;
    auto show = [&] {
        if (tx_frame < frames) {
            set_beat(t.s_axis_h2c0_tdata, tx_frame, tx_beat * 16);
            t.s_axis_h2c0_tkeep = 0xffff;
            t.s_axis_h2c0_tlast = tx_beat + 1 == beats;
            t.s_axis_h2c0_tvalid = 1;
        } else {
            t.s_axis_h2c0_tvalid = 0;
        }
    };
    show();
    const uint64_t limit = frames * beats * 4 + 10000;
    while (rx_frame < frames && b.axi_cycles - start < limit) {
        bool tx_fire = false;
        b.cycle(
            [&] {
                tx_fire = t.s_axis_h2c0_tvalid && t.s_axis_h2c0_tready;
                if (t.m_axis_c2h0_tvalid && t.m_axis_c2h0_tready) {
                    const uint32_t keep = t.m_axis_c2h0_tkeep;
                    for (int i = 0; i < 16; ++i) {
                        if (!(keep >> i & 1)) continue;
                        const uint8_t got = uint8_t(t.m_axis_c2h0_tdata[i / 4] >> (8 * (i % 4)));
                        if (got != pattern(rx_frame, rx_off)) ok = false;
                        ++rx_off;
                    }
                    if (t.m_axis_c2h0_tlast) {
                        if (rx_off != len) ok = false;
                        ++rx_frame;
                        rx_off = 0;
                    }
                }
            },
            [&] {
                if (tx_fire) {
                    if (++tx_beat == beats) tx_beat = 0, ++tx_frame;
                    show();
                }
            });
    }
    return ok && rx_frame == frames ? b.axi_cycles - start : 0;
}

// Memory: `bytes` (a multiple of 4 KiB) written through s_axi from address `base` in bursts of
// 256 beats, up to 8 outstanding, then read back the same way and checked. Returns the
// cycles taken, or 0 on a mismatch, an error response or a run that did not finish.
extern "C" uint64_t sim_export_bench_memory(uint64_t base, uint64_t bytes) {
    Bench b;
    b.reset();
    Top& t = *b.top;
    const uint64_t burst_bytes = 4096, bursts = bytes / burst_bytes;
    const uint64_t start = b.axi_cycles;
    const uint64_t limit = bytes * 4 + 100000;
    bool ok = true;

    // Writes: AW and W run independently; B is counted.
    uint64_t aw_sent = 0, w_burst = 0, w_beat = 0, b_got = 0;
    t.s_axi_awlen = 255;
    t.s_axi_awsize = 4;
    t.s_axi_awburst = 1;
    t.s_axi_awcache = 3;
    t.s_axi_wstrb = 0xffff;
    t.s_axi_bready = 1;
    auto show_w = [&] {
        const bool go = w_burst < aw_sent;
        t.s_axi_wvalid = go;
        if (go) {
            set_beat(t.s_axi_wdata, 0, w_burst * burst_bytes + w_beat * 16);
            t.s_axi_wlast = w_beat == 255;
        }
    };
    auto show_aw = [&] {
        const bool go = aw_sent < bursts && aw_sent - b_got < 8;
        t.s_axi_awvalid = go;
        if (go) t.s_axi_awaddr = base + aw_sent * burst_bytes;
    };
    show_aw();
    show_w();
    while (b_got < bursts && b.axi_cycles - start < limit) {
        bool aw_fire = false, w_fire = false, b_fire = false;
        b.cycle(
            [&] {
                aw_fire = t.s_axi_awvalid && t.s_axi_awready;
                w_fire = t.s_axi_wvalid && t.s_axi_wready;
                b_fire = t.s_axi_bvalid && t.s_axi_bready;
                if (b_fire && t.s_axi_bresp != 0) ok = false;
            },
            [&] {
                if (aw_fire) ++aw_sent;
                if (w_fire && ++w_beat == 256) w_beat = 0, ++w_burst;
                if (b_fire) ++b_got;
                show_aw();
                show_w();
            });
    }
    t.s_axi_awvalid = 0;
    t.s_axi_wvalid = 0;

    // Reads: AR up to 8 ahead, R checked beat by beat.
    uint64_t ar_sent = 0, r_beats = 0;
    t.s_axi_arlen = 255;
    t.s_axi_arsize = 4;
    t.s_axi_arburst = 1;
    t.s_axi_arcache = 3;
    t.s_axi_rready = 1;
    auto show_ar = [&] {
        const bool go = ar_sent < bursts && ar_sent - r_beats / 256 < 8;
        t.s_axi_arvalid = go;
        if (go) t.s_axi_araddr = base + ar_sent * burst_bytes;
    };
    show_ar();
    while (r_beats < bursts * 256 && b.axi_cycles - start < limit) {
        bool ar_fire = false;
        b.cycle(
            [&] {
                ar_fire = t.s_axi_arvalid && t.s_axi_arready;
                if (t.s_axi_rvalid && t.s_axi_rready) {
                    if (t.s_axi_rresp != 0) ok = false;
                    const uint64_t off = r_beats * 16;
                    for (int i = 0; i < 16; ++i) {
                        const uint8_t got = uint8_t(t.s_axi_rdata[i / 4] >> (8 * (i % 4)));
                        if (got != pattern(0, off + i)) ok = false;
                    }
                    ++r_beats;
                }
            },
            [&] {
                if (ar_fire) ++ar_sent;
                show_ar();
            });
    }
    return ok && r_beats == bursts * 256 ? b.axi_cycles - start : 0;
}
