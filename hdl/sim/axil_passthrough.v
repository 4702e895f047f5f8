/*
 * Simulation-only AXI4-Lite pass-through: a register slice on each of the five channels
 * between an AXI4-Lite slave port (s_axil_*) and an AXI4-Lite master port (m_axil_*).
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axil_passthrough #
(
    // Width of the data bus in bits (AXI4-Lite allows 32 or 64)
    parameter DATA_WIDTH = 32,
    // Width of the byte address in bits
    parameter ADDR_WIDTH = 32,
    // Width of the write strobe (one bit per byte)
    parameter STRB_WIDTH = (DATA_WIDTH/8)
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI4-Lite slave port
     */
    input  wire [ADDR_WIDTH-1:0]  s_axil_awaddr,
    input  wire [2:0]             s_axil_awprot,
    input  wire                   s_axil_awvalid,
    output wire                   s_axil_awready,
    input  wire [DATA_WIDTH-1:0]  s_axil_wdata,
    input  wire [STRB_WIDTH-1:0]  s_axil_wstrb,
    input  wire                   s_axil_wvalid,
    output wire                   s_axil_wready,
    output wire [1:0]             s_axil_bresp,
    output wire                   s_axil_bvalid,
    input  wire                   s_axil_bready,
    input  wire [ADDR_WIDTH-1:0]  s_axil_araddr,
    input  wire [2:0]             s_axil_arprot,
    input  wire                   s_axil_arvalid,
    output wire                   s_axil_arready,
    output wire [DATA_WIDTH-1:0]  s_axil_rdata,
    output wire [1:0]             s_axil_rresp,
    output wire                   s_axil_rvalid,
    input  wire                   s_axil_rready,

    /*
     * AXI4-Lite master port
     */
    output wire [ADDR_WIDTH-1:0]  m_axil_awaddr,
    output wire [2:0]             m_axil_awprot,
    output wire                   m_axil_awvalid,
    input  wire                   m_axil_awready,
    output wire [DATA_WIDTH-1:0]  m_axil_wdata,
    output wire [STRB_WIDTH-1:0]  m_axil_wstrb,
    output wire                   m_axil_wvalid,
    input  wire                   m_axil_wready,
    input  wire [1:0]             m_axil_bresp,
    input  wire                   m_axil_bvalid,
    output wire                   m_axil_bready,
    output wire [ADDR_WIDTH-1:0]  m_axil_araddr,
    output wire [2:0]             m_axil_arprot,
    output wire                   m_axil_arvalid,
    input  wire                   m_axil_arready,
    input  wire [DATA_WIDTH-1:0]  m_axil_rdata,
    input  wire [1:0]             m_axil_rresp,
    input  wire                   m_axil_rvalid,
    output wire                   m_axil_rready
);

// check configuration
initial begin
    if (DATA_WIDTH != 32 && DATA_WIDTH != 64) begin
        $error("Error: AXI-Lite data width must be 32 or 64 (instance %m)");
        $finish;
    end

    if (STRB_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: STRB_WIDTH must be DATA_WIDTH / 8 (instance %m)");
        $finish;
    end
end

sim_skid_buffer #(.WIDTH(ADDR_WIDTH + 3))
aw_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_axil_awaddr, s_axil_awprot}),
    .s_valid(s_axil_awvalid),
    .s_ready(s_axil_awready),
    .m_data({m_axil_awaddr, m_axil_awprot}),
    .m_valid(m_axil_awvalid),
    .m_ready(m_axil_awready)
);

sim_skid_buffer #(.WIDTH(DATA_WIDTH + STRB_WIDTH))
w_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_axil_wdata, s_axil_wstrb}),
    .s_valid(s_axil_wvalid),
    .s_ready(s_axil_wready),
    .m_data({m_axil_wdata, m_axil_wstrb}),
    .m_valid(m_axil_wvalid),
    .m_ready(m_axil_wready)
);

sim_skid_buffer #(.WIDTH(2))
b_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data(m_axil_bresp),
    .s_valid(m_axil_bvalid),
    .s_ready(m_axil_bready),
    .m_data(s_axil_bresp),
    .m_valid(s_axil_bvalid),
    .m_ready(s_axil_bready)
);

sim_skid_buffer #(.WIDTH(ADDR_WIDTH + 3))
ar_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_axil_araddr, s_axil_arprot}),
    .s_valid(s_axil_arvalid),
    .s_ready(s_axil_arready),
    .m_data({m_axil_araddr, m_axil_arprot}),
    .m_valid(m_axil_arvalid),
    .m_ready(m_axil_arready)
);

sim_skid_buffer #(.WIDTH(DATA_WIDTH + 2))
r_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({m_axil_rdata, m_axil_rresp}),
    .s_valid(m_axil_rvalid),
    .s_ready(m_axil_rready),
    .m_data({s_axil_rdata, s_axil_rresp}),
    .m_valid(s_axil_rvalid),
    .m_ready(s_axil_rready)
);

endmodule

`resetall
