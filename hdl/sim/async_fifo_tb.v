/*
 * Simulation-only test top for async_fifo: a 32-bit, 8-entry FIFO, small enough that random
 * traffic fills and drains it often. Its two sides are named as AXI-Stream ports (data,
 * valid, ready; no TLAST, so every word is a transfer of its own) so that stream bus models
 * and monitors attach to them.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module async_fifo_tb #
(
    // Width of one entry in bits
    parameter DATA_WIDTH = 32,
    // log2 of the depth
    parameter ADDR_WIDTH = 3,
    // async_fifo's seeded bug (0: none), for the test that must catch it
    parameter BUG = 0
)
(
    input  wire                  s_clk,
    input  wire                  s_rst,
    input  wire [DATA_WIDTH-1:0] s_axis_tdata,
    input  wire                  s_axis_tvalid,
    output wire                  s_axis_tready,

    input  wire                  m_clk,
    input  wire                  m_rst,
    output wire [DATA_WIDTH-1:0] m_axis_tdata,
    output wire                  m_axis_tvalid,
    input  wire                  m_axis_tready,

    output wire                  s_rst_busy,
    output wire                  m_rst_busy
);

// check configuration
initial begin
    if (DATA_WIDTH < 32) begin
        $error("Error: DATA_WIDTH must be at least 32 so test sequence numbers do not wrap (instance %m)");
        $finish;
    end
end

async_fifo #(
    .DATA_WIDTH(DATA_WIDTH),
    .ADDR_WIDTH(ADDR_WIDTH),
    .BUG(BUG)
)
fifo_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_data(s_axis_tdata),
    .s_valid(s_axis_tvalid),
    .s_ready(s_axis_tready),
    .m_clk(m_clk),
    .m_rst(m_rst),
    .m_data(m_axis_tdata),
    .m_valid(m_axis_tvalid),
    .m_ready(m_axis_tready),
    .s_rst_busy(s_rst_busy),
    .m_rst_busy(m_rst_busy)
);

endmodule

`resetall
