/*
 * Proof wrapper of async_fifo, with two free clocks (the write clock toggles at every step of
 * the solver, the read clock at any steps the solver picks, so every ratio and phase is
 * tried). Each side's inputs change only at its own clock's rising edge. The write side is
 * checked as an AXI-Stream slave, the read side as a master, each under its own reset. What
 * the FIFO promises, as long as neither side was reset again after the first reset: every entry
 * comes out once and in order, and it never holds more than its depth plus the output
 * register. Across any resets of either side, at any moment: whatever comes out was written,
 * and after what came out before it (a reset may discard entries, never invent or repeat
 * one). Order is checked by data independence: the writer numbers its entries.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_async_fifo #
(
    // Width of one entry in bits: its number (wide enough not to wrap within the proof's depth)
    parameter DATA_WIDTH = 5,
    // log2 of the depth (the smallest the FIFO allows)
    parameter ADDR_WIDTH = 2,
    // The FIFO's seeded bug (0: none), for its seeded proof
    parameter BUG = 0
)
(
    input  wire                  s_clk,
    input  wire                  s_rst,
    input  wire [DATA_WIDTH-1:0] s_data,
    input  wire                  s_valid,
    input  wire                  m_clk,
    input  wire                  m_rst,
    input  wire                  m_ready
);

`ifdef FORMAL

    wire                  s_ready;
    wire [DATA_WIDTH-1:0] m_data;
    wire                  m_valid;
    wire                  s_rst_busy;
    wire                  m_rst_busy;

    async_fifo #(
        .DATA_WIDTH(DATA_WIDTH),
        .ADDR_WIDTH(ADDR_WIDTH),
        .BUG(BUG)
    ) dut (
        .s_clk(s_clk),
        .s_rst(s_rst),
        .s_data(s_data),
        .s_valid(s_valid),
        .s_ready(s_ready),
        .m_clk(m_clk),
        .m_rst(m_rst),
        .m_data(m_data),
        .m_valid(m_valid),
        .m_ready(m_ready),
        .s_rst_busy(s_rst_busy),
        .m_rst_busy(m_rst_busy)
    );

    faxis_slave #(
        .DATA_WIDTH(8),
        .KEEP_WIDTH(1),
        .KEEP_PACKED(0)
    ) f_in (
        .clk(s_clk),
        .rst(s_rst),
        .tdata({{(8-DATA_WIDTH){1'b0}}, s_data}),
        .tkeep(1'b1),
        .tlast(1'b1),
        .tvalid(s_valid),
        .tready(s_ready)
    );

    faxis_master #(
        .DATA_WIDTH(8),
        .KEEP_WIDTH(1),
        .KEEP_PACKED(0)
    ) f_out (
        .clk(m_clk),
        .rst(m_rst),
        .tdata({{(8-DATA_WIDTH){1'b0}}, m_data}),
        .tkeep(1'b1),
        .tlast(1'b1),
        .tvalid(m_valid),
        .tready(m_ready)
    );

    // The solver's own step: the clocks and each side's inputs are constrained against it.
    // A simulation has no such step (a replay drives the clocks and inputs from a trace
    // that already keeps these assumptions), and Verilator has no `$global_clock`.
`ifndef VERILATOR
    reg f_gpast = 1'b0;

    always @($global_clock) begin
        f_gpast <= 1'b1;
        if (f_gpast) begin
            assume (s_clk == !$past(s_clk));
            if (!$rose(s_clk)) begin
                assume ($stable(s_rst) && $stable(s_valid) && $stable(s_data));
            end
            if (!$rose(m_clk)) begin
                assume ($stable(m_rst) && $stable(m_ready));
            end
        end
    end
`endif

    // The numbers of the next entry written and read, and whether a side was reset again
    // after the first reset (then entries in flight are discarded, by design).
    reg [DATA_WIDTH-1:0] f_in_seq = {DATA_WIDTH{1'b0}};
    reg [DATA_WIDTH-1:0] f_out_seq = {DATA_WIDTH{1'b0}};
    reg f_s_ran = 1'b0;
    reg f_m_ran = 1'b0;
    reg f_s_reset_again = 1'b0;
    reg f_m_reset_again = 1'b0;
    // The lowest number the next entry delivered may carry, whatever the resets.
    reg [DATA_WIDTH-1:0] f_next_min = {DATA_WIDTH{1'b0}};

    always @(posedge s_clk) begin
        if (s_rst && f_s_ran) f_s_reset_again <= 1'b1;
        if (!s_rst) f_s_ran <= 1'b1;
        if (s_valid && s_ready) f_in_seq <= f_in_seq + 1'b1;
    end

    always @(posedge m_clk) begin
        if (m_rst && f_m_ran) f_m_reset_again <= 1'b1;
        if (!m_rst) f_m_ran <= 1'b1;
        if (m_valid && m_ready) f_out_seq <= f_out_seq + 1'b1;
        if (m_valid && m_ready) f_next_min <= m_data + 1'b1;
    end

    wire f_clean = !f_s_reset_again && !f_m_reset_again && !s_rst && !m_rst;

    always @(*) begin
        // The writer numbers its entries, counting across its resets.
        if (s_valid) begin
            assume (s_data == f_in_seq);
        end
        promise_nothing_invented: assert (!m_valid || m_data < f_in_seq);
        promise_nothing_repeated: assert (!m_valid || m_data >= f_next_min);
        if (f_clean) begin
            promise_order_kept: assert (!m_valid || m_data == f_out_seq);
            promise_no_overflow: assert (f_in_seq - f_out_seq <= (1 << ADDR_WIDTH) + 1);
        end
    end

    always @(posedge m_clk) begin
        if (f_clean) begin
            cover_entries_cross: cover (m_valid && m_ready && f_out_seq == 5'd2);
            cover_full_stall: cover (!s_ready && !s_rst_busy && s_valid && f_in_seq - f_out_seq >= 4);
        end
    end

    always @(posedge s_clk) begin
        cover_reset_mid_stream: cover (s_rst && f_in_seq != f_out_seq && f_s_ran);
    end

`endif

endmodule

`resetall
