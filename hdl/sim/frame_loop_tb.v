/*
 * Test top: a frame source feeding a frame checker, with the link between them gated by
 * `link_ready` so that a test can impose any backpressure pattern (the checker itself is
 * always ready). The source's FIFO is small, so that the drop policy drops frames after a
 * few cycles of backpressure.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module frame_loop_tb #
(
    // Beats of buffering in the frame source
    parameter FIFO_DEPTH = 64
)
(
    input  wire         clk,
    input  wire         rst,

    /*
     * Frame source configuration
     */
    input  wire         enable,
    input  wire [7:0]   channel,
    input  wire [16:0]  frame_len,
    input  wire [31:0]  gap_cycles,
    input  wire         pattern,
    input  wire [31:0]  seed,
    input  wire         drop_policy,

    /*
     * Backpressure on the link
     */
    input  wire         link_ready,
    output wire         link_valid,
    output wire         link_last,

    /*
     * Status
     */
    input  wire         clear,
    output wire [63:0]  frames_sent,
    output wire [63:0]  frames_dropped,
    output wire [63:0]  frames_good,
    output wire [63:0]  frames_bad,
    output wire [63:0]  frames_missing,
    output wire [31:0]  err_magic,
    output wire [31:0]  err_length,
    output wire [31:0]  err_crc,
    output wire [31:0]  err_version,
    output wire [31:0]  last_seq
);

// The timestamp every source shares in card_core: a free-running cycle counter.
reg [63:0] timestamp_reg = 64'd0;

always @(posedge clk) begin
    timestamp_reg <= timestamp_reg + 64'd1;
    if (rst) begin
        timestamp_reg <= 64'd0;
    end
end

wire [127:0] axis_tdata;
wire [15:0] axis_tkeep;
wire axis_tlast;
wire axis_tvalid;
wire checker_tready;

// Outputs this test top does not use: the one-shot handshake and the per-frame results.
wire unused_send_ready;
wire unused_clearing;
wire unused_clear_tail;
wire unused_frame_done;
wire [31:0] unused_frame_seq;
wire unused_frame_ok;

frame_source #(
    .FIFO_DEPTH(FIFO_DEPTH)
)
source_inst (
    .clk(clk),
    .rst(rst),
    // The bench's clear is the checker's alone: the source runs on.
    .clear(1'b0),
    .enable(enable),
    .channel(channel),
    .frame_len(frame_len),
    .gap_cycles(gap_cycles),
    .pattern(pattern),
    .seed(seed),
    .drop_policy(drop_policy),
    .timestamp(timestamp_reg),
    .oneshot(1'b0),
    .send(1'b0),
    .send_seq(32'd0),
    .m_axis_tdata(axis_tdata),
    .m_axis_tkeep(axis_tkeep),
    .m_axis_tlast(axis_tlast),
    .m_axis_tvalid(axis_tvalid),
    .m_axis_tready(link_ready && checker_tready),
    .frames_sent(frames_sent),
    .frames_dropped(frames_dropped),
    .send_ready(unused_send_ready),
    .clearing(unused_clearing),
    .clear_tail(unused_clear_tail),
    // The bench tests the source as the card builds it, without its deliberate fault.
    .fault_seq_repeat_en(1'b0)
);

frame_checker checker_inst (
    .clk(clk),
    .rst(rst),
    .clear(clear),
    .s_axis_tdata(axis_tdata),
    .s_axis_tkeep(axis_tkeep),
    .s_axis_tlast(axis_tlast),
    .s_axis_tvalid(axis_tvalid && link_ready),
    .s_axis_tready(checker_tready),
    .frames_good(frames_good),
    .frames_bad(frames_bad),
    .frames_missing(frames_missing),
    .err_magic(err_magic),
    .err_length(err_length),
    .err_crc(err_crc),
    .err_version(err_version),
    .last_seq(last_seq),
    .frame_done(unused_frame_done),
    .frame_seq(unused_frame_seq),
    .frame_ok(unused_frame_ok)
);

assign link_valid = axis_tvalid;
assign link_last = axis_tlast;

endmodule

`resetall
