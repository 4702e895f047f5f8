/*
 * Simulation-only AXI-Stream pass-through: two register slices in a row between an AXI-Stream
 * sink port (s_axis_*) and a source port (m_axis_*), carrying tdata, tkeep, tlast, tid, tdest
 * and tuser. The default width is the DDR port's 512 bits, so wide ports are exercised.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axis_passthrough #
(
    // Width of tdata in bits
    parameter DATA_WIDTH = 512,
    // Width of tkeep (one bit per byte)
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // Width of tid in bits
    parameter ID_WIDTH = 8,
    // Width of tdest in bits
    parameter DEST_WIDTH = 4,
    // Width of tuser in bits
    parameter USER_WIDTH = 2
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI-Stream input
     */
    input  wire [DATA_WIDTH-1:0]  s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]  s_axis_tkeep,
    input  wire                   s_axis_tvalid,
    output wire                   s_axis_tready,
    input  wire                   s_axis_tlast,
    input  wire [ID_WIDTH-1:0]    s_axis_tid,
    input  wire [DEST_WIDTH-1:0]  s_axis_tdest,
    input  wire [USER_WIDTH-1:0]  s_axis_tuser,

    /*
     * AXI-Stream output
     */
    output wire [DATA_WIDTH-1:0]  m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]  m_axis_tkeep,
    output wire                   m_axis_tvalid,
    input  wire                   m_axis_tready,
    output wire                   m_axis_tlast,
    output wire [ID_WIDTH-1:0]    m_axis_tid,
    output wire [DEST_WIDTH-1:0]  m_axis_tdest,
    output wire [USER_WIDTH-1:0]  m_axis_tuser
);

// Payload width carried through both slices
localparam WIDTH = DATA_WIDTH + KEEP_WIDTH + 1 + ID_WIDTH + DEST_WIDTH + USER_WIDTH;

// check configuration
initial begin
    if (KEEP_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: KEEP_WIDTH must be DATA_WIDTH / 8 (instance %m)");
        $finish;
    end

    if (ID_WIDTH < 1 || DEST_WIDTH < 1 || USER_WIDTH < 1) begin
        $error("Error: ID_WIDTH, DEST_WIDTH and USER_WIDTH must be at least 1 (instance %m)");
        $finish;
    end
end

wire [WIDTH-1:0] mid_data;
wire mid_valid;
wire mid_ready;

sim_skid_buffer #(.WIDTH(WIDTH))
in_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_axis_tdata, s_axis_tkeep, s_axis_tlast, s_axis_tid, s_axis_tdest, s_axis_tuser}),
    .s_valid(s_axis_tvalid),
    .s_ready(s_axis_tready),
    .m_data(mid_data),
    .m_valid(mid_valid),
    .m_ready(mid_ready)
);

sim_skid_buffer #(.WIDTH(WIDTH))
out_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data(mid_data),
    .s_valid(mid_valid),
    .s_ready(mid_ready),
    .m_data({m_axis_tdata, m_axis_tkeep, m_axis_tlast, m_axis_tid, m_axis_tdest, m_axis_tuser}),
    .m_valid(m_axis_tvalid),
    .m_ready(m_axis_tready)
);

endmodule

`resetall
