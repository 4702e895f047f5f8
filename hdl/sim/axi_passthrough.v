/*
 * Simulation-only AXI4 pass-through: a register slice on each of the five channels between an
 * AXI4 slave port (s_axi_*) and an AXI4 master port (m_axi_*). It adds one or two cycles of
 * latency per channel and decouples valid from ready, so bus models on its two sides see a
 * real registered path rather than wires.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_passthrough #
(
    // Width of the data bus in bits
    parameter DATA_WIDTH = 128,
    // Width of the byte address in bits
    parameter ADDR_WIDTH = 64,
    // Width of the write strobe (one bit per byte)
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // Width of the transaction ID in bits
    parameter ID_WIDTH = 4
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI4 slave port
     */
    input  wire [ID_WIDTH-1:0]    s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_awaddr,
    input  wire [7:0]             s_axi_awlen,
    input  wire [2:0]             s_axi_awsize,
    input  wire [1:0]             s_axi_awburst,
    input  wire                   s_axi_awlock,
    input  wire [3:0]             s_axi_awcache,
    input  wire [2:0]             s_axi_awprot,
    input  wire [3:0]             s_axi_awqos,
    input  wire                   s_axi_awvalid,
    output wire                   s_axi_awready,
    input  wire [DATA_WIDTH-1:0]  s_axi_wdata,
    input  wire [STRB_WIDTH-1:0]  s_axi_wstrb,
    input  wire                   s_axi_wlast,
    input  wire                   s_axi_wvalid,
    output wire                   s_axi_wready,
    output wire [ID_WIDTH-1:0]    s_axi_bid,
    output wire [1:0]             s_axi_bresp,
    output wire                   s_axi_bvalid,
    input  wire                   s_axi_bready,
    input  wire [ID_WIDTH-1:0]    s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_araddr,
    input  wire [7:0]             s_axi_arlen,
    input  wire [2:0]             s_axi_arsize,
    input  wire [1:0]             s_axi_arburst,
    input  wire                   s_axi_arlock,
    input  wire [3:0]             s_axi_arcache,
    input  wire [2:0]             s_axi_arprot,
    input  wire [3:0]             s_axi_arqos,
    input  wire                   s_axi_arvalid,
    output wire                   s_axi_arready,
    output wire [ID_WIDTH-1:0]    s_axi_rid,
    output wire [DATA_WIDTH-1:0]  s_axi_rdata,
    output wire [1:0]             s_axi_rresp,
    output wire                   s_axi_rlast,
    output wire                   s_axi_rvalid,
    input  wire                   s_axi_rready,

    /*
     * AXI4 master port
     */
    output wire [ID_WIDTH-1:0]    m_axi_awid,
    output wire [ADDR_WIDTH-1:0]  m_axi_awaddr,
    output wire [7:0]             m_axi_awlen,
    output wire [2:0]             m_axi_awsize,
    output wire [1:0]             m_axi_awburst,
    output wire                   m_axi_awlock,
    output wire [3:0]             m_axi_awcache,
    output wire [2:0]             m_axi_awprot,
    output wire [3:0]             m_axi_awqos,
    output wire                   m_axi_awvalid,
    input  wire                   m_axi_awready,
    output wire [DATA_WIDTH-1:0]  m_axi_wdata,
    output wire [STRB_WIDTH-1:0]  m_axi_wstrb,
    output wire                   m_axi_wlast,
    output wire                   m_axi_wvalid,
    input  wire                   m_axi_wready,
    input  wire [ID_WIDTH-1:0]    m_axi_bid,
    input  wire [1:0]             m_axi_bresp,
    input  wire                   m_axi_bvalid,
    output wire                   m_axi_bready,
    output wire [ID_WIDTH-1:0]    m_axi_arid,
    output wire [ADDR_WIDTH-1:0]  m_axi_araddr,
    output wire [7:0]             m_axi_arlen,
    output wire [2:0]             m_axi_arsize,
    output wire [1:0]             m_axi_arburst,
    output wire                   m_axi_arlock,
    output wire [3:0]             m_axi_arcache,
    output wire [2:0]             m_axi_arprot,
    output wire [3:0]             m_axi_arqos,
    output wire                   m_axi_arvalid,
    input  wire                   m_axi_arready,
    input  wire [ID_WIDTH-1:0]    m_axi_rid,
    input  wire [DATA_WIDTH-1:0]  m_axi_rdata,
    input  wire [1:0]             m_axi_rresp,
    input  wire                   m_axi_rlast,
    input  wire                   m_axi_rvalid,
    output wire                   m_axi_rready
);

// Payload widths of the address, write data, write response and read data channels
localparam AX_WIDTH = ID_WIDTH + ADDR_WIDTH + 8 + 3 + 2 + 1 + 4 + 3 + 4;
localparam W_WIDTH = DATA_WIDTH + STRB_WIDTH + 1;
localparam B_WIDTH = ID_WIDTH + 2;
localparam R_WIDTH = ID_WIDTH + DATA_WIDTH + 2 + 1;

// check configuration
initial begin
    if (DATA_WIDTH < 8 || (DATA_WIDTH & (DATA_WIDTH - 1)) != 0) begin
        $error("Error: DATA_WIDTH must be a power of two of at least 8 (instance %m)");
        $finish;
    end

    if (STRB_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: STRB_WIDTH must be DATA_WIDTH / 8 (instance %m)");
        $finish;
    end

    if (ID_WIDTH < 1 || ADDR_WIDTH < 12) begin
        $error("Error: ID_WIDTH must be at least 1 and ADDR_WIDTH at least 12 (instance %m)");
        $finish;
    end
end

sim_skid_buffer #(.WIDTH(AX_WIDTH))
aw_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_axi_awid, s_axi_awaddr, s_axi_awlen, s_axi_awsize, s_axi_awburst,
             s_axi_awlock, s_axi_awcache, s_axi_awprot, s_axi_awqos}),
    .s_valid(s_axi_awvalid),
    .s_ready(s_axi_awready),
    .m_data({m_axi_awid, m_axi_awaddr, m_axi_awlen, m_axi_awsize, m_axi_awburst,
             m_axi_awlock, m_axi_awcache, m_axi_awprot, m_axi_awqos}),
    .m_valid(m_axi_awvalid),
    .m_ready(m_axi_awready)
);

sim_skid_buffer #(.WIDTH(W_WIDTH))
w_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_axi_wdata, s_axi_wstrb, s_axi_wlast}),
    .s_valid(s_axi_wvalid),
    .s_ready(s_axi_wready),
    .m_data({m_axi_wdata, m_axi_wstrb, m_axi_wlast}),
    .m_valid(m_axi_wvalid),
    .m_ready(m_axi_wready)
);

sim_skid_buffer #(.WIDTH(B_WIDTH))
b_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({m_axi_bid, m_axi_bresp}),
    .s_valid(m_axi_bvalid),
    .s_ready(m_axi_bready),
    .m_data({s_axi_bid, s_axi_bresp}),
    .m_valid(s_axi_bvalid),
    .m_ready(s_axi_bready)
);

sim_skid_buffer #(.WIDTH(AX_WIDTH))
ar_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({s_axi_arid, s_axi_araddr, s_axi_arlen, s_axi_arsize, s_axi_arburst,
             s_axi_arlock, s_axi_arcache, s_axi_arprot, s_axi_arqos}),
    .s_valid(s_axi_arvalid),
    .s_ready(s_axi_arready),
    .m_data({m_axi_arid, m_axi_araddr, m_axi_arlen, m_axi_arsize, m_axi_arburst,
             m_axi_arlock, m_axi_arcache, m_axi_arprot, m_axi_arqos}),
    .m_valid(m_axi_arvalid),
    .m_ready(m_axi_arready)
);

sim_skid_buffer #(.WIDTH(R_WIDTH))
r_slice_inst (
    .clk(clk),
    .rst(rst),
    .s_data({m_axi_rid, m_axi_rdata, m_axi_rresp, m_axi_rlast}),
    .s_valid(m_axi_rvalid),
    .s_ready(m_axi_rready),
    .m_data({s_axi_rid, s_axi_rdata, s_axi_rresp, s_axi_rlast}),
    .m_valid(s_axi_rvalid),
    .m_ready(s_axi_rready)
);

endmodule

`resetall
