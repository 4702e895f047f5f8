/*
 * Simulation-only test top for the memory-mapped path: axi_mm_path with a ddr3_model (default
 * DDR3-1600 timing) on its DDR port. clk is axi_aclk (250 MHz), ddr_clk the MIG user clock
 * (200 MHz); both resets are active high.
 */

`resetall
`timescale 1ns / 1ps
`default_nettype none

module axi_mm_path_tb #
(
    // s_axi and s_axi_cap data width in bits
    parameter DATA_WIDTH = 128,
    // s_axi and s_axi_cap byte address width in bits
    parameter ADDR_WIDTH = 64,
    // s_axi ID width
    parameter ID_WIDTH = 4,
    // Write strobe width of the slaves
    parameter STRB_WIDTH = (DATA_WIDTH/8),
    // DDR data width in bits
    parameter DDR_DATA_WIDTH = 512,
    // DDR byte address width in bits
    parameter DDR_ADDR_WIDTH = 31,
    // DDR ID width
    parameter DDR_ID_WIDTH = ID_WIDTH + 1,
    // DDR write strobe width
    parameter DDR_STRB_WIDTH = (DDR_DATA_WIDTH/8)
)
(
    input  wire                        clk,
    input  wire                        rst,
    input  wire                        ddr_clk,
    input  wire                        ddr_rst,

    /*
     * Refused bursts (clk domain, one-cycle pulses)
     */
    output wire                        addr_error,
    output wire                        burst_error,

    /*
     * AXI4 slave: the DMA engine's memory-mapped master (clk domain)
     */
    input  wire [ID_WIDTH-1:0]         s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]       s_axi_awaddr,
    input  wire [7:0]                  s_axi_awlen,
    input  wire [2:0]                  s_axi_awsize,
    input  wire [1:0]                  s_axi_awburst,
    input  wire                        s_axi_awlock,
    input  wire [3:0]                  s_axi_awcache,
    input  wire [2:0]                  s_axi_awprot,
    input  wire                        s_axi_awvalid,
    output wire                        s_axi_awready,
    input  wire [DATA_WIDTH-1:0]       s_axi_wdata,
    input  wire [STRB_WIDTH-1:0]       s_axi_wstrb,
    input  wire                        s_axi_wlast,
    input  wire                        s_axi_wvalid,
    output wire                        s_axi_wready,
    output wire [ID_WIDTH-1:0]         s_axi_bid,
    output wire [1:0]                  s_axi_bresp,
    output wire                        s_axi_bvalid,
    input  wire                        s_axi_bready,
    input  wire [ID_WIDTH-1:0]         s_axi_arid,
    input  wire [ADDR_WIDTH-1:0]       s_axi_araddr,
    input  wire [7:0]                  s_axi_arlen,
    input  wire [2:0]                  s_axi_arsize,
    input  wire [1:0]                  s_axi_arburst,
    input  wire                        s_axi_arlock,
    input  wire [3:0]                  s_axi_arcache,
    input  wire [2:0]                  s_axi_arprot,
    input  wire                        s_axi_arvalid,
    output wire                        s_axi_arready,
    output wire [ID_WIDTH-1:0]         s_axi_rid,
    output wire [DATA_WIDTH-1:0]       s_axi_rdata,
    output wire [1:0]                  s_axi_rresp,
    output wire                        s_axi_rlast,
    output wire                        s_axi_rvalid,
    input  wire                        s_axi_rready,

    /*
     * AXI4 write-only slave: the capture writer (clk domain)
     */
    input  wire [ADDR_WIDTH-1:0]       s_axi_cap_awaddr,
    input  wire [7:0]                  s_axi_cap_awlen,
    input  wire [2:0]                  s_axi_cap_awsize,
    input  wire [1:0]                  s_axi_cap_awburst,
    input  wire                        s_axi_cap_awvalid,
    output wire                        s_axi_cap_awready,
    input  wire [DATA_WIDTH-1:0]       s_axi_cap_wdata,
    input  wire [STRB_WIDTH-1:0]       s_axi_cap_wstrb,
    input  wire                        s_axi_cap_wlast,
    input  wire                        s_axi_cap_wvalid,
    output wire                        s_axi_cap_wready,
    output wire [1:0]                  s_axi_cap_bresp,
    output wire                        s_axi_cap_bvalid,
    input  wire                        s_axi_cap_bready
);

// check configuration
initial begin
    if (DDR_ID_WIDTH != ID_WIDTH + 1) begin
        $error("Error: DDR_ID_WIDTH must be ID_WIDTH + 1 (instance %m)");
        $finish;
    end
end

wire [DDR_ID_WIDTH-1:0]       m_axi_ddr_awid;
wire [DDR_ADDR_WIDTH-1:0]     m_axi_ddr_awaddr;
wire [7:0]                    m_axi_ddr_awlen;
wire [2:0]                    m_axi_ddr_awsize;
wire [1:0]                    m_axi_ddr_awburst;
wire                          m_axi_ddr_awlock;
wire [3:0]                    m_axi_ddr_awcache;
wire [2:0]                    m_axi_ddr_awprot;
wire                          m_axi_ddr_awvalid;
wire                          m_axi_ddr_awready;
wire [DDR_DATA_WIDTH-1:0]     m_axi_ddr_wdata;
wire [DDR_STRB_WIDTH-1:0]     m_axi_ddr_wstrb;
wire                          m_axi_ddr_wlast;
wire                          m_axi_ddr_wvalid;
wire                          m_axi_ddr_wready;
wire [DDR_ID_WIDTH-1:0]       m_axi_ddr_bid;
wire [1:0]                    m_axi_ddr_bresp;
wire                          m_axi_ddr_bvalid;
wire                          m_axi_ddr_bready;
wire [DDR_ID_WIDTH-1:0]       m_axi_ddr_arid;
wire [DDR_ADDR_WIDTH-1:0]     m_axi_ddr_araddr;
wire [7:0]                    m_axi_ddr_arlen;
wire [2:0]                    m_axi_ddr_arsize;
wire [1:0]                    m_axi_ddr_arburst;
wire                          m_axi_ddr_arlock;
wire [3:0]                    m_axi_ddr_arcache;
wire [2:0]                    m_axi_ddr_arprot;
wire                          m_axi_ddr_arvalid;
wire                          m_axi_ddr_arready;
wire [DDR_ID_WIDTH-1:0]       m_axi_ddr_rid;
wire [DDR_DATA_WIDTH-1:0]     m_axi_ddr_rdata;
wire [1:0]                    m_axi_ddr_rresp;
wire                          m_axi_ddr_rlast;
wire                          m_axi_ddr_rvalid;
wire                          m_axi_ddr_rready;

axi_mm_path #(
    .DATA_WIDTH(DATA_WIDTH),
    .ADDR_WIDTH(ADDR_WIDTH),
    .ID_WIDTH(ID_WIDTH),
    .DDR_DATA_WIDTH(DDR_DATA_WIDTH),
    .DDR_ADDR_WIDTH(DDR_ADDR_WIDTH),
    .DDR_ID_WIDTH(DDR_ID_WIDTH),
    .STRB_WIDTH(STRB_WIDTH),
    .DDR_STRB_WIDTH(DDR_STRB_WIDTH)
)
path_inst (
    .clk(clk),
    .rst(rst),
    .ddr_clk(ddr_clk),
    .ddr_rst(ddr_rst),
    .s_axi_awid(s_axi_awid),
    .s_axi_awaddr(s_axi_awaddr),
    .s_axi_awlen(s_axi_awlen),
    .s_axi_awsize(s_axi_awsize),
    .s_axi_awburst(s_axi_awburst),
    .s_axi_awlock(s_axi_awlock),
    .s_axi_awcache(s_axi_awcache),
    .s_axi_awprot(s_axi_awprot),
    .s_axi_awvalid(s_axi_awvalid),
    .s_axi_awready(s_axi_awready),
    .s_axi_wdata(s_axi_wdata),
    .s_axi_wstrb(s_axi_wstrb),
    .s_axi_wlast(s_axi_wlast),
    .s_axi_wvalid(s_axi_wvalid),
    .s_axi_wready(s_axi_wready),
    .s_axi_bid(s_axi_bid),
    .s_axi_bresp(s_axi_bresp),
    .s_axi_bvalid(s_axi_bvalid),
    .s_axi_bready(s_axi_bready),
    .s_axi_arid(s_axi_arid),
    .s_axi_araddr(s_axi_araddr),
    .s_axi_arlen(s_axi_arlen),
    .s_axi_arsize(s_axi_arsize),
    .s_axi_arburst(s_axi_arburst),
    .s_axi_arlock(s_axi_arlock),
    .s_axi_arcache(s_axi_arcache),
    .s_axi_arprot(s_axi_arprot),
    .s_axi_arvalid(s_axi_arvalid),
    .s_axi_arready(s_axi_arready),
    .s_axi_rid(s_axi_rid),
    .s_axi_rdata(s_axi_rdata),
    .s_axi_rresp(s_axi_rresp),
    .s_axi_rlast(s_axi_rlast),
    .s_axi_rvalid(s_axi_rvalid),
    .s_axi_rready(s_axi_rready),
    .s_axi_cap_awaddr(s_axi_cap_awaddr),
    .s_axi_cap_awlen(s_axi_cap_awlen),
    .s_axi_cap_awsize(s_axi_cap_awsize),
    .s_axi_cap_awburst(s_axi_cap_awburst),
    .s_axi_cap_awvalid(s_axi_cap_awvalid),
    .s_axi_cap_awready(s_axi_cap_awready),
    .s_axi_cap_wdata(s_axi_cap_wdata),
    .s_axi_cap_wstrb(s_axi_cap_wstrb),
    .s_axi_cap_wlast(s_axi_cap_wlast),
    .s_axi_cap_wvalid(s_axi_cap_wvalid),
    .s_axi_cap_wready(s_axi_cap_wready),
    .s_axi_cap_bresp(s_axi_cap_bresp),
    .s_axi_cap_bvalid(s_axi_cap_bvalid),
    .s_axi_cap_bready(s_axi_cap_bready),
    .m_axi_ddr_awid(m_axi_ddr_awid),
    .m_axi_ddr_awaddr(m_axi_ddr_awaddr),
    .m_axi_ddr_awlen(m_axi_ddr_awlen),
    .m_axi_ddr_awsize(m_axi_ddr_awsize),
    .m_axi_ddr_awburst(m_axi_ddr_awburst),
    .m_axi_ddr_awlock(m_axi_ddr_awlock),
    .m_axi_ddr_awcache(m_axi_ddr_awcache),
    .m_axi_ddr_awprot(m_axi_ddr_awprot),
    .m_axi_ddr_awvalid(m_axi_ddr_awvalid),
    .m_axi_ddr_awready(m_axi_ddr_awready),
    .m_axi_ddr_wdata(m_axi_ddr_wdata),
    .m_axi_ddr_wstrb(m_axi_ddr_wstrb),
    .m_axi_ddr_wlast(m_axi_ddr_wlast),
    .m_axi_ddr_wvalid(m_axi_ddr_wvalid),
    .m_axi_ddr_wready(m_axi_ddr_wready),
    .m_axi_ddr_bid(m_axi_ddr_bid),
    .m_axi_ddr_bresp(m_axi_ddr_bresp),
    .m_axi_ddr_bvalid(m_axi_ddr_bvalid),
    .m_axi_ddr_bready(m_axi_ddr_bready),
    .m_axi_ddr_arid(m_axi_ddr_arid),
    .m_axi_ddr_araddr(m_axi_ddr_araddr),
    .m_axi_ddr_arlen(m_axi_ddr_arlen),
    .m_axi_ddr_arsize(m_axi_ddr_arsize),
    .m_axi_ddr_arburst(m_axi_ddr_arburst),
    .m_axi_ddr_arlock(m_axi_ddr_arlock),
    .m_axi_ddr_arcache(m_axi_ddr_arcache),
    .m_axi_ddr_arprot(m_axi_ddr_arprot),
    .m_axi_ddr_arvalid(m_axi_ddr_arvalid),
    .m_axi_ddr_arready(m_axi_ddr_arready),
    .m_axi_ddr_rid(m_axi_ddr_rid),
    .m_axi_ddr_rdata(m_axi_ddr_rdata),
    .m_axi_ddr_rresp(m_axi_ddr_rresp),
    .m_axi_ddr_rlast(m_axi_ddr_rlast),
    .m_axi_ddr_rvalid(m_axi_ddr_rvalid),
    .m_axi_ddr_rready(m_axi_ddr_rready),
    .addr_error(addr_error),
    .burst_error(burst_error),
    // The bench tests the path as the card builds it, without its deliberate fault.
    .fault_rd_drop_beat_en(1'b0)
);

ddr3_model #(
    .DATA_WIDTH(DDR_DATA_WIDTH),
    .ADDR_WIDTH(DDR_ADDR_WIDTH),
    .ID_WIDTH(DDR_ID_WIDTH)
)
ddr_inst (
    .clk(ddr_clk),
    .rst(ddr_rst),
    // MIG's default scheme, RD_PRI_REG, and no QoS, as axi_mm_path drives none.
    .arb_algorithm(2'd0),
    .s_axi_awid(m_axi_ddr_awid),
    .s_axi_awaddr(m_axi_ddr_awaddr),
    .s_axi_awlen(m_axi_ddr_awlen),
    .s_axi_awsize(m_axi_ddr_awsize),
    .s_axi_awburst(m_axi_ddr_awburst),
    .s_axi_awlock(m_axi_ddr_awlock),
    .s_axi_awcache(m_axi_ddr_awcache),
    .s_axi_awprot(m_axi_ddr_awprot),
    .s_axi_awqos(4'd0),
    .s_axi_awvalid(m_axi_ddr_awvalid),
    .s_axi_awready(m_axi_ddr_awready),
    .s_axi_wdata(m_axi_ddr_wdata),
    .s_axi_wstrb(m_axi_ddr_wstrb),
    .s_axi_wlast(m_axi_ddr_wlast),
    .s_axi_wvalid(m_axi_ddr_wvalid),
    .s_axi_wready(m_axi_ddr_wready),
    .s_axi_bid(m_axi_ddr_bid),
    .s_axi_bresp(m_axi_ddr_bresp),
    .s_axi_bvalid(m_axi_ddr_bvalid),
    .s_axi_bready(m_axi_ddr_bready),
    .s_axi_arid(m_axi_ddr_arid),
    .s_axi_araddr(m_axi_ddr_araddr),
    .s_axi_arlen(m_axi_ddr_arlen),
    .s_axi_arsize(m_axi_ddr_arsize),
    .s_axi_arburst(m_axi_ddr_arburst),
    .s_axi_arlock(m_axi_ddr_arlock),
    .s_axi_arcache(m_axi_ddr_arcache),
    .s_axi_arprot(m_axi_ddr_arprot),
    .s_axi_arqos(4'd0),
    .s_axi_arvalid(m_axi_ddr_arvalid),
    .s_axi_arready(m_axi_ddr_arready),
    .s_axi_rid(m_axi_ddr_rid),
    .s_axi_rdata(m_axi_ddr_rdata),
    .s_axi_rresp(m_axi_ddr_rresp),
    .s_axi_rlast(m_axi_ddr_rlast),
    .s_axi_rvalid(m_axi_ddr_rvalid),
    .s_axi_rready(m_axi_ddr_rready)
);

endmodule

`resetall
