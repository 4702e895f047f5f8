/*
 * PRBS-31 generator, DATA_WIDTH bits per step (combinational).
 *
 * A Fibonacci LFSR with polynomial x^31 + x^28 + 1: each bit step computes
 * b = s[30] ^ s[27], shifts b into the state from below (s = {s[29:0], b}) and outputs b.
 * data[0] is the first bit out, data[DATA_WIDTH-1] the last; state_out is the state after
 * DATA_WIDTH steps. Laid out little-endian on a stream, the bytes carry the bits least
 * significant first, exactly as the frame format defines the PRBS payload.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module frame_prbs31 #
(
    // Bits produced per step
    parameter DATA_WIDTH = 128
)
(
    input  wire [30:0]            state_in,
    output reg  [DATA_WIDTH-1:0]  data,
    output reg  [30:0]            state_out
);

// check configuration
initial begin
    if (DATA_WIDTH < 1) begin
        $error("Error: DATA_WIDTH must be at least 1 (instance %m)");
        $finish;
    end
end

integer i;
reg [30:0] s;
reg b;

always @* begin
    s = state_in;
    data = {DATA_WIDTH{1'b0}};
    for (i = 0; i < DATA_WIDTH; i = i + 1) begin
        b = s[30] ^ s[27];
        s = {s[29:0], b};
        data[i] = b;
    end
    state_out = s;
end

endmodule

`resetall
