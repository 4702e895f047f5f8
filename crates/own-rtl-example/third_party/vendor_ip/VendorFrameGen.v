// Vendor AXI-Stream frame generator, written for card-sim's own-RTL example in the style of a
// third-party test-pattern source: upper-case ports, a level START, and the frame size and
// count on input ports. Byte k of frame f is (31 * f + k) mod 256; the last beat of a frame
// keeps only the bytes left (TKEEP).
//
// BUG = 1 seeds a bug of the kind a source written against an always-ready sink has: it moves
// on from the last beat of a frame whether or not TREADY took it. Only a sink that holds
// TREADY low at a TLAST beat sees it.

`timescale 1ns / 1ps
`default_nettype none

module vendor_frame_gen #
(
    // The seeded bug (0: none; see above).
    parameter integer BUG = 0
)
(
    input  wire        ACLK,
    input  wire        ARESETN,
    // Send FRAME_COUNT frames of FRAME_BYTES bytes (1 or more) while START is high.
    input  wire        START,
    input  wire [11:0] FRAME_BYTES,
    input  wire [7:0]  FRAME_COUNT,
    output reg  [31:0] M_AXIS_TDATA,
    output reg  [3:0]  M_AXIS_TKEEP,
    output reg         M_AXIS_TLAST,
    output reg         M_AXIS_TVALID,
    input  wire        M_AXIS_TREADY
);

initial begin
    if (BUG < 0 || BUG > 1) begin
        $error("vendor_frame_gen: BUG must be 0 or 1");
        $finish;
    end
end

reg [7:0]  frame;
reg [11:0] offset;

// The beat on the bus is gone (or, with BUG 1, a last beat is given up on).
wire advance = M_AXIS_TVALID && (M_AXIS_TREADY || (BUG == 1 && M_AXIS_TLAST));
wire [11:0] left  = FRAME_BYTES - offset;
wire [7:0]  first = frame * 8'd31 + offset[7:0];

integer i;

always @(posedge ACLK) begin
    if (!ARESETN) begin
        M_AXIS_TVALID <= 1'b0;
        M_AXIS_TDATA  <= 32'd0;
        M_AXIS_TKEEP  <= 4'd0;
        M_AXIS_TLAST  <= 1'b0;
        frame         <= 8'd0;
        offset        <= 12'd0;
    end else if (!M_AXIS_TVALID || advance) begin
        if (START && frame < FRAME_COUNT) begin
            M_AXIS_TVALID <= 1'b1;
            for (i = 0; i < 4; i = i + 1) begin
                M_AXIS_TDATA[8*i +: 8] <= first + i[7:0];
            end
            M_AXIS_TKEEP <= left >= 12'd4 ? 4'hf : 4'hf >> (12'd4 - left);
            M_AXIS_TLAST <= left <= 12'd4;
            if (left <= 12'd4) begin
                frame  <= frame + 8'd1;
                offset <= 12'd0;
            end else begin
                offset <= offset + 12'd4;
            end
        end else begin
            M_AXIS_TVALID <= 1'b0;
        end
    end
end

endmodule

`default_nettype wire
