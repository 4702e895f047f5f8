/*
 * AXI4 read channels (AR, R) across two clock domains, through asynchronous FIFOs.
 *
 * AR travels from s_clk to m_clk, R from m_clk back to s_clk, each in its own async_fifo
 * (Gray-coded pointers, two-flop synchronizers, registered outputs), so no combinational path
 * crosses the domains. Order within each channel is kept. Every output is a FIFO register.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_cdc_rd #
(
    // Width of the data bus in bits
    parameter DATA_WIDTH = 512,
    // Width of the byte address in bits
    parameter ADDR_WIDTH = 31,
    // Width of the ID
    parameter ID_WIDTH = 5,
    // log2 of the AR FIFO depth
    parameter AR_FIFO_ADDR_WIDTH = 3,
    // log2 of the R FIFO depth
    parameter R_FIFO_ADDR_WIDTH = 4
)
(
    /*
     * AXI4 read slave (s_clk domain)
     */
    input  wire                   s_clk,
    input  wire                   s_rst,
    input  wire [ID_WIDTH-1:0]    s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]  s_axi_araddr,
    input  wire [7:0]             s_axi_arlen,
    input  wire [2:0]             s_axi_arsize,
    input  wire [1:0]             s_axi_arburst,
    input  wire                   s_axi_arlock,
    input  wire [3:0]             s_axi_arcache,
    input  wire [2:0]             s_axi_arprot,
    input  wire                   s_axi_arvalid,
    output wire                   s_axi_arready,
    output wire [ID_WIDTH-1:0]    s_axi_rid,
    output wire [DATA_WIDTH-1:0]  s_axi_rdata,
    output wire [1:0]             s_axi_rresp,
    output wire                   s_axi_rlast,
    output wire                   s_axi_rvalid,
    input  wire                   s_axi_rready,

    /*
     * AXI4 read master (m_clk domain)
     */
    input  wire                   m_clk,
    input  wire                   m_rst,
    output wire [ID_WIDTH-1:0]    m_axi_arid,
    output wire [ADDR_WIDTH-1:0]  m_axi_araddr,
    output wire [7:0]             m_axi_arlen,
    output wire [2:0]             m_axi_arsize,
    output wire [1:0]             m_axi_arburst,
    output wire                   m_axi_arlock,
    output wire [3:0]             m_axi_arcache,
    output wire [2:0]             m_axi_arprot,
    output wire                   m_axi_arvalid,
    input  wire                   m_axi_arready,
    input  wire [ID_WIDTH-1:0]    m_axi_rid,
    input  wire [DATA_WIDTH-1:0]  m_axi_rdata,
    input  wire [1:0]             m_axi_rresp,
    input  wire                   m_axi_rlast,
    input  wire                   m_axi_rvalid,
    output wire                   m_axi_rready
);

localparam AR_WIDTH = ID_WIDTH + ADDR_WIDTH + 8 + 3 + 2 + 1 + 4 + 3;
localparam R_WIDTH = ID_WIDTH + DATA_WIDTH + 2 + 1;

// check configuration
initial begin
    if (DATA_WIDTH < 8 || ID_WIDTH < 1) begin
        $error("Error: DATA_WIDTH must be at least 8 and ID_WIDTH at least 1 (instance %m)");
        $finish;
    end
end

async_fifo #(
    .DATA_WIDTH(AR_WIDTH),
    .ADDR_WIDTH(AR_FIFO_ADDR_WIDTH)
)
ar_fifo_inst (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_data({s_axi_arid, s_axi_araddr, s_axi_arlen, s_axi_arsize, s_axi_arburst, s_axi_arlock,
        s_axi_arcache, s_axi_arprot}),
    .s_valid(s_axi_arvalid),
    .s_ready(s_axi_arready),
    .m_clk(m_clk),
    .m_rst(m_rst),
    .m_data({m_axi_arid, m_axi_araddr, m_axi_arlen, m_axi_arsize, m_axi_arburst, m_axi_arlock,
        m_axi_arcache, m_axi_arprot}),
    .m_valid(m_axi_arvalid),
    .m_ready(m_axi_arready)
);

async_fifo #(
    .DATA_WIDTH(R_WIDTH),
    .ADDR_WIDTH(R_FIFO_ADDR_WIDTH)
)
r_fifo_inst (
    .s_clk(m_clk),
    .s_rst(m_rst),
    .s_data({m_axi_rid, m_axi_rdata, m_axi_rresp, m_axi_rlast}),
    .s_valid(m_axi_rvalid),
    .s_ready(m_axi_rready),
    .m_clk(s_clk),
    .m_rst(s_rst),
    .m_data({s_axi_rid, s_axi_rdata, s_axi_rresp, s_axi_rlast}),
    .m_valid(s_axi_rvalid),
    .m_ready(s_axi_rready)
);

endmodule

`resetall
