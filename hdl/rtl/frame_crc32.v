/*
 * CRC-32 (IEEE 802.3 polynomial, reflected, as Ethernet and zlib use it) over one whole beat.
 *
 * Combinational: state_out is state_in advanced over every byte of `data` (lane 0 first,
 * each byte least significant bit first). The state is the raw CRC register: a frame starts
 * from 32'hffffffff and its CRC is the final state inverted.
 *
 * Every byte of the beat is taken, so the update is one flat XOR matrix (each output bit an
 * XOR of about half the 32 state bits and half the data bits: three LUT6 levels) with no
 * per-byte selection in it. A beat that carries fewer bytes is handled by its user, who
 * knows where its frame ends: zero bytes after the last one advance the state by a known
 * linear step, so the checker compares against the residue advanced over those zeros, and the
 * frame source moves its frame so that the last byte ends a beat (see frame_checker.v and
 * frame_source.v).
 *
 * The update is linear, so its users split it into a data part (state_in zero) and a state
 * part (STATE_ONLY: data taken as zero). The state part's rows hold only the 32 state columns,
 * so where it closes a CRC register's loop the loop is an XOR of about 16 state bits, not a
 * tree sized for the data as well.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module frame_crc32 #
(
    // Width of the data bus in bits (a multiple of 8)
    parameter DATA_WIDTH = 128,
    // 1: advance state_in over a beat of zero bytes and leave `data` out of the matrix (for the
    // state part of a split update: each output bit is then an XOR of state bits only, so a
    // CRC register's loop through it stays short even where synthesis maps it on its own)
    parameter STATE_ONLY = 0
)
(
    input  wire [31:0]             state_in,
    input  wire [DATA_WIDTH-1:0]   data,
    output reg  [31:0]             state_out
);

// The reflected form of the polynomial 0x04c11db7.
localparam [31:0] POLY = 32'hedb88320;

// check configuration
initial begin
    if (DATA_WIDTH % 8 != 0 || DATA_WIDTH < 8) begin
        $error("Error: DATA_WIDTH must be a positive multiple of 8 (instance %m)");
        $finish;
    end
    if (STATE_ONLY != 0 && STATE_ONLY != 1) begin
        $error("Error: STATE_ONLY must be 0 or 1 (instance %m)");
        $finish;
    end
end

// Coverage waiver: the functions below run only while the design elaborates (they compute the
// constants MATRIX and ROW), never in simulation, so simulation can reach none of their lines.
/* verilator coverage_off */

// One bit step of the register: the reference definition of the update.
function [31:0] crc_bit(input [31:0] state, input d);
    crc_bit = {1'b0, state[31:1]} ^ ((state[0] ^ d) ? POLY : 32'd0);
endfunction

// The update over a whole beat, bit by bit (used at elaboration only).
function [31:0] crc_beat(input [31:0] state, input [DATA_WIDTH-1:0] bits);
    integer k;
    begin
        crc_beat = state;
        for (k = 0; k < DATA_WIDTH; k = k + 1) begin
            crc_beat = crc_bit(crc_beat, bits[k]);
        end
    end
endfunction

// The update is linear over GF(2): column c of its matrix is the update of the unit vector
// c, state bits first (c < 32), then data bits. The whole matrix, one 32-bit column per input.
localparam INPUTS = 32 + DATA_WIDTH;

function [32*INPUTS-1:0] crc_matrix(input integer unused);
    integer c;
    begin
        crc_matrix = {32*INPUTS{1'b0}};
        for (c = 0; c < 32; c = c + 1) begin
            crc_matrix[32*c +: 32] = crc_beat(32'd1 << c, {DATA_WIDTH{1'b0}});
        end
        for (c = 0; c < DATA_WIDTH; c = c + 1) begin
            crc_matrix[32*(32+c) +: 32] = crc_beat(32'd0, {{DATA_WIDTH-1{1'b0}}, 1'b1} << c);
        end
        if (unused != 0) begin
            crc_matrix = {32*INPUTS{1'b0}};
        end
    end
endfunction

localparam [32*INPUTS-1:0] MATRIX = crc_matrix(0);

// Row `o` of the matrix: the inputs that output bit o is the XOR of.
function [INPUTS-1:0] crc_row(input integer o);
    integer c;
    begin
        for (c = 0; c < INPUTS; c = c + 1) begin
            crc_row[c] = MATRIX[32*c + o];
        end
    end
endfunction

/* verilator coverage_on */

// Each output bit is the XOR of its row's inputs: a reduction that synthesis builds as a
// balanced tree (the bit-serial form above would map to a chain as long as the beat).
// STATE_ONLY takes the data as zero, so the rows keep their state columns only.
wire [INPUTS-1:0] inputs = {STATE_ONLY != 0 ? {DATA_WIDTH{1'b0}} : data, state_in};
localparam [INPUTS-1:0] COLUMNS = STATE_ONLY != 0 ? {{DATA_WIDTH{1'b0}}, 32'hffffffff}
    : {INPUTS{1'b1}};

genvar o;
generate
    for (o = 0; o < 32; o = o + 1) begin : bit_g
        localparam [INPUTS-1:0] ROW = crc_row(o) & COLUMNS;
        always @* begin
            state_out[o] = ^(inputs & ROW);
        end
    end
endgenerate

endmodule

`resetall
