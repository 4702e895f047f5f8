// The vendor frame generator behind the port names of Vivado's AXI-Stream master template:
// TSTRB and no TKEEP. The generator's TKEEP comes out as TSTRB, so the bytes past the end of a
// frame's last beat are, by the AXI-Stream rule for a bus without TKEEP, position bytes (kept,
// strobe low) rather than null bytes. A sink that ignores TSTRB takes them as data.

`timescale 1ns / 1ps
`default_nettype none

module vendor_frame_gen_tstrb
(
    input  wire        ACLK,
    input  wire        ARESETN,
    input  wire        START,
    input  wire [11:0] FRAME_BYTES,
    input  wire [7:0]  FRAME_COUNT,
    output wire [31:0] M_AXIS_TDATA,
    output wire [3:0]  M_AXIS_TSTRB,
    output wire        M_AXIS_TLAST,
    output wire        M_AXIS_TVALID,
    input  wire        M_AXIS_TREADY
);

vendor_frame_gen gen (
    .ACLK(ACLK),
    .ARESETN(ARESETN),
    .START(START),
    .FRAME_BYTES(FRAME_BYTES),
    .FRAME_COUNT(FRAME_COUNT),
    .M_AXIS_TDATA(M_AXIS_TDATA),
    .M_AXIS_TKEEP(M_AXIS_TSTRB),
    .M_AXIS_TLAST(M_AXIS_TLAST),
    .M_AXIS_TVALID(M_AXIS_TVALID),
    .M_AXIS_TREADY(M_AXIS_TREADY)
);

endmodule

`default_nettype wire
