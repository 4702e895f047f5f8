/*
 * Simulation-only test top for the seeded synthesis/simulation mismatches of
 * frame_source_fifo (its MISMATCH parameter): the card's FIFO (MISMATCH 0) and the four seeded
 * ones side by side, 9-bit words (the last-of-frame bit on top) in 4096 words of block RAM,
 * all fed the same inputs, each with its own outputs (`_<MISMATCH>`). Built from the RTL, or
 * with NETLIST defined from what `cargo xtask synth` made of each
 * (target/synth/seeded/frame_source_fifo_m<MISMATCH>.v, module frame_source_fifo_nl_m<MISMATCH>),
 * so that a test drives both builds in lockstep and names the first difference.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module fifo_mismatch_tb
(
    input  wire        clk,
    input  wire        rst,
    input  wire [8:0]  s_data,
    input  wire        s_valid,
    input  wire        m_ready,
    input  wire        drop,
    output wire [8:0]  m_data_0,
    output wire        m_valid_0,
    output wire        s_ready_0,
    output wire [12:0] count_0,
    output wire [8:0]  m_data_1,
    output wire        m_valid_1,
    output wire        s_ready_1,
    output wire [12:0] count_1,
    output wire [8:0]  m_data_2,
    output wire        m_valid_2,
    output wire        s_ready_2,
    output wire [12:0] count_2,
    output wire [8:0]  m_data_3,
    output wire        m_valid_3,
    output wire        s_ready_3,
    output wire [12:0] count_3,
    output wire [8:0]  m_data_4,
    output wire        m_valid_4,
    output wire        s_ready_4,
    output wire [12:0] count_4
);

`ifdef NETLIST
frame_source_fifo_nl_m0 fifo_0 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_0),
    .m_data(m_data_0),
    .m_valid(m_valid_0),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_0)
);
`else
frame_source_fifo #(
    .WIDTH(9),
    .DEPTH(4096),
    .LAST_BIT(8),
    .MISMATCH(0)
) fifo_0 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_0),
    .m_data(m_data_0),
    .m_valid(m_valid_0),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_0)
);
`endif

`ifdef NETLIST
frame_source_fifo_nl_m1 fifo_1 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_1),
    .m_data(m_data_1),
    .m_valid(m_valid_1),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_1)
);
`else
frame_source_fifo #(
    .WIDTH(9),
    .DEPTH(4096),
    .LAST_BIT(8),
    .MISMATCH(1)
) fifo_1 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_1),
    .m_data(m_data_1),
    .m_valid(m_valid_1),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_1)
);
`endif

`ifdef NETLIST
frame_source_fifo_nl_m2 fifo_2 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_2),
    .m_data(m_data_2),
    .m_valid(m_valid_2),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_2)
);
`else
frame_source_fifo #(
    .WIDTH(9),
    .DEPTH(4096),
    .LAST_BIT(8),
    .MISMATCH(2)
) fifo_2 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_2),
    .m_data(m_data_2),
    .m_valid(m_valid_2),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_2)
);
`endif

`ifdef NETLIST
frame_source_fifo_nl_m3 fifo_3 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_3),
    .m_data(m_data_3),
    .m_valid(m_valid_3),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_3)
);
`else
frame_source_fifo #(
    .WIDTH(9),
    .DEPTH(4096),
    .LAST_BIT(8),
    .MISMATCH(3)
) fifo_3 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_3),
    .m_data(m_data_3),
    .m_valid(m_valid_3),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_3)
);
`endif

`ifdef NETLIST
frame_source_fifo_nl_m4 fifo_4 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_4),
    .m_data(m_data_4),
    .m_valid(m_valid_4),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_4)
);
`else
frame_source_fifo #(
    .WIDTH(9),
    .DEPTH(4096),
    .LAST_BIT(8),
    .MISMATCH(4)
) fifo_4 (
    .clk(clk),
    .rst(rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready_4),
    .m_data(m_data_4),
    .m_valid(m_valid_4),
    .m_ready(m_ready),
    .drop(drop),
    .count(count_4)
);
`endif

endmodule

`resetall
