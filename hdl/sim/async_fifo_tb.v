/*
 * Simulation-only test top for async_fifo: a 32-bit, 8-entry FIFO, small enough that random
 * traffic fills and drains it often.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module async_fifo_tb #
(
    // Width of one entry in bits
    parameter DATA_WIDTH = 32,
    // log2 of the depth
    parameter ADDR_WIDTH = 3
)
(
    input  wire                  s_clk,
    input  wire                  s_rst,
    input  wire [DATA_WIDTH-1:0] s_data,
    input  wire                  s_valid,
    output wire                  s_ready,

    input  wire                  m_clk,
    input  wire                  m_rst,
    output wire [DATA_WIDTH-1:0] m_data,
    output wire                  m_valid,
    input  wire                  m_ready
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
    .ADDR_WIDTH(ADDR_WIDTH)
)
fifo_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_data(s_data),
    .s_valid(s_valid),
    .s_ready(s_ready),
    .m_clk(m_clk),
    .m_rst(m_rst),
    .m_data(m_data),
    .m_valid(m_valid),
    .m_ready(m_ready)
);

endmodule

`resetall
