/*
 * CRC-32 (IEEE 802.3 polynomial, reflected, as Ethernet and zlib use it) over one beat.
 *
 * Combinational: state_out is state_in advanced over the first `nbytes` bytes of `data`
 * (lane 0 first, each byte least significant bit first). The state is the raw CRC register:
 * a frame starts from 32'hffffffff and its CRC is the final state inverted. With nbytes = 0
 * the state passes through unchanged, which serves beats that carry no covered bytes.
 *
 * The byte enable is a count from lane 0 up, the only shape a stream's last beat takes under
 * the XDMA TKEEP rule.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module frame_crc32 #
(
    // Width of the data bus in bits (a multiple of 8)
    parameter DATA_WIDTH = 128,
    // Width of the byte count: enough for DATA_WIDTH/8 itself
    parameter COUNT_WIDTH = $clog2(DATA_WIDTH/8+1)
)
(
    input  wire [31:0]             state_in,
    input  wire [DATA_WIDTH-1:0]   data,
    input  wire [COUNT_WIDTH-1:0]  nbytes,
    output reg  [31:0]             state_out
);

// The reflected form of the polynomial 0x04c11db7.
localparam [31:0] POLY = 32'hedb88320;
localparam BYTES = DATA_WIDTH/8;

// check configuration
initial begin
    if (DATA_WIDTH % 8 != 0 || DATA_WIDTH < 8) begin
        $error("Error: DATA_WIDTH must be a positive multiple of 8 (instance %m)");
        $finish;
    end
    if ((1 << COUNT_WIDTH) <= BYTES) begin
        $error("Error: COUNT_WIDTH cannot hold DATA_WIDTH/8 (instance %m)");
        $finish;
    end
end

integer i;
integer j;
reg [31:0] crc;

always @* begin
    crc = state_in;
    for (i = 0; i < BYTES; i = i + 1) begin
        if (i < nbytes) begin
            for (j = 0; j < 8; j = j + 1) begin
                crc = {1'b0, crc[31:1]} ^ ((crc[0] ^ data[8*i+j]) ? POLY : 32'd0);
            end
        end
    end
    state_out = crc;
end

endmodule

`resetall
