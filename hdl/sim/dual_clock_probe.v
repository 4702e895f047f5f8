/*
 * Simulation-only probe of the two clock domains of the card and of wide ports: each domain
 * counts its own rising edges, and a 512-bit register copies its input on each axi_aclk edge.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module dual_clock_probe #
(
    // Width of the wide pass-through register in bits (the DDR port width)
    parameter WIDE_WIDTH = 512
)
(
    input  wire                  axi_aclk,
    input  wire                  ddr_clk,
    // Wide value copied on each axi_aclk rising edge
    input  wire [WIDE_WIDTH-1:0] wide_in,
    output reg  [WIDE_WIDTH-1:0] wide_out = {WIDE_WIDTH{1'b0}},
    // Rising edges seen in each domain
    output reg  [31:0]           axi_count = 32'd0,
    output reg  [31:0]           ddr_count = 32'd0
);

// check configuration
initial begin
    if (WIDE_WIDTH <= 64) begin
        $error("Error: WIDE_WIDTH must exceed 64 bits to exercise wide ports (instance %m)");
        $finish;
    end
end

always @(posedge axi_aclk) begin
    axi_count <= axi_count + 32'd1;
    wide_out <= wide_in;
end

always @(posedge ddr_clk) begin
    ddr_count <= ddr_count + 32'd1;
end

endmodule

`resetall
