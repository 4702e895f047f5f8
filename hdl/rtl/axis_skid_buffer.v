/*
 * AXI-Stream register slice with a skid buffer.
 *
 * Every output (m_axis_* and s_axis_tready) comes from a register, so no combinational path
 * runs through the slice, and a beat passes every cycle while both sides are ready: one beat
 * per cycle with no bubble, also across frame boundaries.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axis_skid_buffer #
(
    // Width of tdata in bits
    parameter DATA_WIDTH = 128,
    // Width of tkeep (one bit per byte)
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // A seeded bug for the formal proofs' own test, never set by the card (0: none): 1 parks a
    // beat in the skid register without its byte lane 0, which keeps the lane of the beat
    // parked before it.
    parameter BUG = 0
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI-Stream input
     */
    input  wire [DATA_WIDTH-1:0]  s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]  s_axis_tkeep,
    input  wire                   s_axis_tlast,
    input  wire                   s_axis_tvalid,
    output wire                   s_axis_tready,

    /*
     * AXI-Stream output
     */
    output wire [DATA_WIDTH-1:0]  m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]  m_axis_tkeep,
    output wire                   m_axis_tlast,
    output wire                   m_axis_tvalid,
    input  wire                   m_axis_tready
);

// check configuration
initial begin
    if (KEEP_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: tkeep must have one bit per tdata byte (instance %m)");
        $finish;
    end
    if (BUG < 0 || BUG > 1) begin
        $error("Error: BUG must be 0 or 1 (instance %m)");
        $finish;
    end
end

reg s_axis_tready_reg = 1'b0;

reg [DATA_WIDTH-1:0] m_axis_tdata_reg = {DATA_WIDTH{1'b0}};
reg [KEEP_WIDTH-1:0] m_axis_tkeep_reg = {KEEP_WIDTH{1'b0}};
reg m_axis_tlast_reg = 1'b0;
reg m_axis_tvalid_reg = 1'b0;

reg [DATA_WIDTH-1:0] temp_tdata_reg = {DATA_WIDTH{1'b0}};
reg [KEEP_WIDTH-1:0] temp_tkeep_reg = {KEEP_WIDTH{1'b0}};
reg temp_tlast_reg = 1'b0;
reg temp_tvalid_reg = 1'b0;

assign s_axis_tready = s_axis_tready_reg;
assign m_axis_tdata = m_axis_tdata_reg;
assign m_axis_tkeep = m_axis_tkeep_reg;
assign m_axis_tlast = m_axis_tlast_reg;
assign m_axis_tvalid = m_axis_tvalid_reg;

// Ready next cycle when the output drains now, or when the skid register is free and will
// stay free (the output is empty, or no input beat arrives now).
wire s_axis_tready_early = m_axis_tready
    || (!temp_tvalid_reg && (!m_axis_tvalid_reg || !s_axis_tvalid));

// The data parked in the skid register: with BUG 1, lane 0 is the lane already there.
localparam [DATA_WIDTH-1:0] LANE0 = ~({DATA_WIDTH{1'b1}} << 8);
wire [DATA_WIDTH-1:0] park_tdata = BUG == 1
    ? (s_axis_tdata & ~LANE0) | (temp_tdata_reg & LANE0) : s_axis_tdata;

always @(posedge clk) begin
    s_axis_tready_reg <= s_axis_tready_early;

    if (s_axis_tready_reg) begin
        if (m_axis_tready || !m_axis_tvalid_reg) begin
            // input straight to the output
            m_axis_tvalid_reg <= s_axis_tvalid;
            m_axis_tdata_reg <= s_axis_tdata;
            m_axis_tkeep_reg <= s_axis_tkeep;
            m_axis_tlast_reg <= s_axis_tlast;
        end else begin
            // output stalled: park the input in the skid register
            temp_tvalid_reg <= s_axis_tvalid;
            temp_tdata_reg <= park_tdata;
            temp_tkeep_reg <= s_axis_tkeep;
            temp_tlast_reg <= s_axis_tlast;
        end
    end else if (m_axis_tready) begin
        // skid register to the output
        m_axis_tvalid_reg <= temp_tvalid_reg;
        m_axis_tdata_reg <= temp_tdata_reg;
        m_axis_tkeep_reg <= temp_tkeep_reg;
        m_axis_tlast_reg <= temp_tlast_reg;
        temp_tvalid_reg <= 1'b0;
    end

    if (rst) begin
        s_axis_tready_reg <= 1'b0;
        m_axis_tvalid_reg <= 1'b0;
        temp_tvalid_reg <= 1'b0;
    end
end

endmodule

`resetall
