/*
 * AXI4 write channels (AW, W, B) across two clock domains, through asynchronous FIFOs.
 *
 * AW and W travel from s_clk to m_clk, B from m_clk back to s_clk, each in its own
 * async_fifo (Gray-coded pointers, two-flop synchronizers, registered outputs), so no
 * combinational path crosses the domains. The channels stay independent, as AXI allows; their
 * order within each channel is kept. Every output is a FIFO register.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_cdc_wr #
(
    // Width of the data bus in bits
    parameter DATA_WIDTH = 512,
    // Width of the byte address in bits
    parameter ADDR_WIDTH = 31,
    // Width of the write strobe (one bit per byte)
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // Width of the ID
    parameter ID_WIDTH = 5,
    // log2 of the AW FIFO depth
    parameter AW_FIFO_ADDR_WIDTH = 2,
    // log2 of the W FIFO depth
    parameter W_FIFO_ADDR_WIDTH = 4,
    // log2 of the B FIFO depth
    parameter B_FIFO_ADDR_WIDTH = 2
)
(
    /*
     * AXI4 write slave (s_clk domain)
     */
    input  wire                   s_clk,
    input  wire                   s_rst,
    input  wire [ID_WIDTH-1:0]    s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_awaddr,
    input  wire [7:0]             s_axi_awlen,
    input  wire [2:0]             s_axi_awsize,
    input  wire [1:0]             s_axi_awburst,
    input  wire                   s_axi_awlock,
    input  wire [3:0]             s_axi_awcache,
    input  wire [2:0]             s_axi_awprot,
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

    /*
     * AXI4 write master (m_clk domain)
     */
    input  wire                   m_clk,
    input  wire                   m_rst,
    output wire [ID_WIDTH-1:0]    m_axi_awid,
    output wire [ADDR_WIDTH-1:0]  m_axi_awaddr,
    output wire [7:0]             m_axi_awlen,
    output wire [2:0]             m_axi_awsize,
    output wire [1:0]             m_axi_awburst,
    output wire                   m_axi_awlock,
    output wire [3:0]             m_axi_awcache,
    output wire [2:0]             m_axi_awprot,
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
    output wire                   m_axi_bready
);

localparam AW_WIDTH = ID_WIDTH + ADDR_WIDTH + 8 + 3 + 2 + 1 + 4 + 3;
localparam W_WIDTH = DATA_WIDTH + STRB_WIDTH + 1;
localparam B_WIDTH = ID_WIDTH + 2;

// check configuration
initial begin
    if (STRB_WIDTH * 8 != DATA_WIDTH) begin
        $error("Error: STRB_WIDTH must be DATA_WIDTH/8 (instance %m)");
        $finish;
    end
end

async_fifo #(
    .DATA_WIDTH(AW_WIDTH),
    .ADDR_WIDTH(AW_FIFO_ADDR_WIDTH)
)
aw_fifo_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_data({s_axi_awid, s_axi_awaddr, s_axi_awlen, s_axi_awsize, s_axi_awburst, s_axi_awlock,
        s_axi_awcache, s_axi_awprot}),
    .s_valid(s_axi_awvalid),
    .s_ready(s_axi_awready),
    .m_clk(m_clk),
    .m_rst(m_rst),
    .m_data({m_axi_awid, m_axi_awaddr, m_axi_awlen, m_axi_awsize, m_axi_awburst, m_axi_awlock,
        m_axi_awcache, m_axi_awprot}),
    .m_valid(m_axi_awvalid),
    .m_ready(m_axi_awready)
);

async_fifo #(
    .DATA_WIDTH(W_WIDTH),
    .ADDR_WIDTH(W_FIFO_ADDR_WIDTH)
)
w_fifo_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_data({s_axi_wdata, s_axi_wstrb, s_axi_wlast}),
    .s_valid(s_axi_wvalid),
    .s_ready(s_axi_wready),
    .m_clk(m_clk),
    .m_rst(m_rst),
    .m_data({m_axi_wdata, m_axi_wstrb, m_axi_wlast}),
    .m_valid(m_axi_wvalid),
    .m_ready(m_axi_wready)
);

async_fifo #(
    .DATA_WIDTH(B_WIDTH),
    .ADDR_WIDTH(B_FIFO_ADDR_WIDTH)
)
b_fifo_inst (
    .s_clk(m_clk),
    .s_rst(m_rst),
    .s_data({m_axi_bid, m_axi_bresp}),
    .s_valid(m_axi_bvalid),
    .s_ready(m_axi_bready),
    .m_clk(s_clk),
    .m_rst(s_rst),
    .m_data({s_axi_bid, s_axi_bresp}),
    .m_valid(s_axi_bvalid),
    .m_ready(s_axi_bready)
);

endmodule

`resetall
