/*
 * Proof wrapper of frame_source_fifo: its write side is checked as an AXI-Stream slave (the
 * writer's rules assumed), its read side as a master (its rules asserted, TLAST being the
 * word's LAST_BIT), with `drop` free, so that dropping never withdraws a presented word. What
 * the FIFO promises: `count` never passes DEPTH (no overflow) and never wraps below zero (no
 * underflow), and, as long as nothing was dropped, every word comes out once and in order.
 * Order is checked by data independence: the writer numbers its words (the low bits of each
 * word are its number), so the words read must carry the numbers 0, 1, 2, ... in turn.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fw_frame_source_fifo #
(
    // Width of a word in bits: a 4-bit number and the last bit
    parameter WIDTH = 5,
    // Words of storage (small, so that BMC reaches full and empty many times)
    parameter DEPTH = 4,
    // The module's seeded bug (0: none), set only by the proof of its seeded bug
    parameter BUG = 0
)
(
    input  wire              clk,
    input  wire              rst,
    input  wire [WIDTH-1:0]  s_data,
    input  wire              s_valid,
    input  wire              m_ready,
    input  wire              drop
);

`ifdef FORMAL

    localparam COUNT_WIDTH = $clog2(DEPTH)+1;

    wire                   s_ready;
    wire [WIDTH-1:0]       m_data;
    wire                   m_valid;
    wire [COUNT_WIDTH-1:0] count;

    frame_source_fifo #(
        .WIDTH(WIDTH),
        .DEPTH(DEPTH),
        .COUNT_WIDTH(COUNT_WIDTH),
        .LAST_BIT(WIDTH-1),
        .BUG(BUG)
    ) dut (
        .clk(clk),
        .rst(rst),
        .s_data(s_data),
        .s_valid(s_valid),
        .s_ready(s_ready),
        .m_data(m_data),
        .m_valid(m_valid),
        .m_ready(m_ready),
        .drop(drop),
        .count(count)
    );

    faxis_slave #(
        .DATA_WIDTH(8),
        .KEEP_WIDTH(1),
        .KEEP_PACKED(0)
    ) f_in (
        .clk(clk),
        .rst(rst),
        .tdata({{(8-WIDTH+1){1'b0}}, s_data[WIDTH-2:0]}),
        .tkeep(1'b1),
        .tlast(s_data[WIDTH-1]),
        .tvalid(s_valid),
        .tready(s_ready)
    );

    faxis_master #(
        .DATA_WIDTH(8),
        .KEEP_WIDTH(1),
        .KEEP_PACKED(0)
    ) f_out (
        .clk(clk),
        .rst(rst),
        .tdata({{(8-WIDTH+1){1'b0}}, m_data[WIDTH-2:0]}),
        .tkeep(1'b1),
        .tlast(m_data[WIDTH-1]),
        .tvalid(m_valid),
        .tready(m_ready)
    );

    // The numbers of the next word written and the next word read, and whether a word was
    // ever dropped since reset (then the read numbers skip, by design).
    reg [WIDTH-2:0] f_in_seq = {(WIDTH-1){1'b0}};
    reg [WIDTH-2:0] f_out_seq = {(WIDTH-1){1'b0}};
    reg f_dropped = 1'b0;

    always @(posedge clk) begin
        if (rst) begin
            f_in_seq <= {(WIDTH-1){1'b0}};
            f_out_seq <= {(WIDTH-1){1'b0}};
            f_dropped <= 1'b0;
        end else begin
            if (s_valid && s_ready) f_in_seq <= f_in_seq + 1'b1;
            if (m_valid && m_ready) f_out_seq <= f_out_seq + 1'b1;
            if (drop) f_dropped <= 1'b1;
        end
    end

    reg f_past_valid = 1'b0;

    always @(posedge clk) begin
        f_past_valid <= 1'b1;
    end

    always @(*) begin
        // The writer numbers its words.
        if (!rst && s_valid) begin
            assume (s_data[WIDTH-2:0] == f_in_seq);
        end
        if (f_past_valid && !rst) begin
            promise_no_overflow: assert (count <= DEPTH);
            promise_full_not_ready: assert (count != DEPTH || !s_ready);
            promise_order_kept: assert (f_dropped || !m_valid || m_data[WIDTH-2:0] == f_out_seq);
            promise_words_held: assert (f_dropped || f_in_seq - f_out_seq == count + m_valid);
        end
    end

    always @(posedge clk) begin
        if (f_past_valid && !rst) begin
            cover_frame_completes: cover (m_valid && m_ready && m_data[WIDTH-1] && f_out_seq > 2);
            cover_full_stall: cover (count == DEPTH && s_valid && !m_ready);
            cover_drop: cover ($past(drop) && $past(count) != 0 && count == 0);
            cover_reset_mid_frame: cover ($past(rst) && $past(count, 2) != 0);
        end
    end

`endif

endmodule

`resetall
