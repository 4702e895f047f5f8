// Vendor AXI-Stream FIFO, written for card-sim's own-RTL example in the style of third-party
// IP: upper-case ports, a file named unlike its module.

`timescale 1ns / 1ps
`default_nettype none

module vendor_axis_fifo #
(
    parameter integer TDATA_BYTES = 8,
    parameter integer DEPTH_LOG2  = 4
)
(
    input  wire                     ACLK,
    input  wire                     ARESETN,
    input  wire [TDATA_BYTES*8-1:0] S_AXIS_TDATA,
    input  wire [TDATA_BYTES-1:0]   S_AXIS_TKEEP,
    input  wire                     S_AXIS_TLAST,
    input  wire                     S_AXIS_TVALID,
    output wire                     S_AXIS_TREADY,
    output wire [TDATA_BYTES*8-1:0] M_AXIS_TDATA,
    output wire [TDATA_BYTES-1:0]   M_AXIS_TKEEP,
    output wire                     M_AXIS_TLAST,
    output wire                     M_AXIS_TVALID,
    input  wire                     M_AXIS_TREADY
);

localparam integer W = TDATA_BYTES * 9 + 1;

reg [W-1:0] mem [0:(1<<DEPTH_LOG2)-1];
reg [DEPTH_LOG2:0] wr_ptr, rd_ptr;

wire empty = wr_ptr == rd_ptr;
wire full = wr_ptr == {~rd_ptr[DEPTH_LOG2], rd_ptr[DEPTH_LOG2-1:0]};

assign S_AXIS_TREADY = !full;
assign M_AXIS_TVALID = !empty;
assign {M_AXIS_TLAST, M_AXIS_TKEEP, M_AXIS_TDATA} = mem[rd_ptr[DEPTH_LOG2-1:0]];

always @(posedge ACLK) begin
    if (!ARESETN) begin
        wr_ptr <= 0;
        rd_ptr <= 0;
    end else begin
        if (S_AXIS_TVALID && !full) begin
            mem[wr_ptr[DEPTH_LOG2-1:0]] <= {S_AXIS_TLAST, S_AXIS_TKEEP, S_AXIS_TDATA};
            wr_ptr <= wr_ptr + 1'b1;
        end
        if (M_AXIS_TREADY && !empty) rd_ptr <= rd_ptr + 1'b1;
    end
end

endmodule

`default_nettype wire
